"""Evaluating agents: duplicate-deal matches, round-robin ladders with ratings, and statistics.

- :mod:`.duplicate`: :func:`~piquet_training.evaluation.duplicate.evaluate`, a duplicate-deal match
  between two agents with 95% intervals and a verdict;
- :mod:`.ladder`: a round-robin of duplicate matches, points and openskill ratings
  (:func:`~piquet_training.evaluation.ladder.run_ladder`, its result
  :class:`~piquet_training.evaluation.ladder.LadderResult`); the result's parts live in
  :mod:`.ladder_stats` (the ratings, looks and verdicts), :mod:`.ladder_data` (its data and
  ``ladder.json``), :mod:`.ladder_text` (the summary), :mod:`.ladder_figure` (``ladder.png``), and
  its record of played games in :mod:`.ladder_record` (``matches.jsonl``);
- :mod:`.paired`: edges with their intervals, and two matches on the same deals compared pair
  by pair (:func:`~piquet_training.evaluation.paired.compare_reports`, ``piquet eval
  --compare``);
- :mod:`.stats`: the confidence intervals (Student-t for means, Wilson for rates) and the verdict
  words.
"""
