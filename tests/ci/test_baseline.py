"""Baselines: today's findings are recorded by line-free fingerprints; only new ones report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shmlint.cli import main

TWO = """import numpy as np
import ray


def first(ref) -> np.ndarray:
    return ray.get(ref)


def second(ref) -> np.ndarray:
    value = ray.get(ref)
    return value
"""


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    return code, capsys.readouterr().out


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(TWO)
    return tmp_path


def test_baseline_silences_recorded_findings(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(["baseline", ".", "--write", "base.json"], capsys)
    assert code == 0 and "2 findings recorded" in out
    data = json.loads((project / "base.json").read_text())
    assert data["version"] == 1 and len(data["findings"]) == 2
    assert all("line" not in entry for entry in data["findings"])
    assert run(["check", "--baseline", "base.json", "."], capsys)[0] == 0


def test_line_shifts_and_renames_keep_matching(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(["baseline", ".", "--write", "base.json"], capsys)
    shifted = "# header\n\n\n" + TWO.replace("def first", "def renamed_first").replace(
        "def second", "def renamed_second"
    )
    (project / "a.py").write_text(shifted)
    assert run(["check", "--baseline", "base.json", "."], capsys)[0] == 0


def test_new_findings_are_reported(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(["baseline", ".", "--write", "base.json"], capsys)
    (project / "a.py").write_text(
        TWO + "\n\ndef third(ref) -> np.ndarray:\n    return ray.get(ref)\n"
    )
    code, out = run(["check", "--baseline", "base.json", "."], capsys)
    assert code == 1 and out.startswith("a.py:15:5: SHM101") and "Found 1 finding." in out
    # The same finding twice: the baseline entry covers one of them only.
    (project / "a.py").write_text(
        TWO + "\n\ndef first(ref) -> np.ndarray:\n    return ray.get(ref)\n"
    )
    assert run(["check", "--baseline", "base.json", "."], capsys)[0] == 1


def test_rewriting_drops_fixed_entries_and_never_adds_silently(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(["baseline", ".", "--write", "base.json"], capsys)
    fixed_one = TWO.replace("    return ray.get(ref)\n", "    return ray.get(ref).copy()\n")
    third = "\n\ndef third(other) -> np.ndarray:\n    return ray.get(other)\n"
    (project / "a.py").write_text(fixed_one + third)
    code, out = run(["baseline", ".", "--write", "base.json"], capsys)
    assert "1 finding recorded, 1 dropped" in out
    assert "1 finding not in the baseline were not added" in out
    assert len(json.loads((project / "base.json").read_text())["findings"]) == 1
    assert run(["check", "--baseline", "base.json", "."], capsys)[0] == 1  # `third` is new
    code, out = run(["baseline", ".", "--write", "base.json", "--add-new"], capsys)
    assert "2 findings recorded" in out
    assert run(["check", "--baseline", "base.json", "."], capsys)[0] == 0


def test_bad_baseline_file_is_exit_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "base.json").write_text("{not json")
    assert main(["check", "--baseline", "base.json", "."]) == 2
    assert "base.json" in capsys.readouterr().err
    assert main(["check", "--baseline", "missing.json", "."]) == 2


THIRD = """

def third(ref) -> np.ndarray:
    return ray.get(ref)
"""


@pytest.mark.parametrize("per_file", [[], ["--per-file"]])
def test_fix_and_diff_leave_baselined_findings_alone(
    project: Path, capsys: pytest.CaptureFixture[str], per_file: list[str]
) -> None:
    assert run(["baseline", "a.py", "--write", "base.json"], capsys)[0] == 0
    (project / "a.py").write_text(TWO + THIRD)
    check = ["check", "--no-cache", "--baseline", "base.json", *per_file]
    code, out = run([*check, "--diff", "a.py"], capsys)
    assert code == 1
    assert out.count("\n+    ") == 1 and "+    return detach_zero_copy(ray.get(ref))" in out
    code, out = run([*check, "--fix", "a.py"], capsys)
    assert (code, out) == (0, "Found 1 finding (1 fixed, 0 remaining).\n")
    text = (project / "a.py").read_text()
    assert text.count("detach_zero_copy(") == 1 and "    value = ray.get(ref)\n" in text
    assert run([*check, "a.py"], capsys) == (0, "All checks passed!\n")
    assert run([*check, "--fix", "a.py"], capsys) == (
        0,
        "Found 0 findings (0 fixed, 0 remaining).\n",
    )
