"""The project facts of a run: the merge of the analysed modules' summaries and of the deferred
modules their names reach (each parsed when first reached, in the worker pool), or the facts
cached for the run's phase-1 keys."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

from shmlint.basics.config import Config
from shmlint.facts.classes import ExternalClasses
from shmlint.facts.closure import asked_classes, close, used_names
from shmlint.facts.evidence import TypeTables
from shmlint.facts.flow import caller_words
from shmlint.facts.merge import merge
from shmlint.facts.model import ProjectFacts
from shmlint.facts.summary import ModuleSummary
from shmlint.run.cache import Cache
from shmlint.run.encoding import Stat
from shmlint.run.passes import FirstPass, syntax_summary
from shmlint.run.pool import Workers


class Contents(Protocol):
    """The files' bytes by index (None: unreadable), read when first asked for."""

    def __getitem__(self, index: int) -> bytes | None:
        """The bytes of file ``index``."""


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


def encoded_words(words: list[str]) -> frozenset[bytes] | None:
    """Recorded names as the bytes a run looks for (None: a garbled record)."""
    try:
        return frozenset(word.encode() for word in words)
    except UnicodeEncodeError:  # not what a run writes
        return None


def facts_key_of(keys: list[str | None]) -> str:
    """The cache key of the facts of a run with these phase-1 keys (they depend on nothing
    else: the configuration and the code are in every key)."""
    return "f" + run_digest(keys)


def run_digest(keys: list[str | None]) -> str:
    """A digest of every phase-1 key of a run (files, their bytes, the configuration)."""
    digest = hashlib.sha256(b"run")
    for key in keys:
        digest.update((key or "-").encode())
    return digest.hexdigest()


def first_pass_key(cache: Cache, display: str, data: bytes, lazy: bool) -> str:
    """The key of a file's phase-1 entry in a project run (an eager run's differ)."""
    return cache.first_pass_key(display, data) + ("" if lazy else "e")


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


class Deferred:
    """The modules phase 1 did not parse, loaded (and cached) on demand."""

    def __init__(
        self,
        files: Sequence[tuple[Path, str]],
        contents: Contents,
        firsts: list[FirstPass | None],
        keys: list[str | None],
        config: Config,
        cache: Cache | None,
        workers: Workers | None = None,
        last: LastRun | None = None,
    ) -> None:
        """``last``: the record, which says which deferred files of unchanged bytes spelled
        a reader's name (for the same readers' names: their bytes need not be read)."""
        self.files, self.contents, self.keys = files, contents, keys
        self.config, self.cache = config, cache
        self.workers = workers or Workers(1, cache)
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
        spelled_then = known[1] if known is not None and encoded_words(known[0]) == words else None
        found: list[int] = []
        for index in sorted(i for indices in self.index.values() for i in indices):
            spelled = spelled_then(index, self.keys[index]) if spelled_then else None
            if spelled is None:
                spelled = any(word in (self.contents[index] or b"") for word in words)
            if spelled:
                found.append(index)
        return found


def project_facts(
    firsts: list[FirstPass | None],
    keys: list[str | None],
    config: Config,
    cache: Cache | None,
    modules: Deferred,
    *,
    indexed: bool = True,
) -> tuple[ProjectFacts, bool]:
    """Merge the summaries of the analysed modules and of the deferred modules they reach;
    cached under the digest of every phase-1 key of the run. True: served from the cache.
    ``indexed``: give the facts their index (``FactsIndex``), which only the derivations of a
    later run read (a run without a cache may skip it: a fifth of the ray wheel's merge; facts
    a cache keeps always carry it)."""
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
    asked = questions if indexed or cache is not None else None
    facts = merge(merged, tables, external, asked_classes(questions), asked)
    if facts.index is not None:  # (what derivations ask: shmlint/facts/quiet.py, closure.py)
        words = frozenset(word.decode() for word in modules.caller_words)
        read = frozenset(summary.module for summary in reached)
        facts.index = dataclasses.replace(facts.index, callers=words, reached=read)
    if cache is not None and facts_key is not None:
        cache.put_facts(facts_key, facts)
    return facts, False


def with_external(facts: ProjectFacts, config: Config) -> ProjectFacts:
    """Facts loaded from JSON, with the on-demand lookup of installed packages' classes."""
    if config.options.external_types:
        facts.external = ExternalClasses(TypeTables.for_options(config.options))
    return facts
