"""The interface the expression and statement halves of a function analysis share.

``FunctionAnalysis`` is split over two mixins to keep modules small; this base declares what
each half may call on the other, so both type-check on their own.
"""

from __future__ import annotations

import ast

from shmlint.analysis.dataflow.context import ModuleContext, Sink
from shmlint.analysis.dataflow.frames import LoopFrame
from shmlint.analysis.dataflow.values import State, Value
from shmlint.basics.names import Scope
from shmlint.facts.evidence import Evidence, Payload

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

    def run(self) -> State:
        raise NotImplementedError

    # statements
    def block(self, statements: list[ast.stmt], state: State) -> State:
        raise NotImplementedError
