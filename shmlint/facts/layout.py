"""Module names from the package layout, as the import system would see them.

A file's package is the chain of directories holding ``__init__.py`` above it (``pkg/sub/m.py``
with both ``__init__.py`` files is ``pkg.sub.m``). A directory without ``__init__.py`` inside a
regular package is a namespace package (PEP 420: ``pkg/gen/m.py`` with only ``pkg/__init__.py``
is imported as ``pkg.gen.m``, as Ray's ``ray/serve/generated/`` is), up to the project root.
Under a ``src/`` directory of the project root, directories without ``__init__.py`` are
namespace packages too, so ``src/ns/pkg/m.py`` is ``ns.pkg.m``. Elsewhere a directory without
``__init__.py`` is not a package (a script directory): ``examples/m.py`` is ``m``. A corpus
unpacked under ``.corpus/vllm-0.19.1/vllm/`` is ``vllm.*``."""

from __future__ import annotations

import functools
import os
from pathlib import Path


@functools.lru_cache(maxsize=4096)
def _is_package(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "__init__.py"))


@functools.lru_cache(maxsize=4096)
def _real(directory: str) -> str:
    return os.path.realpath(directory)


def _portions(directory: str, root: str | None) -> list[str]:
    """The names of the directories without ``__init__.py`` from ``directory`` up to a
    regular package holding them (``pkg/gen/m.py`` with only ``pkg/__init__.py``: ``gen``,
    imported as ``pkg.gen.m``); none when no regular package holds them (a script
    directory), or one of them is no identifier or not below ``root`` (a real path: the
    project may be named through a symbolic link)."""
    names: list[str] = []
    while not _is_package(directory):
        parent, name = os.path.split(directory)
        if parent == directory or not name.isidentifier():
            return []
        if root is not None and not _real(directory).startswith(root.rstrip(os.sep) + os.sep):
            return []
        names.insert(0, name)
        directory = parent
    return names


def _packages(directory: str, root: str | None) -> tuple[str, list[str]]:
    """The packages holding ``directory`` (itself included), outermost first: regular ones,
    and namespace ones inside a regular one; with the directory above the outermost."""
    names: list[str] = []
    while True:
        while _is_package(directory):
            directory, name = os.path.split(directory)
            if not name:  # (`__init__.py` at a filesystem root: no name to give)
                return directory, names
            names.insert(0, name)
        portions = _portions(directory, root)
        if not portions:
            return directory, names
        names[:0] = portions
        for _ in portions:
            directory = os.path.dirname(directory)


def module_name(path: str, root: Path | None = None) -> tuple[str, bool]:
    """``(dotted module name, is_package)`` of the file at ``path`` (``is_package`` for an
    ``__init__.py``, whose module is its directory)."""
    absolute = os.path.abspath(path)
    directory, filename = os.path.split(absolute)
    stem = filename[:-3] if filename.endswith(".py") else filename
    is_package = stem == "__init__"
    real_root = None if root is None else _real(os.path.abspath(root))
    parts = [*_directory_parts(directory, real_root), *([] if is_package else [stem])]
    if not parts:  # `__init__.py` at a filesystem root: no name to give
        parts = ["__init__"]
    return ".".join(parts), is_package


@functools.lru_cache(maxsize=8192)
def _directory_parts(directory: str, real_root: str | None) -> tuple[str, ...]:
    """The module name parts of a file's directory (once per directory: a tree's files
    share a few hundred; a run names every file's module, 50 µs each without)."""
    directory, packages = _packages(directory, real_root)
    parts = list(packages)
    if real_root is not None:
        src = os.path.join(real_root, "src")
        # Namespace packages: only between `src/` and the regular package found above.
        relative = os.path.relpath(_real(directory), src)
        if relative != "." and not relative.startswith(".."):
            names = relative.split(os.sep)
            if all(name.isidentifier() for name in names):
                parts = names + parts
    return tuple(parts)


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
