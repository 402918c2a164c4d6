"""Which files a run checks: walk the given paths, skipping excluded directories and files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from shmlint.config import Config, path_matches


def _excluded(path: Path, config: Config) -> bool:
    patterns = (*config.exclude, *config.extend_exclude)
    return any(path_matches(str(path), pattern, config.root) for pattern in patterns)


def iter_python_files(paths: list[str], config: Config) -> Iterator[tuple[Path, str]]:
    """Yield ``(path, display)`` for every file to check, in a stable order.

    A file named explicitly is always checked (as ruff and flake8 do); directories are walked,
    skipping excluded names (VCS dirs, virtualenvs, caches, build output, ``exclude`` /
    ``extend-exclude``). ``display`` keeps the spelling the user gave.
    Raises ``FileNotFoundError`` naming a path that does not exist.
    """
    for given in paths:
        root = Path(given)
        if root.is_file():
            yield root, given
            continue
        if not root.is_dir():
            raise FileNotFoundError(given)
        for directory, subdirs, files in os.walk(root):
            here = Path(directory)
            subdirs[:] = sorted(d for d in subdirs if not _excluded(here / d, config))
            for name in sorted(files):
                if not name.endswith(".py"):
                    continue
                path = here / name
                if not _excluded(path, config):
                    yield path, os.path.normpath(os.path.join(directory, name))
