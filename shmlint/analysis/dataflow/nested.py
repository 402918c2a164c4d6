"""Nested scopes of a function analysis: closures (lambdas, nested functions: analysed on
their own, holding the tainted values they capture) and comprehensions (their targets bound
in a copy of the state)."""

from __future__ import annotations

import ast

from shmlint.analysis.dataflow.base import AnalysisBase
from shmlint.analysis.dataflow.values import EMPTY, Site, State, Value, union


class NestedMixin(AnalysisBase):
    """Evaluates nested scopes for :class:`FunctionAnalysis` (split out to keep modules
    small)."""

    def closure_value(
        self, node: ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef, state: State
    ) -> Value:
        """A function object: analysed on its own, tainted by the values it captures."""
        analyse = self.ctx.should_analyse(node, state.holding_handles())
        if not any(value.labels for value in state.vars.values()):
            # Nothing tainted to capture: only the function's own reads matter.
            if analyse:
                scope = self.ctx.scope(node, self.scope)
                type(self)(self.ctx, node, scope, None, state.vars).run()
            return EMPTY
        # What the function object holds: the tainted values it captures (an untainted one,
        # say an array annotated `np.ndarray`, holds no read's buffer: it must not rate the
        # closure, and whether the body is analysed must not change the value).
        loaded = {
            sub.id
            for sub in ast.walk(node)
            if isinstance(sub, ast.Name)
            and isinstance(sub.ctx, ast.Load)
            and sub.id in state.vars
            and state.vars[sub.id].labels
        }
        if not analyse and not loaded:
            return EMPTY  # reads nothing, captures nothing tainted: no Scope needed
        scope = self.ctx.scope(node, self.scope)
        if analyse:
            type(self)(self.ctx, node, scope, None, state.vars).run()
        captured = [state.vars[name] for name in loaded if name not in scope.locals]
        if not captured:
            return EMPTY
        held = union(captured)
        return Value(held.labels, closure=bool(held.labels), evidence=held.evidence)

    def comprehension_value(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, state: State
    ) -> Value:
        """A comprehension's elements, with its targets bound in a copy of the state."""
        inner = state.copy()
        self.hoist_blocked += 1
        for generator in node.generators:
            target = generator.target
            plan = None
            if generator.is_async:
                iterable = self.value(generator.iter, inner)
            else:
                iterable, plan = self.iterated_parts(target, generator.iter, inner)
            whole = iterable.derived()
            if plan is None or not self.bind_split(
                target,
                generator.iter,
                whole,
                plan,
                _same,
                lambda elt, value: self.bind_comprehension_target(elt, value, inner),
            ):
                self.bind_comprehension_target(target, whole, inner)
            for condition in generator.ifs:
                self.value(condition, inner)
        if isinstance(node, ast.DictComp):
            result = self.value(node.key, inner).join(self.value(node.value, inner)).derived()
        else:
            result = self.value(node.elt, inner).derived()
        # Walrus targets and sinks inside leak out; the comprehension's own targets do not.
        targets = {
            sub.id
            for generator in node.generators
            for sub in ast.walk(generator.target)
            if isinstance(sub, ast.Name)
        }
        for name, held in inner.vars.items():
            if name not in targets:
                state.vars[name] = held
        state.reported |= inner.reported
        state.passed |= inner.passed
        self.hoist_blocked -= 1
        return result

    def bind_comprehension_target(self, target: ast.expr, value: Value, state: State) -> None:
        """Comprehension targets are plain local bindings of the comprehension."""
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                state.vars[sub.id] = value
                state.bound_at[sub.id] = Site.of(sub)


def _same(kinds: frozenset[str]) -> frozenset[str]:
    """A comprehension's target holds the kinds its iterable holds (as unsplit)."""
    return kinds
