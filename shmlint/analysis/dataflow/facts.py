"""Syntactic module facts gathered before the dataflow runs: attribute annotations."""

from __future__ import annotations

import ast

from shmlint.analysis.dataflow.context import Facts
from shmlint.basics import catalog
from shmlint.basics.astwalk import statements
from shmlint.basics.names import last_name
from shmlint.facts.evidence import names_type
from shmlint.facts.kinds import DAG, REF, UNKNOWN


def handle_kinds(annotation: ast.expr) -> frozenset[str]:
    """``CompiledDAG`` annotations make graphs, ``CompiledDAGRef`` ones make refs."""
    if names_type(annotation, catalog.COMPILED_DAG_TYPES):
        return frozenset({DAG})
    if names_type(annotation, catalog.COMPILED_REF_TYPES):
        # `Union[ObjectRef, CompiledDAGRef]` says "maybe a channel": not enough for `high`.
        if not names_type(annotation, catalog.PLAIN_REF_TYPES):
            return frozenset({REF})
    if names_type(annotation, catalog.PLAIN_REF_TYPES):
        return frozenset({UNKNOWN})  # an ObjectRef: awaiting it reads
    return frozenset()


def _record(facts: Facts, key: str, annotation: ast.expr) -> None:
    facts.attr_annotations.setdefault(key, annotation)
    kinds = handle_kinds(annotation)
    if kinds:
        facts.merge_kinds(facts.attr_kinds, key, kinds)


def collect_annotations(tree: ast.Module, facts: Facts) -> None:
    """Record annotations: module-level `x: T`, class-level `attr: T`, `self.attr: T` in methods."""
    for statement in tree.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            facts.module_annotations.setdefault(statement.target.id, statement.annotation)
        elif isinstance(statement, ast.AsyncFunctionDef):
            _coroutine(facts, statement.name, statement)
    for node in statements(tree.body):
        if not isinstance(node, ast.ClassDef):
            continue
        for statement in node.body:
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                _record(facts, f"{node.name}.{statement.target.id}", statement.annotation)
            elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                _method_annotations(node.name, statement, facts)
                if isinstance(statement, ast.AsyncFunctionDef):
                    _coroutine(facts, f"{node.name}.{statement.name}", statement)


# Decorators that leave an `async def` a coroutine function.
_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod", "abstractmethod", "override"})


def _coroutine(facts: Facts, key: str, node: ast.AsyncFunctionDef) -> None:
    facts.coroutines.add(key)
    if any(last_name(d) not in _PLAIN_DECORATORS for d in node.decorator_list):
        facts.decorated_coroutines.add(key)


def _method_annotations(
    class_name: str, method: ast.FunctionDef | ast.AsyncFunctionDef, facts: Facts
) -> None:
    positional = [*method.args.posonlyargs, *method.args.args]
    if not positional:
        return
    self_name = positional[0].arg
    for sub in statements(method.body):
        if (
            isinstance(sub, ast.AnnAssign)
            and isinstance(sub.target, ast.Attribute)
            and isinstance(sub.target.value, ast.Name)
            and sub.target.value.id == self_name
        ):
            _record(facts, f"{class_name}.{sub.target.attr}", sub.annotation)
