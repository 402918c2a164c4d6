"""Statement-only traversal: most facts the analysis gathers live on statements, and a tree
has many times more expression nodes than statements (``ast.walk`` visits them all)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _block_fields() -> dict[type, tuple[str, ...]]:
    """The statement-like node types that hold blocks, with their block fields."""
    table: dict[type, tuple[str, ...]] = {}
    for name in dir(ast):
        node_type = getattr(ast, name)
        if isinstance(node_type, type) and issubclass(
            node_type, (ast.stmt, ast.excepthandler, ast.match_case)
        ):
            fields = tuple(f for f in BLOCK_FIELDS if f in node_type._fields)
            if fields:
                table[node_type] = fields
    return table


# Looked up by exact type: a statement of any other type (most of them) has no block to enter.
_BLOCKS = _block_fields()


def block_fields(node: ast.AST) -> tuple[str, ...]:
    """The fields of ``node`` that hold blocks of statements (none for most nodes)."""
    return _BLOCKS.get(type(node), ())


def statements(body: Iterable[ast.AST], *, into_scopes: bool = True) -> Iterator[ast.stmt]:
    """Every statement under ``body``, depth first; nested functions and classes are entered
    only with ``into_scopes`` (their own statements belong to another scope)."""
    stack = list(body)
    stack.reverse()
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            yield node
            if not into_scopes and isinstance(node, _SCOPES):
                continue
        children: list[ast.AST] = []
        for field in block_fields(node):
            children.extend(getattr(node, field))
        children.reverse()
        stack.extend(children)
