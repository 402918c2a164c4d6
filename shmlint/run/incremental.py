"""A project run that starts from the record of the last one, when a few files changed.

The facts of a project run depend only on what each file gives the merge (its summary and the
names its questions look up; a deferred module's bytes if the merge read them; otherwise only
its module name). When every changed file gives the merge what it gave before, the facts are
the cached facts of the last run, every unchanged file's result is its recorded result (it
depends on the facts and its own bytes only), and only the changed files are analysed: phase
1, then phase 2 against the facts when they may change the file's findings — the rule of
``check_project``, so the same findings. When a changed file gives what it gave with only its
lines moved (an edit inserting or deleting lines), or with functions added, removed or
renamed, or imports or classes added, that nothing looked up (of an analysed module, or of a
deferred module the merge read: its syntactic summary), the facts derive from the last run's
(shmlint/run/derived.py). Anything else is left to ``check_project``.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from pathlib import Path

from shmlint.basics.config import Config
from shmlint.basics.types import FileResult
from shmlint.facts.lookups import FactsUnavailable, replayed
from shmlint.facts.model import ProjectFacts
from shmlint.run.cache import Cache
from shmlint.run.derived import Change, check_derived, edit_of, trace
from shmlint.run.encoding import Stat
from shmlint.run.files import check_files
from shmlint.run.merging import syntax_key, with_external
from shmlint.run.passes import FirstPass, first_pass, syntax_summary
from shmlint.run.record import Record, stat_of
from shmlint.run.runner import UNKNOWN_SYNTAX, RunTrace, gives, summary_digest
from shmlint.run.speculate import Speculation

# More changed files than this: a checkout or a rebase, where the full run is as quick.
MOST_CHANGED = 32


def check_changed(
    files: Sequence[tuple[str | Path, str]],
    config: Config,
    cache: Cache,
    last: Record,
    changed: list[int],
    *,
    prefilter: bool = True,
    jobs: int = 1,
) -> tuple[list[FileResult], list[Stat | None], RunTrace] | None:
    """The project results with only ``changed`` (indices into ``files``) analysed, the stats
    they were read at, and the run's trace; None when the facts may differ (a full run).
    With ``jobs`` > 1, the phase 2 of a file phase 2 re-checked last time starts in a child
    process before its phase 1 (shmlint/run/speculate.py)."""
    if len(changed) > MOST_CHANGED or not last.facts_key:
        return None
    if not len(last.keys) == len(last.gives) == len(last.second) == len(last.calls) == len(files):
        return None  # not a project run's record
    phase_two = cache.with_facts(last.facts_digest)

    @functools.cache
    def load() -> ProjectFacts | None:
        """The last run's facts, once (None: gone, or an installed file they read changed)."""
        facts = cache.get_facts(last.facts_key)
        return None if facts is None or facts.external_files_changed() else facts

    # A file phase 2 re-checked last time is re-checked against the lookups it made then
    # (shmlint/facts/lookups.py): the whole facts are loaded only if it looks up more. That
    # needs nothing of its phase 1, so it may start first, in a child.
    replays = _replays(changed, last, phase_two, load, config)
    started = {
        index: Speculation(
            functools.partial(_check_one, files[index], config, phase_two, prefilter, replay)
        )
        for index, replay in replays.items()
        if jobs > 1
    }
    try:
        return _check_changed(
            files, config, cache, last, changed, prefilter, jobs, phase_two, load, replays, started
        )
    finally:
        for speculation in started.values():
            speculation.cancel()


def _replays(
    changed: list[int],
    last: Record,
    phase_two: Cache,
    load: Callable[[], ProjectFacts | None],
    config: Config,
) -> dict[int, ProjectFacts]:
    """For each changed file phase 2 re-checked last time, facts replayed from its log."""
    replays: dict[int, ProjectFacts] = {}
    shared = None
    for index in changed:
        old_key = last.keys[index]  # the bytes phase 2 analysed last time
        if not last.second[index] or old_key is None:
            continue
        shared = shared or phase_two.get_lookups(phase_two.lookups_key(""))
        log = phase_two.get_lookups(phase_two.lookups_key(old_key))
        if log is not None and shared is not None:
            with contextlib.suppress(KeyError, TypeError, ValueError):
                replays[index] = with_external(replayed(log, shared, load), config)
    return replays


def _check_one(
    file: tuple[str | Path, str],
    config: Config,
    phase_two: Cache,
    prefilter: bool,
    facts: ProjectFacts,
) -> FileResult:
    """Phase 2 of one file against ``facts``."""
    (result,) = check_files(
        [(Path(file[0]), file[1])],
        config,
        jobs=1,
        cache=phase_two,
        prefilter=prefilter,
        facts=facts,
    )
    return result


def _check_changed(
    files: Sequence[tuple[str | Path, str]],
    config: Config,
    cache: Cache,
    last: Record,
    changed: list[int],
    prefilter: bool,
    jobs: int,
    phase_two: Cache,
    load: Callable[[], ProjectFacts | None],
    replays: dict[int, ProjectFacts],
    started: dict[int, Speculation[FileResult]],
) -> tuple[list[FileResult], list[Stat | None], RunTrace] | None:
    words = [word.encode() for word in last.reader_words]
    stats: list[Stat | None] = list(last.stats)
    keys = list(last.keys)
    given = list(last.gives)
    change = Change()  # what the changed files give anew: lines moved, names added...
    fresh: dict[int, tuple[FirstPass, bytes]] = {}
    old_keys: dict[int, str | None] = {}  # (the phase-1 keys of their last bytes)
    for index in changed:
        path, display = files[index]
        stats[index] = stat_of(path)
        try:
            data = Path(path).read_bytes()
        except OSError:
            return None
        key = cache.first_pass_key(display, data)
        item = cache.get_first_pass(key)
        if item is None:
            item = first_pass(data, display, config, prefilter=prefilter, lazy=True)
            if not item.deferred:  # as check_project: a deferred module's is a text check
                cache.put_first_pass(key, item)
        before = last.gives[index]
        syntax = ""
        read = None
        if item.deferred and before.startswith(f"d{item.deferred}\0"):
            # The merge read this module: what it reads is its syntactic summary.
            read = syntax_summary(data, display, config)
            syntax = summary_digest(read)
        old_key = keys[index]
        given[index] = gives(item, syntax)
        if given[index] != before:
            edit = edit_of(item, old_key, cache, read)
            summary = item.summary or read
            if edit is None or summary is None:
                return None  # what the merge reads changed
            if read is not None:
                if before.endswith(f"\0{UNKNOWN_SYNTAX}"):
                    return None  # (facts served: which modules they read is not known)
                # The merge takes a deferred module spelling the name of a function that may
                # return a read whole, and follows its imports: one that spells one now and did
                # not then (or the reverse) may join the merge (or leave it).
                spells = any(word.encode() in data for word in last.caller_words)
                if index >= len(last.spellers) or spells != last.spellers[index]:
                    return None
                cache.put_syntax_summary(syntax_key(key), read)  # (the next edit's "before")
            change.take(summary.path, edit)
            # (Nothing taken: no line the facts carry moved, they are the last run's.)
        if item.deferred and any(word in data for word in words):
            return None  # it may call a function returning a read now
        keys[index] = key
        old_keys[index] = old_key
        fresh[index] = (item, data)
    if change.moved and last.foreign:
        return None  # a file's own answers may name a moved line (runner.cites_others)
    if change.moved or change.grows:
        for unwanted in started.values():  # (phase 2 against the last facts)
            unwanted.cancel()
        started.clear()
        return check_derived(
            files,
            config,
            cache,
            last,
            fresh,
            keys,
            given,
            stats,
            change,
            load,
            jobs,
            prefilter,
        )
    results = list(last.results)
    second = list(last.second)
    unsettled = [
        index
        for index, (item, data) in fresh.items()
        if not _settled(item, data, old_keys[index], last, index, words, cache)
    ]
    replays = {index: replays[index] for index in unsettled if index in replays}
    again: list[int] = []
    facts: ProjectFacts | None = None
    if any(index not in replays for index in unsettled):
        facts = load()
        if facts is None:
            return None
        facts = with_external(facts, config)
        again = [
            index
            for index in unsettled
            if index not in replays and fresh[index][0].needs_second_pass(facts, fresh[index][1])
        ]
    try:
        rechecked = check_files(
            [(Path(files[i][0]), files[i][1]) for i in again],
            config,
            jobs=1,
            cache=phase_two,
            prefilter=prefilter,
            facts=facts,
        )
        for index, replay in replays.items():
            speculation = started.pop(index, None)
            if speculation is not None:
                rechecked.append(speculation.result())
            else:
                rechecked.append(_check_one(files[index], config, phase_two, prefilter, replay))
            again.append(index)
    except FactsUnavailable:
        return None
    for index, (item, _) in fresh.items():
        second[index] = index in again
        results[index] = item.result
    for index, result in zip(again, rechecked, strict=True):
        results[index] = result
    calls = list(last.calls)
    for index in fresh:
        # Settled: the last run's evidence stands. Re-checked or decided against the facts:
        # none kept (the next edit of it is decided against the facts again).
        if index in unsettled:
            calls[index] = None
    return results, stats, trace(files, last, fresh, keys, given, second, calls)


def _settled(
    item: FirstPass,
    data: bytes,
    old_key: str | None,
    last: Record,
    index: int,
    words: list[bytes],
    cache: Cache,
) -> bool:
    """True when the file needs no phase 2, decided without loading the facts (large on a
    big tree). It did not need one last time, with the same summary (so the same module and
    imports: ``gives`` is unchanged), and now: every question it asks it asked before with
    the same answer of its own (so the facts answered it the same); it spells no reader's
    name it did not spell then, and none of the dotted names that would have made it call
    one (``ProjectFacts.call_evidence``: the facts would decide the same)."""
    if item.summary is None or item.deferred:
        return True  # nothing to re-check (a deferred module spelling a reader ran the project)
    calls = last.calls[index]
    if last.second[index] or old_key is None or calls is None:
        return False
    spelled, needles = calls
    before_words = {word.encode() for word in spelled}
    if any(word in data for word in words if word not in before_words):
        return False
    if any(needle.encode("utf-8", "surrogateescape") in data for needle in needles):
        return False
    before = cache.get_first_pass(old_key)
    return before is not None and set(item.questions) <= set(before.questions)
