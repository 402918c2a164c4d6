"""Module names from the package layout, as the import system would see them.

A file's package is the chain of directories holding ``__init__.py`` above it (``pkg/sub/m.py``
with both ``__init__.py`` files is ``pkg.sub.m``). Under a ``src/`` directory of the project
root, directories without ``__init__.py`` are namespace packages (PEP 420), so
``src/ns/pkg/m.py`` is ``ns.pkg.m`` too. Elsewhere a directory without ``__init__.py`` is not a
package (a script directory): ``examples/m.py`` is ``m``. This is what ruff assumes without its
``namespace-packages`` setting; a corpus unpacked under ``.corpus/vllm-0.19.1/vllm/`` is
``vllm.*``.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path


@functools.lru_cache(maxsize=4096)
def _is_package(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "__init__.py"))


def module_name(path: str, root: Path | None = None) -> tuple[str, bool]:
    """``(dotted module name, is_package)`` of the file at ``path`` (``is_package`` for an
    ``__init__.py``, whose module is its directory)."""
    absolute = os.path.abspath(path)
    directory, filename = os.path.split(absolute)
    stem = filename[:-3] if filename.endswith(".py") else filename
    is_package = stem == "__init__"
    parts = [] if is_package else [stem]
    while _is_package(directory):
        directory, name = os.path.split(directory)
        parts.insert(0, name)
        if not name:
            break
    if root is not None:
        src = os.path.join(os.path.abspath(root), "src")
        # Namespace packages: only between `src/` and the regular package found above.
        relative = os.path.relpath(directory, src)
        if relative != "." and not relative.startswith(".."):
            names = relative.split(os.sep)
            if all(name.isidentifier() for name in names):
                parts = names + parts
    if not parts:  # `__init__.py` at a filesystem root: no name to give
        parts = ["__init__"]
    return ".".join(parts), is_package


def absolute_import(name: str, module: str, is_package: bool) -> str:
    """``.x.Y`` imported in ``module`` → ``pkg.x.Y``; absolute names are returned unchanged."""
    if not name.startswith("."):
        return name
    level = len(name) - len(name.lstrip("."))
    rest = name[level:]
    package = module if is_package else module.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    if not package:
        return rest
    return f"{package}.{rest}" if rest else package
