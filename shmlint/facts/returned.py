"""What a function evidently returns, read from its body: the annotation written for evident
return expressions (``return np.zeros(n)`` is ``numpy.ndarray``, ``return len(x)`` an ``int``,
``addr = ray.util.get_node_ip_address(); return addr`` a ``str``), and whether its freshness
(``shmlint/facts/fresh.py``) can matter. Split out of :mod:`shmlint.facts.collect`."""

from __future__ import annotations

import ast
from collections.abc import Callable

from shmlint.basics import catalog
from shmlint.basics.astwalk import statements
from shmlint.facts.evidence import PASSES_INPUT, parse_annotation

# A module's qualified names of dotted expressions (``collect._Namer``).
Namer = Callable[[ast.expr], str | None]

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


def _evident_type(node: ast.expr, names: Namer, own: _Own, follow: bool = True) -> str | None:
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


def _called_type(node: ast.Call, names: Namer) -> str | None:
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


def _call_name(func: ast.expr, names: Namer) -> str | None:
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


def returns_of(node: ast.FunctionDef | ast.AsyncFunctionDef, names: Namer) -> tuple[str, bool]:
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


def may_be_fresh(
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
