"""``python -m shmlint`` runs the command line."""

import sys

from shmlint.cli import main

if __name__ == "__main__":
    sys.exit(main())
