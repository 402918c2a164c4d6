"""Syntactic module facts gathered before the dataflow runs: attribute annotations."""

from __future__ import annotations

import ast

from shmlint.dataflow.context import Facts


def collect_annotations(tree: ast.Module, facts: Facts) -> None:
    """Record ``Class.attr`` annotations: class-level ``attr: T`` and ``self.attr: T`` in methods."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for statement in node.body:
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                facts.attr_annotations.setdefault(
                    f"{node.name}.{statement.target.id}", statement.annotation
                )
            elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                _method_annotations(node.name, statement, facts)


def _method_annotations(
    class_name: str, method: ast.FunctionDef | ast.AsyncFunctionDef, facts: Facts
) -> None:
    positional = [*method.args.posonlyargs, *method.args.args]
    if not positional:
        return
    self_name = positional[0].arg
    for sub in ast.walk(method):
        if (
            isinstance(sub, ast.AnnAssign)
            and isinstance(sub.target, ast.Attribute)
            and isinstance(sub.target.value, ast.Name)
            and sub.target.value.id == self_name
        ):
            facts.attr_annotations.setdefault(f"{class_name}.{sub.target.attr}", sub.annotation)
