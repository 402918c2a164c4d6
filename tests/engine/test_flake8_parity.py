"""The flake8 plugin reports exactly what ``shmlint check --per-file`` reports, fixture by
fixture; with ``--shm-summary`` it reports what the project-wide ``shmlint check`` reports."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixture_markers import FIXTURES, fixture_files

pytest.importorskip("flake8")

Triple = tuple[str, int, int, str]


def _flake8(paths: list[Path], cwd: Path, *extra: str) -> set[Triple]:
    fmt = "%(path)s|%(row)d|%(col)d|%(code)s"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "flake8",
            "--isolated",
            "--select",
            "SHM",
            f"--format={fmt}",
            *extra,
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        cwd=cwd,
    )
    assert proc.returncode in (0, 1), proc.stderr
    rows = set()
    for line in proc.stdout.splitlines():
        path, row, col, code = line.split("|")
        rows.add((Path(path).name, int(row), int(col), code))
    return rows


def _shmlint(paths: list[Path], cwd: Path, *extra: str) -> set[Triple]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "shmlint",
            "check",
            "--no-cache",
            "--output-format",
            "json",
            *extra,
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        cwd=cwd,
    )
    assert proc.returncode in (0, 1), proc.stderr
    import json

    return {
        (Path(f["path"]).name, f["line"], f["column"], f["code"]) for f in json.loads(proc.stdout)
    }


@pytest.mark.parametrize("confidence", ["high", "medium"])
def test_flake8_and_shmlint_agree_on_every_fixture(tmp_path: Path, confidence: str) -> None:
    # A project of its own, so both tools read the same [tool.shmlint] table.
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.shmlint]\nmin-confidence = "{confidence}"\n', encoding="utf-8"
    )
    copies = []
    for fixture in fixture_files():
        copy = tmp_path / fixture.name
        shutil.copyfile(fixture, copy)
        copies.append(copy)
    from_flake8 = _flake8(copies, tmp_path)
    from_shmlint = _shmlint(copies, tmp_path, "--per-file")
    assert from_shmlint, "the fixtures must produce findings"
    assert from_flake8 == from_shmlint


def test_flake8_with_a_summary_reports_the_project_findings(tmp_path: Path) -> None:
    case = tmp_path / "wrapper"
    shutil.copytree(FIXTURES / "project" / "wrapper", case)
    files = sorted(case.rglob("*.py"))
    summary = tmp_path / "summary.json"
    project = _shmlint([case], case, "--write-summary", str(summary))
    assert summary.is_file()
    per_file = _flake8(files, case)
    with_summary = _flake8(files, case, f"--shm-summary={summary}")
    assert with_summary == project
    assert per_file != project  # the cross-module findings need the summary


def test_a_bad_summary_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "summary.json"
    bad.write_text("{}", encoding="utf-8")
    source = tmp_path / "m.py"
    source.write_text("import ray\nx = ray.get(1)\n", encoding="utf-8")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "flake8",
            "--isolated",
            "--select",
            "SHM",
            "--shm-summary",
            str(bad),
            str(source),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    assert "summary.json" in proc.stderr and "cannot read the summary" in proc.stderr


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_bad_configuration_is_one_finding_per_file_not_a_traceback(
    tmp_path: Path, jobs: str
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.shmlint]\nfoo = 1\n", encoding="utf-8")
    (tmp_path / "a.py").write_text("import ray\nx = ray.get(1)\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("x = 1  # " + "long " * 16 + "\n", encoding="utf-8")

    def flake8(select: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "flake8", "-j", jobs, "--select", select, "a.py", "b.py"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )

    other = flake8("E501")  # shmlint's codes not selected: the other checks run as usual
    assert (other.returncode, other.stderr) == (1, "")
    assert other.stdout.splitlines() == ["b.py:1:80: E501 line too long (88 > 79 characters)"]
    both = flake8("E501,SHM")
    assert (both.returncode, both.stderr) == (1, "")
    message = "SHM001 {}: unknown key tool.shmlint.foo (shmlint did not check the file)"
    assert both.stdout.splitlines() == [
        f"a.py:1:1: {message.format(tmp_path / 'pyproject.toml')}",
        f"b.py:1:1: {message.format(tmp_path / 'pyproject.toml')}",
        "b.py:1:80: E501 line too long (88 > 79 characters)",
    ]


KEPT_THEN_RETURNED = """import numpy as np
import ray

HISTORY: list = []


def f(ref) -> np.ndarray:
    x: np.ndarray = ray.get(ref)
    HISTORY.append(x)
    return x
"""


@pytest.mark.parametrize(
    "selection",
    [("--ignore", "SHM103"), ("--extend-ignore", "SHM103"), ("-j", "2", "--ignore", "SHM103")],
)
def test_a_sink_flake8_ignores_hides_no_other(tmp_path: Path, selection: tuple[str, ...]) -> None:
    """flake8's own selection reaches the analysis, as shmlint's does (a read is reported at
    the first sink kept: tests/engine/test_suppressed_sinks.py)."""
    path = tmp_path / "m.py"
    path.write_text(KEPT_THEN_RETURNED, encoding="utf-8")
    assert {(r[1], r[3]) for r in _flake8([path], tmp_path)} == {(9, "SHM103")}
    assert {(r[1], r[3]) for r in _flake8([path], tmp_path, *selection)} == {(10, "SHM101")}


def test_disable_noqa_shows_what_noqa_hides(tmp_path: Path) -> None:
    """flake8's --disable-noqa: the plugin leaves `# noqa` to flake8 (it dropped them itself)."""
    path = tmp_path / "m.py"
    source = KEPT_THEN_RETURNED.replace("HISTORY.append(x)", "HISTORY.append(x)  # noqa: SHM103")
    path.write_text(source, encoding="utf-8")
    assert {(r[1], r[3]) for r in _flake8([path], tmp_path)} == {(10, "SHM101")}
    shown = {(r[1], r[3]) for r in _flake8([path], tmp_path, "--disable-noqa")}
    assert shown == {(9, "SHM103")}
