"""The record of the last project run: a warm run where nothing changed reads one entry.

A project run over the same files with the same configuration and code, where no file's
``stat`` (size, modification and change times, inode) differs from the run that wrote the
record, and no installed file its facts read changed, has the same results: they are served
from the record without reading, hashing or decoding any file's entry (as ruff's cache trusts
modification times). Any difference falls back to the cached run, which is keyed by content.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from shmlint.basics.types import FileResult
from shmlint.run.cache import Cache
from shmlint.run.encoding import decode_result, encode_result

Stat = tuple[int, int, int, int]


def stat_of(path: Path) -> Stat | None:
    """What the record compares of a file (None: it cannot be read now)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino)


def record_key(files: Sequence[tuple[Path, str]], cache: Cache, mode: str) -> str:
    """The record's key: the configuration and code (the cache's salt), the run's mode, and
    the files in order as reported."""
    digest = hashlib.sha256(cache.salt + b"\0record\0" + mode.encode())
    for _, display in files:
        digest.update(display.encode("utf-8", "surrogateescape") + b"\0")
    return "w" + digest.hexdigest()


def served(files: Sequence[tuple[Path, str]], cache: Cache, mode: str) -> list[FileResult] | None:
    """The results of the last run over ``files`` when nothing changed since, else None."""
    body = cache.get_record(record_key(files, cache, mode))
    if not isinstance(body, dict):
        return None
    try:
        stats = body["stats"]
        if len(stats) != len(files):
            return None
        for (path, _), stored in zip(files, stats):
            now = stat_of(path)
            if now is None or list(now) != stored:
                return None
        for path, mtime in body["external"].items():
            if stat_of(Path(path)) is None or os.stat(path).st_mtime_ns != mtime:
                return None
        return _decoded(files, body["results"])
    except (KeyError, TypeError, ValueError):
        return None


def _decoded(files: Sequence[tuple[Path, str]], results: Any) -> list[FileResult]:
    decoded = []
    for (_, display), item in zip(files, results, strict=True):
        if isinstance(item, dict):
            decoded.append(decode_result(item))
        else:
            parsed, skipped = item
            decoded.append(FileResult(display, (), bool(parsed), bool(skipped)))
    return decoded


def write(
    files: Sequence[tuple[Path, str]],
    stats: Sequence[Stat | None],
    results: Sequence[FileResult],
    external: dict[str, int],
    cache: Cache,
    mode: str,
) -> None:
    """Record a finished run (``stats`` taken before its files were read: a file changed
    during the run differs next time). Not written when a file could not be read."""
    if any(stat is None for stat in stats):
        return
    encoded: list[Any] = [
        encode_result(result)
        if result.findings or result.path != display
        else [result.parsed, result.skipped]
        for (_, display), result in zip(files, results, strict=True)
    ]
    body = {
        "stats": [list(stat) for stat in stats if stat is not None],
        "external": external,
        "results": encoded,
    }
    cache.put_record(record_key(files, cache, mode), body)
