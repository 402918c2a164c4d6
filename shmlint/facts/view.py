"""What the analysis of one module sees of the project: its own name, the merged facts, and
(in phase 1) the recorder its flows go to."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator

from shmlint.basics.names import Scope, dotted_name, qualified_name
from shmlint.facts.collect import Recorder
from shmlint.facts.evidence import Evidence, Payload
from shmlint.facts.layout import absolute_import
from shmlint.facts.model import ProjectFacts
from shmlint.facts.records import ClassFact, ReadChain


class ProjectView:
    """Project facts seen from one module (``module``, a package's ``__init__`` or not)."""

    def __init__(
        self,
        facts: ProjectFacts,
        module: str,
        is_package: bool,
        recorder: Recorder | None = None,
        deps: set[str] | None = None,
        *,
        alone: bool = False,
    ) -> None:
        self.facts = facts
        self.module = module
        self.is_package = is_package
        self.recorder = recorder
        # The module's own facts only (a per-file run, phase 1): no flows merged, so no slot
        # of the project holds a handle.
        self.alone = alone
        # Phase 1: every question asked of the facts (see ProjectFacts.answer). A file whose
        # questions get the same answers from the project's facts as from its own needs no
        # second analysis.
        self.deps = deps

    def qname(self, node: ast.expr, scope: Scope) -> str | None:
        """The canonical project-wide name of a dotted expression, or None (a local object)."""
        name = self.absolute_name(node, scope)
        return None if name is None else self.facts.canonical(name)

    def absolute_name(self, node: ast.expr, scope: Scope) -> str | None:
        """The absolute dotted name of an expression (imports resolved, re-exports not)."""
        name = qualified_name(node, scope)
        if name is None:
            root = node
            while isinstance(root, ast.Attribute):
                root = root.value
            if not isinstance(root, ast.Name):
                return None
            module_scope = scope.module()
            if scope.resolve(root.id) is not None or root.id not in module_scope.locals:
                return None
            if any(root.id in s.locals for s in _chain(scope) if s is not module_scope):
                return None  # bound in a function: a variable, not the module's definition
            dotted = dotted_name(node)
            return f"{self.module}.{dotted}" if dotted else None
        return absolute_import(name, self.module, self.is_package)

    def slot(self, kind: str, key: str) -> str:
        """A slot of this module: ``attr``/``param``/``ret`` plus ``Class.attr``-style key."""
        return f"{kind}:{self.module}.{key}"

    def _ask(self, key: str) -> None:
        if self.deps is not None:
            self.deps.add(key)

    @contextlib.contextmanager
    def names_only(self) -> Iterator[set[str]]:
        """Phase 1: what is asked inside is kept aside (the set yielded) and recorded only as
        the names it looks up (``n:``, see ``ProjectFacts.answer``), which the merge follows
        as it follows the question — for an answer the analysis may not use: a sink's
        declared type counts only once a read reaches the sink (:meth:`asked`). A question
        whose answer was not used cannot change the analysis, so it need not send the file
        to phase 2 when the project's facts answer it otherwise."""
        deps = self.deps
        if deps is None:
            yield set()
            return
        aside: set[str] = set()
        self.deps = aside
        try:
            yield aside
        finally:
            self.deps = deps
            deps.update(f"n:{key[2:]}" if key.startswith("c:") else key for key in aside)

    def asked(self, keys: set[str]) -> None:
        """The answers to these questions (kept aside by :meth:`names_only`) are used."""
        if self.deps is not None:
            self.deps.update(keys)

    def kinds(self, slot: str) -> frozenset[str]:
        """Handle kinds of a slot, project-wide."""
        self._ask(f"k:{slot}")
        return self.facts.kinds(slot)

    def attr_kinds(self, class_name: str, attr: str) -> frozenset[str]:
        """Handle kinds of ``self.attr`` in a class of this module."""
        self._ask(f"a:{self.module}.{class_name}|{attr}")
        return self.facts.attr_kinds(f"{self.module}.{class_name}", attr)

    def returned_read(self, name: str) -> ReadChain | None:
        """The read a project function returns undetached, if any."""
        self._ask(f"r:{name}")
        return self.facts.returned_reads.get(self.facts.canonical(name))

    def function_payload(self, name: str) -> Payload | None:
        """What project function ``name`` (a canonical or absolute name) returns; None when it
        is no project function."""
        self._ask(f"p:{name}")
        return self.facts.function_payload(name)

    def returns_nothing(self, name: str) -> bool:
        """True when project function ``name`` returns nothing (``-> None``, or no value).
        Asked as its payload (the answer names its return annotation)."""
        self._ask(f"p:{name}")
        return self.facts.returns_nothing(name)

    def is_remote(self, name: str) -> bool:
        """True for a ``@ray.remote`` function or a method of an actor class."""
        self._ask(f"x:{name}")
        return self.facts.is_remote(name)

    def is_project_callable(self, name: str) -> bool:
        """True when ``name`` is a function or class of the project."""
        self._ask(f"x:{name}")
        return self.facts.is_project_callable(name)

    def actor_method_payload(self, method: str) -> Payload | None:
        """What ``handle.<method>.remote()`` returns, by name among the actor classes."""
        self._ask(f"m:{method}")
        return self.facts.actor_method_payload(method)

    def constructed_class(self, name: str) -> ClassFact | None:
        """The project class ``name`` (canonical or absolute) whose constructor is called."""
        self._ask(f"F:{name}")
        return self.facts.class_named(name)

    def class_fact(self, leaf: ast.expr, scope: Scope) -> ClassFact | None:
        """The project class a type name in an annotation names, if any."""
        name = self.absolute_name(leaf, scope)
        if name is None:
            return None
        self._ask(f"c:{name}")
        return self.facts.class_named(name)

    def class_evidence(self, leaf: ast.expr, scope: Scope) -> Evidence:
        """What a type name in an annotation says, when it names a project class."""
        fact = self.class_fact(leaf, scope)
        return fact.evidence if fact is not None else Evidence.UNKNOWN


def _chain(scope: Scope) -> list[Scope]:
    chain = []
    current: Scope | None = scope
    while current is not None:
        chain.append(current)
        current = current.parent
    return chain
