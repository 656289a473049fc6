"""The benchmark protocol: a policy's row, measured the same way for everyone.

- :mod:`.protocol`: the protocol as data (its matches, exploit budget and exact measure); reading
  it imports no torch;
- :mod:`.run`: :func:`~piquet_training.benchmark.run.run_benchmark`, one row played, resumable;
- :mod:`.work`: the parts of a row already played, kept between sittings;
- :mod:`.results`: a result file written, read back and checked, and the leaderboard.
"""
