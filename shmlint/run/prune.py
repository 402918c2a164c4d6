"""Keeping the cache bounded: the least recently used entries go once it outgrows its limit.

Entries are keyed by content (a file's bytes, the facts' digest, the code's own digest), so a
changed file, configuration or shmlint leaves the old entries behind: each change of the
project's facts leaves ~10 MB on the ray wheel (its facts, the phase-2 results kept for
them), each upgrade or configuration change a whole tree's worth. A run reading an entry
marks it used (its modification time, at most once per :data:`REFRESH_AFTER`), so the
oldest files are the least recently used; :func:`prune` deletes them, oldest first, until the
cache is a quarter under its limit — never a file the pruning run read or wrote (marked since
the run started, or within :data:`REFRESH_AFTER` before: a read renews no newer mark), so the
run's entries stay whatever the limit. A deleted entry only costs its recomputation: every
reader takes a missing file as a miss. Every format's directory (``v1``, ``v2``...) is
counted: an old format's entries are never read again, and go first.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import time
from pathlib import Path

# A file read is marked used again once its last mark is this old (seconds): a warm run marks
# each file it reads at most once per period.
REFRESH_AFTER = 600.0
# A run that stored no facts prunes when the last prune is this old (seconds).
PRUNE_EVERY = 86_400.0
STAMP = "pruned"  # in the format's directory: its modification time is the last prune's
_FORMAT_DIRECTORY = re.compile(r"v\d+")


@dataclasses.dataclass(frozen=True, slots=True)
class Pruned:
    """What a prune did: files and bytes deleted, bytes left."""

    files: int
    freed: int
    left: int


def refresh(path: Path) -> None:
    """Mark ``path`` used now (a read-only cache stays as it is)."""
    with contextlib.suppress(OSError):
        os.utime(path)


def _entries(root: Path, now: float) -> list[tuple[float, int, str]]:
    """(last use, size, path) of every entry of every format under the cache ``root``;
    temporary files a failed write left behind are deleted once they are old."""
    entries: list[tuple[float, int, str]] = []
    shards: list[str] = []
    for directory in _listed(root):
        if _FORMAT_DIRECTORY.fullmatch(directory.name) and directory.is_dir():
            shards += [s.path for s in _listed(Path(directory.path)) if s.is_dir()]
    for shard in shards:
        for file in _listed(Path(shard)):
            try:
                stat = file.stat(follow_symlinks=False)
            except OSError:
                continue
            if not file.name.endswith(".tmp"):
                entries.append((stat.st_mtime, stat.st_size, file.path))
            elif now - stat.st_mtime > REFRESH_AFTER:
                with contextlib.suppress(OSError):
                    os.remove(file.path)
    return entries


def _listed(directory: Path) -> list[os.DirEntry[str]]:
    """The entries of ``directory`` (none when it cannot be listed)."""
    try:
        with os.scandir(directory) as listed:
            return list(listed)
    except OSError:
        return []


def prune(root: Path, limit: int, keep_since: float) -> Pruned:
    """Delete the least recently used entries under the cache directory ``root`` when they
    hold more than ``limit`` bytes, down to three quarters of it; never one marked used at
    ``keep_since`` or later."""
    entries = _entries(root, time.time())
    total = sum(size for _, size, _ in entries)
    if total <= limit:
        return Pruned(0, 0, total)
    entries.sort()
    target = limit * 3 // 4
    removed = freed = 0
    for used, size, path in entries:
        if total <= target or used >= keep_since:
            break  # (the rest is newer)
        try:
            if os.stat(path).st_mtime >= keep_since:
                continue  # marked used since the scan (another run read it)
            os.remove(path)
        except OSError:
            continue
        total -= size
        freed += size
        removed += 1
    return Pruned(removed, freed, total)


def maybe_prune(directory: Path, limit_mb: int, grew: bool, started: float) -> Pruned | None:
    """:func:`prune` the cache whose format directory is ``directory``, keeping what the run
    that ``started`` then read or wrote, when the run ``grew`` it (it stored project facts)
    or the last prune is a day old; None when not due, when ``limit_mb`` is 0 (no limit), or
    when the cache cannot be written (it is used as it is)."""
    if limit_mb <= 0 or not os.access(directory, os.W_OK):
        return None
    stamp = directory / STAMP
    if not grew:
        try:
            if time.time() - stamp.stat().st_mtime < PRUNE_EVERY:
                return None
        except FileNotFoundError:
            pass
        except OSError:
            return None
    pruned = prune(directory.parent, limit_mb * 2**20, started - REFRESH_AFTER)
    with contextlib.suppress(OSError):
        stamp.touch()
    return pruned
