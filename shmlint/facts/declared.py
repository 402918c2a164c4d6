"""The facts after an edit that added imports or top-level classes nothing could look up yet
(shmlint/run/derived.py), as :mod:`shmlint.facts.added` gives them after functions added.

An import inserted, or a class appended, changes what a module offers others, and made the
merge of the whole tree run again: 1.3-1.5 s on the ray wheel. What the merge does with an
import is one alias (``module.local`` → its target); with a class, its fact (its bases' and its
fields' evidence, rated in its module) and its methods' names and returns. Everything else the
merge gives is the same, unless

- a name any merged module or question spells, at any step of its resolution, is the new name
  or runs through it (:attr:`FactsIndex.spelled`: a lookup would now find it). The module's
  own annotations count as it spells them and as qualified in the module (``Later`` in
  ``pkg.mod`` is ``pkg.mod.Later`` there): a name imported or defined now resolves to the new
  import or class first;
- the name already meant something (an alias, a class, a function: a class replacing a
  function drops its name), or an import's local name is a reader's (another file's
  ``mod.fetch`` is a call of a reader when ``mod`` re-exports it: ``call_evidence`` builds that
  name, no module spells it);
- the new names' targets, the classes' bases and fields, reach a module the merge did not
  read or a class of such a module (the closure would read it), or rating the classes rates a
  class the facts lack (an installed one), reads an installed file they do not name, or reads
  a class whose facts depend on the order the merge rates classes in (a reference cycle:
  :attr:`FactsIndex.cyclic`; a class added earlier in file order enters the cycle elsewhere);
- a class is an actor, or has methods the facts would not take as functions added
  (:func:`shmlint.facts.added.added_functions`: no handle kind, nothing taken from elsewhere
  that the merge passes on, through the new names too: shmlint/facts/quiet.py; no dunder
  method).

``tests/project/test_declared.py`` compares such facts with a merge of the edited tree on every
project fixture, and has a case for each way the names could have been reached.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from shmlint.facts.added import (
    Added,
    Growth,
    Runs,
    added_functions,
    asked_functions,
    bodies,
    quiet,
    stands,
)
from shmlint.facts.classes import ClassResolver
from shmlint.facts.closure import (
    asked_classes,
    class_names,
    question_names,
    reaches_unread,
    used_names,
)
from shmlint.facts.evidence import TypeTables
from shmlint.facts.index import kept_reads
from shmlint.facts.model import ProjectFacts
from shmlint.facts.records import ClassFact, ReturnFact
from shmlint.facts.spelled import spelled, spelled_names
from shmlint.facts.summary import ClassInfo, ModuleSummary


@dataclasses.dataclass(frozen=True, slots=True)
class Declared:
    """The imports and classes an edit added to a module (with the classes' methods)."""

    summary: ModuleSummary  # the module without them (compared with its last summary)
    module: ModuleSummary  # the module with them
    imports: tuple[tuple[str, str], ...]
    classes: tuple[ClassInfo, ...]
    methods: Added | None  # the classes' methods (and any function added beside them)
    questions: tuple[str, ...]  # the module's questions its last version did not ask

    @property
    def names(self) -> tuple[str, ...]:
        """The names the facts gain: ``module.local`` of each import, each class's."""
        module = self.module.module
        return (*(f"{module}.{local}" for local, _ in self.imports), *self.class_names)

    @property
    def class_names(self) -> tuple[str, ...]:
        return tuple(info.name for info in self.classes)


def declared(
    old: ModuleSummary, new: ModuleSummary, old_questions: list[str], new_questions: list[str]
) -> Declared | None:
    """The imports and top-level classes ``new`` adds to ``old``, when that (and methods of
    those classes, or functions, :func:`added_functions` takes) is all it adds; None
    otherwise (``summary`` still to be compared with ``old`` for lines)."""
    imports = _added_imports(old.imports, new.imports)
    known = {info.name for info in old.classes}
    classes = tuple(info for info in new.classes if info.name not in known)
    if imports is None or len(classes) != len(new.classes) - len(old.classes):
        return None  # (an import or a class removed or renamed)
    if not imports and not classes:
        return None
    top = f"{new.module}."
    for info in classes:
        short = info.name[len(top) :]
        if info.actor or not info.name.startswith(top) or "." in short:
            return None  # (an actor, a nested class)
    names = {info.name for info in classes}
    reduced = dataclasses.replace(
        new, imports=old.imports, classes=tuple(c for c in new.classes if c.name not in names)
    )
    methods = None
    questions: tuple[str, ...] = ()
    if len(reduced.functions) != len(old.functions):
        methods = added_functions(old, reduced, old_questions, new_questions)
        if methods is None:
            return None
        summary = methods.summary
        questions = methods.questions
    else:
        if not set(old_questions) <= set(new_questions):
            return None
        questions = tuple(q for q in new_questions if q not in set(old_questions))
        summary = reduced
    return Declared(summary, new, imports, classes, methods, questions)


def _added_imports(
    old: tuple[tuple[str, str], ...], new: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str], ...] | None:
    """The imports ``new`` adds to ``old`` (a summary binds each local name once: the last
    import of it), or None when ``new`` is not ``old`` with imports added."""
    added = Counter(new)
    added.subtract(old)
    if any(count < 0 for count in added.values()):
        return None
    return tuple(sorted(item for item, count in added.items() if count))


def declare(
    facts: ProjectFacts,
    declarations: list[Declared],
    modules: Runs,
    tables: TypeTables,
    external: bool,
) -> Growth | None:
    """What ``facts`` gain from the imports and classes of ``declarations`` (and their
    methods); None when the facts do not take them by their names alone."""
    index = facts.index
    if index is None:
        return None
    new_aliases: dict[str, str] = {}
    for item in declarations:
        if not _stands(item, facts, modules):
            return None
        module = item.module.module
        new_aliases.update({f"{module}.{local}": target for local, target in item.imports})
    # The classes and the methods' returns, rated as the merge rates them: against facts
    # knowing the new aliases, classes and functions.
    methods = [item.methods for item in declarations if item.methods is not None]
    functions = {name for added in methods for name in added.names}
    probe = dataclasses.replace(
        facts,
        aliases={**facts.aliases, **new_aliases},
        classes=dict(facts.classes),
        functions=facts.functions | functions,
        external_files={},
        _canonical={},
        # (A name stops at a class being rated, as the merge's do: found by a review.)
        _pending=frozenset(name for item in declarations for name in item.class_names),
    )
    # One resolver, the classes first and in file order, as the merge rates them (a class of
    # one edited module may name another's).
    if not all(quiet(added, probe) for added in methods):
        return None  # (what their bodies take from elsewhere, through the new names too)
    resolver = ClassResolver([item.module for item in declarations], probe, tables, external)
    resolver.cyclic |= index.cyclic
    classes: dict[str, ClassFact] = {}
    for item in declarations:
        for name in item.class_names:
            resolver.resolve(name)
            classes[name] = probe.classes[name]
    if any(name in resolver.cyclic for name in classes):
        return None  # (it reads a class whose facts depend on the order it is rated in)
    returns: dict[str, ReturnFact] = {}
    for item in declarations:
        for info in item.methods.functions if item.methods is not None else ():
            if info.returns:
                found, fields = resolver.return_evidence(item.module, info.returns, info.name)
                returns[info.name] = ReturnFact(found, info.returns, info.inferred, fields)
    if external:  # (the classes the new questions name: the merge rates them, as asked)
        for name in sorted(asked_classes(q for item in declarations for q in item.questions)):
            resolver.resolve(probe.canonical(name))
    read = probe.external_files.items()
    if len(probe.classes) != len(facts.classes) + len(classes) or any(
        facts.external_files.get(path) != stamp for path, stamp in read
    ):
        return None  # (an installed class rated, an installed file read: the merge notes it)
    names = [name for item in declarations for name in _spelled_by(item)]
    questions = [q for item in declarations for q in item.questions]
    callees = {probe.canonical(call.callee) for added in methods for call in added.calls}
    unresolved = {c for c in callees if c not in probe.functions and c not in probe.classes}
    return Growth(
        tuple(sorted(functions)),
        returns,
        asked_functions(questions, probe),
        frozenset(unresolved),
        aliases=new_aliases,
        classes=classes,
        spelled=spelled(names, probe),
        read_by=kept_reads(resolver.read_by, probe.classes),
    )


def _stands(item: Declared, facts: ProjectFacts, modules: Runs) -> bool:
    """Whether ``facts`` take ``item``'s names by themselves (the module docstring's list).
    (A name the facts forward, a module's name, a function question's or a callee's: each is
    spelled, at some step, by what looked it up, so :attr:`FactsIndex.spelled` holds it.)"""
    index = facts.index
    assert index is not None
    words = facts.reader_words()
    if any(local.encode() in words for local, _ in item.imports):
        return False  # (another file's `mod.<reader>` may be a call of the reader now)
    for name in item.names:
        if name in index.spelled:
            return False
        if name in facts.functions or name in facts.classes or name in facts.aliases:
            return False  # (a function the class replaces, say: the merge drops its name)
    used = [target for _, target in item.imports] + sorted(question_names(item.questions))
    for name in item.class_names:
        used += class_names(item.module, name.rpartition(".")[2])
    # The methods (and functions) beside them, as functions added (a method of a class an
    # actor inherits is one of the actor's: found by a fuzz run), what their bodies use too.
    methods = item.methods
    if methods is not None and not stands(methods, facts, index, modules.deferred, modules.shared):
        return False
    return not reaches_unread(used, facts, modules.deferred, modules.shared)


def _spelled_by(item: Declared) -> list[str]:
    """The names the added imports, classes and methods spell (for the index)."""
    module = item.module
    own = dataclasses.replace(
        module,
        imports=item.imports,
        classes=item.classes,
        functions=item.methods.functions if item.methods else (),
        flows=item.methods.flows if item.methods else (),
        calls=item.methods.calls if item.methods else (),
        reads=(),
        actors=(),
    )
    names = [*spelled_names(own), *question_names(item.questions)]
    if item.methods is not None:
        names += used_names(bodies(item.methods), item.methods.questions)
    return names
