"""File names that are not UTF-8 (read by Python as surrogate escapes) are checked and printed
safely in every format, with and without the cache; an internal error exits 2."""

from __future__ import annotations

import ast
import io
import json
import os
from pathlib import Path

import pytest

from shmlint.cli import main

SOURCE = "import numpy as np\nimport ray\n\n\ndef f(ref) -> np.ndarray:\n    return ray.get(ref)\n"
NAME = os.fsdecode(b"\xff.py")  # "\udcff.py"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / NAME).write_text(SOURCE)
    (tmp_path / "A.py").write_text(SOURCE)
    return tmp_path


def run_strict(args: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """Run with a stdout that refuses surrogates, as a UTF-8 terminal's does."""
    buffer = io.BytesIO()
    stream = io.TextIOWrapper(buffer, encoding="utf-8", errors="strict", write_through=True)
    monkeypatch.setattr("sys.stdout", stream)
    code = main(args)
    stream.flush()
    return code, buffer.getvalue().decode("utf-8")


@pytest.mark.parametrize("output", ["text", "json", "sarif", "github"])
@pytest.mark.parametrize("extra", [["--no-cache"], ["--no-cache", "--per-file"], []])
def test_a_non_utf8_file_name_is_checked_and_printed(
    tree: Path, monkeypatch: pytest.MonkeyPatch, output: str, extra: list[str]
) -> None:
    for _ in range(2):  # (with the cache: a cold run, then a warm one)
        code, out = run_strict(["check", *extra, "--output-format", output, "."], monkeypatch)
        assert code == 1
        if output == "json":
            assert sorted(f["path"] for f in json.loads(out)) == ["A.py", "\ufffd.py"]
        elif output in ("text", "github"):
            assert "\ufffd.py" in out and "A.py" in out


def test_the_diff_of_a_non_utf8_file_name(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = run_strict(["check", "--no-cache", "--diff", NAME], monkeypatch)
    assert code == 1 and out.startswith("--- \ufffd.py\n+++ \ufffd.py\n")


def test_the_flake8_plugin_checks_a_non_utf8_file_name() -> None:
    from shmlint.flake8_plugin import Plugin

    lines = SOURCE.splitlines(keepends=True)
    found = list(Plugin(ast.parse(SOURCE), NAME, lines).run())
    assert [(line, code.split()[0]) for line, _, code, _ in found] == [(6, "SHM101")]


def test_an_internal_error_exits_2_with_its_traceback(
    tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr("shmlint.cli.command.collect", broken)
    assert main(["check", "--no-cache", "A.py"]) == 2
    err = capsys.readouterr().err
    assert "RuntimeError: a bug" in err and "shmlint: error: internal error" in err
