"""A file libcst cannot handle is reported as not fixed; the run goes on with the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_run import run

SOURCE = "import numpy as np\nimport ray\n\n\ndef f(ref) -> np.ndarray:\n    return ray.get(ref)\n"


def test_a_long_chain_of_terms_is_not_fixed_and_the_rest_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    deep = SOURCE + "\nS = " + " + ".join(['"s"'] * 600) + "\n"
    (tmp_path / "a.py").write_text(deep, encoding="utf-8")
    (tmp_path / "b.py").write_text(SOURCE, encoding="utf-8")
    code, out, err = run(["check", "--no-cache", "--fix", "-j", "1", "."], capsys)
    assert "a.py: not fixed: the file is too deeply nested for libcst" in err
    assert (tmp_path / "a.py").read_text(encoding="utf-8") == deep
    assert "detach_zero_copy(ray.get(ref))" in (tmp_path / "b.py").read_text(encoding="utf-8")
    assert code == 1 and "1 fixed, 1 remaining" in out
