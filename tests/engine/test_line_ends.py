"""Files with ``\\r`` (old Mac) or mixed line ends are checked as Python reads them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from shmlint.cli import main

MAC = b"import ray\rimport numpy as np\r\r\rdef f(ref) -> np.ndarray:\r    return ray.get(ref)\r"


@pytest.mark.parametrize("source", [MAC, MAC.replace(b"\r", b"\r\n"), MAC.replace(b"\r", b"\n")])
@pytest.mark.parametrize("extra", [[], ["--no-prefilter"], ["--per-file"], ["--isolated"]])
def test_a_file_with_any_line_ends_is_checked(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    source: bytes,
    extra: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mac.py").write_bytes(source)
    for _ in range(2):  # (cold, then from the cache)
        assert main(["check", *extra, "mac.py"]) == 1
        assert capsys.readouterr().out.startswith("mac.py:6:5: SHM101 ")


def test_a_lone_cr_in_a_string_is_not_a_new_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    source = MAC.replace(b"import ray\r", b"import ray\rDOC = '''a\rb'''\r")
    (tmp_path / "m.py").write_bytes(source)
    assert ast.parse(source).body[-1].body[0].lineno == 8  # type: ignore[attr-defined]
    assert main(["check", "--no-cache", "m.py"]) == 1
    assert capsys.readouterr().out.startswith("m.py:8:5: SHM101 ")
