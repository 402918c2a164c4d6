"""Payload evidence from annotations: does a value hold arrays, or certainly not?

``x: np.ndarray = ray.get(ref)`` is array-bearing (reported with high confidence);
``n: int = ray.get(ref)`` is array-free (never reported); anything else is unknown.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Callable, Iterable

from shmlint.basics import catalog


class Evidence(enum.Enum):
    """What an annotation says about a value's payload."""

    UNKNOWN = 0
    ARRAYS = 1
    ARRAY_FREE = 2


def _parse_string(text: str) -> ast.expr | None:
    try:
        parsed = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return None
    return parsed.body


def _leaves(node: ast.expr) -> Iterable[ast.expr | None]:
    """The type names an annotation is built from (generic wrappers looked through)."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            parsed = _parse_string(node.value)
            if parsed is None:
                yield None
            else:
                yield from _leaves(parsed)
        else:
            yield node  # `None`
        return
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        yield from _leaves(node.left)
        yield from _leaves(node.right)
        return
    if isinstance(node, ast.Subscript):
        head = _name_of(node.value)
        if head == "Literal":
            yield node.value
            return
        if head in catalog.NEUTRAL_GENERICS:
            inner = node.slice
            elements = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            if head == "Annotated":
                elements = elements[:1]
            for element in elements:
                if not (isinstance(element, ast.Constant) and element.value is Ellipsis):
                    yield from _leaves(element)
            return
        yield node.value  # `npt.NDArray[np.float32]`, `MyGeneric[T]`: the head decides
        return
    if isinstance(node, (ast.Tuple, ast.List)):
        for element in node.elts:
            yield from _leaves(element)
        return
    yield node


def _name_of(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    return None


def evidence(
    annotation: ast.expr | None,
    array_types: frozenset[str],
    resolve: Callable[[ast.expr], Evidence] | None = None,
    array_names: frozenset[str] = catalog.ARRAY_TYPES,
) -> Evidence:
    """Evidence from one annotation; ``array_types`` are the configured extra array types;
    ``resolve`` rates the other type names (project classes, by their fields);
    ``array_names``: the built-in array type names that count."""
    if annotation is None:
        return Evidence.UNKNOWN
    free = True
    for leaf in _leaves(annotation):
        name = _name_of(leaf)
        if name in array_names or name in array_types:
            return Evidence.ARRAYS
        if name in catalog.ARRAY_FREE_TYPES or name in catalog.ARRAY_TYPES:
            continue
        found = resolve(leaf) if resolve is not None and leaf is not None else Evidence.UNKNOWN
        if found is Evidence.ARRAYS:
            return Evidence.ARRAYS
        if found is not Evidence.ARRAY_FREE:
            free = False
    return Evidence.ARRAY_FREE if free else Evidence.UNKNOWN


def leaves(annotation: ast.expr) -> list[ast.expr]:
    """The type names an annotation is built from (strings parsed, generics looked through)."""
    return [leaf for leaf in _leaves(annotation) if leaf is not None]


def names_type(annotation: ast.expr | None, names: frozenset[str]) -> bool:
    """True when any type named in ``annotation`` has its last component in ``names``."""
    if annotation is None:
        return False
    return any(_name_of(leaf) in names for leaf in _leaves(annotation))
