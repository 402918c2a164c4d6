"""Run the engine over many files: cache lookups, then a process pool when it pays.

A project run (:func:`check_project`, docs/project-analysis.md) has two phases: every file's
phase-1 pass (summary, per-file result, questions), merged into project facts, then the files
those facts may change checked against them (:func:`check_files`). Both phases use the cache
and the pool. Results come back in the
order of the inputs, whatever the number of jobs.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import json
import os
import re
from collections.abc import Callable, Container, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from shmlint.analysis.engine import check_bytes, check_path
from shmlint.basics.config import Config
from shmlint.basics.types import FileResult
from shmlint.facts import external
from shmlint.facts.classes import ExternalClasses
from shmlint.facts.closure import asked_classes, close, used_names
from shmlint.facts.evidence import TypeTables
from shmlint.facts.flow import caller_words
from shmlint.facts.lookups import answers_same, shared_json, watched
from shmlint.facts.merge import merge
from shmlint.facts.model import ProjectFacts
from shmlint.facts.summary import ModuleSummary
from shmlint.run.cache import Cache
from shmlint.run.collector import fewer_collections, tune
from shmlint.run.discovery import read_file
from shmlint.run.encoding import Calls, Stat
from shmlint.run.passes import (
    FirstPass,
    deferred_of,
    deferred_pass,
    first_pass,
    syntax_summary,
)

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


def _check_chunk(
    chunk: list[tuple[str, bytes]], config: Config, prefilter: bool
) -> list[FileResult]:
    facts, store = _worker_facts, _worker_store
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
    facts, store = _worker_facts, _worker_store
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


def first_pass_key(cache: Cache, display: str, data: bytes, lazy: bool) -> str:
    """The key of a file's phase-1 entry in a project run (an eager run's differ)."""
    return cache.first_pass_key(display, data) + ("" if lazy else "e")


def _first_chunk(
    chunk: list[tuple[str, bytes]],
    config: Config,
    prefilter: bool,
    *,
    lazy: bool = False,
    cache: Cache | None = None,
) -> list[tuple[FirstPass, str]]:
    """Phase 1 of each file, and the pack its entry is stored in (``""``: none). With
    ``cache``, the chunk's entries are stored here, in the worker, in packs: encoding and
    writing a cold run's entries, a file each, took the runner seconds after the pool had
    finished. (A deferred module's phase 1 is a text check, as quick as reading its entry:
    none is kept.)"""
    computed = [
        first_pass(data, display, config, prefilter=prefilter, lazy=lazy) for display, data in chunk
    ]
    if cache is None:
        return [(item, "") for item in computed]
    keys = [  # (a deferred module's entry is not kept: its bytes need no hashing)
        "" if item.deferred else first_pass_key(cache, display, data, lazy)
        for (display, data), item in zip(chunk, computed)
    ]
    stored = [(key, item) for key, item in zip(keys, computed) if key]
    packs = cache.put_first_pass_pack(stored) if stored else {}
    return [(item, packs.get(key, "")) for key, item in zip(keys, computed)]


def _summary_chunk(
    chunk: list[tuple[str, bytes]], config: Config, prefilter: bool, *, cache: Cache | None = None
) -> list[tuple[ModuleSummary | None, str]]:
    """Deferred modules' syntactic summaries, and the pack each is stored in (``""``: none):
    with ``cache``, the chunk's are stored here, in the worker, in packs (as
    :func:`_first_chunk` stores phase-1 entries), each under its (lazy) phase-1 key."""
    summaries = [syntax_summary(data, display, config) for display, data in chunk]
    if cache is None or not summaries:
        return [(summary, "") for summary in summaries]
    keys = [syntax_key(first_pass_key(cache, d, data, True)) for d, data in chunk]
    packs = cache.put_syntax_pack(list(zip(keys, summaries, strict=True)))
    return [(summary, packs[key]) for key, summary in zip(keys, summaries)]


def syntax_key(first_key: str) -> str:
    """The key of a deferred module's summary, from its phase-1 key."""
    return "y" + first_key


def _read_all(files: Sequence[tuple[Path, str]]) -> list[bytes | None]:
    return [read_file(path) for path, _ in files]


class _Moved(Exception):
    """A file whose phase-1 key the run trusted (its stat unchanged) has other bytes now."""


class _Contents:
    """The files' bytes (None: unreadable), read when first asked for. A file whose phase-1
    key the record stands for (``trusted``: its stat unchanged) is read only if the run needs
    its bytes, and must still have that key then (else :class:`_Moved`: the run starts
    again, trusting no stat)."""

    def __init__(
        self,
        files: Sequence[tuple[Path, str]],
        trusted: list[str | None],
        cache: Cache | None,
        lazy: bool,
    ) -> None:
        self.files, self.trusted, self.cache, self.lazy = files, trusted, cache, lazy
        self.data: list[bytes | None] = [None] * len(files)
        self.unread = [True] * len(files)

    def __getitem__(self, index: int) -> bytes | None:
        if self.unread[index]:
            self.unread[index] = False
            self.data[index] = data = read_file(self.files[index][0])
            key = self.trusted[index]
            if key is not None and self.cache is not None:
                if data is None or key != first_pass_key(
                    self.cache, self.files[index][1], data, self.lazy
                ):
                    raise _Moved(self.files[index][1])
        return self.data[index]


@dataclasses.dataclass(slots=True)
class RunTrace:
    """What a project run leaves for the next one over the same files (the run record,
    shmlint/run/record.py): per file its phase-1 key and what it gave the merge
    (:func:`gives`), the cache key and digest of the facts."""

    keys: list[str | None] = dataclasses.field(default_factory=list)
    gives: list[str] = dataclasses.field(default_factory=list)
    facts_key: str = ""
    facts_digest: str = ""
    reader_words: list[str] = dataclasses.field(default_factory=list)
    second: list[bool] = dataclasses.field(default_factory=list)  # phase 2 ran on the file
    # Per analysed file phase 2 left alone: the readers' names it spells and the dotted names
    # that would make it call one (ProjectFacts.call_evidence), as text; None for the others.
    calls: list[Calls | None] = dataclasses.field(default_factory=list)
    # Per file: a deferred module spelling one of those readers' names (_Deferred.callers).
    callers: list[bool] = dataclasses.field(default_factory=list)
    # The names of the functions that may return a read, as the merge looked for them
    # (facts.flow.caller_words), and per file: a deferred module spelling one (merged).
    caller_words: list[str] = dataclasses.field(default_factory=list)
    spellers: list[bool] = dataclasses.field(default_factory=list)
    # An answer phase 1 got from a file's own facts named another file of the run
    # (:func:`cites_others`).
    foreign: bool = True


class LastRun(Protocol):
    """What a run takes from the last one over the same files (``record.Record``), for the
    files whose phase-1 key is unchanged."""

    @property
    def reader_words(self) -> list[str]:
        """The readers' names the last run looked for (:attr:`RunTrace.reader_words`)."""

    def gave(self, index: int, key: str | None) -> str | None:
        """What analysed file ``index`` gave the merge (:func:`gives`), or None."""

    def spelled(self, index: int, key: str | None) -> frozenset[bytes] | None:
        """The readers' names file ``index`` spelled (its call evidence), or None."""

    def deferred(self, index: int, key: str | None) -> str | None:
        """The module name of file ``index``, a deferred module under the same key, or None."""

    def stood(self, index: int, stat: Stat | None) -> str | None:
        """File ``index``'s phase-1 key when its ``stat`` is the recorded one, else None."""

    def called(self, index: int, key: str | None) -> bool | None:
        """Whether deferred file ``index`` spelled a reader's name, or None (not known)."""

    @property
    def caller_words(self) -> list[str]:
        """The names the last run's merge looked for (:attr:`RunTrace.caller_words`)."""

    def spelled_caller(self, index: int, key: str | None) -> bool | None:
        """Whether deferred file ``index`` spelled one of them, or None (not known)."""


# What a deferred module gave the merge when that cannot be told from its summary alone: it
# never equals what a later run computes (a full run follows any change to it).
UNKNOWN_SYNTAX = "?"


# A path in the repr of a field or a read chain (in an answer of ``ProjectFacts.answer``).
_CITED = re.compile(r"""path=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""")


def cites_others(item: FirstPass | None, paths: Container[str]) -> bool:
    """Whether an answer phase 1 got from the file's own facts names another of ``paths``
    (the run's files): an installed-package lookup (shmlint/facts/external.py) that found a
    module of the checked tree itself — importable when ``python -m shmlint`` runs in its
    directory, or installed in editable mode — and the run reports absolute paths. Such a
    file's phase-1 answers depend on another file's lines."""
    if item is None or item.summary is None:
        return False
    for _, answer in item.questions:
        if "path=" not in answer:
            continue
        for literal in _CITED.findall(answer):
            cited = ast.literal_eval(literal)
            if cited != item.summary.path and cited in paths:
                return True
    return False


def summary_digest(summary: ModuleSummary | None) -> str:
    """A digest of a module summary (or of having none). A summary is plain data (strings,
    ints, tuples), so its ``repr`` is canonical — and 6x quicker than its JSON, which a full
    run would pay for every module in the main process."""
    return hashlib.sha256(repr(summary).encode()).hexdigest()


def gives(item: FirstPass | None, syntax: str = "") -> str:
    """What one file gave the merge, as a string: its summary and the names its questions
    look up (an analysed file); its module name and, when the merge read it, the digest of
    its syntactic summary (``syntax``; a deferred module)."""
    if item is None:
        return "-"
    if item.summary is not None and not item.deferred:
        digest = hashlib.sha256(summary_digest(item.summary).encode())
        for question, _ in item.questions:
            digest.update(b"\0" + question.encode())
        return "a" + digest.hexdigest()
    if item.deferred:
        return f"d{item.deferred}" + (f"\0{syntax}" if syntax else "")
    return "-"


@fewer_collections()
def check_project(
    files: Sequence[tuple[Path, str]],
    config: Config,
    *,
    jobs: int,
    cache: Cache | None,
    prefilter: bool = True,
    lazy: bool = True,
    trace: RunTrace | None = None,
    last: LastRun | None = None,
    stats: Sequence[Stat | None] | None = None,
) -> tuple[ProjectFacts, list[FileResult]]:
    """The project run (shmlint/run/passes.py): phase 1 on every file, the merge, phase 2
    on the files whose findings the project's facts may change; results in input order.
    ``lazy``: modules with nothing to check per file are parsed only when the facts need
    them (closure.py); ``lazy=False`` parses every module (the reference the tests use).
    ``trace`` (with a cache) is filled for the run record; ``last``: the record of the last
    run over the same files (what it computed of a file whose phase-1 key is unchanged is
    taken as it is: what the file gives the merge, the readers' names it spells);
    ``stats``: the files' stats, taken before the run: a file whose stat is the one recorded
    keeps the recorded phase-1 key, and is read only if the run needs its bytes (as the
    record's warm run trusts stats)."""
    trusted: list[str | None] = (
        [last.stood(index, stat) for index, stat in enumerate(stats)]
        if last and stats and len(stats) == len(files) and cache and lazy and prefilter
        else [None] * len(files)
    )
    try:
        return _check_project(files, config, jobs, cache, prefilter, lazy, trace, last, trusted)
    except _Moved:  # a file changed during the run, its stat the recorded one when taken
        anew: list[str | None] = [None] * len(files)
        return _check_project(files, config, jobs, cache, prefilter, lazy, trace, last, anew)


def _check_project(
    files: Sequence[tuple[Path, str]],
    config: Config,
    jobs: int,
    cache: Cache | None,
    prefilter: bool,
    lazy: bool,
    trace: RunTrace | None,
    last: LastRun | None,
    trusted: list[str | None],
) -> tuple[ProjectFacts, list[FileResult]]:
    """:func:`check_project`, with the phase-1 keys its stats let it trust (``trusted``)."""
    contents = _Contents(files, trusted, cache, lazy)
    firsts: list[FirstPass | None] = [None] * len(files)
    keys: list[str | None] = [None] * len(files)
    todo: list[int] = []
    for index, (_, display) in enumerate(files):
        key = trusted[index]
        if key is None:
            data = contents[index]
            if data is None:
                continue
            if cache is not None:
                key = first_pass_key(cache, display, data, lazy)
        if cache is not None and key is not None:
            keys[index] = key
            module = last.deferred(index, key) if lazy and prefilter and last else None
            if module is not None:
                # The same bytes and configuration: the same text check (no entry is kept).
                firsts[index] = deferred_of(display, module)
                continue
            firsts[index] = cache.get_first_pass(key)
        if firsts[index] is None:
            todo.append(index)
    if lazy and prefilter and cache is not None:
        # A deferred module keeps no entry (its phase 1 is a text check): its check is done
        # here, and its bytes are not sent to a pool, until enough files to analyse turn up to
        # be worth one — a warm run then starts no pool for the text checks; a cold run finds
        # them at once, and leaves the rest to the workers, alongside the analysis.
        analysed: list[int] = []
        for position, index in enumerate(todo):
            if len(analysed) >= POOL_THRESHOLD:
                analysed += todo[position:]
                break
            quick = deferred_pass(contents[index] or b"", files[index][1], config)
            if quick is None:
                analysed.append(index)
            else:
                firsts[index] = quick
        todo = analysed
    items = [(files[i][1], contents[i] or b"") for i in todo]
    work = functools.partial(_first_chunk, lazy=lazy, cache=cache)
    packs: dict[str, str] = {}  # phase-1 entry key → the pack it is stored in
    with _Workers(jobs, cache) as workers:  # phase 1 and the merge's parsing share a pool
        for index, (computed, pack) in zip(todo, workers.map(work, items, config, prefilter)):
            firsts[index] = computed
            stored = keys[index]
            if pack and stored is not None:
                packs[stored] = pack
        modules = _Deferred(files, contents, firsts, keys, config, cache, workers, last)
        with external.stored_in(cache):
            facts, served = _merged(firsts, keys, config, cache, modules)
        # Which files phase 2 re-checks depends only on the run's phase-1 keys (as the facts
        # do): a warm run reads the decision instead of asking every file again.
        plan_key = "g" + _run_digest(keys) if cache is not None else None
        # (Facts merged anew, though the run's keys are the same: an installed package changed.)
        plan = cache.get_plan(plan_key) if served and cache and plan_key else None
        if plan is None:
            spelled = _spelled(last, keys, facts)
            plan = _plan(firsts, contents, facts, modules, digest=cache is not None, known=spelled)
            if cache is not None and plan_key is not None:
                cache.put_plan(plan_key, plan)
        if cache is not None:
            # The packs this run wrote (phase-1 entries, deferred modules' summaries), indexed
            # once; the entries it read from packs kept.
            packs |= modules.store()
            if packs:
                used = [key for key in keys if key is not None] + modules.used
                cache.index_packs(packs, used=used)
    second, facts_digest, calls = plan
    if trace is not None and cache is not None:
        trace.keys = list(keys)
        trace.gives = []
        callers = set(modules.callers(facts))
        trace.callers = [index in callers for index in range(len(files))]
        spellers = set(modules.spellers)
        trace.spellers = [index in spellers for index in range(len(files))]
        trace.caller_words = sorted(word.decode() for word in modules.caller_words)
        for index, item in enumerate(firsts):
            syntax = ""
            if served or index in callers:
                # Facts from the cache (which deferred summaries they read is unknown), or a
                # module spelling a reader's name (whether it still does changes the plan).
                syntax = UNKNOWN_SYNTAX
            elif index in modules.loaded:  # (a module spelling a possible reader's name too)
                syntax = summary_digest(modules.loaded[index])
            given = None
            if last is not None and item is not None and not item.deferred:
                given = last.gave(index, keys[index])
            trace.gives.append(given if given is not None else gives(item, syntax))
        trace.facts_key = facts_key_of(keys)
        trace.facts_digest = facts_digest
        trace.reader_words = sorted(word.decode() for word in facts.reader_words())
        rechecked_files = set(second)
        trace.second = [index in rechecked_files for index in range(len(files))]
        trace.calls = calls
        paths = {display for _, display in files}
        trace.foreign = any(cites_others(item, paths) for item in firsts)
    phase_two = earlier = None
    if cache is not None:
        phase_two = cache.with_facts(facts_digest)
        # The last project run's facts, if others: its phase-2 results may stand.
        last_digest = cache.get_last_facts()
        if last_digest != facts_digest:
            earlier = cache.with_facts(last_digest) if last_digest else None
            cache.put_last_facts(facts_digest)
    rechecked = check_files(
        [files[i] for i in second],
        config,
        jobs=jobs,
        cache=phase_two,
        prefilter=prefilter,
        facts=facts,
        earlier=earlier,
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


def _plan(
    firsts: list[FirstPass | None],
    contents: _Contents,
    facts: ProjectFacts,
    modules: _Deferred,
    *,
    digest: bool = True,
    known: Callable[[int], frozenset[bytes] | None] | None = None,
) -> tuple[list[int], str, list[Calls | None]]:
    """The files phase 2 re-checks, the digest of the facts (empty without ``digest``: only
    a cache keys by it), and each file's call evidence (``FirstPass.second_pass``); the
    deferred files spelling a reader's name get their summaries (in ``firsts``) first.
    ``known``: the readers' names a file spells, by its index, where already known."""
    calling = modules.callers(facts)
    for index, summary in zip(calling, modules.load_all(calling), strict=True):
        item = firsts[index]
        if item is not None and summary is not None:
            firsts[index] = dataclasses.replace(item, summary=summary)
    second: list[int] = []
    calls: list[Calls | None] = []
    for index, item in enumerate(firsts):
        if item is None or item.summary is None:  # (no summary: nothing to re-check)
            calls.append(None)
            continue
        spelled = known(index) if known is not None else None
        # A text spelling none of the readers' names is not looked at (call_evidence): not
        # read either, when the record says so of unchanged bytes.
        data = b"" if spelled is not None and not spelled else contents[index]
        needed, evidence = (
            item.second_pass(facts, data, spelled) if data is not None else (False, None)
        )
        if needed:
            second.append(index)
        calls.append(evidence)
    return second, facts.digest() if digest else "", calls


def _spelled(
    last: LastRun | None, keys: list[str | None], facts: ProjectFacts
) -> Callable[[int], frozenset[bytes] | None] | None:
    """The readers' names each file spelled in the last run, by index, when the readers'
    names are the ones it looked for (scanning ~2,000 files for them was most of the plan
    after a change of the facts); None when nothing is known."""
    if last is None or _encoded(last.reader_words) != facts.reader_words():
        return None
    return lambda index: last.spelled(index, keys[index])


def _encoded(words: list[str]) -> frozenset[bytes] | None:
    """Recorded names as the bytes a run looks for (None: a garbled record)."""
    try:
        return frozenset(word.encode() for word in words)
    except UnicodeEncodeError:  # not what a run writes
        return None


def facts_key_of(keys: list[str | None]) -> str:
    """The cache key of the facts of a run with these phase-1 keys (they depend on nothing
    else: the configuration and the code are in every key)."""
    return "f" + _run_digest(keys)


def _run_digest(keys: list[str | None]) -> str:
    """A digest of every phase-1 key of a run (files, their bytes, the configuration)."""
    digest = hashlib.sha256(b"run")
    for key in keys:
        digest.update((key or "-").encode())
    return digest.hexdigest()


class _Deferred:
    """The modules phase 1 did not parse, loaded (and cached) on demand."""

    def __init__(
        self,
        files: Sequence[tuple[Path, str]],
        contents: _Contents,
        firsts: list[FirstPass | None],
        keys: list[str | None],
        config: Config,
        cache: Cache | None,
        workers: _Workers | None = None,
        last: LastRun | None = None,
    ) -> None:
        """``last``: the record, which says which deferred files of unchanged bytes spelled
        a reader's name (for the same readers' names: their bytes need not be read)."""
        self.files, self.contents, self.keys = files, contents, keys
        self.config, self.cache = config, cache
        self.workers = workers or _Workers(1, cache)
        self.index: dict[str, list[int]] = {}
        for i, item in enumerate(firsts):
            if item is not None and item.deferred:
                self.index.setdefault(item.deferred, []).append(i)
        self.loaded: dict[int, ModuleSummary | None] = {}
        self.order: dict[int, int] = {}  # id(summary) → file index: merge in file order
        # The cache keys of the summaries read from it, and of those computed: by the workers
        # (→ the pack each is in), in this process (stored by :meth:`store`).
        self.used: list[str] = []
        self.packs: dict[str, str] = {}
        self.pending: list[tuple[str, ModuleSummary | None]] = []
        self.last = last
        self.spellers: list[int] = []  # (spelling: the files the merge took as callers)
        self.caller_words: frozenset[bytes] = frozenset()
        self._callers: tuple[ProjectFacts, list[int]] | None = None

    def load_index(self, index: int) -> ModuleSummary | None:
        if index in self.loaded:
            return self.loaded[index]
        summary = self._cached(index)
        if summary is False or isinstance(summary, bool):
            data = self.contents[index] or b""
            summary = syntax_summary(data, self.files[index][1], self.config)
            self._keep(index, summary)
        self._loaded(index, summary)
        return summary

    def _loaded(self, index: int, summary: ModuleSummary | None) -> None:
        self.loaded[index] = summary
        if summary is not None:
            self.order[id(summary)] = index

    def _cached(self, index: int) -> ModuleSummary | None | bool:
        key = self.keys[index]
        if self.cache is None or key is None:
            return False
        found = self.cache.get_syntax_summary(syntax_key(key))
        if found is not False:
            self.used.append(syntax_key(key))
        return found

    def _keep(self, index: int, summary: ModuleSummary | None) -> None:
        key = self.keys[index]
        if self.cache is not None and key is not None:
            self.pending.append((syntax_key(key), summary))

    def store(self) -> dict[str, str]:
        """Store the summaries computed in this process (in packs); the packs of every
        summary this run computed (entry key → pack), for the cache's index."""
        if self.cache is not None and self.pending:
            self.packs.update(self.cache.put_syntax_pack(self.pending))
            self.pending = []
        return self.packs

    def prefetch(self, indices: Iterable[int]) -> None:
        """Load these files' summaries now, the ones not cached parsed in the worker pool
        (the merge would load each of them, one after another, in this process)."""
        todo: list[int] = []
        for index in sorted(set(indices)):
            if index in self.loaded:
                continue
            cached = self._cached(index)
            if cached is False or isinstance(cached, bool):
                todo.append(index)
            else:
                self._loaded(index, cached)
        items = [(self.files[i][1], self.contents[i] or b"") for i in todo]
        work = functools.partial(_summary_chunk, cache=self.cache)  # (stores them)
        computed = self.workers.map(work, items, self.config, True)
        for index, (summary, pack) in zip(todo, computed, strict=True):
            self._loaded(index, summary)
            key = self.keys[index]
            if pack and key is not None:
                self.packs[syntax_key(key)] = pack

    def load_all(self, indices: list[int]) -> list[ModuleSummary | None]:
        """These files' summaries, in order (those not loaded yet parsed in the pool)."""
        self.prefetch(indices)
        return [self.load_index(index) for index in indices]

    def prefetch_modules(self, modules: set[str]) -> None:
        """Prefetch these modules' files (``close`` asks for each wave of modules it needs)."""
        self.prefetch(index for module in modules for index in self.index.get(module, ()))

    def load_module(self, module: str) -> list[ModuleSummary]:
        loaded = (self.load_index(index) for index in self.index[module])
        return [summary for summary in loaded if summary is not None]

    def loaders(self) -> dict[str, Callable[[], list[ModuleSummary]]]:
        return {module: functools.partial(self.load_module, module) for module in self.index}

    def spelling(self, words: frozenset[bytes]) -> list[int]:
        """Deferred files that spell one of ``words`` (the names of the functions that may
        return a read: the merge resolves these files' imports). Both kept for the trace."""
        last = self.last
        known = None if last is None else (last.caller_words, last.spelled_caller)
        self.caller_words = words
        self.spellers = self._spelling(words, known)
        return self.spellers

    def callers(self, facts: ProjectFacts) -> list[int]:
        """Deferred files that spell the name of a module-level function returning a read
        (found once per facts: the plan and the trace ask)."""
        if self._callers is None or self._callers[0] is not facts:
            last = self.last
            known = None if last is None else (last.reader_words, last.called)
            self._callers = (facts, self._spelling(facts.reader_words(), known))
        return self._callers[1]

    def _spelling(
        self,
        words: frozenset[bytes],
        known: tuple[list[str], Callable[[int, str | None], bool | None]] | None,
    ) -> list[int]:
        """Deferred files that spell one of ``words``; ``known``: the names the last run
        looked for, and whether it found a file spelling one (None: not known), which holds
        of the files it knows unchanged when the names are the same."""
        spelled_then = known[1] if known is not None and _encoded(known[0]) == words else None
        found: list[int] = []
        for index in sorted(i for indices in self.index.values() for i in indices):
            spelled = spelled_then(index, self.keys[index]) if spelled_then else None
            if spelled is None:
                spelled = any(word in (self.contents[index] or b"") for word in words)
            if spelled:
                found.append(index)
        return found


def _merged(
    firsts: list[FirstPass | None],
    keys: list[str | None],
    config: Config,
    cache: Cache | None,
    modules: _Deferred,
) -> tuple[ProjectFacts, bool]:
    """Merge the summaries of the analysed modules and of the deferred modules they reach;
    cached under the digest of every phase-1 key of the run. True: served from the cache."""
    facts_key = None
    if cache is not None:
        facts_key = facts_key_of(keys)
        cached = cache.get_facts(facts_key)
        if cached is not None and not cached.external_files_changed():
            return with_external(cached, config), True
    analysed = [f.summary for f in firsts if f is not None and f.summary is not None]
    for index, item in enumerate(firsts):
        if item is not None and item.summary is not None:
            modules.order[id(item.summary)] = index
    names: set[str] = set()
    for item in firsts:
        if item is not None and item.summary is not None:
            names |= used_names(item.summary, (q for q, _ in item.questions))
    loaders = modules.loaders()
    reached = close(names, loaders, modules.prefetch_modules)

    def in_file_order(summaries: list[ModuleSummary]) -> list[ModuleSummary]:
        unique = {id(s): s for s in summaries}
        return sorted(unique.values(), key=lambda s: modules.order[id(s)])

    options = config.options
    tables = TypeTables.for_options(options)
    external = options.external_types
    merged = in_file_order([*analysed, *reached])
    # The deferred modules that may call a function returning a read (they spell its name):
    # their imports decide whether they do, so the facts resolve them too. The names are a
    # superset of the readers' names, found without merging (facts.flow.caller_words): one
    # merge, where the readers' names of a first merge would pick the modules of a second.
    callers = modules.load_all(modules.spelling(caller_words(merged)))
    summaries = [summary for summary in callers if summary is not None]
    if summaries:
        more = {target for summary in summaries for _, target in summary.imports}
        extra = close(more, loaders, modules.prefetch_modules)
        merged = in_file_order([*merged, *extra, *summaries])
    # The classes phase 1 asked about (an installed package's are rated now, into the
    # digest), and the functions (the facts' index): every question of phase 1.
    questions = [q for item in firsts if item is not None for q, _ in item.questions]
    facts = merge(merged, tables, external, asked_classes(questions), questions)
    if cache is not None and facts_key is not None:
        cache.put_facts(facts_key, facts)
    return facts, False


def with_external(facts: ProjectFacts, config: Config) -> ProjectFacts:
    """Facts loaded from JSON, with the on-demand lookup of installed packages' classes."""
    if config.options.external_types:
        facts.external = ExternalClasses(TypeTables.for_options(config.options))
    return facts


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
) -> list[FileResult]:
    """Check ``(path, display)`` pairs (phase 2 with ``facts``); results in input order.
    ``earlier``: the cache of phase 2 against other facts (the last run's), whose result for
    the same bytes stands when the facts answer its logged lookups the same."""
    results: list[FileResult | None] = [None] * len(files)
    todo: list[tuple[int, str, bytes]] = []  # (index, display, data)
    reuse = _Reuse(earlier, facts) if earlier is not None and facts is not None else None
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
    # The workers store what they compute (_worker_store): results, and in phase 2 with a
    # cache each file's lookups in the facts, so that a warm run re-checking it after an edit
    # need not load the whole facts (incremental.py).
    work = _check_chunk_watched if facts is not None and cache is not None else _check_chunk
    computed = _fan_out(work, items, config, jobs, prefilter, facts, cache)
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

    def __init__(self, earlier: Cache, facts: ProjectFacts) -> None:
        self.earlier, self.facts = earlier, facts
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
            if not answers_same(log, self.facts):
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


def _worth_a_pool(items: list[tuple[str, bytes]]) -> bool:
    return len(items) >= POOL_THRESHOLD or (
        len(items) > 1 and sum(len(data) for _, data in items) >= POOL_BYTES
    )


def _chunks(items: list[tuple[str, bytes]], jobs: int) -> list[list[tuple[str, bytes]]]:
    """Chunks of at most ``_CHUNK`` items, at least four per worker when there are enough
    (a few heavy files spread over the workers)."""
    size = max(1, min(_CHUNK, len(items) // (4 * jobs)))
    return [items[i : i + size] for i in range(0, len(items), size)]


def _fan_out(
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
    if jobs <= 1 or not _worth_a_pool(items):
        return _in_process(work, items, config, prefilter, facts, store)
    import concurrent.futures  # only when a pool is used: keeps one-file runs quick to start

    with concurrent.futures.ProcessPoolExecutor(
        max_workers=jobs, initializer=_set_worker, initargs=(facts, store)
    ) as pool:
        futures = [pool.submit(work, chunk, config, prefilter) for chunk in _chunks(items, jobs)]
        return [result for future in futures for result in future.result()]


def _in_process(
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


class _Workers:
    """The worker pool of the passes before the merge's facts exist (phase 1, the deferred
    modules' summaries): started when a batch is first worth it, then kept for the smaller
    batches that follow (the waves of the closure), so one pool start serves them all."""

    def __init__(self, jobs: int, store: Cache | None) -> None:
        self.jobs, self.store = jobs, store
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._closed = False

    def __enter__(self) -> _Workers:
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
        """``work`` on ``items``, results in order (as :func:`_fan_out` without facts)."""
        if self._closed:  # (a pool of its own, if any)
            return _fan_out(work, items, config, self.jobs, prefilter, None, self.store)
        started = self._pool is not None and len(items) > 1
        if self.jobs <= 1 or not (started or _worth_a_pool(items)):
            return _in_process(work, items, config, prefilter, None, self.store)
        if self._pool is None:
            import concurrent.futures

            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=self.jobs, initializer=_set_worker, initargs=(None, self.store)
            )
        chunks = _chunks(items, self.jobs)
        futures = [self._pool.submit(work, chunk, config, prefilter) for chunk in chunks]
        return [result for future in futures for result in future.result()]
