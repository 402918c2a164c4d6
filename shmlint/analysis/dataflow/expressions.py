"""Expression evaluation: what value an expression has, which reads it makes, which sinks it hits.

Taint flows through attribute access, subscripts and slices, views and unknown calls; copies,
arithmetic and known-clean builtins end it (DESIGN §1, §3; the tables are in ``catalog``).
"""

from __future__ import annotations

import ast
import dataclasses

from shmlint.analysis.dataflow.base import AnalysisBase
from shmlint.analysis.dataflow.context import Sink, no_sink
from shmlint.analysis.dataflow.values import EMPTY, Site, State, Value, union
from shmlint.basics import catalog
from shmlint.basics.names import last_name, qualified_name, ray_remote_target
from shmlint.basics.types import SourceKind
from shmlint.facts.evidence import (
    UNKNOWN_PAYLOAD,
    Evidence,
    Payload,
    describe,
    evidence,
    leaves,
)
from shmlint.facts.kinds import (
    AWAITS_READ,
    CALLABLE,
    CORO,
    COROUTINE,
    DAG,
    FUTURE,
    INPUT,
    NEXT_REF,
    RAY_QUEUE,
    REF,
    UNKNOWN,
    as_coroutine,
    callable_payloads,
    coroutine_results,
    element_kinds,
    holds,
    payload_kind,
    payload_kinds,
    read_payload,
)
from shmlint.facts.model import MODEL_OUTPUT_FIELD
from shmlint.facts.records import ClassFact, FieldFact
from shmlint.facts.summary import CallFlow

# Simple statements the in-place fix can split around a read.
_HOISTABLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.Expr)


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


def _is_false(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value in (False, None)


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return None


class ExpressionMixin(AnalysisBase):
    """Evaluates expressions for :class:`FunctionAnalysis` (split out to keep modules small)."""

    def value(self, node: ast.expr, state: State) -> Value:
        """The abstract value of ``node`` on the path ``state`` (side effects applied)."""
        if isinstance(node, ast.Name):
            return self.name_value(node.id, state)
        if isinstance(node, ast.Attribute):
            return self.attribute_value(node, state)
        if isinstance(node, ast.Subscript):
            base = self.value(node.value, state)
            self.value(node.slice, state)
            element = base.derived(view=True)
            return dataclasses.replace(element, kinds=element_kinds(base.kinds))
        if isinstance(node, ast.Call):
            return self.call_value(node, state)
        if isinstance(node, ast.Constant):
            return EMPTY
        if isinstance(node, ast.Compare):  # plain data (as below), its parts in order
            self.value(node.left, state)
            for comparator in node.comparators:
                self.value(comparator, state)
            return EMPTY
        if isinstance(node, ast.Await):
            return self.await_value(node, state)
        if isinstance(node, ast.NamedExpr):
            result = self.value(node.value, state)
            self.bind(node.target, result, state)
            return result
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return union([self.value(element, state) for element in node.elts])
        if isinstance(node, ast.Dict):
            parts = [self.value(v, state) for v in node.values]
            parts += [self.value(k, state) for k in node.keys if k is not None]
            return union(parts)
        if isinstance(node, ast.Starred):
            return self.value(node.value, state).derived()
        if isinstance(node, ast.BoolOp):
            first = self.value(node.values[0], state)
            self.conditional += 1
            rest = [self.value(v, state) for v in node.values[1:]]
            self.conditional -= 1
            return union([first, *rest])
        if isinstance(node, ast.IfExp):
            self.value(node.test, state)
            self.conditional += 1
            either = self.value(node.body, state).join(self.value(node.orelse, state))
            self.conditional -= 1
            return either
        if isinstance(node, ast.BinOp):
            return self.binop_value(node, state)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return self.comprehension_value(node, state)
        if isinstance(node, ast.Lambda):
            return self.closure_value(node, state)
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            if node.value is not None:
                sent = self.value(node.value, state)
                self.ctx.report(state, sent, "SHM105", Site.of(node))
            return EMPTY
        # Constants, comparisons, f-strings, unary operators: plain data, but evaluate the parts
        # for their side effects (a walrus, a sink inside).
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.value(child, state)
        return EMPTY

    def name_value(self, name: str, state: State) -> Value:
        """A variable's value; module-level handles and ``ref-name-pattern`` names add kinds."""
        known = state.vars.get(name)
        if known is not None:
            return known
        kinds: frozenset[str] = self.annotation_kinds.get(name, frozenset())
        if not self.scope.is_local(name) and self.scope.resolve(name) is None:
            kinds |= self.ctx.facts.kinds(self.ctx.facts.module_kinds, name)
        if self.ctx.is_ref_name(name):
            kinds |= {REF}
        origins: frozenset[str] = frozenset()
        if (
            self.ctx.recording
            and self.project_key is not None
            and name in self.params
            and name != self.self_name
        ):
            origins = frozenset({self.param_slot(name)})
        return Value(kinds=kinds, origins=origins) if kinds or origins else EMPTY

    def attribute_value(self, node: ast.Attribute, state: State) -> Value:
        """``base.attr``: a view of the base; ``self.attr`` takes the class's facts."""
        base = self.value(node.value, state)
        if node.attr in catalog.CLEAN_ATTRIBUTES:
            return EMPTY
        kinds: frozenset[str] = frozenset()
        origins: frozenset[str] = frozenset()
        if self.is_self(node.value) and self.class_name is not None:
            key = f"{self.class_name}.{node.attr}"
            kinds = self.ctx.facts.kinds(self.ctx.facts.attr_kinds, key)
            project = self.ctx.project
            if project is not None and self.project_key is not None:
                kinds |= project.attr_kinds(self.class_name, node.attr)
                if self.ctx.recording:
                    origins = frozenset({project.slot("attr", key)})
        if self.ctx.is_ref_name(node.attr):
            kinds |= {REF}
        if not base.labels and not base.closure:
            return Value(kinds=kinds, origins=origins) if kinds or origins else EMPTY
        return Value(
            base.labels, kinds, closure=base.closure, entries=base.entries, origins=origins
        )

    def source(
        self,
        node: ast.expr,
        kind: SourceKind,
        origins: frozenset[str] = frozenset(),
        needs_ref: bool = False,
        via: str = "",
        payload: Payload = UNKNOWN_PAYLOAD,
    ) -> Value:
        """The value of a read: tainted with the read's own label; ``payload``: what the read
        returns, as far as its producer says."""
        label = self.ctx.label(node, kind, self.placement(), origins, needs_ref, via, payload)
        # A phase-1-only read (`needs_ref`) must not change how real reads are judged.
        if kind is SourceKind.CHANNEL and not needs_ref:
            for loop in self.loops:
                loop.reads.add(label)
        return Value(frozenset({label}), direct=True)

    def awaits_own_coroutine(self, node: ast.expr) -> bool:
        """``await self.m(...)`` / ``await f(...)`` of an ``async def`` of this module."""
        return self.own_coroutine(node) is not None

    def own_coroutine(self, node: ast.expr) -> str | None:
        """The key of the module's ``async def`` that ``node`` calls (``self.m(...)``, or
        ``f(...)`` of a module-level one no nearer scope rebinds), or None."""
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        if isinstance(func, ast.Name) and self.scope.binder(func.id) is self.scope.module():
            key = func.id
        elif isinstance(func, ast.Attribute) and self.is_self(func.value) and self.class_name:
            key = f"{self.class_name}.{func.attr}"
        else:
            return None
        return key if key in self.ctx.facts.coroutines else None

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

    def callee_payload(self, target: ast.expr, *, remote_only: bool = False) -> Payload | None:
        """What the remote callable ``target`` returns (``f`` of ``f.remote()``, ``h.m`` of
        ``h.m.remote()``, through ``.options(...)``): a project function by its name, else an
        actor method by its last name. None (with ``remote_only``) when it is neither a remote
        function nor an actor method of the project."""
        while (
            isinstance(target, ast.Call)
            and isinstance(target.func, ast.Attribute)
            and target.func.attr in catalog.OPTIONS_METHODS
        ):
            target = target.func.value
        made = self.made_remote(target)
        project = self.ctx.project
        if project is None:
            return None if remote_only else UNKNOWN_PAYLOAD
        name = (
            project.qname(made, self.scope) if isinstance(made, (ast.Name, ast.Attribute)) else None
        )
        if name is not None:
            found = project.function_payload(name)
            if found is not None and (not remote_only or project.is_remote(name)):
                return found
        # (`ray.remote` takes a function or a class, never an actor's method: no fallback.)
        if isinstance(made, ast.Attribute) and made is target:
            found = project.actor_method_payload(made.attr)
            if found is not None:
                return found
        return None if remote_only else UNKNOWN_PAYLOAD

    def remote_callable(self, target: ast.expr, value: Value) -> Value:
        """The remote callable ``target`` (``f``, ``ray.remote(f)``, ``h.m``; ``value``: what
        it holds, when it is a variable holding one) as a value: the refs it makes read what
        its callee returns. One whose callee says nothing holds nothing (a value without the
        kind is one of unknown refs where it joins one with it: values.py)."""
        if holds(value.kinds, CALLABLE):  # (a variable holding one: what it holds)
            return Value(kinds=frozenset(k for k in value.kinds if k.startswith(CALLABLE)))
        kind = payload_kind(self.callee_payload(target) or UNKNOWN_PAYLOAD)
        return EMPTY if kind == UNKNOWN else Value(kinds=frozenset({CALLABLE + kind}))

    def made_remote(self, target: ast.expr) -> ast.expr:
        """``f`` of ``ray.remote(f)`` and ``ray.remote(num_gpus=1)(f)`` (made remote where it
        is called: ``ray.remote(...)(f).remote()``); else ``target``."""
        made = None
        if isinstance(target, ast.Call) and not target.keywords:
            made = ray_remote_target(target, lambda maker: qualified_name(maker, self.scope))
        if made is None:
            return target
        project = self.ctx.project
        if self.ctx.recording and project is not None:
            name = None
            if isinstance(made, (ast.Name, ast.Attribute)):
                name = project.qname(made, self.scope)
            if name is None:
                name = self.own_class(made)
            if name is not None and project.recorder is not None:
                project.recorder.actors.add(name)  # (a class among them is an actor class)
        return made

    def placement(self) -> str:
        """Where a read being evaluated now sits (see ``Label.placement``)."""
        if self.hoist_blocked or not isinstance(self.current_statement, _HOISTABLE):
            return "none"
        return "conditional" if self.conditional else "statement"

    def await_value(self, node: ast.Await, state: State) -> Value:
        """``await`` of ``execute_async()`` gives a future; awaiting the future reads. The
        module's own coroutines give what they return (a ref stays a ref), also through
        ``asyncio.create_task`` / ``gather``: joined with what the rest of the value gives."""
        inner = self.value(node.value, state)
        results, rest = coroutine_results(inner.kinds)
        if self.awaits_own_coroutine(node.value):
            return dataclasses.replace(inner, kinds=results | rest)
        if results:
            inner = dataclasses.replace(inner, kinds=rest)
            if not rest:
                return dataclasses.replace(inner.derived(), kinds=results)
            awaited = self.awaited(node, inner)
            return dataclasses.replace(awaited, kinds=awaited.kinds | results)
        return self.awaited(node, inner)

    def awaited(self, node: ast.Await, inner: Value) -> Value:
        """What awaiting a value of Ray's gives: a read, a future, a ref..."""
        payloads = payload_kinds(inner.kinds)
        if FUTURE in inner.kinds:
            return self.source(node, SourceKind.CHANNEL, payload=read_payload(inner.kinds))
        if CORO in inner.kinds:
            return Value(kinds=frozenset({FUTURE}) | payloads)
        if NEXT_REF in inner.kinds:
            return Value(kinds=payloads)  # `await gen.__anext__()`: the next ref
        if AWAITS_READ in inner.kinds or (payloads and not inner.kinds & {DAG, REF}):
            # An ObjectRef (from `.remote()`, an `ObjectRef` annotation, a stored ref), a
            # gather of refs, a wrapped `ref.future()`, a threaded `ray.get`: a read.
            return self.source(node, SourceKind.OBJECT_STORE, payload=read_payload(inner.kinds))
        return inner.derived()

    def binop_value(self, node: ast.BinOp, state: State) -> Value:
        """Arithmetic copies; ``+`` / ``*`` on list or tuple displays keep the elements."""
        left = self.value(node.left, state)
        right = self.value(node.right, state)
        displays = (ast.List, ast.Tuple, ast.ListComp)
        if isinstance(node.op, (ast.Add, ast.Mult)) and (
            isinstance(node.left, displays) or isinstance(node.right, displays)
        ):
            return union([left, right])
        return EMPTY

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
        result = self.library_call(qname, method, receiver, args + keywords, node)
        if self.ctx.project is not None:
            project_result = self.project_call(node, args, keywords, result, kinds)
            if project_result is not None:
                return project_result
        if kinds:
            return Value(result.labels, kinds | result.kinds, closure=result.closure)
        return result

    def project_call(
        self,
        node: ast.Call,
        args: list[Value],
        keywords: list[Value],
        result: Value,
        kinds: frozenset[str],
    ) -> Value | None:
        """A call of a project function or class: record what flows into its parameters
        (phase 1), and give the result what the function returns project-wide (phase 2)."""
        project = self.ctx.project
        assert project is not None
        func = node.func
        bound = isinstance(func, ast.Attribute) and self.is_self(func.value)
        if bound and isinstance(func, ast.Attribute) and self.class_name is not None:
            if self.project_key is None:
                return None
            callee: str | None = f"{project.module}.{self.class_name}.{func.attr}"
        elif isinstance(func, (ast.Name, ast.Attribute)):
            callee = project.qname(func, self.scope)
        else:
            callee = None
        if callee is None:
            return None
        # Each fact is asked for only where its answer can change the result: a question
        # asked is a dependency of the file (phase 2 re-analyses it when the project's
        # answer differs), and most calls carry nothing the answer could change.
        # (Of ``result``, only its labels, kinds, closure, evidence and why reach the value
        # returned below; origins and entries are replaced.)
        if result.labels or result.evidence is not Evidence.UNKNOWN or result.why:
            declared = project.function_payload(callee)
            if declared is not None and declared.evidence is Evidence.ARRAY_FREE:
                # Declared to return no arrays: whatever flows in, the result holds no buffer.
                result = Value(kinds=result.kinds, closure=result.closure)
        if _carries(result) or any(map(_carries, args)) or any(map(_carries, keywords)):
            constructed = project.constructed_class(callee)
            if constructed is not None:
                result = self.constructed(node, args, keywords, constructed, result)
        # A library call (`MultiOutputNode([...])`) passes on what its refs will read;
        # `enumerate(refs)`, `zip(...)`, `list(...)` pass on the refs themselves; a task or
        # gather of the module's coroutines (`asyncio.create_task(self.m())`) what they give.
        passed_on = payload_kinds(result.kinds) | (result.kinds & {AWAITS_READ, NEXT_REF})
        passed_on |= {kind for kind in result.kinds if kind.startswith(COROUTINE)}
        if callee in catalog.REF_PASSING_BUILTINS:
            passed_on |= result.kinds & {REF}
        if not passed_on <= kinds and not project.is_project_callable(callee):
            kinds |= passed_on
        if self.ctx.recording:
            recorder = project.recorder
            assert recorder is not None
            passed = [(str(i), v) for i, v in enumerate(args)]
            passed += [(kw.arg, v) for kw, v in zip(node.keywords, keywords) if kw.arg]
            for arg, value in passed:
                if value.kinds or value.origins:
                    recorder.calls.add(
                        CallFlow(
                            callee,
                            arg,
                            tuple(sorted(value.kinds)),
                            tuple(sorted(value.origins)),
                            bound,
                        )
                    )
            # A project callee's result holds what it returns (its `ret:` slot), not the
            # handles passed to it (a wrapper built from refs is not a ref). Phase 2 adds
            # the handles that slot holds project-wide: asked here (the module's own facts
            # know none), so the plan re-checks this file when the project knows some.
            project.kinds(f"ret:{callee}")
            origins = frozenset({f"ret:{callee}"})
            return Value(
                result.labels,
                kinds,
                closure=result.closure,
                evidence=result.evidence,
                origins=origins,
                why=result.why,
            )
        kinds |= project.kinds(f"ret:{callee}")
        chain = project.returned_read(callee)
        if chain is not None:
            # What the functions it passes through are declared to return rates the read, as
            # a remote function's declared return type rates its ref's read: the outermost
            # declaration that says something (a value's own annotation still comes first).
            payload = UNKNOWN_PAYLOAD
            for name in (callee, *chain.via):
                declared = project.function_payload(name)
                if declared is not None and declared.known:
                    payload = declared
                    break
            via = " → ".join(f"{name}()" for name in (callee, *chain.via))
            label_via = f"{via} (its read at {chain.path}:{chain.line})"
            read = self.source(node, chain.kind, via=label_via, payload=payload)
            return dataclasses.replace(read, kinds=kinds) if kinds else read
        return Value(
            result.labels, kinds, closure=result.closure, evidence=result.evidence, why=result.why
        )

    def constructed(
        self,
        node: ast.Call,
        args: list[Value],
        keywords: list[Value],
        fact: ClassFact,
        result: Value,
    ) -> Value:
        """A project class built from values: each value is rated by the field it enters (by
        keyword, or by position for records): an array-free field holds none of a read's
        buffer, an array field is array evidence for what enters it."""
        if not fact.record:
            return result  # an `__init__`'s parameters are not its fields
        by_name = {f.name: f for f in fact.fields}
        placed: list[tuple[Value, FieldFact | None]] = []
        # Positions are fields only for NamedTuples (a dataclass may have `init=False` or
        # keyword-only fields; pydantic models take keywords).
        named_tuple = any(base.rpartition(".")[2] == "NamedTuple" for base in fact.bases)
        positional = named_tuple and not any(isinstance(a, ast.Starred) for a in node.args)
        for index, value in enumerate(args):
            field = fact.fields[index] if positional and index < len(fact.fields) else None
            placed.append((value, field))
        for keyword, value in zip(node.keywords, keywords):
            placed.append((value, by_name.get(keyword.arg) if keyword.arg else None))
        parts = []
        owner = fact.name.rpartition(".")[2]
        for value, field in placed:
            part = value.derived(view=True)
            if field is not None and field.evidence is Evidence.ARRAY_FREE:
                part = Value(kinds=part.kinds, origins=part.origins)
            elif field is not None and field.evidence is Evidence.ARRAYS and part.labels:
                why = f"field `{owner}.{field.name}` holds arrays"
                part = dataclasses.replace(part, evidence=Evidence.ARRAYS, why=why)
            parts.append(part)
        built = union(parts)
        return dataclasses.replace(built, closure=built.closure or result.closure)

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
            if qname in catalog.COPY_CALLS:
                if qname == "numpy.array" and _is_false(_keyword(node, "copy")):
                    return passed
                return EMPTY
            if qname in catalog.CLEAN_BUILTINS:
                return EMPTY
            head, _, last = qname.rpartition(".")
            if head == "numpy" or head.startswith("numpy."):
                return passed if last in catalog.NUMPY_VIEW_FUNCTIONS else EMPTY
            if head == "torch":
                return passed if last in catalog.TORCH_VIEW_FUNCTIONS else EMPTY
        if method is not None and receiver.tainted:
            if method in catalog.COPY_METHODS:
                if method == "astype" and _is_false(_keyword(node, "copy")):
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
        """The bundled helpers by name (from any module) and configured sanitizers."""
        name = last_name(func)
        sanitizers = self.ctx.options.extend_sanitizers
        if name in catalog.HELPER_NAMES or name in sanitizers:
            return True
        return qname is not None and qname in sanitizers

    def detach_in_place(self, node: ast.Call, state: State) -> None:
        """``helper(out)`` detaches ``out`` in place (the helpers return their argument too)."""
        for arg in node.args[:1]:
            if isinstance(arg, ast.Name) and arg.id in state.vars:
                held = state.vars[arg.id]
                state.vars[arg.id] = held.without(held.labels)

    def returned_kinds(self, func: ast.expr) -> frozenset[str]:
        """Handle kinds a module function or a method of this class returns (facts)."""
        facts = self.ctx.facts
        if isinstance(func, ast.Name) and self.scope.resolve(func.id) is None:
            return facts.kinds(facts.return_kinds, func.id)
        if isinstance(func, ast.Attribute) and self.is_self(func.value) and self.class_name:
            return facts.kinds(facts.return_kinds, f"{self.class_name}.{func.attr}")
        return frozenset()

    def annotation_payload(self, annotation: ast.expr | None, what: str) -> Payload:
        """What an annotation says, with the reason a message can show (``what`` names the
        annotation: "the function's declared return type")."""
        found = self.annotation_evidence(annotation)
        if annotation is None or found is Evidence.UNKNOWN:
            return UNKNOWN_PAYLOAD
        fields = self.array_fields(annotation)
        why = describe(what, annotation, found, fields)
        return Payload(found, why, MODEL_OUTPUT_FIELD in fields)

    def sink_payload(self, annotation: ast.expr | None, what: str) -> Sink:
        """What a sink's declared type says (:meth:`annotation_payload`), for
        ``ModuleContext.report``: worked out now, its questions counted (phase 1) only once
        a read reaches the sink and the finding's confidence uses it — until then the merge
        only follows the names they look up (``ProjectView.names_only``)."""
        project = self.ctx.project
        if annotation is None:
            return no_sink
        if project is None:
            payload = self.annotation_payload(annotation, what)
            return lambda: payload
        with project.names_only() as aside:
            payload = self.annotation_payload(annotation, what)

        def used() -> Payload:
            project.asked(aside)
            return payload

        return used

    def array_fields(self, annotation: ast.expr) -> list[str]:
        """The array-bearing fields of the project classes an annotation names."""
        project = self.ctx.project
        if project is None:
            return []
        names: list[str] = []
        for leaf in leaves(annotation):
            fact = project.class_fact(leaf, self.scope)
            if fact is not None:
                names += [f.name for f in fact.fields if f.evidence is Evidence.ARRAYS]
        return names

    def annotation_evidence(self, annotation: ast.expr | None) -> Evidence:
        """Payload evidence from an annotation: type names by qualified name, project classes
        by their fields."""
        project = self.ctx.project
        scope = self.scope

        def qualify(leaf: ast.expr) -> str | None:
            root = leaf
            while isinstance(root, ast.Attribute):
                root = root.value
            if not (isinstance(root, ast.Name) and scope.binds(root.id)):
                return None  # a builtin, or a name the module never imports: by spelling
            if project is None:
                return qualified_name(leaf, scope)
            return project.absolute_name(leaf, scope)

        if project is None:
            return evidence(annotation, self.ctx.tables, None, qualify)
        return evidence(
            annotation, self.ctx.tables, lambda leaf: project.class_evidence(leaf, scope), qualify
        )


def _carries(value: Value) -> bool:
    """The value holds something a project call's result is built from (a read, a handle,
    array evidence); its origins and entries are not."""
    return bool(
        value.labels
        or value.kinds
        or value.closure
        or value.evidence is not Evidence.UNKNOWN
        or value.why
    )
