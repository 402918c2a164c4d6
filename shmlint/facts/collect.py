"""The syntactic half of a module summary: imports, classes with their fields, functions.

The dataflow half (flows, calls, reads) is recorded by the analysis itself into a
:class:`Recorder` while it runs (``shmlint.analysis.dataflow``), so a module is walked once.
"""

from __future__ import annotations

import ast
import dataclasses

from shmlint.basics.astwalk import statements
from shmlint.basics.names import Scope, dotted_name, last_name
from shmlint.facts.layout import absolute_import
from shmlint.facts.summary import (
    RECORD_BASES,
    RECORD_DECORATORS,
    CallFlow,
    ClassInfo,
    FieldInfo,
    Flow,
    FunctionInfo,
    ModuleSummary,
    ReadInfo,
)


@dataclasses.dataclass(slots=True)
class Recorder:
    """Collects the dataflow facts of one module while phase 1 analyses it."""

    flows: set[Flow] = dataclasses.field(default_factory=set)
    calls: set[CallFlow] = dataclasses.field(default_factory=set)
    reads: set[ReadInfo] = dataclasses.field(default_factory=set)

    def fill(self, summary: ModuleSummary) -> ModuleSummary:
        """``summary`` with the recorded flows (sorted: summaries are compared and cached)."""
        return dataclasses.replace(
            summary,
            flows=tuple(sorted(self.flows, key=repr)),
            calls=tuple(sorted(self.calls, key=repr)),
            reads=tuple(sorted(self.reads, key=repr)),
        )


def _dotted(node: ast.expr) -> str | None:
    """A base class or decorator's dotted name; of `Generic[T]`, the head."""
    return dotted_name(node.value if isinstance(node, ast.Subscript) else node)


def qualify(dotted: str, module: str, scope: Scope, is_package: bool) -> str:
    """A dotted name spelled in ``module``'s top level, made absolute through its imports."""
    head, _, rest = dotted.partition(".")
    target = scope.imports.get(head)
    if target is not None:
        base = absolute_import(target, module, is_package)
        return f"{base}.{rest}" if rest else base
    if head in scope.locals:
        return f"{module}.{dotted}"
    return dotted  # a builtin or an unknown global


def _fields(node: ast.ClassDef) -> list[FieldInfo]:
    fields: dict[str, FieldInfo] = {}
    for statement in node.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            annotation = ast.unparse(statement.annotation)
            if "ClassVar" not in annotation:
                name = statement.target.id
                fields.setdefault(name, FieldInfo(name, annotation, statement.lineno))
    for statement in node.body:
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        positional = [*statement.args.posonlyargs, *statement.args.args]
        if not positional:
            continue
        self_name = positional[0].arg
        for sub in statements(statement.body, into_scopes=False):
            if (
                isinstance(sub, ast.AnnAssign)
                and isinstance(sub.target, ast.Attribute)
                and isinstance(sub.target.value, ast.Name)
                and sub.target.value.id == self_name
            ):
                name = sub.target.attr
                fields.setdefault(name, FieldInfo(name, ast.unparse(sub.annotation), sub.lineno))
    return list(fields.values())


def _is_record(node: ast.ClassDef) -> bool:
    for base in node.bases:
        if last_name(base.value if isinstance(base, ast.Subscript) else base) in RECORD_BASES:
            return True
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if _dotted(target) in RECORD_DECORATORS or last_name(target) in RECORD_DECORATORS:
            return True
    return False


def _function(
    node: ast.FunctionDef | ast.AsyncFunctionDef, name: str, in_class: bool
) -> FunctionInfo:
    args = node.args
    params = tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
    decorators = {last_name(d) for d in node.decorator_list}
    return FunctionInfo(name, node.lineno, params, in_class and "staticmethod" not in decorators)


def summarize_syntax(
    tree: ast.Module,
    module: str,
    path: str,
    is_package: bool,
    scope: Scope,
) -> ModuleSummary:
    """The syntactic summary of a parsed module (flows come from a :class:`Recorder`)."""
    imports = tuple(
        sorted(
            (local, absolute_import(target, module, is_package))
            for local, target in scope.imports.items()
        )
    )
    classes: list[ClassInfo] = []
    functions: list[FunctionInfo] = []
    # Module-level definitions, also under `if`/`try` (version guards, TYPE_CHECKING).
    for node in statements(tree.body, into_scopes=False):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append(_function(node, f"{module}.{node.name}", False))
        elif isinstance(node, ast.ClassDef):
            qualified = f"{module}.{node.name}"
            bases = tuple(
                qualify(dotted, module, scope, is_package)
                for dotted in (_dotted(b) for b in node.bases)
                if dotted is not None
            )
            classes.append(
                ClassInfo(qualified, node.lineno, bases, _is_record(node), tuple(_fields(node)))
            )
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    functions.append(_function(item, f"{qualified}.{item.name}", True))
    return ModuleSummary(
        module=module,
        path=path,
        is_package=is_package,
        imports=imports,
        classes=tuple(classes),
        functions=tuple(functions),
    )
