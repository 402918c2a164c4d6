"""The analysis of one function body (or module / class body): bindings and sinks."""

from __future__ import annotations

import ast
import dataclasses

from shmlint.analysis.dataflow.base import BodyNode
from shmlint.analysis.dataflow.callees import CalleeMixin
from shmlint.analysis.dataflow.calls import CallMixin
from shmlint.analysis.dataflow.context import ModuleContext, no_sink
from shmlint.analysis.dataflow.expressions import ExpressionMixin
from shmlint.analysis.dataflow.facts import handle_kinds
from shmlint.analysis.dataflow.frames import LoopFrame
from shmlint.analysis.dataflow.nested import NestedMixin
from shmlint.analysis.dataflow.statements import StatementMixin
from shmlint.analysis.dataflow.unpack import UnpackMixin
from shmlint.analysis.dataflow.values import EMPTY, Site, State, Value
from shmlint.basics import catalog
from shmlint.basics.astwalk import statements
from shmlint.basics.names import Scope, last_name, qualified_name
from shmlint.facts.evidence import Evidence, unquoted
from shmlint.facts.kinds import UNKNOWN, payload_kind
from shmlint.facts.summary import Flow, ReadInfo


def _project_key(
    node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope, class_name: str | None
) -> str | None:
    """``func`` or ``Class.method`` for module-level functions and methods of module-level
    classes (the ones other modules can name); None for nested functions."""
    parent = scope.parent
    if parent is None:
        return None
    if class_name is None:
        return node.name if isinstance(parent.node, ast.Module) else None
    if isinstance(parent.node, ast.ClassDef) and parent.parent is not None:
        if isinstance(parent.parent.node, ast.Module):
            return f"{class_name}.{node.name}"
    return None


def _rebinds(node: ast.FunctionDef | ast.AsyncFunctionDef, param: ast.arg) -> bool:
    """True when ``node`` binds ``param``'s name again (an assignment, a loop or comprehension
    target: a comprehension is analysed in its function): the name is not always the
    parameter. (A nested function or lambda is analysed on its own, without it.)"""
    return any(
        isinstance(sub, ast.Name) and sub.id == param.arg and not isinstance(sub.ctx, ast.Load)
        for sub in ast.walk(node)
    )


class FunctionAnalysis(
    ExpressionMixin, CallMixin, CalleeMixin, NestedMixin, StatementMixin, UnpackMixin
):
    """Taint analysis of one body; nested functions and classes get their own analysis."""

    def __init__(
        self,
        ctx: ModuleContext,
        node: BodyNode,
        scope: Scope,
        class_name: str | None = None,
        outer: dict[str, Value] | None = None,
    ) -> None:
        self.ctx = ctx
        self.node = node
        self.scope = scope
        self.class_name = class_name
        self.is_class_body = isinstance(node, ast.ClassDef)
        self.loops: list[LoopFrame] = []
        self.current_statement: ast.stmt | None = None
        self.conditional = 0
        self.hoist_blocked = 1 if isinstance(node, ast.Lambda) else 0
        self.arg_values = None
        self.self_name: str | None = None
        self.cls_name: str | None = None
        self.params: set[str] = set()
        self.annotations: dict[str, ast.expr] = {}
        self.annotation_kinds: dict[str, frozenset[str]] = {}
        self.return_annotation: ast.expr | None = None
        self.key: str | None = None
        self.project_key: str | None = None  # the key of a module function or method: slots
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            self._init_function(node)
        self.initial = State()
        for name, value in (outer or {}).items():
            if value.kinds and name not in scope.locals:
                self.initial.vars[name] = Value(kinds=value.kinds)

    def _init_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        all_args = [*positional, *args.kwonlyargs]
        all_args += [a for a in (args.vararg, args.kwarg) if a is not None]
        self.params = {a.arg for a in all_args}
        for arg in all_args:
            if arg.annotation is not None:
                self.annotations[arg.arg] = arg.annotation
        if isinstance(node, ast.Lambda):
            return
        self.return_annotation = node.returns
        decorators = {getattr(d, "id", getattr(d, "attr", None)) for d in node.decorator_list}
        if self.class_name is not None and positional and "staticmethod" not in decorators:
            if "classmethod" not in decorators:
                self.self_name = positional[0].arg
            elif not _rebinds(node, positional[0]):
                self.cls_name = positional[0].arg  # (`cls = other` or `for cls in`: not it)
        self.key = f"{self.class_name}.{node.name}" if self.class_name else node.name
        self.project_key = _project_key(node, self.scope, self.class_name)
        local = self.ctx.local_annotations.get(id(node))
        if local is None:
            local = self.ctx.local_annotations[id(node)] = [
                (sub.target.id, sub.annotation)
                for sub in statements(node.body, into_scopes=False)
                if isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name)
            ]
        for name, annotation in local:
            self.annotations.setdefault(name, annotation)
        for name, annotation in self.annotations.items():
            kinds = self.annotated_kinds(annotation)
            if kinds:
                self.annotation_kinds[name] = kinds
        project = self.ctx.project
        if project is not None and self.project_key is not None:
            for name in self.params - {self.self_name}:
                kinds = project.kinds(self.param_slot(name))
                if kinds:
                    self.annotation_kinds[name] = self.annotation_kinds.get(name, kinds) | kinds

    def param_slot(self, name: str) -> str:
        """The project slot of a parameter of this (module-level) function or method."""
        assert self.ctx.project is not None
        return self.ctx.project.slot("param", f"{self.project_key}.{name}")

    # --- entry point ----------------------------------------------------------------------------

    def run(self) -> State:
        """Analyse the body; returns the state at its end."""
        body = self.node.body
        if isinstance(body, list):
            return self.block(body, self.initial.copy())
        # a lambda: its body is returned
        state = self.initial.copy()
        self.value(body, state)
        return state

    # --- helpers shared by expressions and statements -------------------------------------------

    def is_self(self, node: ast.expr) -> bool:
        """True for the ``self`` parameter of a method."""
        return isinstance(node, ast.Name) and node.id == self.self_name is not None

    def own_class(self, node: ast.expr) -> str | None:
        """The qualified name of the (module-level) class whose method this is, when ``node``
        names it from inside: ``cls`` in a classmethod (``ray.remote(cls)``, the
        ``get_actor`` idiom), ``type(self)``, ``self.__class__``; else None."""
        project = self.ctx.project
        if project is None or self.project_key is None or self.class_name is None:
            return None
        if isinstance(node, ast.Name):
            found = node.id == self.cls_name is not None
        elif isinstance(node, ast.Attribute):
            found = node.attr == "__class__" and self.is_self(node.value)
        else:
            found = (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "type"
                and len(node.args) == 1
                and not node.keywords
                and self.is_self(node.args[0])
                and self.scope.resolve("type") == "type"
            )
        if not found:
            return None
        return f"{project.module}.{self.project_key.rpartition('.')[0]}"

    def is_local_container(self, name: str) -> bool:
        """A container bound in this function (not a parameter, global or closure variable)."""
        if self.is_class_body:
            return False
        if isinstance(self.node, ast.Module):
            return True
        return self.scope.is_local(name) and name not in self.params

    def bind(self, target: ast.expr, value: Value, state: State) -> None:
        """Assign ``value`` to ``target`` (a name, attribute, subscript, or a tuple of them)."""
        if isinstance(target, ast.Name):
            self.bind_name(target, value, state)
        elif isinstance(target, (ast.Tuple, ast.List)):
            element = value.derived()
            for elt in target.elts:
                self.bind(elt.value if isinstance(elt, ast.Starred) else elt, element, state)
        elif isinstance(target, ast.Attribute):
            self.store_attribute(target, value, state)
        elif isinstance(target, ast.Subscript):
            self.value(target.slice, state)
            self.container_put(target.value, value, target, state)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, value, state)

    def bind_name(self, target: ast.Name, value: Value, state: State) -> None:
        """Bind a variable; globals, nonlocals and class variables are sinks (SHM106)."""
        name = target.id
        if (
            self.is_class_body
            or name in self.scope.global_names
            or name in self.scope.nonlocal_names
        ):
            facts = self.ctx.facts
            if self.is_class_body:
                declared = facts.attr_annotations.get(f"{self.class_name}.{name}")
            else:
                declared = facts.module_annotations.get(name)
            sink = self.sink_payload(declared, "the variable's declared type")
            self.ctx.report(state, value, "SHM106", Site.of(target), sink)
            return
        annotation = self.annotations.get(name)
        if annotation is not None:
            value = self.typed(value, annotation, "the value's annotation")
            value = dataclasses.replace(value, kinds=value.kinds | self.annotated_kinds(annotation))
        state.vars[name] = value
        state.bound_at[name] = Site.of(target)
        if isinstance(self.node, ast.Module) and value.kinds:
            self.ctx.facts.merge_kinds(self.ctx.facts.module_kinds, name, value.kinds)

    def typed(self, value: Value, annotation: ast.expr, what: str) -> Value:
        """``value`` known to be of the type ``annotation`` names (``what``: where that is
        said, for the message): its evidence. Array-free: nothing of a read's buffer can be
        in it (the value's own type decides first, DESIGN §3)."""
        evidence = self.annotation_evidence(annotation)
        if evidence is Evidence.UNKNOWN:
            return value
        if evidence is Evidence.ARRAY_FREE:
            value = value.without(value.labels)
        own = self.annotation_payload(annotation, what)
        return dataclasses.replace(
            value, evidence=evidence, why=own.why, model_output=own.model_output
        )

    def store_attribute(self, target: ast.Attribute, value: Value, state: State) -> None:
        """``obj.attr = value``: the value outlives the iteration on the object (SHM102)."""
        self.value(target.value, state)
        sink = no_sink
        if self.is_self(target.value) and self.class_name is not None:
            key = f"{self.class_name}.{target.attr}"
            annotation = self.ctx.facts.attr_annotations.get(key)
            sink = self.sink_payload(annotation, "the attribute's declared type")
            if value.kinds:
                self.ctx.facts.merge_kinds(self.ctx.facts.attr_kinds, key, value.kinds)
            self.record_flow("attr", key, value)
        self.ctx.report(state, value, "SHM102", Site.of(target), sink)

    def record_flow(self, kind: str, key: str, value: Value) -> None:
        """Phase 1: handle kinds / slots flow into this module's slot ``kind:key``."""
        project = self.ctx.project
        if not self.ctx.recording or not (value.kinds or value.origins) or project is None:
            return
        assert project.recorder is not None
        project.recorder.flows.add(
            Flow(
                project.slot(kind, key),
                tuple(sorted(value.kinds)),
                tuple(sorted(value.origins)),
            )
        )

    def container_put(self, receiver: ast.expr, stored: Value, node: ast.AST, state: State) -> None:
        """``c.append(v)`` / ``c[k] = v``: a sink unless ``c`` is a local container, which then
        holds the value (reported at this put if the container escapes later, or at once when
        it outlives a loop whose channel read produced the value)."""
        root = receiver
        while isinstance(root, ast.Subscript):
            root = root.value
        if not stored.labels and not stored.kinds and not stored.closure:
            return
        site = Site.of(node)
        if not (isinstance(root, ast.Name) and self.is_local_container(root.id)):
            self.ctx.report(state, stored, "SHM103", site)
            return
        name = root.id
        for loop in reversed(self.loops):
            if name not in loop.assigned:
                across = stored.labels & loop.reads
                if across:
                    self.ctx.report(state, stored.without(stored.labels - across), "SHM103", site)
        old = state.vars.get(name, EMPTY)
        fresh = stored.labels - state.reported
        if old.evidence is Evidence.ARRAY_FREE:
            fresh = frozenset()  # a container declared to hold no arrays (`answers: list[str]`)
        state.vars[name] = Value(
            old.labels | fresh,
            old.kinds | stored.kinds,
            closure=old.closure or stored.closure,
            evidence=old.evidence,
            entries=old.entries | {(label, site) for label in fresh},
        )
        state.bound_at.setdefault(name, Site.of(root))

    # --- nested scopes --------------------------------------------------------------------------

    def annotated_kinds(self, annotation: ast.expr) -> frozenset[str]:
        """Handle kinds an annotation gives; ``ObjectRef[X]`` is a ref whose read gives X."""
        kinds = handle_kinds(annotation)
        parsed = unquoted(annotation)
        if (
            UNKNOWN in kinds
            and isinstance(parsed, ast.Subscript)
            and last_name(parsed.value) in catalog.PLAIN_REF_TYPES
        ):
            payload = self.annotation_payload(parsed.slice, "the ref's annotation")
            if payload.known:
                kinds = (kinds - {UNKNOWN}) | {payload_kind(payload)}
        return kinds

    def returns_serialized(self) -> bool:
        """True in a ``@ray.remote`` or ``@serve.deployment`` function, or a method of such a
        class, that the project never calls directly: Ray (a Serve replica) serialises what it
        returns into a new object and drops the worker's reference, so a returned read is not
        kept (SHM101 does not apply). Nested definitions too (a deployment built in a
        function); a function nested in a method is no method, and is called where it is."""
        owner = self.scope.parent
        if owner is None or not isinstance(self.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        method = self.class_name is not None  # (only a class body's functions have one)
        # Only decorated definitions: a class made remote by `ray.remote(Cls)` is often used
        # directly too (vLLM's driver worker), and then its returns are kept.
        decorated = owner.node if method else self.node
        if not any(
            qualified_name(d.func if isinstance(d, ast.Call) else d, owner)
            in catalog.SERIALIZING_DECORATORS
            for d in getattr(decorated, "decorator_list", ())
        ):
            return False
        where = owner.node if method else self.scope.module().node
        methods, functions = self.ctx.direct_calls(where)
        if method:
            return self.node.name not in methods  # `self.m(...)` inside the actor: direct
        return self.node.name not in functions

    def report_return(self, value: Value, node: ast.AST, state: State) -> None:
        """``return value``: the caller keeps it (SHM101); records returned handles as facts."""
        if self.key is not None and value.kinds and not self.is_class_body:
            self.ctx.facts.merge_kinds(self.ctx.facts.return_kinds, self.key, value.kinds)
        sink = self.sink_payload(self.return_annotation, "the declared return type")
        if self.project_key is not None and self.ctx.recording:
            self.record_flow("ret", self.project_key, value)
            self.record_reads(value, state)
        serialized = self.ctx.serialized.get(id(self.node))  # computed on first use
        if serialized is None:
            serialized = self.ctx.serialized[id(self.node)] = self.returns_serialized()
        if serialized:
            state.reported |= value.labels  # handed to Ray, which copies it: not kept here
            return
        self.ctx.report(state, value, "SHM101", Site.of(node), sink)

    def record_reads(self, value: Value, state: State) -> None:
        """Phase 1: the reads this function returns undetached (callers become sources). Not
        a read rated array-free, by what made its ref (as the module's own facts rate it: a
        rating the project's facts would not give, say a method of that name returning arrays
        in another module's actor, is checked in phase 2 at this return, not at its callers)."""
        project = self.ctx.project
        assert project is not None and project.recorder is not None
        for label in value.labels - state.reported - state.passed:
            if label.via or label.payload.evidence is Evidence.ARRAY_FREE:
                continue
            project.recorder.reads.add(
                ReadInfo(
                    f"{project.module}.{self.project_key}",
                    label.kind.value,
                    label.site.line,
                    tuple(sorted(label.origins)),
                    label.needs_ref,
                )
            )
