"""Running the command line in process, for the tests of its behaviour."""

from __future__ import annotations

import pytest

from shmlint.cli import main


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``shmlint ARGS``: its exit code, standard output and standard error."""
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err
