"""Run the engine over many files: cache lookups, then a process pool when it pays.

A project run has two phases (docs/project-analysis.md): every file's module summary
(:func:`summarize_files`), merged into project facts, then every file checked against those
facts (:func:`check_files`). Both phases use the cache and the pool. Results come back in the
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
from shmlint.engine import check_bytes, check_path, summarize_bytes
from shmlint.project.facts import ProjectFacts, merge
from shmlint.project.summary import ModuleSummary
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


def _summarize_chunk(
    chunk: list[tuple[str, bytes]], config: Config, prefilter: bool
) -> list[ModuleSummary | None]:
    return [summarize_bytes(data, display, config) for display, data in chunk]


def _read_all(files: Sequence[tuple[Path, str]]) -> list[bytes | None]:
    contents: list[bytes | None] = []
    for path, _ in files:
        try:
            contents.append(path.read_bytes())
        except OSError:
            contents.append(None)
    return contents


def project_facts(
    files: Sequence[tuple[Path, str]],
    config: Config,
    *,
    jobs: int,
    cache: Cache | None,
) -> ProjectFacts:
    """Phase 1 and the merge. The merged facts are cached too, keyed by every file's summary
    key: a warm run with no file changed reads one entry, not one summary per file."""
    if cache is None:
        return merge(
            summarize_files(files, config, jobs=jobs, cache=None), config.options.array_types
        )
    digest = hashlib.sha256(b"facts")
    for (_, display), data in zip(files, _read_all(files)):
        if data is not None:
            digest.update(cache.summary_key(display, data).encode())
    key = "f" + digest.hexdigest()
    facts = cache.get_facts(key)
    if facts is None:
        summaries = summarize_files(files, config, jobs=jobs, cache=cache)
        facts = merge(summaries, config.options.array_types)
        cache.put_facts(key, facts)
    return facts


def summarize_files(
    files: Sequence[tuple[Path, str]],
    config: Config,
    *,
    jobs: int,
    cache: Cache | None,
) -> list[ModuleSummary]:
    """Phase 1: the module summary of every file that can be read and parsed."""
    summaries: list[ModuleSummary] = []
    todo: list[tuple[str, bytes, str | None]] = []
    for (_, display), data in zip(files, _read_all(files)):
        if data is None:
            continue
        key = cache.summary_key(display, data) if cache is not None else None
        cached = cache.get_summary(key) if cache is not None and key is not None else False
        if cached is False:
            todo.append((display, data, key))
        elif cached is not None and not isinstance(cached, bool):
            summaries.append(cached)
    items = [(display, data) for display, data, _ in todo]
    computed = _fan_out(_summarize_chunk, items, config, jobs, True, None)
    for (_, _, key), summary in zip(todo, computed):
        if cache is not None and key is not None:
            cache.put_summary(key, summary)
        if summary is not None:
            summaries.append(summary)
    return summaries


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
