"""A round-robin ladder of duplicate matches, one module a job.

- :mod:`.run`: :func:`~piquet_training.evaluation.ladder.run.run_ladder` plays it and
  :class:`~piquet_training.evaluation.ladder.run.LadderResult` holds it;
- :mod:`.stats`: the points ratings, the looks at neighbours and the verdicts;
- :mod:`.data`: the result's data and ``ladder.json``;
- :mod:`.text`: the summary and matrix for a terminal;
- :mod:`.figure`: ``ladder.png`` (matplotlib imported only there).

Its record of played games, ``matches.jsonl``, is :mod:`piquet_training.evaluation.record`
  (``piquet eval --record`` keeps one too).
"""
