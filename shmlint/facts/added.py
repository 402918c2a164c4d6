"""The facts after an edit that added functions nothing else could look up yet
(shmlint/run/derived.py), as :mod:`shmlint.facts.moved` gives them after an edit that moved
lines.

A function added to a module (a helper, the commonest edit after a line inserted) made the
merge of the whole tree run again: 1.4 s on the ray wheel. What the merge does with it, when its
body gives no handle kind and takes nothing the merge passes on from elsewhere (no read, no
other slot's kind, no result of a function that may return a read: shmlint/facts/quiet.py),
is to know its name (``ProjectFacts.functions``), its parameters (where a call's arguments
land) and what its annotation, written or inferred, says it returns (rated in its module
against the classes the facts hold). Everything else the merge gives is the same, unless

- another module's call lands in its parameters now (its callee is in
  :attr:`FactsIndex.unresolved`: the calls the last merge placed nowhere), or another file
  asked whether the name is a project function (:attr:`FactsIndex.asked`: its answer changes,
  and with it which files phase 2 re-checks);
- the name already meant something (an alias, a class, a name the facts forward elsewhere),
  or it is a method the merge reads by its name (``__init__``, an actor's, a dunder), or one
  of a class others inherit (an actor class's methods include its bases');
- a name the merge resolves in the module (an annotation, a class's base) spells its last part:
  the merge resolves a name's first part to the module's own top-level names first (a
  method's name is none of them; checked for methods too, which costs nothing);
- another file claims the same module name (the merge mixes such files' own names);
- what its body uses, followed as the merge's closure follows names through the modules phase
  1 deferred, reaches a module the last merge did not read or a class of such a module (whose
  bases and fields the closure would follow), or it or its annotation asks about a class the
  facts lack (an installed one would be rated into them).

So the facts are the last run's with the names added, when none of these holds; the index is
kept beside them (not in their digest: it says what was asked, not what the facts answer).
``tests/project/test_added.py`` compares such facts with a merge of the edited tree on every
project fixture, and has a case for each way the names could have been reached.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from typing import Any

from shmlint.facts.classes import ClassResolver
from shmlint.facts.closure import reaches_unread, used_names
from shmlint.facts.evidence import TypeTables
from shmlint.facts.index import FactsIndex, decode_read_by, encode_read_by, kept_reads
from shmlint.facts.lookups import LookupLog, watched
from shmlint.facts.model import ProjectFacts, realias
from shmlint.facts.quiet import owns, takes_nothing
from shmlint.facts.records import (
    ClassFact,
    ReturnFact,
    decode_class,
    decode_return,
    encode_class,
    encode_return,
)
from shmlint.facts.spelled import annotation_names, spelled
from shmlint.facts.summary import CallFlow, Flow, FunctionInfo, ModuleSummary

_FUNCTION_QUESTIONS = ("x:", "p:")
# Questions whose name the merge rates as a class (``closure._CLASS_QUESTIONS``).
_CLASS_QUESTIONS = ("c:", "F:", "n:")


def asked_functions(questions: Iterable[str], facts: ProjectFacts) -> frozenset[str]:
    """The canonical names ``questions`` ask about as functions."""
    return frozenset(facts.canonical(q[2:]) for q in questions if q[:2] in _FUNCTION_QUESTIONS)


@dataclasses.dataclass(frozen=True, slots=True)
class Runs:
    """The run's modules, as far as the merge's closure and names go."""

    deferred: set[str]  # the modules phase 1 did not analyse (the closure reads them)
    shared: set[str]  # the module names several files claim
    # The summary the merge read of the module at a path (None: not at hand), for what is
    # rated anew (shmlint/facts/refielded.py).
    summaries: Callable[[str], ModuleSummary | None] | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Added:
    """The functions an edit added to a module, with what their bodies gave the merge."""

    summary: ModuleSummary  # the module without them (compared with its last summary)
    module: ModuleSummary  # the module with them
    functions: tuple[FunctionInfo, ...]
    flows: tuple[Flow, ...]
    calls: tuple[CallFlow, ...]
    questions: tuple[str, ...]  # the module's questions its last version did not ask

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(info.name for info in self.functions)


def added_functions(
    old: ModuleSummary,
    new: ModuleSummary,
    old_questions: list[str],
    new_questions: list[str],
    init: bool = False,
    calls: Iterable[CallFlow] | None = None,
) -> Added | None:
    """The functions ``new`` adds to ``old`` when that is all it adds: their names, the flows
    into their slots, the calls ``new`` makes that ``old`` does not (``calls``: those to
    take instead, when ``old`` is not the module's other version), no handle kind, no read,
    no class question, no dunder method (``init``: but ``__init__``, whose parameters a
    change in place may change: shmlint/facts/resigned.py); None otherwise (``summary``
    still to be compared with ``old`` for lines). What the flows and calls take from
    elsewhere is the derivations' to check (shmlint/facts/quiet.py): a call names no
    caller, and the merge places its argument whichever body made it."""
    known = {f.name for f in old.functions}
    functions = tuple(f for f in new.functions if f.name not in known)
    names = tuple(f.name for f in functions)
    if not names or len(names) != len(new.functions) - len(old.functions):
        return None  # (nothing added, or one removed too: renamed)
    if not set(old_questions) <= set(new_questions):
        return None
    questions = tuple(q for q in new_questions if q not in set(old_questions))
    if any(q[:2] in _CLASS_QUESTIONS for q in questions):
        return None
    actors = {c.name for c in new.classes if c.actor}
    for info in functions:
        owner, _, last = info.name.rpartition(".")
        if info.remote or owner in actors or (last.startswith("__") and not init):
            return None
        if last.startswith("__") and last != "__init__":
            return None
    own = owns(names)
    flows = tuple(f for f in new.flows if own(f.target))
    if calls is None:
        made = set(old.calls)
        calls = (c for c in new.calls if c not in made)
    taken = frozenset(calls)
    calls = tuple(c for c in new.calls if c in taken)  # (in the module's order)
    if any(f.kinds for f in flows) or any(c.kinds for c in taken):
        return None
    summary = dataclasses.replace(
        new,
        functions=tuple(f for f in new.functions if f.name not in names),
        flows=tuple(f for f in new.flows if f not in flows),
        calls=tuple(c for c in new.calls if c not in taken),
    )
    if _spells(new, names):
        return None
    return Added(summary, new, functions, flows, calls, questions)


def _spells(summary: ModuleSummary, names: tuple[str, ...]) -> bool:
    """Whether a name the merge resolves in the module — an annotation, a class's base — spells
    the last part of one of ``names`` (the merge resolves a name's first part to the module's
    own top-level names first: ``ClassResolver.locals``)."""
    pattern = re.compile("|".join(rf"\b{re.escape(n.rpartition('.')[2])}\b" for n in names))
    spelled = [field.annotation for info in summary.classes for field in info.fields]
    spelled += [base for info in summary.classes for base in info.bases]
    spelled += [info.returns for info in summary.functions]
    return any(pattern.search(text) for text in spelled if text)


def stands(
    added: Added,
    facts: ProjectFacts,
    index: FactsIndex,
    deferred: set[str],
    shared: set[str],
    replaced: frozenset[str] = frozenset(),
) -> bool:
    """Whether ``facts`` (with ``index``) take ``added`` by its names alone: nothing looked
    them up, they meant nothing, their module's name is its file's alone (``shared``: those
    several files claim, whose own names the merge mixes), and what their bodies use reaches
    no module the facts lack (``deferred``: the modules phase 1 did not analyse, which the
    merge reads when a name runs through them). ``replaced``: names ``facts`` just forgot,
    whose lookups answer as before (shmlint/facts/resigned.py): their being looked up, or
    an actor's methods, is no reach."""
    if added.module.module in shared:
        return False
    inherited = {base for fact in facts.classes.values() for base in fact.bases}
    for name in added.names:
        if name in facts.functions or name in facts.classes or name in facts.aliases:
            return False
        owner = name.rpartition(".")[0]
        if name not in replaced and (owner in inherited or owner in facts.actors):
            return False  # (an actor's method, maybe made so elsewhere, or inherited by one)
        if realias(facts.aliases, name) is not None:
            return False  # (the facts forward it elsewhere)
        if name not in replaced and (name in index.unresolved or name in index.asked):
            return False
    used = used_names(bodies(added), added.questions)
    return not reaches_unread(used, facts, deferred, shared)


def quiet(added: Added, facts: ProjectFacts) -> bool:
    """Whether what the functions' bodies take from elsewhere gives ``facts`` nothing to
    pass on (:func:`shmlint.facts.quiet.takes_nothing`)."""
    return takes_nothing(added.names, added.flows, added.calls, facts)


def bodies(added: Added) -> ModuleSummary:
    """The module's summary as far as the functions' bodies go: their flows and calls (not
    the module's imports, classes, reads and actors), for the names they use."""
    return dataclasses.replace(
        added.summary,
        imports=(),
        classes=(),
        flows=added.flows,
        calls=added.calls,
        reads=(),
        actors=(),
    )


def rate_returns(
    added: Added,
    facts: ProjectFacts,
    tables: TypeTables,
    external: bool,
    read_by: dict[str, set[str]] | None = None,
) -> tuple[dict[str, ReturnFact], ProjectFacts, LookupLog]:
    """The added functions' return facts as the merge rates them (``merge._functions``): their
    annotations (written or inferred) resolved in their module against ``facts``' classes;
    with the facts they were rated in (a copy of the classes, which an installed class rated
    joins, and the installed files read, alone) and what rating them looked up. ``read_by``:
    gains the classes each rating read (``ClassResolver.read_by``)."""
    probe = dataclasses.replace(facts, classes=dict(facts.classes), external_files={})
    rated: dict[str, ReturnFact] = {}
    with watched(probe) as log:
        resolver = ClassResolver([added.module], probe, tables, external)
        for info in added.functions:
            if info.returns:
                found, fields = resolver.return_evidence(added.module, info.returns, info.name)
                rated[info.name] = ReturnFact(found, info.returns, info.inferred, fields)
    if read_by is not None:
        for name, readers in resolver.read_by.items():
            read_by.setdefault(name, set()).update(readers)
    return rated, probe, log


def rated_returns(
    added: Added,
    facts: ProjectFacts,
    tables: TypeTables,
    external: bool,
    read_by: dict[str, set[str]] | None = None,
) -> dict[str, ReturnFact] | None:
    """:func:`rate_returns`' return facts; None when rating them added a class to the facts
    or read an installed file they do not name as read (an installed class: the merge adds
    it)."""
    rated, probe, _ = rate_returns(added, facts, tables, external, read_by)
    read = probe.external_files.items()
    if len(probe.classes) != len(facts.classes) or any(
        facts.external_files.get(path) != stamp for path, stamp in read
    ):
        return None
    return rated


@dataclasses.dataclass(frozen=True, slots=True)
class Growth:
    """What functions added give facts (their names and returns) and their index (what the
    files asked, what the functions call): stored as the derivation of facts."""

    names: tuple[str, ...]
    returns: dict[str, ReturnFact]
    asked: frozenset[str]
    unresolved: frozenset[str]
    # Functions an edit removed (shmlint/facts/removed.py): the facts forget them.
    removed: tuple[str, ...] = ()
    # Imports and classes an edit added (shmlint/facts/declared.py): aliases and class facts.
    aliases: dict[str, str] = dataclasses.field(default_factory=dict)
    classes: dict[str, ClassFact] = dataclasses.field(default_factory=dict)
    # What the additions spell, for the index (shmlint/facts/spelled.py).
    spelled: frozenset[str] = frozenset()
    # Imports an edit removed (shmlint/facts/unimported.py): the facts forget their aliases.
    unaliased: tuple[str, ...] = ()
    # What rating the new classes and returns read, for the index (``FactsIndex.read_by``).
    read_by: dict[str, frozenset[str]] = dataclasses.field(default_factory=dict)

    def applied(self, facts: ProjectFacts, index: FactsIndex | None) -> ProjectFacts:
        """``facts`` forgetting the removed functions, then knowing the functions, aliases
        and classes (a function both removed and added has its new return fact), with
        ``index`` grown (a copy: the digest is not copied)."""
        gone = set(self.removed)
        kept = {n: r for n, r in facts.returns.items() if n not in gone} if gone else facts.returns
        grown = dataclasses.replace(
            facts,
            functions=(facts.functions - gone) | set(self.names),
            returns={**kept, **self.returns},
            aliases=self._aliases(facts.aliases),
            classes={**facts.classes, **self.classes} if self.classes else facts.classes,
            _canonical={},
        )
        grown.index = index and index.grown(self.asked, self.unresolved, self.spelled, self.read_by)
        return grown

    def _aliases(self, aliases: dict[str, str]) -> dict[str, str]:
        """``aliases`` without those the edit removed, with those it added."""
        if self.unaliased:
            gone = set(self.unaliased)
            aliases = {name: target for name, target in aliases.items() if name not in gone}
        return {**aliases, **self.aliases} if self.aliases else aliases

    def content(self) -> list[Any]:
        """What the facts gain (or lose), as JSON (their derivation's digest: not the
        index)."""
        returns = {name: encode_return(fact) for name, fact in sorted(self.returns.items())}
        content: list[Any] = [sorted(self.names), returns]
        if self.removed:
            content.append(sorted(self.removed))
        if self.aliases or self.classes:
            classes = {name: encode_class(fact) for name, fact in sorted(self.classes.items())}
            content += [dict(sorted(self.aliases.items())), classes]
        if self.unaliased:
            content.append({"unaliased": sorted(self.unaliased)})
        return content

    def to_json(self) -> dict[str, Any]:
        """JSON-able form (a derivation's cache entry)."""
        names, returns, *_ = self.content()
        return {
            "names": names,
            "returns": returns,
            "asked": sorted(self.asked),
            "unresolved": sorted(self.unresolved),
            "removed": sorted(self.removed),
            "aliases": dict(sorted(self.aliases.items())),
            "classes": {name: encode_class(fact) for name, fact in self.classes.items()},
            "spelled": sorted(self.spelled),
            "unaliased": sorted(self.unaliased),
            "read_by": encode_read_by(self.read_by),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Growth:
        """The inverse of :meth:`to_json`; raises ``KeyError``/``TypeError``/``ValueError``."""
        return cls(
            tuple(map(str, data["names"])),
            {str(name): decode_return(fact) for name, fact in data["returns"].items()},
            frozenset(map(str, data["asked"])),
            frozenset(map(str, data["unresolved"])),
            tuple(map(str, data["removed"])),
            {str(local): str(target) for local, target in data["aliases"].items()},
            {str(name): decode_class(str(name), fact) for name, fact in data["classes"].items()},
            frozenset(map(str, data["spelled"])),
            tuple(map(str, data["unaliased"])),
            decode_read_by(data["read_by"]),
        )


def grow(
    facts: ProjectFacts,
    additions: list[Added],
    modules: Runs,
    tables: TypeTables,
    external: bool,
) -> Growth | None:
    """What ``facts`` gain from the functions ``additions`` add, and their index from what
    those ask and call; None when the facts do not take them by their names alone
    (:func:`stands`, :func:`quiet`, :func:`rated_returns`)."""
    index = facts.index
    deferred, shared = modules.deferred, modules.shared
    if index is None or not all(
        stands(a, facts, index, deferred, shared) and quiet(a, facts) for a in additions
    ):
        return None
    returns: dict[str, ReturnFact] = {}
    read_by: dict[str, set[str]] = {}
    for added in additions:
        rated = rated_returns(added, facts, tables, external, read_by)
        if rated is None:
            return None
        returns.update(rated)
    names = tuple(name for added in additions for name in added.names)
    asked, unresolved, pairs = indexed(facts, additions)
    return Growth(
        names, returns, asked, unresolved, spelled=pairs, read_by=kept_reads(read_by, facts.classes)
    )


def indexed(
    facts: ProjectFacts, additions: list[Added]
) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """What the index of ``facts`` gains with the functions of ``additions``: the names their
    module's new questions ask as functions, their calls' callees the facts cannot place, the
    names they spell (as ``Growth`` takes them, nothing removed in between)."""
    known = facts.functions | {name for added in additions for name in added.names}
    asked = asked_functions((q for added in additions for q in added.questions), facts)
    callees = {facts.canonical(c.callee) for added in additions for c in added.calls}
    unresolved = {c for c in callees if c not in known and c not in facts.classes}
    grown = dataclasses.replace(facts, functions=known, _canonical={})
    used = [n for added in additions for n in used_names(bodies(added), added.questions)]
    for added in additions:
        used += annotation_names(added.module, [info.returns for info in added.functions])
    return asked, frozenset(unresolved), spelled(used, grown)
