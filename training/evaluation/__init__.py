"""Evaluating agents: duplicate-deal matches, round-robin ladders with ratings, and statistics.

- :mod:`.duplicate`: :func:`~piquet_training.evaluation.duplicate.evaluate`, a duplicate-deal match
  between two agents with 95% intervals and a verdict;
- :mod:`.ladder`: a round-robin of duplicate matches, points and openskill ratings
  (:func:`~piquet_training.evaluation.ladder.run.run_ladder`, its result
  :class:`~piquet_training.evaluation.ladder.run.LadderResult`), a package of one module a job;
- :mod:`.paired`: edges with their intervals, and two matches on the same deals compared pair
  by pair (:func:`~piquet_training.evaluation.paired.compare_reports`, ``piquet eval
  --compare``);
- :mod:`.variance`: the talon corrections that reduce a match's variance;
- :mod:`.greedy`: a training run's periodic evaluation of its greedy policy;
- :mod:`.every_deal`: an agent against a target on given deals in both seats (every deal of a
  small rule set: its value with no luck of the deal), each of its decisions told;
- :mod:`.stats`: the confidence intervals (Student-t for means, Wilson for rates) and the verdict
  words.
"""
