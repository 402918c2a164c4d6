"""Which codes a run reports: the more specific of `select` and `ignore` wins (`ignore` on a
tie), and a `--select` on the command line starts the rule set anew, as in ruff."""

from __future__ import annotations

from pathlib import Path

import pytest

from shmlint.basics.config import Config
from shmlint.cli import main

RETAINING = """import numpy as np
import ray


def fetch(ref) -> np.ndarray:
    return ray.get(ref)
"""


@pytest.mark.parametrize(
    ("select", "ignore", "enabled"),
    [
        (("SHM",), (), True),
        (("SHM101",), ("SHM1",), True),  # the more specific select wins
        (("SHM1",), ("SHM101",), False),  # the more specific ignore wins
        (("SHM101",), ("SHM101",), False),  # a tie: ignore
        (("SHM",), ("SHM",), False),
        (("SHM2",), (), False),
        (("SHM", "SHM101"), ("SHM10",), True),  # the most specific of several
    ],
)
def test_the_more_specific_prefix_wins(
    select: tuple[str, ...], ignore: tuple[str, ...], enabled: bool
) -> None:
    assert Config(select=select, ignore=ignore).is_enabled("SHM101") is enabled


def _exit(args: list[str], capsys: pytest.CaptureFixture[str]) -> int:
    code = main(["check", "--no-cache", *args, "m.py"])
    capsys.readouterr()
    return code


def test_command_line_select_starts_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(RETAINING, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.shmlint]\nignore = ["SHM101"]\n', encoding="utf-8"
    )
    assert _exit([], capsys) == 0
    assert _exit(["--select", "SHM101"], capsys) == 1  # the configuration's ignore is dropped
    assert _exit(["--select", "SHM101", "--ignore", "SHM101"], capsys) == 0
    assert _exit(["--select", "SHM101", "--extend-ignore", "SHM101"], capsys) == 0
    assert _exit(["--select", "SHM101", "--ignore", "SHM1"], capsys) == 1
    assert _exit(["--extend-select", "SHM101"], capsys) == 0  # a tie with the ignore: ignored


def test_repeated_options_accumulate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As ruff: `--extend-ignore A --extend-ignore B` ignores both (argparse kept the last)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(RETAINING, encoding="utf-8")
    assert _exit(["--extend-ignore", "SHM103", "--extend-ignore", "SHM101"], capsys) == 0
    assert _exit(["--ignore", "SHM101", "--ignore", "SHM103"], capsys) == 0
    assert _exit(["--select", "SHM103", "--select", "SHM101"], capsys) == 1
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "g.py").write_text(RETAINING, encoding="utf-8")
    main(["check", "--no-cache", "--extend-exclude", "m.py", "--extend-exclude", "gen", "."])
    assert capsys.readouterr().out.startswith("All checks passed!")


def test_an_empty_selection_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--no-cache", "--select", "", "."]) == 2
    assert "--select: expected a code or prefix" in capsys.readouterr().err
