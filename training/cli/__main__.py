"""``python -m piquet_cli`` runs the ``piquet`` command line."""

import sys

from piquet_cli import main

if __name__ == "__main__":  # not when a worker process (spawned) imports it
    sys.exit(main())
