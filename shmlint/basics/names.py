"""Import aliases and scopes on the stdlib ``ast``: which name means ``ray.get``.

Qualified-name resolution needs only a scope's import statements and its other bindings, not
libcst's scope machinery: ``import ray as r`` makes ``r.get`` mean ``ray.get``, ``from ray import
get as g`` makes ``g`` mean it, and a ``def get`` (or any other binding) in a scope that the
lookup reaches first means a local object, never Ray's.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable, Iterator

from shmlint.basics import catalog
from shmlint.basics.astwalk import block_fields

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
# Where expressions may bind (`:=`): True anywhere (the text is unknown), else the sorted
# numbers of the lines that spell `:=` (none: nothing binds).
Walrus = bool | tuple[int, ...]


def walrus_lines(text: str | None) -> Walrus:
    """The lines of ``text`` that spell ``:=`` (a walrus lies on one: the operator is one
    token); True when the text is unknown. A ``:=`` in a string only costs a closer look."""
    if text is None:
        return True
    lines: list[int] = []
    line, position = 1, 0
    start = text.find(":=")
    while start != -1:
        line += text.count("\n", position, start)
        position = start
        if not lines or lines[-1] != line:
            lines.append(line)
        start = text.find(":=", start + 2)
    return tuple(lines)


def _may_bind(node: ast.AST, walrus: Walrus) -> bool:
    """True when ``node``'s lines may hold a walrus (see :data:`Walrus`)."""
    if isinstance(walrus, bool):
        return walrus
    if not walrus:
        return False
    first = getattr(node, "lineno", None)
    if first is None:
        return True
    last = getattr(node, "end_lineno", None) or first
    index = bisect.bisect_left(walrus, first)
    return index < len(walrus) and walrus[index] <= last


ScopeNode = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef


class Scope:
    """The names one module, class or function body binds, and how its lookups resolve."""

    __slots__ = (
        "node",
        "parent",
        "imports",
        "locals",
        "global_names",
        "nonlocal_names",
        "walrus",
        "none_bound",
    )

    def __init__(self, node: ScopeNode, parent: Scope | None, walrus: Walrus = True) -> None:
        self.node = node
        self.parent = parent
        # Where expressions may bind (`:=`); inherited, so one text search serves a module.
        self.walrus: Walrus = parent.walrus if parent is not None else walrus
        self.imports: dict[str, str] = {}
        # Names bound only to `None` (`except ImportError: ray = None`) do not hide an import.
        self.none_bound: set[str] = set()
        self.locals: set[str] = set()
        self.global_names: set[str] = set()
        self.nonlocal_names: set[str] = set()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            self.locals.update(_parameter_names(node.args))
        body = [node.body] if isinstance(node, ast.Lambda) else node.body
        for statement in body if isinstance(body, list) else [body]:
            _collect(statement, self)
        self.locals.update(self.none_bound - self.imports.keys())
        # A name both imported and otherwise bound in one scope is ambiguous: treat it as local.
        for name in self.locals & self.imports.keys():
            del self.imports[name]

    @property
    def is_function(self) -> bool:
        """True for function and lambda scopes."""
        return isinstance(self.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))

    def module(self) -> Scope:
        """The module scope this scope lives in."""
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def resolve(self, name: str) -> str | None:
        """The qualified name ``name`` refers to here, or None if it is a local object.

        Builtins resolve to their bare name (``len``); an unbound name resolves to itself.
        """
        scope: Scope | None = self
        if name in self.global_names:
            scope = self.module()
        first = True
        while scope is not None:
            # Class bodies are not visible from the functions nested in them.
            if first or not isinstance(scope.node, ast.ClassDef):
                if name in scope.imports:
                    return scope.imports[name]
                if name in scope.locals:
                    return None
            first = False
            scope = scope.parent
        return name

    def binder(self, name: str) -> Scope | None:
        """The scope whose binding of ``name`` (an import or a definition) it refers to here;
        None for a builtin or an unbound global."""
        scope: Scope | None = self.module() if name in self.global_names else self
        first = True
        while scope is not None:
            if first or not isinstance(scope.node, ast.ClassDef):
                if name in scope.imports or name in scope.locals:
                    return scope
            first = False
            scope = scope.parent
        return None

    def binds(self, name: str) -> bool:
        """True when ``name`` resolves to an import or a definition (not a builtin or an
        unbound global, which :meth:`resolve` gives back as themselves)."""
        return self.binder(name) is not None

    def is_local(self, name: str) -> bool:
        """True when ``name`` is bound in this very scope (not global, not nonlocal)."""
        return (
            (name in self.locals or name in self.imports)
            and name not in self.global_names
            and name not in self.nonlocal_names
        )


def qualified_name(node: ast.expr, scope: Scope) -> str | None:
    """``np.copy`` → ``numpy.copy`` after ``import numpy as np``; None when not resolvable."""
    if isinstance(node, ast.Name):
        return scope.resolve(node.id)
    if isinstance(node, ast.Attribute):
        base = qualified_name(node.value, scope)
        return None if base is None else f"{base}.{node.attr}"
    return None


def dotted_name(node: ast.expr) -> str | None:
    """``a.b.c`` as spelled (no import resolution); None for anything but names."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def last_name(node: ast.expr) -> str | None:
    """The last component of a dotted name expression (``a.b.c`` → ``c``), spelling only."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _parameter_names(args: ast.arguments) -> Iterator[str]:
    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
        yield arg.arg
    if args.vararg is not None:
        yield args.vararg.arg
    if args.kwarg is not None:
        yield args.kwarg.arg


def _bind_target(target: ast.AST, scope: Scope) -> None:
    """The names an assignment (``for``, ``with``, ``del``) target binds. A name, a tuple or
    list of targets, a starred target are taken apart directly; anything else (``a[i]``,
    ``a.b``: they bind no name, unless a walrus hides inside) is walked whole."""
    if isinstance(target, ast.Name):
        if isinstance(target.ctx, (ast.Store, ast.Del)):
            scope.locals.add(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            _bind_target(element, scope)
    elif isinstance(target, ast.Starred):
        _bind_target(target.value, scope)
    else:
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                scope.locals.add(node.id)


def _collect(node: ast.AST, scope: Scope) -> None:
    """Record the bindings ``node`` makes in ``scope`` (not descending into nested scopes).

    Walks statements only (expressions bind nothing but walrus targets, looked for only when
    the module spells ``:=``): a fraction of the nodes, which matters on large trees.
    """
    if isinstance(node, ast.expr):
        if _may_bind(node, scope.walrus):
            _collect_walrus(node, scope)
        return
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        scope.locals.add(node.name)
        if scope.walrus:  # decorators and defaults are evaluated here
            for expr in (*node.decorator_list, *getattr(node, "bases", ())):
                if _may_bind(expr, scope.walrus):
                    _collect_walrus(expr, scope)
        return
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname is not None:
                scope.imports[alias.asname] = alias.name
            else:
                top = alias.name.split(".")[0]
                scope.imports[top] = top
        return
    if isinstance(node, ast.ImportFrom):
        prefix = "." * node.level + (node.module or "")
        for alias in node.names:
            if alias.name == "ray":
                # `from vllm.v1.executor.ray_utils import ray`: the ray module, re-exported by a
                # module that guards its import. Nothing else is called `ray` in practice.
                scope.imports[alias.asname or alias.name] = "ray"
            elif alias.name != "*":
                joined = f"{prefix}.{alias.name}" if node.module else f"{prefix}{alias.name}"
                scope.imports[alias.asname or alias.name] = joined
        return
    if isinstance(node, ast.Global):
        scope.global_names.update(node.names)
        return
    lazy = _lazy_import(node)
    if lazy is not None:
        scope.imports[lazy[0]] = lazy[1]  # `ray = LazyLoader("ray")`: the module, imported late
        return
    if isinstance(node, ast.Nonlocal):
        scope.nonlocal_names.update(node.names)
        return
    if (
        isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and node.value.value is None
        and all(isinstance(target, ast.Name) for target in node.targets)
    ):
        scope.none_bound.update(target.id for target in node.targets)  # type: ignore[attr-defined]
    elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            _bind_target(target, scope)
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            if item.optional_vars is not None:
                _bind_target(item.optional_vars, scope)
    elif isinstance(node, ast.ExceptHandler) and node.name:
        scope.locals.add(node.name)
    elif isinstance(node, ast.Delete):
        for target in node.targets:
            _bind_target(target, scope)
    elif isinstance(node, ast.match_case):
        for sub in ast.walk(node.pattern):
            name = getattr(sub, "name", None) or getattr(sub, "rest", None)
            if isinstance(name, str):
                scope.locals.add(name)
    for field in block_fields(node):
        for child in getattr(node, field):
            _collect(child, scope)
    if _may_bind(node, scope.walrus):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr) and _may_bind(child, scope.walrus):
                _collect_walrus(child, scope)


def _lazy_import(node: ast.AST) -> tuple[str, str] | None:
    """``(name, module)`` of ``name = LazyLoader("module")`` (a lazy loader of the
    ``catalog.LAZY_IMPORTERS``, the module named by its first argument, or by its third after
    ``globals()`` as TensorFlow's: ``LazyLoader("xgr", globals(), "xgrammar")``); else None."""
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call)
        and last_name(node.value.func) in catalog.LAZY_IMPORTERS
        and node.value.args
    ):
        return None
    args = node.value.args
    named = args[0]
    if len(args) >= 3 and isinstance(args[1], ast.Call) and last_name(args[1].func) == "globals":
        named = args[2]
    if not (isinstance(named, ast.Constant) and isinstance(named.value, str)):
        return None
    return node.targets[0].id, named.value


def _collect_walrus(expr: ast.AST, scope: Scope) -> None:
    for sub in ast.walk(expr):
        if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
            scope.locals.add(sub.target.id)


def ray_remote_target(node: ast.expr, resolve: Callable[[ast.expr], str | None]) -> ast.expr | None:
    """``X`` of ``ray.remote(X)`` and ``ray.remote(num_gpus=1)(X)`` (``resolve``: the qualified
    name of the callee spelled there); None for any other expression."""
    if not (isinstance(node, ast.Call) and len(node.args) == 1):
        return None
    maker = node.func.func if isinstance(node.func, ast.Call) else node.func
    return node.args[0] if resolve(maker) == catalog.RAY_REMOTE else None
