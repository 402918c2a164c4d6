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


def rebound(module: ast.Module) -> frozenset[str]:
    """What may rebind a builtin of ``module`` where its scopes do not see it: the names its
    functions declare ``global``, and ``*`` for a star import."""
    names: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.Global):
            names.update(node.names)
        elif isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            names.add("*")
    return frozenset(names)


def split_call(
    node: ast.expr, scope: Scope, bound: Callable[[str], bool]
) -> list[ast.expr | None] | None:
    """The arguments whose elements ``node``'s elements hold, position by position (None: an
    index); None unless ``node`` calls the builtin ``enumerate`` or ``zip`` with plain
    positional iterables. ``bound``: whether a name may be bound otherwise than the scopes
    say (a comprehension's target, a ``global`` elsewhere, a star import)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return None
    name = node.func.id
    if name not in ("enumerate", "zip") or scope.resolve(name) != name or bound(name):
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


def splits(
    target: ast.expr, iterable: ast.expr, scope: Scope, bound: Callable[[str], bool]
) -> bool:
    """Whether ``target`` unpacks the elements of ``iterable`` position by position."""
    parts = split_call(iterable, scope, bound)
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


def _nothing_rebound(name: str) -> bool:
    return False


def _splitting(node: ast.expr, scope: Scope, bound: Callable[[str], bool]) -> set[int]:
    """The ids of ``node`` and the calls nested in its arguments that split."""
    parts = split_call(node, scope, bound)
    if parts is None:
        return set()
    found = {id(node)}
    for part in parts:
        if part is not None:
            found |= _splitting(part, scope, bound)
    return found


class UnpackMixin(AnalysisBase):
    """Binds ``enumerate``/``zip`` targets for :class:`FunctionAnalysis`."""

    def rebinds(self, state: State) -> Callable[[str], bool]:
        """Whether a builtin's name may be bound otherwise than the scopes say, on ``state``."""
        module = self.scope.module().node
        assert isinstance(module, ast.Module)
        names = self.ctx.rebound.get(id(module))
        if names is None:
            names = self.ctx.rebound[id(module)] = rebound(module)
        return lambda name: name in state.vars or name in names or "*" in names

    def iterated_parts(
        self, target: ast.expr, iterable: ast.expr, state: State
    ) -> tuple[Value, dict[int, list[Value]] | None]:
        """The value of ``iterable`` (evaluated as any expression), and when ``target`` splits
        it, the argument values of the calls evaluated on the way (for :meth:`bind_split`)."""
        bound = self.rebinds(state)
        if not splits(target, iterable, self.scope, bound):
            return self.value(iterable, state), None
        outer, self.arg_values = self.arg_values, {}
        try:
            value = self.value(iterable, state)
            noted = self.arg_values
        finally:
            self.arg_values = outer
        splitting = _splitting(iterable, self.scope, bound)  # (what bind_split may split)
        return value, {key: args for key, args in noted.items() if key in splitting}

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
        ``elements``: the kinds an element of a value of these kinds has. (The calls
        ``noted`` holds are those that split where the iterable was evaluated.)"""
        parts = split_call(iterable, self.scope, _nothing_rebound)
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
            if part is not None and splits(elt, part, self.scope, _nothing_rebound):
                if self.bind_split(elt, part, value, noted, elements, bind):
                    continue
            bind(elt, value)
        return True
