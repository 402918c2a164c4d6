"""Packaging: the console script, ``python -m``, the flake8 entry point, typing marker."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

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
