"""Class evidence: each project class's fields rated by their annotations, resolved in the
declaring module, transitively through records, ``Optional``, unions and base classes."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable

from shmlint.basics import catalog
from shmlint.basics.names import dotted_name
from shmlint.basics.stamps import stale
from shmlint.facts import external as installed
from shmlint.facts.evidence import (
    Evidence,
    TypeTables,
    evidence,
    fresh_returns,
    leaves,
    parse_annotation,
)
from shmlint.facts.model import ProjectFacts
from shmlint.facts.records import ClassFact, FieldFact
from shmlint.facts.summary import ModuleSummary

# Bases that say nothing about a record's fields (a NamedTuple's base, generics...).
NEUTRAL_BASES = frozenset(
    {"object", "NamedTuple", "TypedDict", "Generic", "Protocol", "BaseModel", "Struct", "ABC"}
)


def _own_names(summary: ModuleSummary) -> set[str]:
    """The names a module defines at its top level (its classes and functions): a name it
    spells resolves to its own first. Not its methods' or nested classes' names: a method
    called ``model`` made the base ``model.records.Base`` the module's own ``model``."""
    own = [*(c.name for c in summary.classes), *(f.name for f in summary.functions)]
    return {name.rpartition(".")[2] for name in own if name.rpartition(".")[0] == summary.module}


class ClassResolver:
    """Resolves every class's field evidence, transitively and cycle-safe."""

    def __init__(
        self,
        summaries: list[ModuleSummary],
        facts: ProjectFacts,
        tables: TypeTables,
        external: bool = False,
    ) -> None:
        self.facts = facts
        self.tables = tables
        self.external = external  # read classes of installed packages (facts.external)
        self.infos = {c.name: (s, c) for s in summaries for c in s.classes}
        self.locals = {s.module: _own_names(s) for s in summaries}
        self.in_progress: set[str] = set()
        self._stack: list[str] = []  # the classes being rated, the innermost last
        # The classes whose rating met a class still being rated (a reference cycle: that
        # class counts as unknown), or read such a class: their facts depend on the order the
        # classes are rated in (facts.declared refuses a new class reading one).
        self.cyclic: set[str] = set()
        # Each summary's imports as a dict, by the summary's identity (the summary is kept
        # with it, so the identity is never another's).
        self._imports: dict[int, tuple[ModuleSummary, dict[str, str]]] = {}
        # Return annotations rated, by module (summary identity, as above) and text, with the
        # names rating each read.
        self._returns: dict[
            tuple[int, str],
            tuple[ModuleSummary, tuple[Evidence, tuple[str, ...]], frozenset[str]],
        ] = {}
        # What each rating read: class name → the classes (by name) and return facts (``ret:``
        # and the function's name) rated from it (shmlint/facts/refielded.py rates them anew
        # when its fields change). ``_reading``: the names each rating under way reads.
        self.read_by: dict[str, set[str]] = {}
        self._reading: list[set[str]] = []

    def resolve_all(self) -> None:
        for name in list(self.infos):  # installed classes are added while resolving
            self.resolve(name)

    def qualify(self, summary: ModuleSummary, dotted: str) -> str:
        """``dotted`` as the module's imports and definitions resolve it, canonical (an
        absolute name, as a summary holds bases, through the re-exports it runs through)."""
        return self.resolved_name(summary, dotted) or self.facts.canonical(dotted)

    def resolved_name(self, summary: ModuleSummary, dotted: str) -> str | None:
        """The qualified name of ``dotted`` in ``summary``'s module, None when it is neither
        imported nor defined there."""
        head, _, rest = dotted.partition(".")
        known = self._imports.get(id(summary))
        if known is None:
            known = self._imports[id(summary)] = (summary, dict(summary.imports))
        target = known[1].get(head)
        if target is not None:
            return self.facts.canonical(f"{target}.{rest}" if rest else target)
        if head in self.locals.get(summary.module, ()):
            return f"{summary.module}.{dotted}"
        return None

    def resolve(self, name: str) -> Evidence:
        """The evidence of class ``name`` (UNKNOWN while it is being resolved: a cycle)."""
        if self._reading:
            self._reading[-1].add(name)
        evidence = self._resolve(name)
        if self._stack and name in self.cyclic:
            self.cyclic.add(self._stack[-1])  # (the class reading it)
        return evidence

    def _resolve(self, name: str) -> Evidence:
        done = self.facts.classes.get(name)
        if done is not None:
            return done.evidence
        if name not in self.infos and self.external and name not in self.in_progress:
            self.add_external(name)
        if name in self.in_progress:
            self.cyclic.update(self.in_progress)
            return Evidence.UNKNOWN
        if name not in self.infos:
            return Evidence.UNKNOWN
        self.in_progress.add(name)
        self._stack.append(name)
        self._reading.append(set())
        summary, info = self.infos[name]
        bases = tuple(self.qualify(summary, b) for b in info.bases)
        fields: dict[str, FieldFact] = {}
        for base in bases:
            self.resolve(base)
            base_fact = self.facts.classes.get(base)
            if base_fact is not None:
                fields.update({f.name: f for f in base_fact.fields})
        for field in info.fields:
            found, zero_copy = self.field_evidence(summary, field.annotation)
            fields[field.name] = FieldFact(field.name, summary.path, field.line, found, zero_copy)
        enum = self._enumerates(bases)  # (before the reading ends: it reads the ancestors)
        self.in_progress.discard(name)
        self._stack.pop()
        self._note(name, self._reading.pop())
        values = [f.evidence for f in fields.values()]
        known_bases = all(
            b in self.facts.classes or b.rpartition(".")[2] in NEUTRAL_BASES for b in bases
        )
        base_evidence = [self.facts.classes[b].evidence for b in bases if b in self.facts.classes]
        if enum:
            result = Evidence.ARRAY_FREE  # (its members are the class's own: catalog.ENUM_BASES)
        elif Evidence.ARRAYS in values or Evidence.ARRAYS in base_evidence:
            result = Evidence.ARRAYS
        elif (
            info.record
            and values
            and known_bases
            and all(v is Evidence.ARRAY_FREE for v in values + base_evidence)
        ):
            result = Evidence.ARRAY_FREE
        else:
            result = Evidence.UNKNOWN
        self.facts.classes[name] = ClassFact(
            name, summary.path, info.line, bases, tuple(fields.values()), result, info.record
        )
        return result

    def _enumerates(self, bases: Iterable[str]) -> bool:
        """Whether a class of these (qualified) bases is an enum: one is an enum base, or a
        class (rated before) that is one. Every ancestor it looks at counts as read by the
        rating under way (a grandparent's bases edited re-rate its grandchildren)."""
        seen: set[str] = set()
        todo = list(bases)
        while todo:
            base = todo.pop()
            if base in catalog.ENUM_BASES:
                return True
            fact = self.facts.classes.get(base)
            if fact is not None and base not in seen:
                seen.add(base)
                if self._reading:
                    self._reading[-1].add(base)
                todo.extend(fact.bases)
        return False

    def add_external(self, name: str) -> None:
        """Make the installed module defining class ``name`` known (its classes only)."""
        with installed.tracked() as read:  # the defining module and the re-exports followed
            found = installed.defining_module(name)
        self.facts.external_files.update(read)
        if found is None:
            return
        summary, real = found
        for info in summary.classes:
            self.infos.setdefault(info.name, (summary, info))
        if real != name:
            self.infos.setdefault(name, self.infos[real])  # a re-export
        self.locals.setdefault(summary.module, _own_names(summary))

    def _note(self, reader: str, read: Iterable[str]) -> None:
        """Note that rating ``reader`` read the classes named ``read``."""
        for name in read:
            self.read_by.setdefault(name, set()).add(reader)

    def return_evidence(
        self, summary: ModuleSummary, annotation: str, function: str = ""
    ) -> tuple[Evidence, tuple[str, ...]]:
        """A return annotation's evidence, and the array fields of the project classes it
        names (for the message); what it read is noted for ``function`` (its name, if
        given). Memoised per module and annotation (``-> None`` of a module's fifty methods
        is rated once) while no class is being resolved: the answer then reads only classes
        resolved for good, before or by this call (a class's fact is written once), so an
        equal call later would compute the same."""
        key = (id(summary), annotation)
        known = None if self.in_progress else self._returns.get(key)
        if known is None:
            self._reading.append(set())
            try:
                found = self._return_evidence(summary, annotation)
            finally:
                read = frozenset(self._reading.pop())
            known = (summary, found, read)
            if not self.in_progress:
                self._returns[key] = known
        if function:
            self._note(f"ret:{function}", known[2])
        if self._reading:  # (rated while rating a class: that class read these too)
            self._reading[-1].update(known[2])
        return known[1]

    def _return_evidence(
        self, summary: ModuleSummary, annotation: str
    ) -> tuple[Evidence, tuple[str, ...]]:
        _, annotation = fresh_returns(annotation)  # (rated as its annotation)
        found, _ = self.field_evidence(summary, annotation)
        fields: list[str] = []
        if found is Evidence.ARRAYS:
            node = parse_annotation(annotation)
            if node is None:
                return found, ()
            for leaf in leaves(node):
                dotted = dotted_name(leaf)
                name = None if dotted is None else self.qualify(summary, dotted)
                if name is not None and self._reading:
                    self._reading[-1].add(name)
                fact = None if name is None else self.facts.classes.get(name)
                if fact is not None:
                    fields += [f.name for f in fact.fields if f.evidence is Evidence.ARRAYS]
        return found, tuple(dict.fromkeys(fields))

    def field_evidence(self, summary: ModuleSummary, annotation: str) -> tuple[Evidence, bool]:
        """A field's evidence, and whether it holds arrays Ray hands back zero-copy."""
        node = parse_annotation(annotation)
        if node is None:
            return Evidence.UNKNOWN, False

        def leaf(expr: ast.expr) -> Evidence:
            dotted = dotted_name(expr)
            if dotted is None:
                return Evidence.UNKNOWN
            return self.resolve(self.qualify(summary, dotted))

        def zero_copy_leaf(expr: ast.expr) -> Evidence:
            dotted = dotted_name(expr)
            if dotted is None:
                return Evidence.UNKNOWN
            name = self.qualify(summary, dotted)
            self.resolve(name)
            fact = self.facts.classes.get(name)
            return Evidence.ARRAYS if fact is not None and fact.array_fields() else Evidence.UNKNOWN

        def qualify(expr: ast.expr) -> str | None:
            dotted = dotted_name(expr)
            return None if dotted is None else self.resolved_name(summary, dotted)

        found = evidence(node, self.tables, leaf, qualify)
        if found is not Evidence.ARRAYS:
            return found, False
        zero_copy = evidence(node, self.tables, zero_copy_leaf, qualify)
        return found, zero_copy is Evidence.ARRAYS


class ExternalClasses:
    """Rates classes of installed packages by name (``ProjectFacts.external``), read from
    their source on the interpreter's path; cached per process."""

    def __init__(self, tables: TypeTables) -> None:
        self.tables = tables

    def lookup(self, name: str) -> ClassFact | None:
        """The class ``name`` of an installed package, or None (not found, or not a class);
        the installed files it was read from are noted (``installed.tracked``)."""
        fact, read = _external_class(name, self.tables)
        if stale(read.items()):  # changed since this process read it (a long-lived server)
            _external_class.cache_clear()
            fact, read = _external_class(name, self.tables)
        installed.note(read)
        return fact


@functools.lru_cache(maxsize=4096)
def _external_class(name: str, tables: TypeTables) -> tuple[ClassFact | None, dict[str, int]]:
    resolver = ClassResolver([], ProjectFacts(), tables, external=True)
    resolver.resolve(name)
    return resolver.facts.classes.get(name), resolver.facts.external_files
