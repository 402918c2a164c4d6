"""The facts after an edit that changed classes' fields in place: a field added, removed,
renamed or annotated otherwise, a class made a record (``@dataclass``) or no longer one
(shmlint/run/derived.py).

A field inserted in the payload class, the class every read of a tree returns, made the merge
of the whole tree run again (1.7 s on the ray wheel). What the merge gives for a class's fields
is its fact (each field rated by its annotation in its module, the class's evidence) and what
was rated from it: the classes inheriting its fields or naming it in a field, the return facts
naming it, each transitively (:attr:`FactsIndex.read_by`, noted by the class resolver as it
rates). So the facts of the edited tree are the last ones with those rated anew, from the
summaries the merge read of their modules, unless

- the module's name is several files' (the merge mixes their names), or its questions
  changed but for class questions (a field's default value asks of its type: ``n:int``)
  that reach a module the facts lack, or, dropped, ran through a deferred module or named an
  installed class (the merge may have read or rated it for them alone);
- a class rated anew is in a reference cycle (its fact depends on the order the merge rates
  in: :attr:`FactsIndex.cyclic`), or rating it meets one or reads a class of one (rated
  earlier in file order, it may enter the cycle elsewhere and change its classes' facts), or
  reads a class or an installed file the facts lack (an installed class: the merge rates it
  in);
- a class whose field names change is constructed without an ``__init__`` somewhere a call's
  arguments land by the fields' order and names: a handle passed there (a slot ``attr:`` of it
  with kinds) or placed nowhere (:attr:`FactsIndex.unplaced`) may land elsewhere now;
- the new fields' names reach a deferred module the closure did not read, or a class of a
  deferred module but the edited one (whose fields the closure would follow), or the old
  ones' run through a deferred module the module's other names do not run through (the
  merge may have read it for them alone: ``closure.still_reached``), or rating the old ones read
  an installed class or module (the merge may have rated it for them alone);
- a summary the merge read of a module to rate anew is not at hand (the caller's
  ``Runs.summaries``).

Which other files' questions the new facts answer otherwise (a class's evidence and fields,
a function's payload) is for the run to find (shmlint/run/replan.py): their plan of phase 2
changes. ``tests/project/test_refielded.py`` compares such facts with a merge of the edited
tree on every project fixture, and has a case for each refusal.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from shmlint.facts.added import Growth, Runs, asked_functions
from shmlint.facts.classes import ClassResolver
from shmlint.facts.closure import (
    asked_classes,
    class_names,
    deferred_through,
    question_names,
    reaches_unread,
    still_reached,
    used_names,
)
from shmlint.facts.evidence import TypeTables
from shmlint.facts.index import kept_reads
from shmlint.facts.lookups import watched
from shmlint.facts.model import ProjectFacts
from shmlint.facts.records import ClassFact, ReturnFact
from shmlint.facts.removed import reaches_deferred
from shmlint.facts.spelled import annotation_names, spelled
from shmlint.facts.summary import FunctionInfo, ModuleSummary

# The questions naming a class (``closure._CLASS_QUESTIONS``): a field's default value asks
# them, and their answers read only the class facts.
_CLASS_QUESTIONS = ("c:", "F:", "n:")


@dataclasses.dataclass(frozen=True, slots=True)
class Refielded:
    """The classes of a module whose fields an edit changed (nothing else)."""

    # The new module with their old fields (compared with the last for lines: theirs map to
    # themselves, which holds as every fact carrying them is rated anew).
    summary: ModuleSummary
    module: ModuleSummary  # the new module
    old: ModuleSummary  # the last summary
    classes: tuple[str, ...]  # their names
    # The class questions (``c:``, ``F:``, ``n:``) the module asks now and did not, and those
    # it no longer asks (a field's default value: ``n:int``).
    asked: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()

    def shorts(self) -> list[str]:
        """The classes' names in their module (``Outer.Inner`` for a nested one)."""
        return [name[len(self.module.module) + 1 :] for name in self.classes]


def refielded_classes(
    old: ModuleSummary, new: ModuleSummary, old_questions: list[str], new_questions: list[str]
) -> Refielded | None:
    """The classes whose fields ``new`` changes from ``old``, when that is all it changes but
    lines (``summary`` still to be compared with ``old`` for those) and class questions
    (:data:`_CLASS_QUESTIONS`: a field's default value is analysed); None otherwise."""
    asked = tuple(sorted(set(new_questions) - set(old_questions)))
    dropped = tuple(sorted(set(old_questions) - set(new_questions)))
    if any(q[:2] not in _CLASS_QUESTIONS for q in (*asked, *dropped)):
        return None
    if len(old.classes) != len(new.classes):
        return None
    changed: list[str] = []
    classes = []
    for before, after in zip(old.classes, new.classes, strict=True):
        if (before.name, before.bases, before.actor) != (after.name, after.bases, after.actor):
            return None
        if before.record != after.record or _unlined(before.fields) != _unlined(after.fields):
            changed.append(after.name)  # (its fields, or whether they are complete: a record)
            after = dataclasses.replace(after, fields=before.fields, record=before.record)
        classes.append(after)
    defined = [info.name for info in new.classes]
    if not changed or any(defined.count(name) > 1 for name in changed):
        return None  # (a class defined twice: the merge keeps the last)
    summary = dataclasses.replace(new, classes=tuple(classes))
    return Refielded(summary, new, old, tuple(changed), asked, dropped)


def _unlined(fields: tuple[object, ...]) -> list[object]:
    return [dataclasses.replace(field, line=0) for field in fields]  # type: ignore[type-var]


def refield(
    facts: ProjectFacts,
    items: list[Refielded],
    modules: Runs,
    tables: TypeTables,
    external: bool,
) -> Growth | None:
    """What ``facts`` become when the classes of ``items`` change their fields: those classes
    and what was rated from them rated anew; None when the facts of the edited tree may be
    other than that (the module docstring's list)."""
    index = facts.index
    if index is None or modules.summaries is None:
        return None
    edited = {item.module.module: item.module for item in items}
    if len(edited) != len(items) or set(edited) & modules.shared:
        return None
    for item in items:
        # (A name both versions use is followed, or not, by the closure either way.)
        now, then = (set(_field_names(s, item.shorts())) for s in (item.module, item.old))
        new, old = now - then, then - now
        if deferred_through(new, facts, modules.deferred, modules.shared, item.module) is None:
            return None
        kept, versions = used_names(item.module), (item.old, item.module)
        if not still_reached(old, kept, facts, modules.deferred, modules.shared, versions):
            return None  # (the merge may have read a deferred module for an old field alone)
        if reaches_unread(question_names(item.asked), facts, modules.deferred, modules.shared):
            return None
        if reaches_deferred(question_names(item.dropped), modules.deferred):
            return None  # (the merge may have read a deferred module for the question alone)
        if _rated_alone(asked_classes(item.dropped), facts):
            return None  # (the merge may have rated an installed class for it alone)
    changed = {name for item in items for name in item.classes}
    classes, functions = _rated_from(changed, index.read_by)
    if classes & index.cyclic or not classes <= facts.classes.keys():
        return None
    summaries = _summaries(classes, functions, facts, edited, modules)
    if summaries is None:
        return None
    questions = [question for item in items for question in item.asked]
    rating = _rate(summaries, classes, functions, facts, tables, external, questions)
    earlier = {**summaries, **{item.old.module: item.old for item in items}}
    before = _rate(earlier, classes, functions, facts, tables, external, ())
    if rating is None or before is None:
        return None
    probe, resolver = rating.probe, rating.resolver
    if resolver.cyclic - index.cyclic or len(probe.classes) != len(facts.classes):
        return None  # (a cycle met or read, an installed class rated)
    if any(facts.external_files.get(path) != stamp for path, stamp in rating.files.items()):
        return None  # (an installed module read the facts do not note)
    if before.installed - rating.installed or before.files.keys() - rating.files.keys():
        return None  # (rated or read for the old fields alone, maybe: the merge leaves it)
    rated = {name: probe.classes[name] for name in classes}
    for name, fact in rated.items():
        names = [field.name for field in fact.fields]
        if names != [field.name for field in facts.classes[name].fields] and _placed(name, facts):
            return None
    returns = rating.returns
    written = [
        field.annotation
        for item in items
        for info in item.module.classes
        if info.name in changed
        for field in info.fields
    ]
    names = [name for item in items for name in _field_names(item.module, item.shorts())]
    names += [name for item in items for name in annotation_names(item.module, written)]
    names += question_names(questions)
    return Growth(
        (),
        returns,
        asked_functions(questions, probe),
        frozenset(),
        classes=rated,
        spelled=spelled(names, probe),
        read_by=kept_reads(resolver.read_by, probe.classes),
    )


def _field_names(summary: ModuleSummary, shorts: list[str]) -> list[str]:
    """The names the fields of ``summary``'s classes ``shorts`` use, as the closure follows
    them (their bases' left out: unchanged)."""
    found: list[str] = []
    for info in summary.classes:
        short = info.name[len(summary.module) + 1 :]
        if short in shorts:
            found += class_names(summary, short)[len(info.bases) :]
    return found


def _rated_alone(names: Iterable[str], facts: ProjectFacts) -> bool:
    """Whether one of ``names`` is a class the facts hold that no module of theirs defines
    (an installed one, which the merge rated for a question naming it)."""
    paths = {path for path, _ in facts.modules.values()}
    for name in names:
        fact = facts.classes.get(facts.canonical(name))
        if fact is not None and fact.path not in paths:
            return True
    return False


@dataclasses.dataclass(frozen=True, slots=True)
class _Rating:
    """Classes and return facts rated (anew, or as the last merge rated them), with the
    facts they were rated in and what installed classes and files rating them read."""

    probe: ProjectFacts
    resolver: ClassResolver
    returns: dict[str, ReturnFact]
    installed: set[str]  # the installed classes read (rated, or in the facts already)
    files: dict[str, int]  # the installed files read


def _rate(
    summaries: dict[str, ModuleSummary],
    classes: set[str],
    functions: set[str],
    facts: ProjectFacts,
    tables: TypeTables,
    external: bool,
    questions: Iterable[str],
) -> _Rating | None:
    """``classes`` and the return facts of ``functions`` rated from ``summaries`` (by module)
    against ``facts`` without those classes, in one resolver, as the merge rates them (and
    the classes ``questions`` name, with ``external``); None when a function's return fact
    is not where the facts say it is."""
    paths = {path for path, _ in facts.modules.values()}
    probe = dataclasses.replace(
        facts,
        classes={name: fact for name, fact in facts.classes.items() if name not in classes},
        external_files={},
        _canonical={},
        _pending=frozenset(classes),  # (a name stops at them, as at the merge's: a review)
    )
    returns: dict[str, ReturnFact] = {}
    with watched(probe) as log:
        resolver = ClassResolver(list(summaries.values()), probe, tables, external)
        # (A class reading one of a reference cycle is marked: rated first, it may enter the
        # cycle elsewhere than the merge did, and change its facts: found by a fuzz run.)
        resolver.cyclic |= facts.index.cyclic if facts.index is not None else frozenset()
        for name in sorted(classes):
            resolver.resolve(name)
        if external:  # (the classes the new questions name: the merge rates them, as asked)
            for name in sorted(asked_classes(questions)):
                resolver.resolve(probe.canonical(name))
        for name in sorted(functions):
            summary = summaries[_module_of(name, facts) or ""]
            info = _defined(summary, name)
            if info is None:
                if name in facts.returns:
                    return None  # (not where the facts say: no summary of what rated it)
                continue
            found, fields = resolver.return_evidence(summary, info.returns, info.name)
            returns[name] = ReturnFact(found, info.returns, info.inferred, fields)
    read = log.seen["classes"].items()
    installed = {n for n, f in read if isinstance(f, ClassFact) and f.path not in paths}
    return _Rating(probe, resolver, returns, installed, dict(probe.external_files))


def _rated_from(changed: set[str], read_by: dict[str, frozenset[str]]) -> tuple[set[str], set[str]]:
    """The classes ``changed`` and those rated from them, transitively; and the functions
    whose return facts were rated from any of those."""
    classes = set(changed)
    functions: set[str] = set()
    todo = list(changed)
    while todo:
        for reader in read_by.get(todo.pop(), ()):
            if reader.startswith("ret:"):
                functions.add(reader[4:])
            elif reader not in classes:
                classes.add(reader)
                todo.append(reader)
    return classes, functions


def _module_of(name: str, facts: ProjectFacts) -> str | None:
    """The module of the facts defining class or function ``name`` (its longest prefix that
    is a module)."""
    module = name.rpartition(".")[0]
    while module and module not in facts.modules:
        module = module.rpartition(".")[0]
    return module or None


def _summaries(
    classes: set[str],
    functions: set[str],
    facts: ProjectFacts,
    edited: dict[str, ModuleSummary],
    modules: Runs,
) -> dict[str, ModuleSummary] | None:
    """The summaries of the modules defining ``classes`` and ``functions`` (the edited ones
    as they are now), by module; None when one is not at hand or several files claim it."""
    assert modules.summaries is not None
    found: dict[str, ModuleSummary] = {}
    for name in classes | functions:
        module = _module_of(name, facts)
        if module is None or module in modules.shared:
            return None
        if module in found:
            continue
        summary = edited.get(module) or modules.summaries(facts.modules[module][0])
        if summary is None:
            return None
        found[module] = summary
    return found


def _defined(summary: ModuleSummary, name: str) -> FunctionInfo | None:
    """Function ``name``'s last definition in ``summary`` with a return annotation, as the
    merge rates it (None: none)."""
    found = None
    for info in summary.functions:
        if info.name == name and info.returns:
            found = info
    return found


def _placed(name: str, facts: ProjectFacts) -> bool:
    """Whether a call may place a handle by class ``name``'s fields: it has no ``__init__``
    and a slot of its fields holds kinds, or a call passed it a handle in no field."""
    if f"{name}.__init__" in facts.functions:
        return False
    index = facts.index
    if index is not None and name in index.unplaced:
        return True
    prefix = f"attr:{name}."
    return any(slot.startswith(prefix) for slot in facts.slot_kinds)
