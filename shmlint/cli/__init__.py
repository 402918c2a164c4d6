"""The command line: argument parsing, input collection, output formats and exit codes."""

from shmlint.cli.command import console, main

__all__ = ["console", "main"]
