"""The worker processes: work on files in chunks, in this process or in a pool of ``jobs``
processes when it pays, results in the order of the inputs. A worker is handed the project
facts and the cache once (its initializer), not per chunk; it stores what it computes."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from shmlint.basics.config import Config
from shmlint.facts import external
from shmlint.facts.model import ProjectFacts
from shmlint.run.cache import Cache
from shmlint.run.collector import tune

# Below this many files to analyse (and this much source), starting worker processes costs
# more than it saves. A pool starts in 15-40 ms and dense code analyses at ~1 ms per KB, so a
# few heavy files (phase 2 of vLLM's engine and executor, 197 KB) are worth one.
POOL_THRESHOLD = 48
POOL_BYTES = 160_000
_CHUNK = 16

if TYPE_CHECKING:
    import concurrent.futures

T = TypeVar("T")

# The project facts of a worker process: sent once per worker (initializer), not per chunk.
_worker_facts: ProjectFacts | None = None
# The cache a worker stores what it computes in (None: no cache): each entry is encoded and
# written where it was computed, in parallel, not by the runner after the pool has finished.
_worker_store: Cache | None = None


def default_jobs() -> int:
    """The CPU count this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _set_worker(facts: ProjectFacts | None, store: Cache | None) -> None:
    global _worker_facts, _worker_store
    tune()  # (a forked worker inherits its parent's thresholds; a spawned one does not)
    _worker_facts = facts
    _worker_store = store
    external.keep_in(store)


def worth_a_pool(items: list[tuple[str, bytes]]) -> bool:
    return len(items) >= POOL_THRESHOLD or (
        len(items) > 1 and sum(len(data) for _, data in items) >= POOL_BYTES
    )


def chunks(items: list[tuple[str, bytes]], jobs: int) -> list[list[tuple[str, bytes]]]:
    """Chunks of at most ``_CHUNK`` items, at least four per worker when there are enough
    (a few heavy files spread over the workers)."""
    size = max(1, min(_CHUNK, len(items) // (4 * jobs)))
    return [items[i : i + size] for i in range(0, len(items), size)]


def fan_out(
    work: Callable[[list[tuple[str, bytes]], Config, bool], list[T]],
    items: list[tuple[str, bytes]],
    config: Config,
    jobs: int,
    prefilter: bool,
    facts: ProjectFacts | None,
    store: Cache | None,
) -> list[T]:
    """``work`` on ``items`` in chunks, in this process or a pool (each worker is given
    ``facts`` once); ``store``: where installed modules' summaries are kept
    (shmlint/facts/external.py)."""
    if jobs <= 1 or not worth_a_pool(items):
        return in_process(work, items, config, prefilter, facts, store)
    import concurrent.futures  # only when a pool is used: keeps one-file runs quick to start

    with concurrent.futures.ProcessPoolExecutor(
        max_workers=jobs, initializer=_set_worker, initargs=(facts, store)
    ) as pool:
        futures = [pool.submit(work, chunk, config, prefilter) for chunk in chunks(items, jobs)]
        return [result for future in futures for result in future.result()]


def in_process(
    work: Callable[[list[tuple[str, bytes]], Config, bool], list[T]],
    items: list[tuple[str, bytes]],
    config: Config,
    prefilter: bool,
    facts: ProjectFacts | None,
    store: Cache | None,
) -> list[T]:
    global _worker_facts, _worker_store
    _worker_facts, _worker_store = facts, store
    try:
        with external.stored_in(store):
            return work(items, config, prefilter)
    finally:
        _worker_facts = _worker_store = None


class Workers:
    """The worker pool of the passes before the merge's facts exist (phase 1, the deferred
    modules' summaries): started when a batch is first worth it, then kept for the smaller
    batches that follow (the waves of the closure), so one pool start serves them all."""

    def __init__(self, jobs: int, store: Cache | None) -> None:
        self.jobs, self.store = jobs, store
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._closed = False

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed = True
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def map(
        self,
        work: Callable[[list[tuple[str, bytes]], Config, bool], list[T]],
        items: list[tuple[str, bytes]],
        config: Config,
        prefilter: bool,
    ) -> list[T]:
        """``work`` on ``items``, results in order (as :func:`fan_out` without facts)."""
        if self._closed:  # (a pool of its own, if any)
            return fan_out(work, items, config, self.jobs, prefilter, None, self.store)
        started = self._pool is not None and len(items) > 1
        if self.jobs <= 1 or not (started or worth_a_pool(items)):
            return in_process(work, items, config, prefilter, None, self.store)
        if self._pool is None:
            import concurrent.futures

            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=self.jobs, initializer=_set_worker, initargs=(None, self.store)
            )
        pieces = chunks(items, self.jobs)
        futures = [self._pool.submit(work, chunk, config, prefilter) for chunk in pieces]
        return [result for future in futures for result in future.result()]


def worker() -> tuple[ProjectFacts | None, Cache | None]:
    """The project facts and the cache of this worker (or of the in-process run)."""
    return _worker_facts, _worker_store
