"""Statements: control flow (branches, loops, try, with, match) and the sinks statements make."""

from __future__ import annotations

import ast
import builtins

from shmlint.analysis.dataflow.base import AnalysisBase
from shmlint.analysis.dataflow.frames import LoopFrame, assigned_names
from shmlint.analysis.dataflow.values import EMPTY, Label, Site, State, Value, join_states
from shmlint.basics.names import qualified_name
from shmlint.facts.evidence import leaves
from shmlint.facts.kinds import element_kinds

_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _always_true(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and bool(test.value)


class StatementMixin(AnalysisBase):
    """Walks statements for :class:`FunctionAnalysis` (split out to keep modules small)."""

    def block(self, statements: list[ast.stmt], state: State) -> State:
        """Analyse ``statements`` in order from ``state``; returns the state after them."""
        for statement in statements:
            if state.dead:
                break
            state = self.statement(statement, state)
        return state

    def statement(self, node: ast.stmt, state: State) -> State:
        """One statement; returns the state after it (the same object, or a merge)."""
        self.current_statement = node
        if isinstance(node, ast.Expr):
            self.value(node.value, state)
        elif isinstance(node, ast.Assign):
            result = self.value(node.value, state)
            for target in node.targets:
                self.bind(target, result, state)
        elif isinstance(node, ast.AnnAssign):
            self.ann_assign(node, state)
        elif isinstance(node, ast.AugAssign):
            self.aug_assign(node, state)
        elif isinstance(node, ast.Return):
            if node.value is not None:
                self.report_return(self.value(node.value, state), node, state)
            state.dead = True
        elif isinstance(node, ast.Delete):
            self.delete(node, state)
        elif isinstance(node, ast.If):
            self.value(node.test, state)
            taken, other = state.copy(), state.copy()
            self.narrow(node.test, taken, other)
            taken = self.block(node.body, taken)
            return join_states([taken, self.block(node.orelse, other)])
        elif isinstance(node, _LOOPS):
            return self.loop(node, state)
        elif isinstance(node, (ast.Break, ast.Continue)):
            if self.loops:
                frame = self.loops[-1]
                exits = frame.breaks if isinstance(node, ast.Break) else frame.continues
                exits.append(state.copy())
            state.dead = True
        elif isinstance(node, ast.Raise):
            for part in (node.exc, node.cause):
                if part is not None:
                    self.value(part, state)
            state.dead = True
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            return self.try_statement(node, state)  # type: ignore[arg-type]
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                entered = self.value(item.context_expr, state)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, entered.derived(), state)
            return self.block(node.body, state)
        elif isinstance(node, ast.Assert):
            self.value(node.test, state)
            if node.msg is not None:
                self.value(node.msg, state)
            self.narrow(node.test, state, None)
        elif isinstance(node, ast.Match):
            return self.match_statement(node, state)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.function_def(node, state)
        elif isinstance(node, ast.ClassDef):
            self.class_def(node, state)
        elif not isinstance(node, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.value(child, state)
        return state

    def narrow(self, test: ast.expr, yes: State | None, no: State | None) -> None:
        """A type test's paths (``yes``: where ``test`` holds; ``no``: where it does not;
        None: not followed): where ``isinstance(x, T)`` holds for a builtin scalar type or a
        library type known array-free (:meth:`array_free_test`), the variable ``x`` holds no
        read's buffer, as if so annotated. ``not`` swaps the paths, ``and`` holds where each
        part does (``if not isinstance(n, int): return`` leaves ``n`` an ``int`` after it); a
        name the test itself rebinds (``:=``) is not narrowed. A test for an array type
        raises nothing: joined with the paths where it failed, its evidence would outlive
        the test."""
        rebound = {sub.target.id for sub in ast.walk(test) if isinstance(sub, ast.NamedExpr)}
        self._narrow(test, yes, no, rebound)

    def _narrow(
        self, test: ast.expr, yes: State | None, no: State | None, rebound: set[str]
    ) -> None:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            self._narrow(test.operand, no, yes, rebound)
        elif isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            for part in test.values:
                self._narrow(part, yes, None, rebound)
        elif yes is not None and (tested := self.type_test(test)) is not None:
            name, types = tested
            value = yes.vars.get(name)
            if value is not None and value.labels and name not in rebound:
                if self.array_free_test(types):
                    yes.vars[name] = self.typed(value, types, "the `isinstance` check's type")

    def type_test(self, test: ast.expr) -> tuple[str, ast.expr] | None:
        """``isinstance(x, T)`` of a variable ``x`` (the builtin): ``x`` and ``T``."""
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name)):
            return None
        if test.keywords or len(test.args) != 2 or not isinstance(test.args[0], ast.Name):
            return None
        if test.func.id != "isinstance" or self.scope.resolve("isinstance") != "isinstance":
            return None
        return test.args[0].id, test.args[1]

    def array_free_test(self, types: ast.expr) -> bool:
        """``types`` (of an ``isinstance`` test) names only builtin types known array-free
        (``int``, ``str``...) and library types known array-free by qualified name
        (``torch.Tensor`` by default, ``pyarrow.Schema``): never a project class, whose
        subclasses may hold arrays, nor a name the module binds otherwise."""
        tables = self.ctx.tables
        found = leaves(types)
        for leaf in found:
            if isinstance(leaf, ast.Name) and not self.scope.binds(leaf.id):
                if leaf.id not in tables.free_names or not hasattr(builtins, leaf.id):
                    return False
            elif qualified_name(leaf, self.scope) not in tables.free:
                return False
        return bool(found)

    def ann_assign(self, node: ast.AnnAssign, state: State) -> None:
        """``x: T = v`` binds with T's evidence; ``self.x: T = v`` stores with it."""
        if node.value is None:
            return
        result = self.value(node.value, state)
        if isinstance(node.target, ast.Attribute):
            self.value(node.target.value, state)
            sink = self.sink_payload(node.annotation, "the attribute's declared type")
            if self.is_self(node.target.value) and self.class_name is not None and result.kinds:
                key = f"{self.class_name}.{node.target.attr}"
                facts = self.ctx.facts
                facts.merge_kinds(facts.attr_kinds, key, result.kinds)
            if self.is_self(node.target.value) and self.class_name is not None:
                self.record_flow("attr", f"{self.class_name}.{node.target.attr}", result)
            self.ctx.report(state, result, "SHM102", Site.of(node.target), sink)
        else:
            self.bind(node.target, result, state)

    def aug_assign(self, node: ast.AugAssign, state: State) -> None:
        """``x += [v]`` extends a list in place; any other augmented assignment is arithmetic,
        which copies (``total += arr``) — precision first: ``x += other_list`` is not followed."""
        added = self.value(node.value, state)
        displays = (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)
        if not (isinstance(node.op, ast.Add) and isinstance(node.value, displays)):
            return
        if isinstance(node.target, ast.Name):
            old = self.name_value(node.target.id, state)
            self.bind(node.target, old.join(added), state)
        elif isinstance(node.target, ast.Attribute):
            self.store_attribute(node.target, added, state)
        elif isinstance(node.target, ast.Subscript):
            self.value(node.target.slice, state)
            self.container_put(node.target.value, added, node.target, state)

    def delete(self, node: ast.Delete, state: State) -> None:
        """``del x`` releases the value; other targets are evaluated for their side effects."""
        for target in node.targets:
            if isinstance(target, ast.Name):
                state.vars.pop(target.id, None)
                state.bound_at.pop(target.id, None)
            elif isinstance(target, (ast.Tuple, ast.List)):
                self.delete(ast.Delete(targets=list(target.elts)), state)
            else:
                self.value(target, state)

    # --- loops ------------------------------------------------------------------------------------

    def loop(self, node: ast.For | ast.AsyncFor | ast.While, state: State) -> State:
        """A loop, analysed twice (enough for this lattice) with SHM104 checked at the back edge."""
        is_for = isinstance(node, (ast.For, ast.AsyncFor))
        iterated, plan = EMPTY, None
        if isinstance(node, ast.For):
            iterated, plan = self.iterated_parts(node.target, node.iter, state)
        elif is_for:
            iterated = self.value(node.iter, state)  # type: ignore[union-attr]
        element = Value(
            iterated.labels,
            element_kinds(iterated.kinds),
            closure=iterated.closure,
            origins=iterated.origins,
        )
        targets = [node.target] if is_for else []  # type: ignore[union-attr]
        assigned = self.ctx.loop_assigned.get(id(node))
        if assigned is None:
            assigned = assigned_names([*targets, *node.body])  # type: ignore[list-item]
            self.ctx.loop_assigned[id(node)] = assigned
        frame = LoopFrame(node, assigned)
        self.loops.append(frame)
        entry = state
        current = entry
        back = State(dead=True)
        for round_number in range(2):
            body_state = current.copy()
            if is_for:
                target = node.target  # type: ignore[union-attr]
                if plan is None or not self.bind_split(
                    target,
                    node.iter,  # type: ignore[union-attr]
                    element,
                    plan,
                    element_kinds,
                    lambda elt, value: self.bind(elt, value, body_state),  # noqa: B023
                ):
                    self.bind(target, element, body_state)
            else:
                self.current_statement = node  # the test is part of the loop header
                self.value(node.test, body_state)  # type: ignore[union-attr]
            end = self.block(node.body, body_state)
            back = join_states([end, *frame.continues])
            frame.continues.clear()
            if not back.dead:
                self.held_across_read(frame, back, node.body)
            if round_number == 0:
                current = join_states([entry, back])
        self.loops.pop()
        runs_forever = isinstance(node, ast.While) and _always_true(node.test)
        normal_exit = join_states([back] if runs_forever else [entry, back])
        if runs_forever:
            normal_exit = State(dead=True)
        after = self.block(node.orelse, normal_exit) if node.orelse else normal_exit
        after = join_states([after, *frame.breaks])
        if is_for:
            self.detached_by_loop(node, after)  # type: ignore[arg-type]
        return after

    def held_across_read(self, frame: LoopFrame, back: State, body: list[ast.stmt]) -> None:
        """SHM104: at the back edge, a local still holding a value read in this loop from a
        compiled-graph channel is alive while the next iteration's read runs."""
        if not frame.reads:
            return
        read_lines = {label.site.line for label in frame.reads}
        first = next(
            (
                index
                for index, stmt in enumerate(body)
                if any(
                    stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno) for line in read_lines
                )
            ),
            0,
        )
        released = assigned_names(body[:first])  # rebound or deleted before the next read
        held: dict[Label, tuple[Site, Value]] = {}
        for name, value in back.vars.items():
            if name in released or name not in back.bound_at:
                continue
            site = back.bound_at[name]
            for label in value.labels & frame.reads:
                if label in back.reported:
                    continue
                best = held.get(label)
                if best is None or (site.line, site.col) < (best[0].line, best[0].col):
                    held[label] = (site, value)
        for label, (site, value) in held.items():
            alone = Value(frozenset({label}), closure=value.closure, evidence=value.evidence)
            self.ctx.report(back, alone, "SHM104", site)

    def detached_by_loop(self, node: ast.For | ast.AsyncFor, state: State) -> None:
        """``for o in outs: helper(o)`` detaches every element of ``outs`` in place."""
        if not (isinstance(node.iter, ast.Name) and isinstance(node.target, ast.Name)):
            return
        for statement in node.body:
            call = statement.value if isinstance(statement, ast.Expr) else None
            if (
                isinstance(call, ast.Call)
                and call.args
                and isinstance(call.args[0], ast.Name)
                and call.args[0].id == node.target.id
                and self.is_sanitizer(self.call_name(call.func, state), call.func)
            ):
                held = state.vars.get(node.iter.id)
                if held is not None:
                    state.vars[node.iter.id] = held.without(held.labels)
                return

    # --- try / match ------------------------------------------------------------------------------

    def try_statement(self, node: ast.Try, state: State) -> State:
        """Handlers may start anywhere in the body: from the merge of its start and its end."""
        start = state.copy()
        body_end = self.block(node.body, state)
        handler_entry = join_states([start, body_end])
        ends = [self.block(node.orelse, body_end) if node.orelse else body_end]
        for handler in node.handlers:
            handler_state = handler_entry.copy() if not handler_entry.dead else start.copy()
            if handler.type is not None:
                self.value(handler.type, handler_state)
            if handler.name:
                handler_state.vars.pop(handler.name, None)
            ends.append(self.block(handler.body, handler_state))
        end = join_states(ends)
        if not node.finalbody:
            return end
        if end.dead:
            # Every path left the block; `finally` still runs (for its own sinks).
            self.block(node.finalbody, handler_entry.copy() if not handler_entry.dead else start)
            return end
        return self.block(node.finalbody, end)

    def match_statement(self, node: ast.Match, state: State) -> State:
        """Each case from the state before the match; captures are views of the subject."""
        subject = self.value(node.subject, state).derived()
        ends = []
        for case in node.cases:
            case_state = state.copy()
            for sub in ast.walk(case.pattern):
                name = getattr(sub, "name", None) or getattr(sub, "rest", None)
                if isinstance(name, str):
                    case_state.vars[name] = subject
                    case_state.bound_at[name] = Site.of(sub)
            if case.guard is not None:
                self.value(case.guard, case_state)
            ends.append(self.block(case.body, case_state))
        ends.append(state)  # no case matched
        return join_states(ends)

    # --- nested definitions -------------------------------------------------------------------

    def function_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef, state: State) -> None:
        """A method (in a class body) or a nested function (a closure value)."""
        for expr in [*node.decorator_list, *node.args.defaults]:
            self.value(expr, state)
        for default in node.args.kw_defaults:
            if default is not None:
                self.value(default, state)
        if self.is_class_body:
            if not self.ctx.should_analyse(node):
                return
            method = type(self)(self.ctx, node, self.ctx.scope(node, self.scope), self.class_name)
            method.run()
            return
        state.vars[node.name] = self.closure_value(node, state)
        state.bound_at[node.name] = Site.of(node)

    def class_def(self, node: ast.ClassDef, state: State) -> None:
        """A class body is analysed on its own: its assignments are class variables (SHM106)."""
        for expr in [*node.decorator_list, *node.bases]:
            self.value(expr, state)
        if self.ctx.should_analyse(node, state.holding_handles()):
            scope = self.ctx.scope(node, self.scope)
            type(self)(self.ctx, node, scope, node.name, state.vars).run()
        state.vars.pop(node.name, None)
