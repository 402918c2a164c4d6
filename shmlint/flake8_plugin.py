"""flake8 entry point ``SHM`` (the engine lands with the detection issue; until then, silent)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from shmlint._version import __version__


class Plugin:
    """flake8 plugin reporting shmlint's ``SHM`` codes."""

    name = "shmlint"
    version = __version__

    def __init__(self, tree: ast.AST) -> None:
        self._tree = tree

    def run(self) -> Iterator[tuple[int, int, str, type[Any]]]:
        """Yield flake8 results: (line, column, "SHMxxx message", type)."""
        yield from ()
