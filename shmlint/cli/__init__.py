"""The command line: argument parsing, input collection, output formats and exit codes."""

from shmlint.cli.command import main

__all__ = ["main"]
