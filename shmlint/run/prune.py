"""Keeping the cache bounded: the least recently used entries go once it outgrows its limit.

Entries are keyed by content (a file's bytes, the facts' digest, the code's own digest), so
nothing is ever overwritten: each change of the project's facts leaves ~10 MB behind on the ray
wheel (its facts, the phase-2 results kept for them), each upgrade or configuration change a
whole tree's worth. A run reading an entry refreshes its modification time (at most once per
:data:`REFRESH_AFTER`), so the oldest files are the least recently used; :func:`prune` deletes
them, oldest first, until the cache is a quarter under its limit, and never a file used within
:data:`REFRESH_AFTER` (the entries of the run that prunes stay, whatever the limit). A deleted
entry only costs its recomputation: every reader takes a missing file as a miss.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from pathlib import Path

# A file read is marked used again once its last mark is this old (seconds): a warm run marks
# each file it reads at most once per period, and nothing used within it is pruned.
REFRESH_AFTER = 600.0
# A run that stored no facts prunes when the last prune is this old (seconds).
PRUNE_EVERY = 86_400.0
STAMP = "pruned"  # in the format's directory: its modification time is the last prune's
DEFAULT_LIMIT_MB = 512


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


def prune(directory: Path, limit: int, now: float | None = None) -> Pruned:
    """Delete the least recently used entries of the cache format directory ``directory``
    when it holds more than ``limit`` bytes, down to three quarters of it; temporary files a
    write left behind (it failed) go once they are old."""
    now = time.time() if now is None else now
    entries: list[tuple[float, int, str]] = []
    total = 0
    with contextlib.suppress(OSError), os.scandir(directory) as shards:
        for shard in shards:
            if not shard.is_dir(follow_symlinks=False):
                continue
            with contextlib.suppress(OSError), os.scandir(shard.path) as files:
                for file in files:
                    try:
                        stat = file.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if file.name.endswith(".tmp"):
                        if now - stat.st_mtime > REFRESH_AFTER:
                            with contextlib.suppress(OSError):
                                os.remove(file.path)
                        continue
                    entries.append((stat.st_mtime, stat.st_size, file.path))
                    total += stat.st_size
    if total <= limit:
        return Pruned(0, 0, total)
    entries.sort()
    target = limit * 3 // 4
    removed = freed = 0
    for modified, size, path in entries:
        if total <= target or now - modified < REFRESH_AFTER:
            break  # (the rest is newer: in use)
        try:
            os.remove(path)
        except OSError:
            continue
        total -= size
        freed += size
        removed += 1
    return Pruned(removed, freed, total)


def maybe_prune(directory: Path, limit_mb: int, grew: bool) -> Pruned | None:
    """:func:`prune` when the run ``grew`` the cache (it stored project facts) or the last
    prune is a day old; None when it was not due (or ``limit_mb`` is 0: never)."""
    if limit_mb <= 0 or not directory.is_dir():
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
    pruned = prune(directory, limit_mb * 2**20)
    with contextlib.suppress(OSError):
        stamp.touch()
    return pruned
