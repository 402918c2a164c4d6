"""Which files a run checks: walk the given paths, skipping excluded directories and files;
and read them."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator
from pathlib import Path

from shmlint.basics.config import Config


class _Excluder:
    """``exclude`` / ``extend-exclude`` globs, matched against a path relative to the project
    root or its name (with ``--force-exclude``, also its parent directories' paths and names),
    computed without touching the filesystem per file."""

    def __init__(self, config: Config) -> None:
        self.root = (config.root or Path.cwd()).resolve()
        patterns = [self._rooted(p.rstrip("/")) for p in (*config.exclude, *config.extend_exclude)]
        # One regex for every glob (matched against the name and the relative path): one
        # match per file, not one per pattern.
        globs = "|".join(f"(?:{fnmatch.translate(p)})" for p in patterns)
        self._glob = re.compile(globs) if patterns else None

    def _rooted(self, pattern: str) -> str:
        """An absolute pattern below the root, as the relative one it means (ruff honours
        ``--extend-exclude /abs/gen``); any other pattern as given."""
        if not os.path.isabs(pattern):
            return pattern
        relative = os.path.relpath(pattern, self.root)
        return pattern if relative.startswith("..") else relative.replace(os.sep, "/")

    def relative(self, absolute: str) -> str:
        relative = os.path.relpath(absolute, self.root)
        return absolute if relative.startswith("..") else relative.replace(os.sep, "/")

    def excluded(self, relative: str, name: str) -> bool:
        """An entry met walking a directory: its name or its path matches a pattern. (Its
        parent directories are not looked at: a directory found excluded is not entered,
        and one named on the command line is walked, as ruff, whatever it lies in.)"""
        if self._glob is None:
            return False
        match = self._glob.match
        return bool(match(name) or match(relative))

    def excludes_named(self, path: str) -> bool:
        """:meth:`excluded_path` of ``path`` as named (relative to the current directory)."""
        return self.excluded_path(self.relative(os.path.abspath(path)))

    def excluded_path(self, relative: str) -> bool:
        """A path named on the command line, with ``--force-exclude``: it, or a directory it
        lies in, is excluded."""
        if self._glob is None or relative.startswith(("../", "/")) or relative in (".", ".."):
            return False
        match = self._glob.match
        parts = relative.split("/")
        for end in range(1, len(parts) + 1):
            if match(parts[end - 1]) or match("/".join(parts[:end])):
                return True
        return False


def iter_python_files(
    paths: list[str], config: Config, *, force_exclude: bool = False
) -> Iterator[tuple[Path, str]]:
    """Yield ``(path, display)`` for every file to check, in a stable order.

    A file or directory named explicitly is checked (as ruff and flake8 do: excluded names
    apply below a named directory, not to it) unless ``force_exclude`` (ruff's
    ``--force-exclude``: for pre-commit, which names every file); directories are walked,
    skipping excluded names (VCS dirs, virtualenvs, caches, build output, ``exclude`` /
    ``extend-exclude``). ``display`` keeps the spelling the user gave.
    Raises ``FileNotFoundError`` naming a path that does not exist.
    """
    for path, display in iter_file_names(paths, config, force_exclude=force_exclude):
        yield Path(path), display


def is_excluded(path: str, config: Config) -> bool:
    """``path`` (a file or directory, which need not exist) lies under ``exclude`` /
    ``extend-exclude``: what ``--force-exclude`` skips, stdin's ``--stdin-filename`` too."""
    return _Excluder(config).excludes_named(path)


def iter_file_names(
    paths: list[str], config: Config, *, force_exclude: bool = False
) -> Iterator[tuple[str, str]]:
    """:func:`iter_python_files` with each path as the string ``str(path)`` would give: a warm
    run needs no more (building a ``Path`` per file was most of its walk)."""
    excluder = _Excluder(config)
    for given in paths:
        root = Path(given)
        if force_exclude and excluder.excludes_named(given):
            if not (root.is_file() or root.is_dir()):
                raise FileNotFoundError(given)
            continue
        if root.is_file():
            yield str(root), given
            continue
        if not root.is_dir():
            raise FileNotFoundError(given)
        here = excluder.relative(os.path.abspath(given))
        display = os.path.normpath(given)
        yield from _walk(
            str(root), "" if display == "." else display, "" if here == "." else here, excluder
        )


def _walk(
    directory: str, display: str, relative: str, excluder: _Excluder
) -> Iterator[tuple[str, str]]:
    """The files of ``directory``, then its subdirectories', each in name order (as
    ``os.walk`` top-down, not into symbolic links to directories, unreadable ones skipped).
    ``directory`` is spelled as ``str(Path(...))`` spells it; it, ``display`` and ``relative``
    (to the project root) are built by joining names: no path is parsed, normalised or made
    relative per file."""
    try:
        with os.scandir(directory) as found:
            entries = sorted(found, key=_name)
    except OSError:
        return
    subdirs = []
    prefix = f"{relative}/" if relative else ""
    shown = f"{display}{os.sep}" if display else ""
    # What `Path(directory) / name` spells: no `./` before a name, and no second separator
    # after a root ("/", POSIX's "//": the only spellings of `str(Path)` ending in one).
    inside = "" if directory == "." else directory.removesuffix(os.sep) + os.sep
    for entry in entries:
        name = entry.name
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            if not excluder.excluded(prefix + name, name) and not entry.is_symlink():
                subdirs.append(entry)
        elif name.endswith(".py") and not excluder.excluded(prefix + name, name):
            yield inside + name, shown + name
    for entry in subdirs:
        name = entry.name
        yield from _walk(inside + name, shown + name, prefix + name, excluder)


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def read_file(path: Path) -> bytes | None:
    """A file's bytes (None: it cannot be read)."""
    try:
        return path.read_bytes()
    except OSError:
        return None
