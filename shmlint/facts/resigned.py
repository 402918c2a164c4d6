"""The facts after an edit that changed functions in place: a parameter added or renamed, a
return annotation written or changed, a body passing its parameters on otherwise
(shmlint/run/derived.py).

Such an edit changed nothing the module offers by name, yet made the merge of the whole tree
run again (1.4 s on the ray wheel), since nothing else it takes keeps a name and changes what
it means. When the function, before and after, is one the facts take by its names alone
(:func:`shmlint.facts.added.added_functions`: no handle kind in its body, nothing taken from
elsewhere that the merge passes on (shmlint/facts/quiet.py), no read, no dunder but
``__init__``, not remote), the merge gives for it
only its name, where calls' arguments (a constructor's, for ``__init__``) land in its
parameters and its return fact (and, for an actor's method, inherited or of a class made an
actor elsewhere, its name among the actor's methods). So the facts of the edited tree are the
last ones with its return fact rated anew, unless

- a handle reached its parameters or its result (a slot of it has kinds: where a call's
  argument lands may change), or a call passed it a handle the merge placed in no parameter
  (:attr:`FactsIndex.unplaced`: a new parameter may take it);
- its return fact changes and rating the old annotation read a class no analysed module
  declares or an installed module (the merge may have read it for this function alone:
  ``removed.rates_unanalysed_class``), or rating the new one adds a class or an installed
  file the facts lack (``added.rated_returns``);
- its body stops using a name that runs through a module phase 1 deferred (the merge may have
  read it for this body alone), or uses one reaching a module the facts lack
  (``added.stands``);
- the module defines its name twice (``@overload``, a property's setter, a version guard: the
  merge rates the last definition with an annotation, which the edit may change).

Lookups of its name answer as before otherwise (it is a function of the module, not remote)
but for what it returns: unlike an addition, its being asked about is no reach. Another file
that asked what it returns (``p:``, or ``m:`` for an actor's method, by its last name) may
get another answer: the run plans its phase 2 again (shmlint/run/replan.py).
``tests/project/test_resigned.py`` compares such facts with a merge of the edited tree on every
project fixture, and has a case for each refusal.

Functions added or removed in the same edit (a helper extracted from a function, or inlined
back: :func:`reworked_functions`) go the same way, as one set of old versions removed and new
ones added: a name only added is checked as an addition (nothing looked it up), one only
removed as a removal (no handle reached it, a call of it now lands nowhere). The helper's
slots and the changed function's are all their own: what one passes the other is no reach.
``tests/project/test_reworked.py`` extracts a helper from (and inlines it back into) every
module-level function of every project fixture and compares the facts with a merge.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from shmlint.facts.added import (
    Added,
    Growth,
    Runs,
    bodies,
    indexed,
    quiet,
    rated_returns,
    stands,
)
from shmlint.facts.closure import still_reached, used_names
from shmlint.facts.evidence import TypeTables
from shmlint.facts.index import kept_reads
from shmlint.facts.model import ProjectFacts
from shmlint.facts.removed import (
    Renamed,
    forgotten,
    rates_unanalysed_class,
    replaced,
)
from shmlint.facts.summary import FunctionInfo, ModuleSummary

Shape = tuple[object, ...]


def _shapes(summary: ModuleSummary) -> dict[str, Shape]:
    """Each function of ``summary`` as the merge sees it, lines aside: its signature, the
    flows into its own slots and the calls passing its parameters on (of a name defined
    twice, the last definition: the merge rates the last annotated one). (A call passing
    only what the body took elsewhere names no caller: it differs in none of them.)"""
    shapes: dict[str, Shape] = {}
    for info in summary.functions:
        params, result = f"param:{info.name}.", f"ret:{info.name}"
        flows = [
            flow
            for flow in summary.flows
            if flow.target == result or flow.target.startswith(params)
        ]
        calls = [
            call
            for call in summary.calls
            if call.origins and all(origin.startswith(params) for origin in call.origins)
        ]
        signature = (info.params, info.method, info.returns, info.inferred, info.remote)
        shapes[info.name] = (signature, tuple(flows), tuple(calls))
    return shapes


def resigned_functions(
    old: ModuleSummary, new: ModuleSummary, old_questions: list[str], new_questions: list[str]
) -> Renamed | None:
    """The functions ``new`` changes in place from ``old`` (the same names; other parameters,
    return annotation, or own flows and calls), as the old versions removed and the new ones
    added through the module without either, when :func:`added_functions` takes both; None
    otherwise (the middle's lines still to be compared)."""
    before, after = _shapes(old), _shapes(new)
    if before.keys() != after.keys():
        return None
    return _changed(old, new, before, after, old_questions, new_questions)


def reworked_functions(
    old: ModuleSummary, new: ModuleSummary, old_questions: list[str], new_questions: list[str]
) -> Renamed | None:
    """Functions changed in place, with others added or removed beside them in the same edit
    (a helper extracted: written, and called from a function it came from): all of them the
    old versions removed and the new ones added, as :func:`resigned_functions` gives them;
    None when no function changes in place, or none is added or removed."""
    before, after = _shapes(old), _shapes(new)
    if before.keys() == after.keys():
        return None
    return _changed(old, new, before, after, old_questions, new_questions)


def _changed(
    old: ModuleSummary,
    new: ModuleSummary,
    before: dict[str, Shape],
    after: dict[str, Shape],
    old_questions: list[str],
    new_questions: list[str],
) -> Renamed | None:
    changed = {name for name in before.keys() & after.keys() if before[name] != after[name]}
    if not changed:
        return None
    gone, came = changed | (before.keys() - after.keys()), changed | (after.keys() - before.keys())
    defined = Counter(info.name for info in (*old.functions, *new.functions))
    if any(defined[name] > (2 if name in changed else 1) for name in gone | came):
        return None  # (defined twice: `@overload`, a property's setter, a version guard)
    return replaced(old, new, gone, came, old_questions, new_questions, init=True)


def resign(
    facts: ProjectFacts,
    items: list[Renamed],
    modules: Runs,
    tables: TypeTables,
    external: bool,
) -> Growth | None:
    """What ``facts`` gain and lose when the functions of ``items`` change in place (and
    others are added or removed beside them): their return facts rated anew, the removed
    ones forgotten, the index grown by what the new versions ask, call and spell; None when
    the facts of the edited tree may be other than that."""
    index = facts.index
    gone = frozenset(name for item in items for name in item.removed.names)
    came = frozenset(name for item in items for name in item.added.names)
    names = gone & came  # (changed in place; the others removed, or added)
    if index is None or not names or not gone <= facts.functions:
        return None
    if any(name.endswith(".__init__") for name in gone ^ came):
        return None  # (a constructor's arguments land in other slots: found by a review)
    # (A constructor's call is placed by its class's name: an `__init__`'s, its owner.)
    callees = gone | {name[: -len(".__init__")] for name in gone if name.endswith(".__init__")}
    if callees & index.unplaced:
        return None
    without = forgotten(facts, gone)
    if without is None:
        return None  # (a handle reached it: a call's argument may land elsewhere now)
    deferred, shared = modules.deferred, modules.shared
    analysed = {path for module, (path, _) in facts.modules.items() if module not in deferred}
    returns = {name: facts.returns[name] for name in names if name in facts.returns}
    read_by: dict[str, set[str]] = {}
    for item in items:
        # (Each version as an addition to the module without either: the names changed in
        # place may have been looked up, the others not.)
        for version in (item.removed, item.added):
            if not stands(version, without, index, deferred, shared, names):
                return None
        if not quiet(item.removed, facts) or not quiet(item.added, without):
            return None  # (what a version took from elsewhere: the merge passes it on)
        used = set(used_names(bodies(item.added), item.added.questions))
        dropped = set(used_names(bodies(item.removed), item.removed.questions)) - used
        if not still_reached(dropped, used_names(item.added.module), facts, deferred, shared):
            return None  # (the merge may have read a deferred module for the old body alone)
        old, new = _rerated(item.removed, item.added), _rerated(item.added, item.removed)
        if old.functions and rates_unanalysed_class(old, without, tables, external, analysed):
            return None
        if not new.functions:
            continue
        rated = rated_returns(new, without, tables, external, read_by)
        if rated is None:
            return None
        for info in new.functions:
            fact = rated.get(info.name)
            returns.pop(info.name, None)
            if fact is not None:
                returns[info.name] = fact
    asked, unresolved, pairs = indexed(without, [item.added for item in items])
    unresolved |= gone - came  # (a call of a removed function lands nowhere now)
    kept = kept_reads(read_by, facts.classes)
    return Growth(
        tuple(sorted(came)),
        returns,
        asked,
        unresolved,
        tuple(sorted(gone)),
        spelled=pairs,
        read_by=kept,
    )


def _rerated(version: Added, other: Added) -> Added:
    """``version`` with only the functions whose return annotation (written or inferred)
    differs in ``other``, the other version of the same functions."""
    written = {info.name: (info.returns, info.inferred) for info in other.functions}
    functions: tuple[FunctionInfo, ...] = tuple(
        info
        for info in version.functions
        if written.get(info.name) != (info.returns, info.inferred)  # (or none: added, removed)
    )
    return dataclasses.replace(version, functions=functions)
