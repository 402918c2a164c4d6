"""flake8 entry point ``SHM``: a thin adapter over the engine.

It reuses flake8's own ``tree`` (no second parse) and reads ``[tool.shmlint]`` from the nearest
``pyproject.toml``, so ``flake8 --select SHM`` reports what ``shmlint check`` reports.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from shmlint._version import __version__
from shmlint.config import Config, find_pyproject, load_config
from shmlint.engine import analyze_tree, may_contain_source


@functools.lru_cache(maxsize=256)
def _config_for(directory: Path) -> Config:
    # One lookup per directory: flake8 calls the plugin once per file.
    return load_config(find_pyproject(directory))


class Plugin:
    """flake8 plugin reporting shmlint's ``SHM`` codes."""

    name = "shmlint"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str = "stdin", lines: Sequence[str] = ()) -> None:
        self._tree = tree
        self._filename = filename
        self._lines = [line.rstrip("\r\n") for line in lines]

    def run(self) -> Iterator[tuple[int, int, str, type[Any]]]:
        """Yield flake8 results: (line, column, "SHMxxx message", type)."""
        if not isinstance(self._tree, ast.Module):
            return
        path = Path(self._filename)
        directory = path.parent if self._filename not in ("stdin", "-") else Path.cwd()
        config = _config_for(directory.resolve())
        text = "\n".join(self._lines)
        if not may_contain_source(text, config.options):
            return
        for finding in analyze_tree(self._tree, self._lines, self._filename, config, text):
            yield finding.line, finding.col, f"{finding.code} {finding.message}", type(self)
