"""Expression evaluation: what value an expression has, which reads it makes, which sinks it hits.

Taint flows through attribute access, subscripts and slices, views and unknown calls; copies,
arithmetic and known-clean builtins end it (DESIGN §1, §3; the tables are in ``catalog``).
Calls are evaluated in :mod:`calls`, the project's own callees in :mod:`callees`; what an
annotation says is rated here.
"""

from __future__ import annotations

import ast
import dataclasses

from shmlint.analysis.dataflow.base import AnalysisBase
from shmlint.analysis.dataflow.context import Sink, no_sink
from shmlint.analysis.dataflow.values import EMPTY, Site, State, Value, union
from shmlint.basics import catalog
from shmlint.basics.names import qualified_name
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
    CORO,
    DAG,
    FUTURE,
    NEXT_REF,
    REF,
    coroutine_results,
    element_kinds,
    payload_kinds,
    read_payload,
)
from shmlint.facts.model import MODEL_OUTPUT_FIELD

# Simple statements the in-place fix can split around a read.
_HOISTABLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.Expr)


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
        if node.attr in catalog.CLEAN_ATTRIBUTES:
            # Plain data of what the base holds; an attribute of `self` so named still holds
            # what the class stores there (`self.schema = graph.execute(x)`).
            base = EMPTY
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
        if (
            isinstance(node.value, ast.Call)
            and self.call_name(node.value.func, state) in catalog.WAIT_CALLS
        ):
            return inner.derived()  # `done, pending = await asyncio.wait(tasks)`: the tasks
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
        """Arithmetic copies; ``+`` / ``*`` on list or tuple displays keep the elements. A
        chain (``"a" + "b" + ...``, nested to the left) is evaluated in a loop, not by
        recursion: generated code has chains of hundreds of terms."""
        chain = [node]
        while isinstance(chain[-1].left, ast.BinOp):
            chain.append(chain[-1].left)
        left = self.value(chain[-1].left, state)
        displays = (ast.List, ast.Tuple, ast.ListComp)
        for link in reversed(chain):
            right = self.value(link.right, state)
            if isinstance(link.op, (ast.Add, ast.Mult)) and (
                isinstance(link.left, displays) or isinstance(link.right, displays)
            ):
                left = union([left, right])
            else:
                left = EMPTY
        return left

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
