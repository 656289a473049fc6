"""``python -m piquet_training.cli`` runs the ``piquet`` command line."""

import sys

from piquet_training.cli import main

sys.exit(main())
