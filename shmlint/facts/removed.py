"""The facts after an edit that removed functions nothing else reached: the inverse of
:mod:`shmlint.facts.added` (shmlint/run/derived.py).

Deleting a helper made the merge of the whole tree run again (1.5 s on the ray wheel). When
adding the function to the edited tree would have been an edit the facts take by its names
alone (``added.stands``: nothing looked the name up or meant it; ``added.quiet``: its body
gives no handle kind and takes nothing the merge passes on), the facts of the tree with it are
the facts without it plus its name and return fact; so the facts without it are the last ones
minus those.
That holds only if the facts without it are what ``stands`` was checked against, so removal
asks more of the function than addition does, all of it read from the last facts:

- no handle kind reached its parameters or its result (no slot of it has kinds: the merge
  placed no other file's handle in it, which its body could pass on);
- every module phase 1 deferred that what its body uses runs through, the module's other
  names run through too (``closure.still_reached``: else the merge read it for the body,
  maybe for it alone; a package above the module, which its own names run through, stays);
- rating its annotation reads no class of a deferred module and no installed module (the
  merge rated such a class into the facts, or noted such a file, maybe for it alone).

The index keeps what was asked, and takes the names among the callees the merge could not place
(a call of a removed function now lands nowhere): a superset of the index of a merge, which is
all it must be (an addition it refuses is left to the merge). ``tests/project/test_removed.py``
compares such facts with a merge of the edited tree on every project fixture.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from shmlint.facts.added import (
    Added,
    Growth,
    Runs,
    added_functions,
    bodies,
    grow,
    quiet,
    rate_returns,
    stands,
)
from shmlint.facts.closure import still_reached, used_names
from shmlint.facts.evidence import TypeTables
from shmlint.facts.model import ProjectFacts
from shmlint.facts.records import ClassFact
from shmlint.facts.summary import ModuleSummary


def shrink(
    facts: ProjectFacts,
    removals: list[Added],
    modules: Runs,
    tables: TypeTables,
    external: bool,
) -> Growth | None:
    """What ``facts`` lose when the functions of ``removals`` are gone (each ``Added`` read
    backwards: its ``module`` the summary with them, its ``summary`` the one without); None
    when the facts without them may be other than the last ones minus their names."""
    index = facts.index
    names = sorted(name for removal in removals for name in removal.names)
    if index is None or not names or not set(names) <= facts.functions:
        return None
    if set(names) & (facts.remote | facts.returned_reads.keys()):
        return None
    without = forgotten(facts, frozenset(names))
    if without is None:
        return None  # (a handle reached it: its body may have passed it on)
    deferred, shared = modules.deferred, modules.shared
    analysed = {path for module, (path, _) in facts.modules.items() if module not in deferred}
    for removal in removals:
        if not stands(removal, without, index, deferred, shared):
            return None
        if not quiet(removal, facts):
            return None  # (what it took from elsewhere: the merge passed it on)
        dropped = used_names(bodies(removal), removal.questions)
        if not still_reached(dropped, used_names(removal.summary), facts, deferred, shared):
            return None  # (the merge may have read a deferred module for its body alone)
        if rates_unanalysed_class(removal, without, tables, external, analysed):
            return None
    return Growth((), {}, frozenset(), frozenset(names), removed=tuple(names))


def forgotten(facts: ProjectFacts, names: frozenset[str]) -> ProjectFacts | None:
    """``facts`` without the functions ``names`` (their names and return facts); None when a
    handle reached one of them (a slot of its parameters or its result has kinds)."""
    slots = tuple(f"param:{name}." for name in names)
    results = {f"ret:{name}" for name in names}
    if any(slot in results or slot.startswith(slots) for slot in facts.slot_kinds):
        return None
    return dataclasses.replace(
        facts,
        functions=facts.functions - names,
        returns={name: fact for name, fact in facts.returns.items() if name not in names},
        _canonical={},
    )


def reaches_deferred(names: Iterable[str], deferred: set[str]) -> bool:
    """Whether a name, or a module above it, is a module phase 1 deferred."""
    for name in names:
        parts = name.split(".")
        if any(".".join(parts[:cut]) in deferred for cut in range(1, len(parts) + 1)):
            return True
    return False


def rates_unanalysed_class(
    removal: Added, facts: ProjectFacts, tables: TypeTables, external: bool, analysed: set[str]
) -> bool:
    """Whether rating the removed functions' annotations, as the merge did, reads a class no
    analysed module declares (one the merge may have read or rated for them alone: of a
    deferred module, of an installed package) or any installed module (a file the merge noted
    the facts depend on: for a name that is no class there too, an alias, a constant)."""
    _, probe, log = rate_returns(removal, facts, tables, external)
    if probe.external_files:
        return True
    read = log.seen["classes"].values()
    return any(isinstance(fact, ClassFact) and fact.path not in analysed for fact in read)


@dataclasses.dataclass(frozen=True, slots=True)
class Renamed:
    """Functions an edit removed and others it added in one module (a function renamed, one
    replaced): a removal then an addition, through the module without either."""

    removed: Added  # read backwards (its ``module`` is the last summary)
    added: Added  # its ``summary`` is the module without either, with the new lines


def renamed_functions(
    old: ModuleSummary, new: ModuleSummary, old_questions: list[str], new_questions: list[str]
) -> Renamed | None:
    """The functions ``new`` drops from ``old`` and those it adds, when removing the first
    and adding the second are each an edit :func:`added_functions` takes, through the module
    without either (asking the questions both versions ask); None otherwise (the middle's
    lines still to be compared)."""
    before = {info.name for info in old.functions}
    after = {info.name for info in new.functions}
    if not before - after or not after - before:
        return None
    return replaced(old, new, before - after, after - before, old_questions, new_questions)


def replaced(
    old: ModuleSummary,
    new: ModuleSummary,
    gone: set[str],
    came: set[str],
    old_questions: list[str],
    new_questions: list[str],
    init: bool = False,
) -> Renamed | None:
    """The functions named ``gone`` removed from ``old`` and those named ``came`` added in
    ``new``, each through the module without either (asking the questions both versions
    ask), when :func:`added_functions` takes both (``init``: ``__init__`` too)."""
    asked = set(new_questions)
    middle = [question for question in old_questions if question in asked]
    without_old = dataclasses.replace(
        old, functions=tuple(f for f in old.functions if f.name not in gone)
    )
    without_new = dataclasses.replace(
        new, functions=tuple(f for f in new.functions if f.name not in came)
    )
    # The calls one version makes and the other does not: the changed bodies' (a call names
    # no caller; the middle keeps those both make).
    old_calls, new_calls = set(old.calls), set(new.calls)
    removed = added_functions(without_old, old, middle, old_questions, init, old_calls - new_calls)
    added = added_functions(without_new, new, middle, new_questions, init, new_calls - old_calls)
    if removed is None or added is None:
        return None
    return Renamed(removed, added)


def rename(
    facts: ProjectFacts,
    renames: list[Renamed],
    modules: Runs,
    tables: TypeTables,
    external: bool,
) -> Growth | None:
    """What ``facts`` gain and lose when the functions of ``renames`` are removed and then
    added (:func:`shrink`, then :func:`shmlint.facts.added.grow` on the facts without
    them); None when either is refused."""
    lost = shrink(facts, [item.removed for item in renames], modules, tables, external)
    if lost is None:
        return None
    without = lost.applied(facts, facts.index)
    gained = grow(without, [item.added for item in renames], modules, tables, external)
    if gained is None:
        return None
    return dataclasses.replace(
        gained, unresolved=gained.unresolved | lost.unresolved, removed=lost.removed
    )
