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


# Per splitting call (by node id), each position's argument and its value (None: an index).
Plan = dict[int, list[tuple[ast.expr, Value] | None]]


def _unpacks(target: ast.expr, width: int) -> bool:
    """``target`` takes apart a tuple of ``width`` positions, one name or pattern each."""
    return (
        isinstance(target, (ast.Tuple, ast.List))
        and len(target.elts) == width
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
    ) -> tuple[Value, Plan | None]:
        """The value of ``iterable`` (evaluated as any expression), and when ``target`` splits
        it, the plan :meth:`bind_split` follows: the calls that split (decided here, where the
        iterable is evaluated) with their arguments' values, noted on the way."""
        bound = self.rebinds(state)
        parts = split_call(iterable, self.scope, bound)
        if parts is None or not _unpacks(target, len(parts)):
            return self.value(iterable, state), None
        outer, self.arg_values = self.arg_values, {}
        try:
            value = self.value(iterable, state)
            noted = self.arg_values
        finally:
            self.arg_values = outer
        plan: Plan = {}
        self._plan(iterable, parts, noted, bound, plan)
        return value, plan

    def _plan(
        self,
        call: ast.expr,
        parts: list[ast.expr | None],
        noted: dict[int, list[Value]],
        bound: Callable[[str], bool],
        plan: Plan,
    ) -> None:
        """Add ``call`` (its ``parts``) and the splitting calls in its arguments to ``plan``,
        those whose arguments were noted."""
        args = noted.get(id(call))
        if args is None:
            return
        assert isinstance(call, ast.Call)
        plan[id(call)] = [None if p is None else (p, args[call.args.index(p)]) for p in parts]
        for part in parts:
            inner = None if part is None else split_call(part, self.scope, bound)
            if inner is not None:
                self._plan(part, inner, noted, bound, plan)  # type: ignore[arg-type]

    def bind_split(
        self,
        target: ast.expr,
        iterable: ast.expr,
        whole: Value,
        plan: Plan,
        elements: Callable[[Kinds], Kinds],
        bind: Callable[[ast.expr, Value], None],
    ) -> bool:
        """Bind ``target``'s positions to their own parts of ``whole`` (an element of
        ``iterable``); False (nothing bound) unless ``plan`` splits ``iterable`` into as many
        positions. ``elements``: the kinds an element of a value of these kinds has."""
        positions = plan.get(id(iterable))
        if positions is None or not _unpacks(target, len(positions)):
            return False
        assert isinstance(target, (ast.Tuple, ast.List))
        for elt, position in zip(target.elts, positions):
            if position is None:
                bind(elt, EMPTY)
                continue
            part, own = position
            value = _part(whole, own, elements(own.kinds))
            if not self.bind_split(elt, part, value, plan, elements, bind):
                bind(elt, value)
        return True
