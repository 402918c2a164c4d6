"""The ``shmlint`` command line."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from shmlint._version import __version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (kept separate so docs and tests can inspect it)."""
    parser = argparse.ArgumentParser(
        prog="shmlint",
        description="Find and fix code that keeps Ray zero-copy shared-memory values alive.",
    )
    parser.add_argument("--version", action="version", version=f"shmlint {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 clean, 1 findings, 2 error)."""
    build_parser().parse_args(argv)
    return 0
