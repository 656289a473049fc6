"""Self-play training, evaluation and rating of Piquet policies, and the ``piquet`` command line."""
