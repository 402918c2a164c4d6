"""Run the engine over many files: cache lookups, then a process pool when it pays.

A project run (:func:`check_project`, docs/project-analysis.md) has two phases: every file's
phase-1 pass (summary, per-file result, questions), merged into project facts, then the files
those facts may change checked against them (:func:`check_files`). Both phases use the cache
and the pool. Results come back in the
order of the inputs, whatever the number of jobs.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from shmlint.cache import Cache
from shmlint.config import Config
from shmlint.engine import check_bytes, check_path
from shmlint.project.facts import ProjectFacts, merge
from shmlint.project.passes import FirstPass, first_pass
from shmlint.types import FileResult

# Below this many files to analyse, starting worker processes costs more than it saves.
POOL_THRESHOLD = 48
_CHUNK = 16

T = TypeVar("T")

# The project facts of a worker process: sent once per worker (initializer), not per chunk.
_worker_facts: ProjectFacts | None = None


def default_jobs() -> int:
    """The CPU count this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _set_facts(facts: ProjectFacts | None) -> None:
    global _worker_facts
    _worker_facts = facts


def _check_chunk(
    chunk: list[tuple[str, bytes]], config: Config, prefilter: bool
) -> list[FileResult]:
    facts = _worker_facts
    return [
        check_bytes(data, display, config, prefilter=prefilter, facts=facts)
        for display, data in chunk
    ]


def _first_chunk(
    chunk: list[tuple[str, bytes]], config: Config, prefilter: bool
) -> list[FirstPass]:
    return [first_pass(data, display, config, prefilter=prefilter) for display, data in chunk]


def _read_all(files: Sequence[tuple[Path, str]]) -> list[bytes | None]:
    contents: list[bytes | None] = []
    for path, _ in files:
        try:
            contents.append(path.read_bytes())
        except OSError:
            contents.append(None)
    return contents


def check_project(
    files: Sequence[tuple[Path, str]],
    config: Config,
    *,
    jobs: int,
    cache: Cache | None,
    prefilter: bool = True,
) -> tuple[ProjectFacts, list[FileResult]]:
    """The project run (shmlint/project/passes.py): phase 1 on every file, the merge, phase 2
    on the files whose findings the project's facts may change; results in input order."""
    contents = _read_all(files)
    firsts: list[FirstPass | None] = [None] * len(files)
    keys: list[str | None] = [None] * len(files)
    todo: list[int] = []
    for index, ((_, display), data) in enumerate(zip(files, contents)):
        if data is None:
            continue
        if cache is not None:
            keys[index] = key = cache.summary_key(display, data)
            firsts[index] = cache.get_first_pass(key)
        if firsts[index] is None:
            todo.append(index)
    items = [(files[i][1], contents[i] or b"") for i in todo]
    for index, computed in zip(todo, _fan_out(_first_chunk, items, config, jobs, prefilter, None)):
        firsts[index] = computed
        stored = keys[index]
        if cache is not None and stored is not None:
            cache.put_first_pass(stored, computed)
    facts = _merged(firsts, keys, config, cache)
    second = [
        i
        for i, (item, data) in enumerate(zip(firsts, contents))
        if item is not None and data is not None and item.needs_second_pass(facts, data)
    ]
    phase_two = cache.with_facts(facts.digest()) if cache is not None else None
    rechecked = check_files(
        [files[i] for i in second],
        config,
        jobs=jobs,
        cache=phase_two,
        prefilter=prefilter,
        facts=facts,
    )
    results: list[FileResult] = []
    again = dict(zip(second, rechecked))
    for index, ((path, display), item) in enumerate(zip(files, firsts)):
        if index in again:
            results.append(again[index])
        elif item is not None:
            results.append(item.result)
        else:
            results.append(check_path(path, display, config, prefilter=prefilter))  # unreadable
    return facts, results


def _merged(
    firsts: list[FirstPass | None], keys: list[str | None], config: Config, cache: Cache | None
) -> ProjectFacts:
    """Merge the summaries; cached under the digest of every phase-1 key of the run."""
    summaries = [f.summary for f in firsts if f is not None and f.summary is not None]
    if cache is None:
        return merge(summaries, config.options.array_types)
    digest = hashlib.sha256(b"facts")
    for key in keys:
        digest.update((key or "-").encode())
    facts_key = "f" + digest.hexdigest()
    facts = cache.get_facts(facts_key)
    if facts is None:
        facts = merge(summaries, config.options.array_types)
        cache.put_facts(facts_key, facts)
    return facts


def check_files(
    files: Sequence[tuple[Path, str]],
    config: Config,
    *,
    jobs: int,
    cache: Cache | None,
    prefilter: bool = True,
    facts: ProjectFacts | None = None,
) -> list[FileResult]:
    """Check ``(path, display)`` pairs (phase 2 with ``facts``); results in input order."""
    results: list[FileResult | None] = [None] * len(files)
    todo: list[tuple[int, str, bytes, str | None]] = []  # (index, display, data, cache key)
    for index, ((path, display), data) in enumerate(zip(files, _read_all(files))):
        if data is None:
            results[index] = check_path(path, display, config, prefilter=prefilter)  # SHM001
            continue
        key = cache.key(display, data) if cache is not None else None
        cached = cache.get(key) if (cache is not None and key is not None) else None
        if cached is not None:
            results[index] = cached
        else:
            todo.append((index, display, data, key))
    items = [(display, data) for _, display, data, _ in todo]
    computed = _fan_out(_check_chunk, items, config, jobs, prefilter, facts)
    for (index, _, _, key), result in zip(todo, computed):
        results[index] = result
        if cache is not None and key is not None:
            cache.put(key, result)
    return [result for result in results if result is not None]


def _fan_out(
    work: Callable[[list[tuple[str, bytes]], Config, bool], list[T]],
    items: list[tuple[str, bytes]],
    config: Config,
    jobs: int,
    prefilter: bool,
    facts: ProjectFacts | None,
) -> list[T]:
    if jobs <= 1 or len(items) < POOL_THRESHOLD:
        _set_facts(facts)
        try:
            return work(items, config, prefilter)
        finally:
            _set_facts(None)
    import concurrent.futures  # only when a pool is used: keeps one-file runs quick to start

    chunks = [items[i : i + _CHUNK] for i in range(0, len(items), _CHUNK)]
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=jobs, initializer=_set_facts, initargs=(facts,)
    ) as pool:
        futures = [pool.submit(work, chunk, config, prefilter) for chunk in chunks]
        return [result for future in futures for result in future.result()]
