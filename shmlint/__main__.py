"""``python -m shmlint`` runs the command line."""

from shmlint.cli import console

if __name__ == "__main__":
    console()
