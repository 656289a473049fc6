"""``python -m piquet_cli`` runs the ``piquet`` command line."""

import sys

from piquet_cli import main

sys.exit(main())
