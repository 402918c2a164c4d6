"""Statement-only traversal: most facts the analysis gathers live on statements, and a tree
has many times more expression nodes than statements (``ast.walk`` visits them all)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def statements(body: Iterable[ast.AST], *, into_scopes: bool = True) -> Iterator[ast.stmt]:
    """Every statement under ``body``, depth first; nested functions and classes are entered
    only with ``into_scopes`` (their own statements belong to another scope)."""
    stack = list(body)
    stack.reverse()
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            yield node
            if isinstance(node, _SCOPES) and not into_scopes:
                continue
        children: list[ast.AST] = []
        for field in BLOCK_FIELDS:
            children.extend(getattr(node, field, ()))
        children.reverse()
        stack.extend(children)
