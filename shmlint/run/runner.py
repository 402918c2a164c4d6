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
import re
from collections.abc import Callable, Container, Sequence
from pathlib import Path

from shmlint.analysis.engine import check_path
from shmlint.basics.config import Config
from shmlint.basics.types import FileResult
from shmlint.facts import external
from shmlint.facts.model import ProjectFacts
from shmlint.facts.summary import ModuleSummary
from shmlint.run.cache import Cache
from shmlint.run.collector import fewer_collections
from shmlint.run.discovery import read_file
from shmlint.run.encoding import Calls, Stat
from shmlint.run.files import check_files
from shmlint.run.merging import (
    Deferred,
    LastRun,
    encoded_words,
    facts_key_of,
    first_pass_key,
    project_facts,
    run_digest,
)
from shmlint.run.passes import (
    FirstPass,
    deferred_of,
    deferred_pass,
    first_pass,
)
from shmlint.run.pool import POOL_THRESHOLD, Workers
from shmlint.run.replan import askers_of


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
    # Per file: a deferred module spelling one of those readers' names (Deferred.callers).
    callers: list[bool] = dataclasses.field(default_factory=list)
    # The names of the functions that may return a read, as the merge looked for them
    # (facts.flow.caller_words), and per file: a deferred module spelling one (merged).
    caller_words: list[str] = dataclasses.field(default_factory=list)
    spellers: list[bool] = dataclasses.field(default_factory=list)
    # An answer phase 1 got from a file's own facts named another file of the run
    # (:func:`cites_others`).
    foreign: bool = True
    # The cache key of the last full run's askers (shmlint/run/replan.py; "": none).
    askers: str = ""


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
            digest.update(b"\0" + question.encode("utf-8", "surrogateescape"))
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
    indexed: bool = True,
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
    record's warm run trusts stats); ``indexed``: the facts get their index (only a later
    run's derivations read it: a run keeping no cache may skip it; :func:`project_facts`)."""
    trusted: list[str | None] = (
        [last.stood(index, stat) for index, stat in enumerate(stats)]
        if last and stats and len(stats) == len(files) and cache and lazy and prefilter
        else [None] * len(files)
    )
    try:
        return _check_project(
            files, config, jobs, cache, prefilter, lazy, trace, last, trusted, indexed
        )
    except _Moved:  # a file changed during the run, its stat the recorded one when taken
        anew: list[str | None] = [None] * len(files)
        return _check_project(
            files, config, jobs, cache, prefilter, lazy, trace, last, anew, indexed
        )


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
    indexed: bool,
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
    with Workers(jobs, cache) as workers:  # phase 1 and the merge's parsing share a pool
        for index, (computed, pack) in zip(todo, workers.map(work, items, config, prefilter)):
            firsts[index] = computed
            stored = keys[index]
            if pack and stored is not None:
                packs[stored] = pack
        modules = Deferred(files, contents, firsts, keys, config, cache, workers, last)
        with external.stored_in(cache):
            facts, served = project_facts(firsts, keys, config, cache, modules, indexed=indexed)
        # Which files phase 2 re-checks depends only on the run's phase-1 keys (as the facts
        # do): a warm run reads the decision instead of asking every file again.
        plan_key = "g" + run_digest(keys) if cache is not None else None
        # (Facts merged anew, though the run's keys are the same: an installed package changed.)
        plan = cache.get_plan(plan_key) if served and cache and plan_key else None
        askers_key = "q" + plan_key[1:] if plan_key is not None else ""
        if plan is None:
            spelled = _spelled(last, keys, facts)
            plan = _plan(firsts, contents, facts, modules, digest=cache is not None, known=spelled)
            if cache is not None and plan_key is not None:
                cache.put_plan(plan_key, plan)
                cache.put_askers(askers_key, askers_of(firsts, keys))
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
        trace.askers = askers_key
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
    modules: Deferred,
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
    if last is None or encoded_words(last.reader_words) != facts.reader_words():
        return None
    return lambda index: last.spelled(index, keys[index])
