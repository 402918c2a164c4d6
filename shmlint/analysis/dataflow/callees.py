"""The project's own callees: what a call of a project function, constructor, remote callable
or coroutine gives, from the module's facts and (project-wide) the merged facts.
"""

from __future__ import annotations

import ast
import dataclasses

from shmlint.analysis.dataflow.base import AnalysisBase
from shmlint.analysis.dataflow.values import EMPTY, Value, union
from shmlint.basics import catalog
from shmlint.basics.names import qualified_name, ray_remote_target
from shmlint.facts.evidence import (
    UNKNOWN_PAYLOAD,
    Evidence,
    Payload,
)
from shmlint.facts.kinds import (
    AWAITS_READ,
    CALLABLE,
    COROUTINE,
    NEXT_REF,
    REF,
    UNKNOWN,
    holds,
    payload_kind,
    payload_kinds,
)
from shmlint.facts.records import ClassFact, FieldFact
from shmlint.facts.summary import CallFlow


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


class CalleeMixin(AnalysisBase):
    """Resolves project callees for :class:`FunctionAnalysis` (split out to keep modules
    small)."""

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

    def awaits_own_coroutine(self, node: ast.expr) -> bool:
        """``await self.m(...)`` / ``await f(...)`` of an ``async def`` of this module."""
        return self.own_coroutine(node) is not None

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
        if isinstance(made, ast.Lambda) and isinstance(made.body, ast.Constant):
            # `ray.remote(lambda: None).remote()` (a sentinel task): a literal holds no array.
            return Payload(Evidence.ARRAY_FREE, "the remote lambda returns a literal")
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

    def constructs_actor(self, target: ast.expr) -> bool:
        """``target.remote()`` makes an actor (``Worker``, ``ray.remote(Worker)``,
        ``Worker.options(...)``, a project class): its result is a handle, not a ref."""
        while (
            isinstance(target, ast.Call)
            and isinstance(target.func, ast.Attribute)
            and target.func.attr in catalog.OPTIONS_METHODS
        ):
            target = target.func.value
        project = self.ctx.project
        if project is None:
            return False
        made = self.made_remote(target)
        if not isinstance(made, (ast.Name, ast.Attribute)):
            return False
        name = project.qname(made, self.scope)
        if name is None or project.constructed_class(name) is None:
            return False
        # (A class of its own `remote` method, `Client.remote(x)`, is called, not made.)
        return made is not target or not project.is_project_callable(f"{name}.remote")

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
            if declared is not None and (
                declared.evidence is Evidence.ARRAY_FREE or (declared.fresh and not bound)
            ):
                # Declared to return no arrays, or (its body says) building what it returns
                # anew: whatever flows in, the result holds no buffer of it. (Not through
                # `self.m()`: a subclass may override the method with another body.)
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

    def returned_kinds(self, func: ast.expr) -> frozenset[str]:
        """Handle kinds a module function or a method of this class returns (facts)."""
        facts = self.ctx.facts
        if isinstance(func, ast.Name) and self.scope.resolve(func.id) is None:
            return facts.kinds(facts.return_kinds, func.id)
        if isinstance(func, ast.Attribute) and self.is_self(func.value) and self.class_name:
            return facts.kinds(facts.return_kinds, f"{self.class_name}.{func.attr}")
        return frozenset()
