"""A project run whose facts derive from the last run's (shmlint/run/incremental.py): when the
changed files only moved lines (shmlint/facts/moved.py) or made one kind of edit a derivation
takes (functions added nothing looked up, shmlint/facts/added.py; and the others of
:data:`DERIVATIONS`), the facts are the last ones relined and changed by it, stored as that
derivation; phase 2 re-checks what it re-checked last time, each file keeping its last result
where its logged lookups are answered the same, the changed files the new facts send there,
and (after an edit that changes answers other files asked for: :data:`REPLANNED`) the files
whose plan the new answers change (shmlint/run/replan.py)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from shmlint.basics.config import Config
from shmlint.basics.types import FileResult
from shmlint.facts.added import Added, Growth, Runs, added_functions, grow
from shmlint.facts.declared import Declared, declare, declared
from shmlint.facts.evidence import TypeTables
from shmlint.facts.layout import module_name
from shmlint.facts.model import ProjectFacts
from shmlint.facts.moved import Lines, moved_lines, relined, relined_digest
from shmlint.facts.refielded import Refielded, refield, refielded_classes
from shmlint.facts.removed import Renamed, rename, renamed_functions, shrink
from shmlint.facts.resigned import resign, resigned_functions, reworked_functions
from shmlint.facts.summary import ModuleSummary
from shmlint.facts.unimported import Unimported, unimport, unimported
from shmlint.run.cache import Cache
from shmlint.run.discovery import read_file
from shmlint.run.encoding import Calls, Stat
from shmlint.run.files import check_files
from shmlint.run.merging import facts_key_of, syntax_key, with_external
from shmlint.run.passes import FirstPass
from shmlint.run.record import Record
from shmlint.run.replan import answered_otherwise, replanned
from shmlint.run.runner import RunTrace, cites_others


def trace(
    files: Sequence[tuple[str | Path, str]],
    last: Record,
    fresh: dict[int, tuple[FirstPass, bytes]],
    keys: list[str | None],
    given: list[str],
    second: list[bool],
    calls: list[Calls | None],
    facts: tuple[str, str] | None = None,
) -> RunTrace:
    """The record this run leaves: the last one's, with the changed files' keys, what they
    give, phase 2 and call evidence; ``facts``: the key and digest of other facts than the
    last run's."""
    # (A changed deferred module spelling a reader's name ran the project: none here does.)
    callers = [flag and index not in fresh for index, flag in enumerate(last.callers)]
    # A deferred module spelling the name of a function that may return a read (and no
    # reader's name: that ran the project) would join a full run's merge, which adds no
    # answer the facts lack (the merge of what names reach answers as every module's):
    # these facts stand, and the record says what a full run would merge.
    merged = [word.encode() for word in last.caller_words]
    spellers = list(last.spellers)
    for index, (item, data) in fresh.items():
        if index < len(spellers):
            spellers[index] = bool(item.deferred) and any(word in data for word in merged)
    facts_key, facts_digest = facts or (last.facts_key, last.facts_digest)
    paths = {display for _, display in files}
    foreign = last.foreign or any(cites_others(item, paths) for item, _ in fresh.values())
    return RunTrace(
        keys,
        given,
        facts_key,
        facts_digest,
        last.reader_words,
        second,
        calls,
        callers,
        last.caller_words,
        spellers,
        foreign,
        last.askers,
    )


# What an edit gives the merge anew but lines, in one of the readings a derivation takes:
# functions added (``added``), removed (``removed``: an ``Added`` read backwards, its
# ``module`` the last summary), renamed or changed in place (``renamed``, ``resigned``),
# imports and classes added (``declared``), imports removed (``unimported``), classes'
# fields changed (``refielded``).
Reading = Added | Declared | Renamed | Unimported | Refielded


@dataclasses.dataclass(frozen=True, slots=True)
class Edit:
    """What one changed file gives the merge anew: the lines it moved, and a reading of what
    else it changed (``kind``: none, or one of :data:`Reading`'s)."""

    lines: Lines
    kind: str = ""
    reading: Reading | None = None


def edit_of(
    item: FirstPass, old_key: str | None, cache: Cache, read: ModuleSummary | None = None
) -> Edit | None:
    """What an analysed file gives the merge anew (:func:`edit_between` its last summary and
    questions, read from its last bytes' entry ``old_key``, and its new ones); of a deferred
    module the merge read, between the syntactic summary it read last time (cached under
    ``old_key``) and ``read``, its summary now. None: something else changed."""
    if old_key is None:
        return None
    if item.deferred:
        old_read = cache.get_syntax_summary(syntax_key(old_key))
        if read is None or not isinstance(old_read, ModuleSummary):
            return None
        return edit_between(old_read, read, [], [])
    old = cache.get_first_pass(old_key)
    if old is None or old.summary is None or old.deferred or item.summary is None:
        return None
    before = [question for question, _ in old.questions]
    after = [question for question, _ in item.questions]
    return edit_between(old.summary, item.summary, before, after)


def edit_between(
    old: ModuleSummary, new: ModuleSummary, before: list[str], after: list[str]
) -> Edit | None:
    """The lines a module moved (:func:`shmlint.facts.moved.moved_lines`) when it gives the
    merge what it gave (summary ``old``, questions ``before``) but for line numbers, or that
    and functions added (:func:`shmlint.facts.added.added_functions`), removed (the same,
    backwards), renamed (both) or changed in place
    (:func:`shmlint.facts.resigned.resigned_functions`, also with others added or removed
    beside them: :func:`~shmlint.facts.resigned.reworked_functions`), or imports and classes
    added (:func:`shmlint.facts.declared.declared`) or imports removed
    (:func:`shmlint.facts.unimported.unimported`), or classes' fields changed
    (:func:`shmlint.facts.refielded.refielded_classes`); else None."""
    # Each reading of the edit, with the summaries that must then differ only in lines.
    candidates: list[tuple[ModuleSummary, ModuleSummary, Edit]] = []
    if after == before:
        candidates.append((old, new, Edit({})))
    added = added_functions(old, new, before, after)
    if added is not None:
        candidates.append((old, added.summary, Edit({}, "added", added)))
    removed = added_functions(new, old, after, before)
    if removed is not None:
        candidates.append((removed.summary, new, Edit({}, "removed", removed)))
    declaration = declared(old, new, before, after)
    if declaration is not None:  # (an import and a function added: this one, not the first)
        candidates.append((old, declaration.summary, Edit({}, "declared", declaration)))
    renamed = renamed_functions(old, new, before, after)
    if renamed is not None:
        pair = (renamed.removed.summary, renamed.added.summary)
        candidates.append((*pair, Edit({}, "renamed", renamed)))
    resigned = resigned_functions(old, new, before, after)
    if resigned is not None:
        pair = (resigned.removed.summary, resigned.added.summary)
        candidates.append((*pair, Edit({}, "resigned", resigned)))
    removal = unimported(old, new, before, after)
    if removal is not None:
        candidates.append((removal.summary, new, Edit({}, "unimported", removal)))
    fields = refielded_classes(old, new, before, after)
    if fields is not None:
        candidates.append((old, fields.summary, Edit({}, "refielded", fields)))
    reworked = reworked_functions(old, new, before, after)
    if reworked is not None:  # (a helper extracted: changed in place, with others added)
        pair = (reworked.removed.summary, reworked.added.summary)
        candidates.append((*pair, Edit({}, "resigned", reworked)))
    for first, second, edit in candidates:
        lines = moved_lines(first, second)
        if lines is not None:
            return dataclasses.replace(edit, lines=lines)
    return None


@dataclasses.dataclass(frozen=True, slots=True)
class Change:
    """What the changed files gave the merge anew: lines moved, and the readings of what else
    they changed, by kind (more than one kind in one run: left to the merge)."""

    moved: dict[str, Lines] = dataclasses.field(default_factory=dict)
    readings: dict[str, list[Reading]] = dataclasses.field(default_factory=dict)

    def take(self, path: str, edit: Edit) -> None:
        """Add what one changed file (at ``path``) gives anew (no line it moved the facts
        carry: nothing for ``moved``)."""
        if any(old_line != new_line for old_line, new_line in edit.lines.items()):
            self.moved[path] = edit.lines
        if edit.reading is not None:
            self.readings.setdefault(edit.kind, []).append(edit.reading)

    @property
    def grows(self) -> int:
        """How many kinds of growth the change makes (more than one: left to the merge)."""
        return len(self.readings)


def check_derived(
    files: Sequence[tuple[str | Path, str]],
    config: Config,
    cache: Cache,
    last: Record,
    fresh: dict[int, tuple[FirstPass, bytes]],
    keys: list[str | None],
    given: list[str],
    stats: list[Stat | None],
    change: Change,
    load: Callable[[], ProjectFacts | None],
    jobs: int,
    prefilter: bool,
) -> tuple[list[FileResult], list[Stat | None], RunTrace] | None:
    """The run when changed files only moved lines, or made one kind of edit a derivation
    takes (``change``): the last facts relined and changed by it, stored under this run's
    keys; phase 2 on the files it re-checked last time (an unchanged file asks what it asked,
    and an answer naming a moved line differed from its own then, as it does now; none asked
    about an added name), on the changed files the new facts send there, and, after an edit
    of :data:`REPLANNED`, on the unchanged files whose questions the new facts answer
    otherwise, decided again from their phase-1 entries. A file whose lookups in the last
    facts these answer the same keeps its last result (``check_files``' ``earlier``)."""
    facts_key = facts_key_of(keys)
    # These keys' facts may be stored already (an edit undone): never stored over, taken when
    # they read the installed files the last facts read, unchanged.
    stored = cache.get_facts(facts_key)
    if stored is not None and (
        stored.external_files != last.external or stored.external_files_changed()
    ):
        return None
    old = relined_facts = None
    growth = None
    askers = None
    if change.grows > 1:
        return None
    if stored is None or change.grows:
        old = load()
        if old is None or old.digest() != last.facts_digest or old.external_files != last.external:
            return None  # (not the facts the record's results were checked against)
        relined_facts = relined(old, change.moved)
        if relined_facts is None:
            return None
        if change.grows:
            # Stored or not, the facts of these keys are the last ones knowing (forgetting)
            # the names only if nothing reached them: else another file's plan changes (the
            # merge runs). (Relined first: a class added is rated against its bases' lines.)
            runs = _runs(files, last, config, cache, fresh)
            growth = growth_of(relined_facts, change, runs, config)
            if growth is None:
                return None
            if change.readings.keys() & REPLANNED:  # (other files' answers: their plans)
                askers = cache.get_askers(last.askers) if last.askers else None
                if askers is None:
                    return None
    differing = None  # (the classes and reads relined facts change: all they change)
    if stored is not None:
        facts = stored
    else:
        assert old is not None and relined_facts is not None
        facts = relined_facts if growth is None else growth.applied(relined_facts, old.index)
        if growth is None:
            classes, reads = old.classes, old.returned_reads
            differing = {
                "classes": frozenset(
                    n for n, f in facts.classes.items() if f is not classes.get(n)
                ),
                "returned_reads": frozenset(
                    n for n, r in facts.returned_reads.items() if r is not reads.get(n)
                ),
            }
        if facts is old:  # no line they carry moved: the same facts, under the last key
            facts_key = last.facts_key
        else:
            # Stored as the last facts relined, digested by that derivation (not 9 MB of
            # JSON encoded: ~0.15 s on the ray wheel); whole past a few relinings, under the
            # same digest (which names their content as surely).
            content = growth.content() if growth is not None else None
            facts.assume_digest(relined_digest(old.digest(), change.moved, content))
            base = (last.facts_key, old.digest())
            if not cache.put_relined(facts_key, base, change.moved, facts.digest(), growth):
                cache.put_facts(facts_key, facts)
    digest = facts.digest()
    facts = with_external(facts, config)
    second = list(last.second)
    calls = list(last.calls)
    results = list(last.results)
    for index, (item, data) in fresh.items():
        second[index], calls[index] = item.second_pass(facts, data)
        results[index] = item.result
    if askers is not None:
        assert growth is not None and relined_facts is not None
        before = with_external(relined_facts, config)
        changed = answered_otherwise(before, facts, growth, askers.asked)
        analysed = [gave[:1] == "a" for gave in last.gives]  # (in the last run)
        for index in replanned(askers, changed, last.keys, analysed) - fresh.keys():
            key = last.keys[index]
            entry = cache.get_first_pass(key) if key is not None else None
            text = read_file(Path(files[index][0]))
            if entry is None or text is None:
                return None
            spelled = last.spelled(index, key)
            second[index], calls[index] = entry.second_pass(facts, text, spelled)
            results[index] = entry.result
    again = [index for index, flag in enumerate(second) if flag]
    earlier = None  # (as check_project: the last run's phase 2, if against other facts)
    if digest != last.facts_digest:
        earlier = cache.with_facts(last.facts_digest)
        cache.put_last_facts(digest)
    rechecked = check_files(
        [(Path(files[i][0]), files[i][1]) for i in again],
        config,
        jobs=jobs,
        cache=cache.with_facts(digest),
        prefilter=prefilter,
        facts=facts,
        earlier=earlier,
        differing=differing,
    )
    for index, result in zip(again, rechecked, strict=True):
        results[index] = result
    return (
        results,
        stats,
        trace(files, last, fresh, keys, given, second, calls, (facts_key, digest)),
    )


# The readings whose facts may answer other files' questions otherwise: a class's evidence
# and fields, what a function returns (shmlint/run/replan.py).
REPLANNED = frozenset({"refielded", "resigned"})
# The derivation taking each reading's kind (but ``unimported``, which rates nothing), given
# the readings of that kind.
Derivation = Callable[[ProjectFacts, Any, Runs, TypeTables, bool], Growth | None]
DERIVATIONS: dict[str, Derivation] = {
    "added": grow,
    "removed": shrink,
    "renamed": rename,
    "resigned": resign,
    "declared": declare,
    "refielded": refield,
}


def growth_of(facts: ProjectFacts, change: Change, runs: Runs, config: Config) -> Growth | None:
    """What ``facts`` gain or lose by ``change``'s one kind of growth, or None."""
    ((kind, readings),) = change.readings.items()
    if kind == "unimported":
        return unimport(facts, [item for item in readings if isinstance(item, Unimported)], runs)
    options = config.options
    tables = TypeTables.for_options(options)
    return DERIVATIONS[kind](facts, readings, runs, tables, options.external_types)


def _runs(
    files: Sequence[tuple[str | Path, str]],
    last: Record,
    config: Config,
    cache: Cache,
    fresh: dict[int, tuple[FirstPass, bytes]],
) -> Runs:
    """The run's modules: those the last run deferred (what gives ``d`` + module name), the
    names several files claim, and the summaries the merge read of the unchanged files."""
    deferred = {given[1:].partition("\0")[0] for given in last.gives if given[:1] == "d"}
    claimed = Counter(module_name(display, config.root)[0] for _, display in files)
    where = {display: index for index, (_, display) in enumerate(files)}

    def summary_at(path: str) -> ModuleSummary | None:
        """The summary the merge read of the unchanged file at ``path`` (None: not at hand:
        no such file, a changed one, its entry gone)."""
        index = where.get(path)
        if index is None or index in fresh:
            return None
        key, given = last.keys[index], last.gives[index]
        if key is None:
            return None
        if given[:1] == "a":
            item = cache.get_first_pass(key)
            return None if item is None else item.summary
        read = cache.get_syntax_summary(syntax_key(key)) if given[:1] == "d" else None
        return read if isinstance(read, ModuleSummary) else None

    shared = {module for module, count in claimed.items() if count > 1}
    return Runs(deferred, shared, summary_at)
