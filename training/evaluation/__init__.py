"""Evaluating agents: duplicate-deal matches, round-robin ladders with ratings, and statistics.

- :mod:`.duplicate`: :func:`~piquet_training.evaluation.duplicate.evaluate`, a duplicate-deal match
  between two agents with 95% intervals and a verdict;
- :mod:`.ladder`: a round-robin of duplicate matches, points and openskill ratings;
- :mod:`.stats`: the confidence intervals (Student-t for means, Wilson for rates) and the verdict
  words.
"""
