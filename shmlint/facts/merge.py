"""The merge: module summaries in, project facts out (phase 1's last step)."""

from __future__ import annotations

from collections.abc import Iterable

from shmlint.facts.added import asked_functions
from shmlint.facts.classes import NEUTRAL_BASES, ClassResolver, ExternalClasses
from shmlint.facts.closure import question_names
from shmlint.facts.evidence import TypeTables
from shmlint.facts.flow import propagate_kinds, propagate_reads
from shmlint.facts.index import FactsIndex, kept_reads
from shmlint.facts.model import ProjectFacts
from shmlint.facts.records import ReturnFact
from shmlint.facts.spelled import spelled, spelled_names
from shmlint.facts.summary import ModuleSummary


def merge(
    summaries: Iterable[ModuleSummary],
    tables: TypeTables,
    external: bool = False,
    types: Iterable[str] = (),
    questions: Iterable[str] | None = None,
) -> ProjectFacts:
    """Merge module summaries into project facts (phase 1's last step). ``external``: classes
    of installed packages are read and rated (those the project's classes name, and ``types``:
    the type names phase 1 asked about), and looked up on demand later. ``questions``: every
    question phase 1 asked, for the facts' index (shmlint/facts/added.py; none without)."""
    summaries = list(summaries)
    facts = ProjectFacts()
    for summary in summaries:
        facts.modules[summary.module] = (summary.path, summary.is_package)
        for local, target in summary.imports:
            facts.aliases.setdefault(f"{summary.module}.{local}", target)
        facts.functions.update(f.name for f in summary.functions)
        for c in summary.classes:
            facts.functions.discard(c.name)
    resolver = ClassResolver(summaries, facts, tables, external)
    # A name stops at a project class yet to be rated as at one rated (a class rated first
    # took `pkg.sub.X` through the alias `pkg.sub` → `pkg.sub.sub` while `X` was not rated:
    # a class rated anew after an edit, against all the classes, saw `X`; found by a review).
    facts._pending = frozenset(c.name for summary in summaries for c in summary.classes)
    resolver.resolve_all()
    facts._pending = frozenset()
    facts._canonical.clear()  # names looked up while classes were still being added
    if external:
        for name in sorted(types):
            resolver.resolve(facts.canonical(name))
        facts._canonical.clear()
        facts.external = ExternalClasses(tables)
    _functions(summaries, facts, resolver)
    unresolved, unplaced = propagate_kinds(summaries, facts)
    propagate_reads(summaries, facts)
    if questions is not None:
        questions = list(questions)
        names = [name for summary in summaries for name in spelled_names(summary)]
        names += question_names(questions)
        pairs = spelled(names, facts)
        asked = asked_functions(questions, facts)
        cyclic = frozenset(resolver.cyclic)
        read_by = kept_reads(resolver.read_by, facts.classes)
        facts.index = FactsIndex(asked, unresolved, pairs, cyclic, unplaced, read_by)
    return facts


def _functions(
    summaries: list[ModuleSummary], facts: ProjectFacts, resolver: ClassResolver
) -> None:
    """What each function returns (rated in its module), remote functions, actor methods."""
    methods: dict[str, list[str]] = {}
    defined: dict[str, dict[str, str]] = {}  # a class's own methods, by their last names
    made = {facts.canonical(name) for summary in summaries for name in summary.actors}
    actors: list[str] = []
    for summary in summaries:
        own = [c.name for c in summary.classes if c.actor or c.name in made]
        actors += own
        for function in summary.functions:
            if function.remote:
                facts.remote.add(function.name)
            owner, _, last = function.name.rpartition(".")
            if owner in facts.classes:  # (a method: static ones too)
                defined.setdefault(owner, {}).setdefault(last, function.name)
            if owner in own:
                methods.setdefault(last, []).append(function.name)
            if function.returns:
                found, fields = resolver.return_evidence(summary, function.returns, function.name)
                facts.returns[function.name] = ReturnFact(
                    found, function.returns, function.inferred, fields
                )
    project = {c.name for summary in summaries for c in summary.classes}
    for actor in actors:
        for last, name in _inherited(actor, facts, defined, project):
            methods.setdefault(last, []).append(name)
    facts.actor_methods = {m: tuple(sorted(names)) for m, names in methods.items()}
    facts.actors = set(actors)


def _inherited(
    actor: str, facts: ProjectFacts, defined: dict[str, dict[str, str]], project: set[str]
) -> list[tuple[str, str]]:
    """The methods actor class ``actor`` inherits from the project's classes (by last name),
    in Python's method resolution order: ``handle.m.remote()`` runs them too (SkyRL's workers
    inherit ``offload_to_cpu``). A base not the project's (a library's, installed or not, or a
    class built at run time) may define any method, and its own bases are unknown, so it may
    come before any class the order puts after the class naming it: none past that class is
    taken; nor any when the order cannot be made (Python refuses the class)."""
    order = _linearized(actor, facts, set())
    seen = set(defined.get(actor, ()))
    found: list[tuple[str, str]] = []
    for position, base in enumerate(order or []):
        if base not in project:
            break  # (what it defines is unknown)
        for last, name in defined.get(base, {}).items() if position else ():
            if last not in seen:
                seen.add(last)
                found.append((last, name))
        fact = facts.classes.get(base)
        if fact is None or any(
            b not in project and b.rpartition(".")[2] not in NEUTRAL_BASES for b in fact.bases
        ):
            break
    return found


def _linearized(name: str, facts: ProjectFacts, active: set[str]) -> list[str] | None:
    """The C3 linearization of class ``name`` (its ``__mro__``, bases that say nothing left
    out, a class the facts lack taken as having no bases); None when there is none (an
    inheritance cycle, an inconsistent order)."""
    fact = facts.classes.get(name)
    if fact is None:
        return [name]
    if name in active:
        return None
    active.add(name)
    bases = [base for base in fact.bases if base.rpartition(".")[2] not in NEUTRAL_BASES]
    orders = [_linearized(base, facts, active) for base in bases]
    active.discard(name)
    if any(order is None for order in orders):
        return None
    pending = [list(order) for order in orders if order] + [bases]
    result = [name]
    while any(pending):
        pending = [order for order in pending if order]
        head = next(
            (order[0] for order in pending if not any(order[0] in o[1:] for o in pending)), None
        )
        if head is None:
            return None
        result.append(head)
        for order in pending:
            if order[0] == head:
                del order[0]
    return result
