"""``--fix`` keeps every line end of a file, the last one too (libcst drops a lone ``\\r``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shmlint.cli import main

MAC = b"import ray\rimport numpy as np\r\r\rdef f(ref) -> np.ndarray:\r    return ray.get(ref)\r"


@pytest.mark.parametrize(
    ("source", "fixed"),
    [
        pytest.param(
            b"import ray\ndef f(ref):\n    return ray.get(ref)\r",
            b"    return detach_zero_copy(ray.get(ref))\r",
            id="a-final-lone-cr",
        ),
        pytest.param(MAC, b"    return detach_zero_copy(ray.get(ref))\r", id="old-mac"),
        pytest.param(
            MAC.replace(b"\r", b"\r\n") + b"\r\n",
            b"    return detach_zero_copy(ray.get(ref))\r\n\r\n",
            id="crlf-blank-line",
        ),
    ],
)
def test_the_line_ends_are_kept(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    source: bytes,
    fixed: bytes,
) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "a.py"
    path.write_bytes(source)
    assert main(["check", "--no-cache", "--fix", "--min-confidence", "medium", "a.py"]) == 0
    assert "(1 fixed, 0 remaining)" in capsys.readouterr().out
    data = path.read_bytes()
    assert data.endswith(fixed)
    if b"\n" not in source:  # old Mac: every line end stays a lone \r
        assert b"\n" not in data
    elif b"\r\n" in source:  # Windows: no lone \r or \n appears
        assert data.count(b"\r") == data.count(b"\n") == data.count(b"\r\n")
