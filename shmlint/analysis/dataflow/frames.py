"""Loop frames: what the analysis remembers about the loops it is inside."""

from __future__ import annotations

import ast
import dataclasses

from shmlint.analysis.dataflow.values import Label, State


@dataclasses.dataclass(slots=True)
class LoopFrame:
    """A loop being analysed: what it (re)binds, which channel reads it makes, its exits."""

    node: ast.AST
    assigned: frozenset[str]
    reads: set[Label] = dataclasses.field(default_factory=set)
    breaks: list[State] = dataclasses.field(default_factory=list)
    continues: list[State] = dataclasses.field(default_factory=list)


def assigned_names(statements: list[ast.stmt]) -> frozenset[str]:
    """Names (re)bound anywhere in ``statements``, nested scopes excluded."""
    names: set[str] = set()
    stack: list[ast.AST] = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        stack.extend(ast.iter_child_nodes(node))
    return frozenset(names)
