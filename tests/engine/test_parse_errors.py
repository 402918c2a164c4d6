"""A syntax error is located in the text checked, never in the file of the same name on disk
(CPython reads the error's line from a file named like the source, if there is one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shmlint.analysis.engine import check_bytes
from shmlint.basics.config import Config

BROKEN = "import ray\nclass A:\n        x = 1\n\n    def f(self):\n        return ray.get(1)\n"


def test_the_column_comes_from_the_text_not_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("m.py").write_text(BROKEN, encoding="utf-8")
    on_disk = check_bytes(BROKEN.encode(), "m.py", Config()).findings
    Path("m.py").write_text("import ray\n" * 3 + "x = 1" + " " * 40 + "\n" * 3, encoding="utf-8")
    elsewhere = check_bytes(BROKEN.encode(), "m.py", Config()).findings
    assert [(f.code, f.line, f.col) for f in on_disk] == [("SHM001", 5, 16)]
    assert elsewhere == on_disk
