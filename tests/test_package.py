"""Packaging: the console script, ``python -m``, the flake8 entry point, typing marker."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import shmlint


def test_version_flag() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "shmlint", "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == f"shmlint {shmlint.__version__}"
    from importlib.metadata import version

    assert version("shmlint") == shmlint.__version__  # pyproject reads the same string


def test_flake8_entry_point_is_registered() -> None:
    plugins = {ep.name: ep.value for ep in entry_points(group="flake8.extension")}
    assert plugins.get("SHM") == "shmlint.flake8_plugin:Plugin"
    out = subprocess.run(
        [sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert "shmlint" in out


def test_py_typed_is_shipped() -> None:
    assert (Path(shmlint.__file__).parent / "py.typed").is_file()


def test_console_script_is_the_fast_exit_entry() -> None:
    scripts = {ep.name: ep.value for ep in entry_points(group="console_scripts")}
    assert scripts.get("shmlint") == "shmlint.cli:console"


RETAINING = """import numpy as np
import ray


def fetch_{n}(ref) -> np.ndarray:
    return ray.get(ref)
"""


@pytest.mark.parametrize("how", ["module", "script"])
def test_fast_exit_loses_no_output(tmp_path: Path, how: str) -> None:
    """The process ends without the interpreter's teardown (shmlint.cli.console): what main
    wrote must still reach the pipe in full — far more than one buffer — with its exit code."""
    count = 400
    source = "".join(RETAINING.format(n=n) for n in range(count))
    (tmp_path / "many.py").write_text(source, encoding="utf-8")
    script = shutil.which("shmlint", path=str(Path(sys.executable).parent))
    assert script is not None
    head = [sys.executable, "-m", "shmlint"] if how == "module" else [script]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # as a user's
    for form in ("text", "json"):  # (line by line; one write)
        command = [*head, "check", "--no-cache", "--output-format", form, "many.py"]
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 1, done.stderr
        assert len(done.stdout) > 64 * 1024  # more than a pipe holds and than stdout buffers
        if form == "json":
            assert sum(f["code"] == "SHM101" for f in json.loads(done.stdout)) == count
        else:
            lines = done.stdout.splitlines()
            assert sum(" SHM101 " in line for line in lines) == count
            assert lines[-1] == f"Found {count} findings."
    missing = subprocess.run([*head, "check", "absent.py"], cwd=tmp_path, capture_output=True)
    assert missing.returncode == 2 and b"absent.py" in missing.stderr


def test_console_runs_main_without_cycle_collection(monkeypatch: pytest.MonkeyPatch) -> None:
    """One run, then the process ends: no cycle collection during it, main's exit code."""
    import gc

    from shmlint.cli import command

    seen: list[bool] = []

    class Exited(Exception):
        pass

    def fake_main() -> int:
        seen.append(gc.isenabled())
        return 1

    def fake_exit(code: int) -> None:
        raise Exited(code)

    monkeypatch.setattr(command, "main", fake_main)
    monkeypatch.setattr(os, "_exit", fake_exit)
    try:
        with pytest.raises(Exited) as exited:
            command.console()
    finally:
        gc.enable()
    assert seen == [False] and exited.value.args == (1,)
