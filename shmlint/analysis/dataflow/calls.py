"""Calls: what a call gives — sanitizers, reads, handles, queues, threads, library views and
copies, unknown calls (DESIGN §1, §3; the tables are in ``catalog``); the project's own
functions and classes are :mod:`callees`.
"""

from __future__ import annotations

import ast
import dataclasses

from shmlint.analysis.dataflow.base import AnalysisBase
from shmlint.analysis.dataflow.values import EMPTY, Site, State, Value, union
from shmlint.analysis.helper_kind import names_helper
from shmlint.basics import catalog
from shmlint.basics.names import last_name, qualified_name
from shmlint.basics.types import SourceKind
from shmlint.facts.evidence import (
    UNKNOWN_PAYLOAD,
    Evidence,
    Payload,
)
from shmlint.facts.kinds import (
    AWAITS_READ,
    CORO,
    DAG,
    FUTURE,
    INPUT,
    NEXT_REF,
    RAY_QUEUE,
    REF,
    as_coroutine,
    callable_payloads,
    coroutine_results,
    payload_kind,
    payload_kinds,
    read_payload,
)
from shmlint.facts.layout import absolute_import


def _input_payload(call: ast.Call) -> Payload:
    """What a graph whose output stage returns its input gives for ``execute(x)``: array-free
    when ``x`` is a literal (a number, a string, a display of those), else unknown."""
    if len(call.args) != 1 or call.keywords:
        return UNKNOWN_PAYLOAD
    argument = call.args[0]
    literal = all(
        isinstance(part, (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.JoinedStr))
        or isinstance(part, ast.expr_context)
        or isinstance(part, ast.FormattedValue)
        for part in ast.walk(argument)
    )
    if not literal:
        return UNKNOWN_PAYLOAD
    text = ast.unparse(argument)
    text = text if len(text) <= 30 else text[:29] + "…"
    why = f"the graph's output stage returns its input, `{text}`"
    return Payload(Evidence.ARRAY_FREE, why)


class CallMixin(AnalysisBase):
    """Evaluates calls for :class:`FunctionAnalysis` (split out to keep modules small)."""

    def call_value(self, node: ast.Call, state: State) -> Value:
        """Calls: sanitizers, sources, handles, sinks, copies, views, then unknown calls; a
        call of the module's own ``async def`` is a coroutine holding what it returns."""
        value = self.called(node, state)
        if not value.kinds:
            return value
        coroutine = self.own_coroutine(node)
        if coroutine is not None and coroutine not in self.ctx.facts.decorated_coroutines:
            return dataclasses.replace(value, kinds=as_coroutine(value.kinds))
        func = node.func
        if (isinstance(func, ast.Attribute) and func.attr in catalog.RUN_COROUTINE_METHODS) or (
            self.call_name(func, state) in catalog.RUN_COROUTINE_CALLS
        ):
            results, rest = coroutine_results(value.kinds)  # `asyncio.run(self.m())`
            return dataclasses.replace(value, kinds=results | rest)
        return value

    def called(self, node: ast.Call, state: State) -> Value:
        """What a call gives (:meth:`call_value`, but for coroutines)."""
        func = node.func
        receiver = self.value(func.value, state) if isinstance(func, ast.Attribute) else EMPTY
        args = [self.value(arg, state) for arg in node.args]
        keywords = [self.value(kw.value, state) for kw in node.keywords]
        if self.arg_values is not None:  # (an iterable whose targets split: unpack.py)
            self.arg_values[id(node)] = args
        qname = self.call_name(func, state)
        method = func.attr if isinstance(func, ast.Attribute) else None

        if self.is_sanitizer(qname, func):
            self.detach_in_place(node, state)
            return EMPTY
        if (qname == catalog.RAY_REMOTE or isinstance(func, ast.Call)) and (
            self.made_remote(node) is not node  # (phase 1: `ray.remote(Worker)` an actor)
        ):
            return self.remote_callable(node, EMPTY)  # `task = ray.remote(f)`
        if qname in catalog.CAST_CALLS and len(args) == 2 and not node.keywords:
            return self.typed(args[1], node.args[0], "the type it is cast to")
        if qname in catalog.RAY_GET:
            first = args[0] if args else EMPTY
            kind = SourceKind.CHANNEL if REF in first.kinds else SourceKind.OBJECT_STORE
            origins = first.origins if self.ctx.recording else frozenset()
            return self.source(node, kind, origins, payload=read_payload(first.kinds))
        if qname in catalog.RAY_WAIT:
            named = [v for k, v in zip(node.keywords, keywords) if k.arg == "object_refs"]
            waited = args[:1] or named
            if waited:
                return Value(kinds=waited[0].kinds, origins=waited[0].origins)
        if qname in catalog.HANDLE_CALLS:
            return EMPTY  # `ray.put(x)` is a ref, not a view of `x`
        threaded = self.threaded_read(node, qname, method, state)
        if threaded is not None:
            return threaded
        if qname in catalog.RAY_QUEUES:
            return Value(kinds=frozenset({RAY_QUEUE}))
        if method is not None and RAY_QUEUE in receiver.kinds:
            if method in catalog.QUEUE_READ_METHODS:
                return self.source(node, SourceKind.OBJECT_STORE)
            if method in catalog.QUEUE_ASYNC_READ_METHODS:
                return Value(kinds=frozenset({AWAITS_READ}))
        refs = payload_kinds(receiver.kinds)
        if method is not None and refs and not receiver.kinds & {DAG, REF, CORO, FUTURE}:
            if method in catalog.REF_FUTURE_METHODS:
                return Value(kinds=refs)  # `ref.future()`: what it resolves to is the read
            if method in catalog.FUTURE_RESULT_METHODS:
                return self.source(node, SourceKind.OBJECT_STORE, payload=read_payload(refs))
            if method in catalog.NEXT_REF_METHODS:
                return Value(kinds=frozenset({NEXT_REF}) | refs)
        if method in catalog.REMOTE_METHODS and isinstance(func, ast.Attribute):
            # `f.remote(...)`, `handle.m.remote(...)`: a ref (what reading it returns is the
            # callee's declared return type), never a view of the arguments; of a remote
            # callable held in a variable (`task.remote()`), what its callee returns.
            if self.constructs_actor(func.value):
                return EMPTY  # `Worker.remote()`: an actor's handle, no ref: nothing to read
            returned = self.callee_payload(func.value) or UNKNOWN_PAYLOAD
            carried = callable_payloads(receiver.kinds)
            if carried and not returned.known:
                return Value(kinds=carried)
            return Value(kinds=frozenset({payload_kind(returned)}))
        if method in catalog.OPTIONS_METHODS and isinstance(func, ast.Attribute):
            return self.remote_callable(func.value, receiver)  # the same, other resources
        if qname in self.ctx.options.extend_sources:
            return self.source(node, SourceKind.CONFIGURED)
        if method in catalog.BIND_METHODS and isinstance(func, ast.Attribute):
            payload = self.callee_payload(func.value, remote_only=True)
            if payload is not None:  # a compiled-graph node: its output is the method's
                kinds = frozenset({payload_kind(payload)})
                upstream = payload_kinds(args[0].kinds) if args else frozenset()
                if INPUT in kinds and upstream:
                    kinds = upstream  # an echo stage passes on its upstream node's output
                return Value(kinds=kinds)
        if method is not None:
            handle = self.handle_call(method, receiver, node)
            if handle is not None:
                return handle
            if method in catalog.CONTAINER_METHODS and isinstance(func, ast.Attribute):
                stored = union(args + keywords)
                self.container_put(func.value, stored, node, state)
                return stored.derived() if method == "setdefault" else EMPTY
            if method in catalog.CHANNEL_METHODS:
                self.ctx.report(state, union(args + keywords), "SHM103", Site.of(node))
                return EMPTY
        if qname in catalog.CONTAINER_FUNCTIONS and node.args:
            self.container_put(node.args[0], union(args[1:]), node, state)
            return EMPTY
        kinds = self.returned_kinds(func)
        result = self.library_call(
            qname, method, receiver, _non_literal(node, args, keywords), node
        )
        if self.ctx.project is not None:
            project_result = self.project_call(node, args, keywords, result, kinds)
            if project_result is not None:
                return project_result
        if kinds:
            return Value(result.labels, kinds | result.kinds, closure=result.closure)
        return result

    def handle_call(self, method: str, receiver: Value, node: ast.Call) -> Value | None:
        """Compiled-graph handles: compile → graph → execute → ref → ``.get()`` reads."""
        payloads = payload_kinds(receiver.kinds)
        if method in catalog.COMPILE_METHODS:
            return Value(kinds=frozenset({DAG}) | payloads)
        if (
            DAG in receiver.kinds
            and method in catalog.EXECUTE_METHODS | catalog.EXECUTE_ASYNC_METHODS
        ):
            if INPUT in payloads:  # an echo stage: the graph outputs what this call passes in
                payloads = (payloads - {INPUT}) | {payload_kind(_input_payload(node))}
            handle = REF if method in catalog.EXECUTE_METHODS else CORO
            return Value(kinds=frozenset({handle}) | payloads)
        if REF in receiver.kinds and method == "get":
            return self.source(node, SourceKind.CHANNEL, payload=read_payload(receiver.kinds))
        if method == "get" and receiver.origins and self.ctx.recording and not node.args:
            # Phase 1: a read if the receiver's slot holds a compiled-graph ref project-wide.
            # Joined with what a per-file run gives the call (a view of a tainted receiver),
            # so phase 1's per-file result stays exact.
            read = self.source(node, SourceKind.CHANNEL, receiver.origins, needs_ref=True)
            return read.join(receiver.derived(view=True)) if receiver.tainted else read
        return None

    def library_call(
        self,
        qname: str | None,
        method: str | None,
        receiver: Value,
        args: list[Value],
        node: ast.Call,
    ) -> Value:
        """Known copies and views, then the unknown-call rule (the result carries the inputs)."""
        passed = union(args)
        if qname is not None:
            copies = catalog.library_copies(qname, node)
            if copies is not None:
                return EMPTY if copies else passed
        if method is not None and receiver.tainted:
            if method in catalog.COPY_METHODS:
                if method == "astype" and catalog.copy_false(node):
                    return receiver.derived(view=True)
                return EMPTY
            view = receiver.derived(view=True)
            return view.join(passed) if passed.tainted else view
        return passed

    def call_name(self, func: ast.expr, state: State) -> str | None:
        """The qualified name of a call target, unless a local variable shadows its root."""
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in state.vars:
            return None
        return qualified_name(func, self.scope)

    def is_sanitizer(self, qname: str | None, func: ast.expr) -> bool:
        """The bundled helpers by name (from any module, also imported under another name:
        ``from shmlint.runtime import detach_zero_copy as detach``) and configured
        sanitizers."""
        project = self.ctx.project
        if qname is not None and qname.startswith(".") and project is not None:
            qname = absolute_import(qname, project.module, project.is_package)  # `from .utils`
        return names_helper(last_name(func), qname, self.ctx.options.extend_sanitizers)

    def detach_in_place(self, node: ast.Call, state: State) -> None:
        """``helper(out)`` detaches ``out`` in place (the helpers return their argument too)."""
        for arg in node.args[:1]:
            if isinstance(arg, ast.Name) and arg.id in state.vars:
                held = state.vars[arg.id]
                state.vars[arg.id] = held.without(held.labels)

    def threaded_read(
        self, node: ast.Call, qname: str | None, method: str | None, state: State
    ) -> Value | None:
        """``asyncio.to_thread(ray.get, ref)`` / ``loop.run_in_executor(pool, ray.get, ref)``:
        an awaitable whose result is the read (None: not such a call)."""
        if qname in catalog.TO_THREAD_CALLS:
            function, rest = (node.args[0], node.args[1:]) if node.args else (None, [])
        elif method in catalog.EXECUTOR_METHODS and len(node.args) >= 2:
            function, rest = node.args[1], node.args[2:]
        else:
            return None
        if function is None or self.call_name(function, state) not in catalog.RAY_GET:
            return None
        passed = union([self.value(arg, state) for arg in rest])
        return Value(kinds=frozenset({AWAITS_READ}) | payload_kinds(passed.kinds))


def _non_literal(node: ast.Call, args: list[Value], keywords: list[Value]) -> list[Value]:
    """The values of a call's arguments but its literals (``return_exceptions=True``): a
    literal is no ref, so joined with a ref it must not make its payload unknown."""
    values = [v for arg, v in zip(node.args, args) if not isinstance(arg, ast.Constant)]
    values += [
        v for kw, v in zip(node.keywords, keywords) if not isinstance(kw.value, ast.Constant)
    ]
    return values
