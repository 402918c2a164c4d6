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
from shmlint.facts.evidence import FRESH_RESULT, PASSES_INPUT, fresh_returns, parse_annotation
from shmlint.facts.fresh import fresh_result
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


# numpy functions whose result is a new ndarray (what an unannotated remote function returns).
_NUMPY_CONSTRUCTORS = frozenset(
    {
        "array",
        "asarray",
        "zeros",
        "ones",
        "empty",
        "full",
        "arange",
        "linspace",
        "stack",
        "concatenate",
        "vstack",
        "hstack",
        "frombuffer",
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
        "copy",
        "where",
        "fromiter",
    }
)
_BUILTIN_RESULTS = {"int": "int", "float": "float", "str": "str", "bool": "bool", "len": "int"}


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


def _literal_type(value: object) -> str | None:
    if value is None or value is Ellipsis:
        return "None"
    if isinstance(value, (bool, int, float, complex, str, bytes)):
        return type(value).__name__
    return None


_Function = ast.FunctionDef | ast.AsyncFunctionDef


class _Own:
    """What a function binds itself, worked out on first use (most return expressions need
    none of it)."""

    def __init__(self, node: _Function) -> None:
        self.node = node
        self._names: frozenset[str] | None = None
        self._single: dict[str, ast.expr] | None = None
        self._assigned: dict[str, list[ast.expr]] | None = None

    def names(self) -> frozenset[str]:
        """Its parameters and every name it binds (:func:`_local_names`)."""
        if self._names is None:
            self._names = _local_names(self.node)
        return self._names

    def bound_once(self, name: str) -> ast.expr | None:
        """The value of the function's one statement ``name = value`` of its own, if there is
        one and ``value`` is no display (a first look: :meth:`single` decides)."""
        if self._assigned is None:
            self._assigned = {}
            for sub in statements(self.node.body, into_scopes=False):
                if (
                    isinstance(sub, ast.Assign)
                    and len(sub.targets) == 1
                    and isinstance(sub.targets[0], ast.Name)
                ):
                    self._assigned.setdefault(sub.targets[0].id, []).append(sub.value)
        values = self._assigned.get(name, ())
        if len(values) != 1 or isinstance(values[0], _FILLABLE):
            return None
        return values[0]

    def single(self, name: str) -> ast.expr | None:
        """The value of ``name = value``, when that is the one binding of ``name`` in the
        function (nested scopes counted too), nothing can change what it holds (no method of
        it called, nothing stored into it, not passed to a call: ``ids = ray.get_gpu_ids()``
        then ``ids.append(x)``), and ``value`` is no display; else None."""
        if self._single is None:
            args = self.node.args
            every = (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
            counts: dict[str, int] = {a.arg: 2 for a in every if a is not None}
            for statement in self.node.body:
                for sub in ast.walk(statement):
                    if isinstance(sub, ast.Name) and not isinstance(sub.ctx, ast.Load):
                        counts[sub.id] = counts.get(sub.id, 0) + 1
                    elif isinstance(sub, (ast.Global, ast.Nonlocal)):
                        counts.update((n, 2) for n in sub.names)
                    elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        counts[sub.name] = 2
                    elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                        counts.update(
                            ((a.asname or a.name).partition(".")[0], 2) for a in sub.names
                        )
                    elif isinstance(sub, (ast.MatchAs, ast.MatchStar)) and sub.name:
                        counts[sub.name] = 2
                    elif isinstance(sub, ast.MatchMapping) and sub.rest:
                        counts[sub.rest] = 2
                    elif isinstance(sub, ast.Call):  # (what it may change)
                        for part in (sub.func, *sub.args, *(k.value for k in sub.keywords)):
                            counts.update((n, 2) for n in _reached(part, sub.func))
                    elif isinstance(sub, (ast.Attribute, ast.Subscript)) and not isinstance(
                        sub.ctx, ast.Load
                    ):
                        counts.update((n, 2) for n in _reached(sub, None))
            found = {
                sub.targets[0].id: sub.value
                for sub in statements(self.node.body, into_scopes=False)
                if isinstance(sub, ast.Assign)
                and len(sub.targets) == 1
                and isinstance(sub.targets[0], ast.Name)
                and not isinstance(sub.value, _FILLABLE)
            }
            self._single = {n: v for n, v in found.items() if counts.get(n) == 1}
        return self._single.get(name)


# Values a call may fill after they are bound: not followed through a name.
_FILLABLE = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)


def _reached(node: ast.expr, func: ast.expr | None) -> set[str]:
    """The names whose objects a call or a store may change through ``node``: the object a
    method is called on (``ids`` of ``ids.append(x)``), an argument (``fill(ids)``), the root
    of a store target (``ids[0] = x``); not a called function's own name."""
    if node is func and isinstance(node, ast.Name):
        return set()
    if node is func and isinstance(node, ast.Attribute):
        node = node.value
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _evident_type(node: ast.expr, names: _Namer, own: _Own, follow: bool = True) -> str | None:
    """An annotation for what ``node`` evidently is (literals, numpy and torch constructors,
    builtins, class constructors, calls known to give scalars), or None. A call through a name
    the function binds itself (``own.names()``: a parameter, an assignment) is none of those: a
    local ``time`` is not the module. A name bound once is what it is bound to (``addr =
    get_node_ip_address(); return addr``; ``follow``: not again from there)."""
    if isinstance(node, ast.Name):
        value = own.bound_once(node.id) if follow else None
        found = None if value is None else _evident_type(value, names, own, follow=False)
        # (Whether nothing else binds or changes it: looked at only for a value evident.)
        return found if found is not None and own.single(node.id) is value else None
    if isinstance(node, ast.Constant):
        return _literal_type(node.value)
    if isinstance(node, ast.JoinedStr):
        return "str"
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        inner = [_evident_type(e, names, own, follow) for e in node.elts]
        if any(t is None for t in inner):
            return None
        head = {ast.List: "list", ast.Tuple: "tuple", ast.Set: "set"}[type(node)]
        return f"{head}[{' | '.join(sorted(set(inner))) or 'None'}]"  # type: ignore[arg-type]
    if isinstance(node, ast.Dict):
        keys = [_evident_type(k, names, own, follow) if k is not None else None for k in node.keys]
        values = [_evident_type(v, names, own, follow) for v in node.values]
        if any(t is None for t in keys + values):
            return None
        key = " | ".join(sorted(set(keys))) or "None"  # type: ignore[arg-type]
        return f"dict[{key}, {' | '.join(sorted(set(values))) or 'None'}]"  # type: ignore[arg-type]
    if isinstance(node, ast.Subscript):
        return _element_type(_evident_type(node.value, names, own, follow), node.slice)
    if isinstance(node, ast.Call):
        called = _called_type(node, names)
        if called is None or _root(node.func) in own.names():
            return None  # (the function's own names asked last: most calls are not evident)
        return called
    return None


def _called_type(node: ast.Call, names: _Namer) -> str | None:
    """What a call evidently gives, by the name it calls (see :func:`_evident_type`)."""
    qualified = _call_name(node.func, names)
    if qualified is None:
        return None
    if qualified in catalog.SCALAR_RESULT_CALLS:
        return catalog.SCALAR_RESULT_CALLS[qualified]
    if "(" in qualified:
        return None  # a method of a call's result
    head, _, last = qualified.rpartition(".")
    if (head == "numpy" or head.startswith("numpy.")) and last in _NUMPY_CONSTRUCTORS:
        return "numpy.ndarray"
    if head == "torch" and last[:1].islower():
        # `torch.from_numpy(x)` shares x's buffer: not the copied tensor Ray hands back.
        return None if last in catalog.TORCH_VIEW_FUNCTIONS else "torch.Tensor"
    if not head and last in _BUILTIN_RESULTS:
        return _BUILTIN_RESULTS[last]
    if head and last[:1].isupper():
        return qualified  # a class, if the project has one by that name (else unknown)
    return None


def _call_name(func: ast.expr, names: _Namer) -> str | None:
    """A called function's qualified name; a method of a call's result as ``f().method``."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
        inner = _call_name(func.value.func, names)
        return None if inner is None else f"{inner}().{func.attr}"
    return names(func)


def _root(func: ast.expr) -> str | None:
    """The name a call's target starts from (``time`` of ``time.time``, ``ray`` of
    ``ray.get_runtime_context().get_node_id``)."""
    while isinstance(func, (ast.Attribute, ast.Call)):
        func = func.value if isinstance(func, ast.Attribute) else func.func
    return func.id if isinstance(func, ast.Name) else None


# Types whose values hold no array, whatever is inside them: an element of a list or a tuple of
# these is one of them.
_SCALAR_NAMES = frozenset(
    {"int", "float", "str", "bool", "bytes", "complex", "None", "list", "tuple", "dict", "set"}
)


def _element_type(container: str | None, index: ast.expr) -> str | None:
    """What indexing a value of the evident type ``container`` gives, when it is a list or a
    tuple of scalars (``ray.get_gpu_ids()[0]``): a slice is one, an element one of its element
    types. Of any other container, unknown: a tuple display's element types are joined
    (``(1, np.zeros(3))`` is ``tuple[int | numpy.ndarray]``), so its element is not known."""
    parsed = None if container is None else parse_annotation(container)
    if not (
        isinstance(parsed, ast.Subscript)
        and isinstance(parsed.value, ast.Name)
        and parsed.value.id in ("list", "tuple")
        and all(n.id in _SCALAR_NAMES for n in ast.walk(parsed.slice) if isinstance(n, ast.Name))
    ):
        return None
    return container if isinstance(index, ast.Slice) else ast.unparse(parsed.slice)


def _local_names(node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The names a function binds itself: its parameters, and every name its body assigns or
    defines (nested scopes' too: a wider net only makes fewer calls evident). Not its imports:
    `import numpy as np` in the body names the module, as at the top."""
    args = node.args
    every = (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
    found = {a.arg for a in every if a is not None}
    for statement in node.body:
        for sub in ast.walk(statement):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                found.add(sub.id)
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.add(sub.name)
    return frozenset(found)


def _returns(node: ast.FunctionDef | ast.AsyncFunctionDef, names: _Namer) -> tuple[str, bool]:
    """The return annotation's text; or one inferred from evident return expressions."""
    if node.returns is not None:
        return ast.unparse(node.returns), False
    found: list[str] = []
    inputs = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
    inputs -= {"self", "cls"}
    returned = [
        s.value for s in statements(node.body, into_scopes=False) if isinstance(s, ast.Return)
    ]
    if returned and all(isinstance(v, ast.Name) and v.id in inputs for v in returned):
        echoed = {v.id for v in returned if isinstance(v, ast.Name)}
        rebound = any(
            isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and n.id in echoed
            for s in statements(node.body, into_scopes=False)
            for n in ast.walk(s)
        )
        if not rebound:
            return PASSES_INPUT, True  # `def echo(self, x): return x`: what flows in comes out
    own = _Own(node)

    for statement in statements(node.body, into_scopes=False):
        if isinstance(statement, _VALUED):
            value = statement.value
            if isinstance(value, _YIELDS):
                return "", False  # a generator (`yield x`, `x = yield y`): not a return's
            if isinstance(statement, ast.Return):
                evident = "None" if value is None else _evident_type(value, names, own)
                if evident is None:
                    return "", False
                found.append(evident)
    return " | ".join(dict.fromkeys(found)) or "None", True


# Statements whose value a `yield` may be (a generator), or a `return` gives.
_VALUED = (ast.Return, ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign)
_YIELDS = (ast.Yield, ast.YieldFrom)


# Builtin types whose values hold no array, and the generics that hold them.
_SCALARS = frozenset({"None", "int", "float", "str", "bool", "bytes", "complex"})
_GENERICS = frozenset(
    {"Optional", "Union", "List", "Dict", "Tuple", "Set", "list", "dict", "tuple", "set"}
)


def _scalar(annotation: ast.expr) -> bool:
    """An annotation of builtin scalars only (``Optional[str]``, ``Dict[str, int]``): the merge
    rates it array-free, which already keeps what is passed in out of the result."""
    if isinstance(annotation, ast.Constant):
        return annotation.value is None or annotation.value is Ellipsis
    if isinstance(annotation, ast.Name):
        return annotation.id in _SCALARS
    if isinstance(annotation, ast.Subscript):
        inner = annotation.slice
        parts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        generic = annotation.value
        return (
            isinstance(generic, ast.Name)
            and generic.id in _GENERICS
            and all(_scalar(part) for part in parts)
        )
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _scalar(annotation.left) and _scalar(annotation.right)
    return False


def _may_be_fresh(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    params: tuple[str, ...],
    in_class: bool,
    decorators: set[str | None],
    returns: str,
) -> bool:
    """Whether a function's freshness can matter (shmlint/facts/fresh.py): it is called
    other than through ``self`` (a module's function, a static or class method), is passed
    something, and is not rated array-free already (a scalar annotation, or one inferred)."""
    if in_class and not decorators & {"staticmethod", "classmethod"}:
        return False  # (`self.m(x)`: the body that runs may be a subclass's)
    if len(params) <= (1 if "classmethod" in decorators else 0):
        return False
    if returns in _SCALARS or returns == PASSES_INPUT:
        return False
    return node.returns is None or not _scalar(node.returns)


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
    returns, inferred = _returns(node, names)
    fresh = _may_be_fresh(node, params, in_class, decorators, returns)
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
