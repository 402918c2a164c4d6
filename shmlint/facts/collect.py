"""The syntactic half of a module summary: imports, classes with their fields, functions.

The dataflow half (flows, calls, reads) is recorded by the analysis itself into a
:class:`Recorder` while it runs (``shmlint.analysis.dataflow``), so a module is walked once.
"""

from __future__ import annotations

import ast
import collections
import dataclasses

from shmlint.basics import catalog
from shmlint.basics.astwalk import statements
from shmlint.basics.names import Scope, dotted_name, last_name, ray_remote_target
from shmlint.facts.evidence import FRESH_RESULT, fresh_returns
from shmlint.facts.fresh import fresh_result
from shmlint.facts.layout import absolute_import
from shmlint.facts.returned import may_be_fresh, returns_of
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
    actors: set[str] = dataclasses.field(default_factory=set)

    def fill(self, summary: ModuleSummary) -> ModuleSummary:
        """``summary`` with the recorded flows (sorted: summaries are compared and cached)."""
        return dataclasses.replace(
            summary,
            flows=tuple(sorted(self.flows, key=repr)),
            calls=tuple(sorted(self.calls, key=repr)),
            reads=tuple(sorted(self.reads, key=repr)),
            actors=tuple(sorted(self.actors | set(summary.actors))),
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


class _Namer:
    """Qualified names of dotted expressions at a module's top level."""

    def __init__(self, module: str, scope: Scope, is_package: bool) -> None:
        self.module, self.scope, self.is_package = module, scope, is_package

    def __call__(self, node: ast.expr) -> str | None:
        dotted = _dotted(node)
        return None if dotted is None else qualify(dotted, self.module, self.scope, self.is_package)

    def is_remote(self, decorator: ast.expr) -> bool:
        """``@ray.remote`` / ``@ray.remote(...)``."""
        maker = decorator.func if isinstance(decorator, ast.Call) else decorator
        return self(maker) == catalog.RAY_REMOTE


def _function(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    name: str,
    in_class: bool,
    names: _Namer,
    remote: bool = False,
) -> FunctionInfo:
    args = node.args
    params = tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
    decorators = {last_name(d) for d in node.decorator_list}
    returns, inferred = returns_of(node, names)
    fresh = may_be_fresh(node, params, in_class, decorators, returns)
    if fresh and fresh_result(node, names, names.scope.imports):
        returns = FRESH_RESULT + returns
    remote = remote or any(names.is_remote(d) for d in node.decorator_list)
    method = in_class and "staticmethod" not in decorators
    return FunctionInfo(name, node.lineno, params, method, returns, inferred, remote)


def _made_remote(tree: ast.Module, names: _Namer) -> set[str]:
    """Module-level names made remote by assignment: ``X = ray.remote(Y)`` and
    ``ray.remote(num_gpus=1)(Y)`` make ``Y`` an actor class or a remote function."""
    made: set[str] = set()
    for node in statements(tree.body, into_scopes=False):
        value = node.value if isinstance(node, (ast.Assign, ast.Expr)) else None
        target = None if value is None else ray_remote_target(value, names)
        if isinstance(target, ast.Name):
            made.add(target.id)
    return made


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
    names = _Namer(module, scope, is_package)
    made_remote = _made_remote(tree, names)
    # Module-level definitions, also under `if`/`try` (version guards, TYPE_CHECKING).
    for node in statements(tree.body, into_scopes=False):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            remote = node.name in made_remote
            functions.append(_function(node, f"{module}.{node.name}", False, names, remote))
        elif isinstance(node, ast.ClassDef):
            qualified = f"{module}.{node.name}"
            bases = tuple(
                qualify(dotted, module, scope, is_package)
                for dotted in (_dotted(b) for b in node.bases)
                if dotted is not None
            )
            actor = node.name in made_remote or any(names.is_remote(d) for d in node.decorator_list)
            fields = tuple(_fields(node))
            classes.append(
                ClassInfo(qualified, node.lineno, bases, _is_record(node), fields, actor)
            )
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    name = f"{qualified}.{item.name}"
                    functions.append(_function(item, name, True, names, actor))
    # A name defined twice (`if accel: def pick(x): ...`) may run either body: fresh only if
    # both are, which the merge (it rates one of them) cannot tell.
    defined = collections.Counter(f.name for f in functions)
    functions = [
        dataclasses.replace(f, returns=fresh_returns(f.returns)[1]) if defined[f.name] > 1 else f
        for f in functions
    ]
    # Imported names made remote here (`Actor = ray.remote(num_gpus=1)(Worker)`).
    actors = {
        qualify(name, module, scope, is_package) for name in made_remote & scope.imports.keys()
    }
    return ModuleSummary(
        module=module,
        path=path,
        is_package=is_package,
        imports=imports,
        classes=tuple(classes),
        functions=tuple(functions),
        actors=tuple(sorted(actors)),
    )
