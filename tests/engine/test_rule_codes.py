"""Unknown rule codes are errors (exit 2, naming the code), on the command line and in the
configuration alike, as ruff does: a typo must not select (or ignore) nothing silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from shmlint.analysis.rules import RULES
from shmlint.basics.config import ALL_CODES, is_rule_selector
from shmlint.cli import main

RETAINING = (
    "import numpy as np\nimport ray\n\n\ndef fetch(ref) -> np.ndarray:\n    return ray.get(ref)\n"
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.py").write_text(RETAINING, encoding="utf-8")
    return tmp_path


def test_the_configuration_knows_every_rule() -> None:
    assert set(ALL_CODES) == set(RULES)


@pytest.mark.parametrize("code", ["SHM", "SHM1", "SHM10", "SHM101", "SHM3", "SHM301", "SHM0"])
def test_codes_and_prefixes_of_rules_are_selectors(code: str) -> None:
    assert is_rule_selector(code)


@pytest.mark.parametrize(
    "code", ["SHM999", "SHM4", "SHM202", "SHM108", "SHM1011", "E501", "", "shm101"]
)
def test_other_codes_are_not(code: str) -> None:
    assert not is_rule_selector(code)


@pytest.mark.parametrize(
    ("args", "option", "code"),
    [
        (["--select", "SHM999"], "--select", "SHM999"),
        (["--select", "SHM101,SHM4"], "--select", "SHM4"),
        (["--ignore", "shm108"], "--ignore", "SHM108"),
        (["baseline", "--write", "base.json", "--ignore", "SHM9"], "--ignore", "SHM9"),
    ],
)
def test_unknown_code_on_the_command_line_is_exit_2(
    project: Path, capsys: pytest.CaptureFixture[str], args: list[str], option: str, code: str
) -> None:
    status = main([*args, "."])
    err = capsys.readouterr().err
    assert status == 2
    assert f"{option}: unknown rule code {code!r}" in err
    assert "Traceback" not in err and not (project / "base.json").exists()


def test_known_codes_still_select(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--select", "SHM1", "."]) == 1
    assert main(["--select", "SHM301", "."]) == 0
    assert main(["--ignore", "SHM101", "."]) == 0
    capsys.readouterr()


@pytest.mark.parametrize(
    ("table", "key", "code"),
    [
        ('select = ["SHM109"]', "tool.shmlint.select", "SHM109"),
        ('ignore = ["SHM1", "SHM4"]', "tool.shmlint.ignore", "SHM4"),
        ('per-file-ignores = { "tests/*" = ["X100"] }', "tool.shmlint.per-file-ignores", "X100"),
    ],
)
def test_unknown_code_in_the_configuration_is_exit_2(
    project: Path, capsys: pytest.CaptureFixture[str], table: str, key: str, code: str
) -> None:
    (project / "pyproject.toml").write_text(f"[tool.shmlint]\n{table}\n", encoding="utf-8")
    status = main(["."])
    err = capsys.readouterr().err
    assert status == 2
    assert f"{key}: unknown rule code {code!r}" in err and "pyproject.toml" in err
