"""The flake8 plugin reports exactly what ``shmlint check`` reports, fixture by fixture."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixture_markers import fixture_files

pytest.importorskip("flake8")

Triple = tuple[str, int, int, str]


def _flake8(paths: list[Path], cwd: Path) -> set[Triple]:
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


def _shmlint(paths: list[Path], cwd: Path) -> set[Triple]:
    proc = subprocess.run(
        [sys.executable, "-m", "shmlint", "check", "--output-format", "json", *map(str, paths)],
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
    from_shmlint = _shmlint(copies, tmp_path)
    assert from_shmlint, "the fixtures must produce findings"
    assert from_flake8 == from_shmlint
