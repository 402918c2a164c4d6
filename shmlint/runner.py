"""Run the engine over many files: cache lookups, then a process pool when it pays.

Results come back in the order of the inputs, whatever the number of jobs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from shmlint.cache import Cache
from shmlint.config import Config
from shmlint.engine import check_bytes, check_path
from shmlint.types import FileResult

# Below this many files to analyse, starting worker processes costs more than it saves.
POOL_THRESHOLD = 48
_CHUNK = 16


def default_jobs() -> int:
    """The CPU count this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _check_chunk(
    chunk: list[tuple[str, bytes]], config: Config, prefilter: bool
) -> list[FileResult]:
    return [check_bytes(data, display, config, prefilter=prefilter) for display, data in chunk]


def check_files(
    files: Sequence[tuple[Path, str]],
    config: Config,
    *,
    jobs: int,
    cache: Cache | None,
    prefilter: bool = True,
) -> list[FileResult]:
    """Check ``(path, display)`` pairs; results in input order."""
    results: list[FileResult | None] = [None] * len(files)
    todo: list[tuple[int, str, bytes, str | None]] = []  # (index, display, data, cache key)
    for index, (path, display) in enumerate(files):
        try:
            data = path.read_bytes()
        except OSError:
            results[index] = check_path(path, display, config, prefilter=prefilter)  # SHM001
            continue
        key = cache.key(display, data) if cache is not None else None
        cached = cache.get(key) if (cache is not None and key is not None) else None
        if cached is not None:
            results[index] = cached
        else:
            todo.append((index, display, data, key))
    computed = _compute([(display, data) for _, display, data, _ in todo], config, jobs, prefilter)
    for (index, _, _, key), result in zip(todo, computed):
        results[index] = result
        if cache is not None and key is not None:
            cache.put(key, result)
    return [result for result in results if result is not None]


def _compute(
    items: list[tuple[str, bytes]], config: Config, jobs: int, prefilter: bool
) -> list[FileResult]:
    if jobs <= 1 or len(items) < POOL_THRESHOLD:
        return _check_chunk(items, config, prefilter)
    import concurrent.futures  # only when a pool is used: keeps one-file runs quick to start

    chunks = [items[i : i + _CHUNK] for i in range(0, len(items), _CHUNK)]
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_check_chunk, chunk, config, prefilter) for chunk in chunks]
        return [result for future in futures for result in future.result()]
