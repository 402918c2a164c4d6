"""Unpacking what ``enumerate`` and ``zip`` give: each target takes its own iterable's part.

Values are not tracked per tuple position (a tuple display is the union of its parts), so
``for i, out in enumerate(outs): kept.append(i)`` would keep the read ``outs`` holds, and
``for name, out in zip(names, outs)`` would bind ``name`` to it. These two builtins say
syntactically which iterable each position comes from: the call is evaluated as any call (its
arguments once, their values noted), and each target gets only what of the whole element came
from its own argument — never more than the target would get unsplit. An index is plain data.
Nested forms split too (``for i, (a, b) in enumerate(zip(xs, ys))``).
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable

from shmlint.analysis.dataflow.base import AnalysisBase
from shmlint.analysis.dataflow.values import EMPTY, State, Value
from shmlint.basics.names import Scope

Kinds = frozenset[str]


def split_call(node: ast.expr, scope: Scope) -> list[ast.expr | None] | None:
    """The arguments whose elements ``node``'s elements hold, position by position (None: an
    index); None unless ``node`` calls the builtin ``enumerate`` or ``zip`` with plain
    positional iterables."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return None
    name = node.func.id
    if name not in ("enumerate", "zip") or scope.resolve(name) != name:
        return None
    if not node.args or any(isinstance(arg, ast.Starred) for arg in node.args):
        return None
    if name == "enumerate":
        if len(node.args) > 2 or any(kw.arg != "start" for kw in node.keywords):
            return None
        return [None, node.args[0]]
    if any(kw.arg != "strict" for kw in node.keywords):
        return None
    return list(node.args)


def splits(target: ast.expr, iterable: ast.expr, scope: Scope) -> bool:
    """Whether ``target`` unpacks the elements of ``iterable`` position by position."""
    parts = split_call(iterable, scope)
    return (
        parts is not None
        and isinstance(target, (ast.Tuple, ast.List))
        and len(target.elts) == len(parts)
        and not any(isinstance(elt, ast.Starred) for elt in target.elts)
    )


def _part(whole: Value, own: Value, kinds: Kinds) -> Value:
    """What of ``whole`` came from ``own`` (whose element kinds are ``kinds``)."""
    return dataclasses.replace(
        whole,
        labels=whole.labels & own.labels,
        kinds=whole.kinds & kinds,
        entries=frozenset(e for e in whole.entries if e[0] in own.labels),
        origins=whole.origins & own.origins,
        closure=whole.closure and own.closure,
    )


class UnpackMixin(AnalysisBase):
    """Binds ``enumerate``/``zip`` targets for :class:`FunctionAnalysis`."""

    def iterated_parts(
        self, target: ast.expr, iterable: ast.expr, state: State
    ) -> tuple[Value, dict[int, list[Value]] | None]:
        """The value of ``iterable`` (evaluated as any expression), and when ``target`` splits
        it, the argument values of the calls evaluated on the way (for :meth:`bind_split`)."""
        if not splits(target, iterable, self.scope):
            return self.value(iterable, state), None
        outer, self.arg_values = self.arg_values, {}
        try:
            value = self.value(iterable, state)
            noted = self.arg_values
        finally:
            self.arg_values = outer
        return value, noted

    def bind_split(
        self,
        target: ast.expr,
        iterable: ast.expr,
        whole: Value,
        noted: dict[int, list[Value]],
        elements: Callable[[Kinds], Kinds],
        bind: Callable[[ast.expr, Value], None],
    ) -> bool:
        """Bind ``target``'s positions to their own parts of ``whole`` (an element of
        ``iterable``); False (nothing bound) when the call's arguments were not noted.
        ``elements``: the kinds an element of a value of these kinds has."""
        parts = split_call(iterable, self.scope)
        args = noted.get(id(iterable))
        if parts is None or args is None or not isinstance(target, (ast.Tuple, ast.List)):
            return False
        bindings: list[tuple[ast.expr, ast.expr | None, Value]] = []
        for elt, part in zip(target.elts, parts):
            if part is None:
                bindings.append((elt, None, EMPTY))
                continue
            own = args[iterable.args.index(part)]  # type: ignore[attr-defined]
            bindings.append((elt, part, _part(whole, own, elements(own.kinds))))
        for elt, part, value in bindings:
            if part is not None and splits(elt, part, self.scope):
                if self.bind_split(elt, part, value, noted, elements, bind):
                    continue
            bind(elt, value)
        return True
