"""Which files a run checks: walk the given paths, skipping excluded directories and files."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator
from pathlib import Path

from shmlint.basics.config import Config


class _Excluder:
    """``exclude`` / ``extend-exclude`` globs, matched against a path relative to the project
    root, its name, or any of its parent directories (as ``path_matches``), computed without
    touching the filesystem per file."""

    def __init__(self, config: Config) -> None:
        self.root = (config.root or Path.cwd()).resolve()
        patterns = [p.rstrip("/") for p in (*config.exclude, *config.extend_exclude)]
        # One regex for every glob (matched against the name and the relative path), and
        # the patterns as literal directory prefixes: one match per file, not one per pattern.
        globs = "|".join(f"(?:{fnmatch.translate(p)})" for p in patterns)
        self._glob = re.compile(globs) if patterns else None
        self._prefixes = tuple(p + "/" for p in patterns)

    def relative(self, absolute: str) -> str:
        relative = os.path.relpath(absolute, self.root)
        return absolute if relative.startswith("..") else relative.replace(os.sep, "/")

    def excluded(self, relative: str, name: str) -> bool:
        if self._glob is None:
            return False
        match = self._glob.match
        return bool(match(name) or match(relative)) or relative.startswith(self._prefixes)


def iter_python_files(paths: list[str], config: Config) -> Iterator[tuple[Path, str]]:
    """Yield ``(path, display)`` for every file to check, in a stable order.

    A file named explicitly is always checked (as ruff and flake8 do); directories are walked,
    skipping excluded names (VCS dirs, virtualenvs, caches, build output, ``exclude`` /
    ``extend-exclude``). ``display`` keeps the spelling the user gave.
    Raises ``FileNotFoundError`` naming a path that does not exist.
    """
    excluder = _Excluder(config)
    for given in paths:
        root = Path(given)
        if root.is_file():
            yield root, given
            continue
        if not root.is_dir():
            raise FileNotFoundError(given)
        base = os.path.abspath(given)
        for directory, subdirs, files in os.walk(given):
            here = excluder.relative(
                os.path.normpath(os.path.join(base, os.path.relpath(directory, given)))
            )
            prefix = "" if here == "." else f"{here}/"
            subdirs[:] = sorted(d for d in subdirs if not excluder.excluded(prefix + d, d))
            for name in sorted(files):
                if name.endswith(".py") and not excluder.excluded(prefix + name, name):
                    path = os.path.join(directory, name)
                    yield Path(path), os.path.normpath(path)
