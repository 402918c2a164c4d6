"""Which configuration a run reads: the nearest one above the deepest directory holding every
path given, whatever their order."""

from __future__ import annotations

from pathlib import Path

import pytest

from shmlint.cli import main

RETAINING = """import numpy as np
import ray


def fetch(ref) -> np.ndarray:
    return ray.get(ref)
"""


def _found(args: list[str], capsys: pytest.CaptureFixture[str]) -> int:
    main(["check", "--no-cache", "--exit-zero", "--output-format", "json", *args])
    return capsys.readouterr().out.count('"code": "SHM101"')


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "top.py").write_text(RETAINING, encoding="utf-8")
    (tmp_path / "sub" / "b.py").write_text(RETAINING, encoding="utf-8")
    (tmp_path / "sub" / "pyproject.toml").write_text(
        '[tool.shmlint]\nignore = ["SHM101"]\n', encoding="utf-8"
    )
    return tmp_path


def test_the_order_of_paths_does_not_matter(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _found(["top.py", "sub/b.py"], capsys) == 2
    assert _found(["sub/b.py", "top.py"], capsys) == 2


def test_a_path_below_a_configuration_reads_it(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _found(["sub/b.py"], capsys) == 0
    assert _found(["sub"], capsys) == 0
    assert _found(["sub/b.py", "sub"], capsys) == 0
