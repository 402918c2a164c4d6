"""Checking files against the project facts (phase 2) or alone (the per-file run): each result
from the cache when it stands — or, after a change of the facts, the earlier result of a file
whose logged lookups the new facts answer the same — else computed in the worker pool."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from shmlint.analysis.engine import check_bytes, check_path
from shmlint.basics.config import Config
from shmlint.basics.types import FileResult
from shmlint.facts.lookups import answers_same, shared_json, watched
from shmlint.facts.model import ProjectFacts
from shmlint.run.cache import Cache
from shmlint.run.collector import fewer_collections
from shmlint.run.discovery import read_file
from shmlint.run.pool import fan_out, worker


def _check_chunk(
    chunk: list[tuple[str, bytes]], config: Config, prefilter: bool
) -> list[FileResult]:
    facts, store = worker()
    results = []
    for display, data in chunk:
        result = check_bytes(data, display, config, prefilter=prefilter, facts=facts)
        if store is not None:
            store.put(store.key(display, data), result)
        results.append(result)
    return results


def _check_chunk_watched(
    chunk: list[tuple[str, bytes]], config: Config, prefilter: bool
) -> list[FileResult]:
    """Phase 2 with a cache, each file's lookups in the facts stored with its result
    (shmlint/facts/lookups.py)."""
    facts, store = worker()
    assert facts is not None and store is not None
    checked: list[FileResult] = []
    for display, data in chunk:
        with watched(facts) as log:
            result = check_bytes(data, display, config, prefilter=prefilter, facts=facts)
        store.put(store.key(display, data), result)
        # (An analysis that walked a whole table leaves an empty log: never another's.)
        where = store.lookups_key(store.first_pass_key(display, data))
        store.put_lookups(where, log.to_json() if log.complete else {})
        checked.append(result)
    return checked


def _read_all(files: Sequence[tuple[Path, str]]) -> list[bytes | None]:
    return [read_file(path) for path, _ in files]


@fewer_collections()
def check_files(
    files: Sequence[tuple[Path, str]],
    config: Config,
    *,
    jobs: int,
    cache: Cache | None,
    prefilter: bool = True,
    facts: ProjectFacts | None = None,
    earlier: Cache | None = None,
    differing: dict[str, frozenset[str]] | None = None,
) -> list[FileResult]:
    """Check ``(path, display)`` pairs (phase 2 with ``facts``); results in input order.
    ``earlier``: the cache of phase 2 against other facts (the last run's), whose result for
    the same bytes stands when the facts answer its logged lookups the same; ``differing``:
    when the facts are those relined (shmlint/facts/moved.py), the classes and the readers
    (by table) whose facts differ from theirs — all that differs (their other tables, and
    the names, are the same)."""
    results: list[FileResult | None] = [None] * len(files)
    todo: list[tuple[int, str, bytes]] = []  # (index, display, data)
    reuse = None
    if earlier is not None and facts is not None:
        reuse = _Reuse(earlier, facts, differing)
    for index, ((path, display), data) in enumerate(zip(files, _read_all(files))):
        if data is None:
            results[index] = check_path(path, display, config, prefilter=prefilter)  # SHM001
            continue
        key = cache.key(display, data) if cache is not None else None
        cached = cache.get(key) if (cache is not None and key is not None) else None
        if cached is None and reuse is not None and cache is not None and key is not None:
            cached = reuse.result(display, data, cache, key)
        if cached is not None:
            results[index] = cached
        else:
            todo.append((index, display, data))
    if reuse is not None and cache is not None:
        reuse.store(cache)
    items = [(display, data) for _, display, data in todo]
    # The workers store what they compute (pool.worker()): results, and in phase 2 with a
    # cache each file's lookups in the facts, so that a warm run re-checking it after an edit
    # need not load the whole facts (incremental.py).
    work = _check_chunk_watched if facts is not None and cache is not None else _check_chunk
    computed = fan_out(work, items, config, jobs, prefilter, facts, cache)
    if work is _check_chunk_watched and computed:
        assert cache is not None and facts is not None
        cache.put_lookups(cache.lookups_key(""), shared_json(facts))
    for (index, _, _), result in zip(todo, computed):
        results[index] = result
    return [result for result in results if result is not None]


class _Reuse:
    """Phase-2 results of an earlier run against other facts, for files whose logged lookups
    these facts answer the same (shmlint/facts/lookups.py): a change of the facts re-checks
    only the files it can change."""

    def __init__(
        self,
        earlier: Cache,
        facts: ProjectFacts,
        differing: dict[str, frozenset[str]] | None = None,
    ) -> None:
        self.earlier, self.facts, self.differing = earlier, facts, differing
        shared = earlier.get_lookups(earlier.lookups_key(""))
        self.usable = shared is not None and shared == json.loads(json.dumps(shared_json(facts)))
        # What stands, indexed under these facts too: where the earlier cache has it (entry
        # key → Cache.where), not written again.
        self.kept: dict[str, str] = {}

    def result(self, display: str, data: bytes, cache: Cache, key: str) -> FileResult | None:
        """The earlier result of ``data``, if it stands (kept for ``key`` of ``cache``:
        :meth:`store`)."""
        if not self.usable:
            return None
        first_key = cache.first_pass_key(display, data)
        logged = self.earlier.lookups_key(first_key)
        log = self.earlier.get_lookups(logged)
        if log is None:
            return None
        try:
            if self.differing is not None:
                # (Every other lookup is answered as the earlier facts answered it: so was
                # the log made, or kept because they answered it the same.)
                tables = log["tables"]
                if any(not keys.isdisjoint(tables[t]) for t, keys in self.differing.items()):
                    return None
            elif not answers_same(log, self.facts):
                return None
        except (KeyError, TypeError, AttributeError):
            return None
        earlier_key = self.earlier.key(display, data)
        result = self.earlier.get(earlier_key)
        if result is not None:
            self.kept[key] = self.earlier.where(earlier_key)
            self.kept[cache.lookups_key(first_key)] = self.earlier.where(logged)
        return result

    def store(self, cache: Cache) -> None:
        """Index the results that stood, and their lookups, in ``cache``, where the earlier
        cache holds them; store what every replay of these facts needs (once)."""
        if self.kept:
            cache.put_lookups(cache.lookups_key(""), shared_json(self.facts))
            cache.index_packs(self.kept)
