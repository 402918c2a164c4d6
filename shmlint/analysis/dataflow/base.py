"""The interface the parts of a function analysis share.

``FunctionAnalysis`` is split over mixins to keep modules small (expressions, calls, the
project's callees, statements); this base declares what each part may call on the others, so
each type-checks on its own.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from shmlint.analysis.dataflow.context import ModuleContext, Sink
from shmlint.analysis.dataflow.frames import LoopFrame
from shmlint.analysis.dataflow.values import State, Value
from shmlint.basics.names import Scope
from shmlint.basics.types import SourceKind
from shmlint.facts.evidence import UNKNOWN_PAYLOAD, Evidence, Payload

BodyNode = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
FunctionNode = ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef
Comprehension = ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp


class AnalysisBase:
    """Attributes and cross-half methods of a function analysis."""

    ctx: ModuleContext
    node: BodyNode
    scope: Scope
    class_name: str | None
    is_class_body: bool
    loops: list[LoopFrame]
    annotation_kinds: dict[str, frozenset[str]]
    params: set[str]
    self_name: str | None
    cls_name: str | None  # the first parameter of a classmethod (its class)
    project_key: str | None
    current_statement: ast.stmt | None  # the statement being analysed
    conditional: int  # depth of `and`/`or`/`if-else` operands being evaluated
    hoist_blocked: int  # depth of comprehensions (a read there cannot be hoisted)
    # While an iterable that `enumerate`/`zip` targets split is evaluated: each call's
    # argument values, by the call node's id (shmlint/analysis/dataflow/unpack.py).
    arg_values: dict[int, list[Value]] | None

    def __init__(
        self,
        ctx: ModuleContext,
        node: BodyNode,
        scope: Scope,
        class_name: str | None = None,
        outer: dict[str, Value] | None = None,
    ) -> None:
        raise NotImplementedError

    # expressions
    def value(self, node: ast.expr, state: State) -> Value:
        raise NotImplementedError

    def name_value(self, name: str, state: State) -> Value:
        raise NotImplementedError

    def source(
        self,
        node: ast.expr,
        kind: SourceKind,
        origins: frozenset[str] = frozenset(),
        needs_ref: bool = False,
        via: str = "",
        payload: Payload = UNKNOWN_PAYLOAD,
    ) -> Value:
        raise NotImplementedError

    # calls (calls.py) and the project's callees (callees.py)
    def call_value(self, node: ast.Call, state: State) -> Value:
        raise NotImplementedError

    def own_coroutine(self, node: ast.expr) -> str | None:
        raise NotImplementedError

    def awaits_own_coroutine(self, node: ast.expr) -> bool:
        raise NotImplementedError

    def callee_payload(self, target: ast.expr, *, remote_only: bool = False) -> Payload | None:
        raise NotImplementedError

    def remote_callable(self, target: ast.expr, value: Value) -> Value:
        raise NotImplementedError

    def constructs_actor(self, target: ast.expr) -> bool:
        raise NotImplementedError

    def made_remote(self, target: ast.expr) -> ast.expr:
        raise NotImplementedError

    def project_call(
        self,
        node: ast.Call,
        args: list[Value],
        keywords: list[Value],
        result: Value,
        kinds: frozenset[str],
    ) -> Value | None:
        raise NotImplementedError

    def returned_kinds(self, func: ast.expr) -> frozenset[str]:
        raise NotImplementedError

    def call_name(self, func: ast.expr, state: State) -> str | None:
        raise NotImplementedError

    def is_sanitizer(self, qname: str | None, func: ast.expr) -> bool:
        raise NotImplementedError

    def annotation_payload(self, annotation: ast.expr | None, what: str) -> Payload:
        raise NotImplementedError

    def sink_payload(self, annotation: ast.expr | None, what: str) -> Sink:
        raise NotImplementedError

    def annotation_evidence(self, annotation: ast.expr | None) -> Evidence:
        raise NotImplementedError

    # bindings and sinks
    def is_self(self, node: ast.expr) -> bool:
        raise NotImplementedError

    def own_class(self, node: ast.expr) -> str | None:
        raise NotImplementedError

    def bind(self, target: ast.expr, value: Value, state: State) -> None:
        raise NotImplementedError

    def typed(self, value: Value, annotation: ast.expr, what: str) -> Value:
        raise NotImplementedError

    def store_attribute(self, target: ast.Attribute, value: Value, state: State) -> None:
        raise NotImplementedError

    def container_put(self, receiver: ast.expr, stored: Value, node: ast.AST, state: State) -> None:
        raise NotImplementedError

    def report_return(self, value: Value, node: ast.AST, state: State) -> None:
        raise NotImplementedError

    def record_flow(self, kind: str, key: str, value: Value) -> None:
        raise NotImplementedError

    def param_slot(self, name: str) -> str:
        raise NotImplementedError

    def closure_value(self, node: FunctionNode, state: State) -> Value:
        raise NotImplementedError

    def comprehension_value(self, node: Comprehension, state: State) -> Value:
        raise NotImplementedError

    def iterated_parts(
        self, target: ast.expr, iterable: ast.expr, state: State
    ) -> tuple[Value, dict[int, list[tuple[ast.expr, Value] | None]] | None]:
        raise NotImplementedError

    def bind_split(
        self,
        target: ast.expr,
        iterable: ast.expr,
        whole: Value,
        plan: dict[int, list[tuple[ast.expr, Value] | None]],
        elements: Callable[[frozenset[str]], frozenset[str]],
        bind: Callable[[ast.expr, Value], None],
    ) -> bool:
        raise NotImplementedError

    def run(self) -> State:
        raise NotImplementedError

    # statements
    def block(self, statements: list[ast.stmt], state: State) -> State:
        raise NotImplementedError
