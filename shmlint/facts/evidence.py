"""Payload evidence from annotations: does a value hold arrays, or certainly not?

``x: np.ndarray = ray.get(ref)`` is array-bearing (reported with high confidence);
``n: int = ray.get(ref)`` is array-free (never reported); anything else is unknown.

Type names are matched by qualified name where the module's imports resolve them
(``numpy.ndarray``, ``torch.Tensor``), by their last component only where they do not.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import functools
from collections.abc import Callable, Iterable

from shmlint.basics import catalog
from shmlint.basics.options import Options


class Evidence(enum.Enum):
    """What an annotation says about a value's payload."""

    UNKNOWN = 0
    ARRAYS = 1
    ARRAY_FREE = 2


@dataclasses.dataclass(frozen=True, slots=True)
class Payload:
    """Evidence about what a value holds, and why (for the finding's message)."""

    evidence: Evidence = Evidence.UNKNOWN
    why: str = ""
    # A model-runner output (a class with a `logprobs` field, as vLLM's ModelRunnerOutput): the
    # fix detaches it with detach_zero_copy_from_model_runner_output, other payloads deeply.
    model_output: bool = False
    # What calling the function gives holds nothing passed to it (shmlint/facts/fresh.py):
    # for a project function's own result only, never a read of its ref.
    fresh: bool = False

    @property
    def known(self) -> bool:
        """True when the evidence decides (arrays, or certainly none)."""
        return self.evidence is not Evidence.UNKNOWN


UNKNOWN_PAYLOAD = Payload()
# The `returns` of a function that returns one of its parameters (a compiled graph's echo
# stage): what its node outputs is what flows in (`dag.execute(1)` reads an int).
PASSES_INPUT = "$input"
# The head of the `returns` of a function whose result holds nothing passed to it
# (shmlint/facts/fresh.py), before its annotation's text (or an inferred one, or none).
FRESH_RESULT = "$fresh|"


def fresh_returns(returns: str) -> tuple[bool, str]:
    """A function's ``returns`` text split: whether its result is fresh, and the annotation."""
    if returns.startswith(FRESH_RESULT):
        return True, returns[len(FRESH_RESULT) :]
    return False, returns


@dataclasses.dataclass(frozen=True, slots=True)
class TypeTables:
    """Which type names hold zero-copy arrays and which never do, for one configuration."""

    arrays: frozenset[str]  # qualified names
    array_names: frozenset[str]  # last components, for names that do not resolve
    free: frozenset[str]  # qualified names known array-free
    free_names: frozenset[str]  # last components known array-free
    configured: frozenset[str]  # `array-types`: qualified names or last components

    @staticmethod
    def for_options(options: Options) -> TypeTables:
        """The tables of a configuration (``array-types``, ``zero-copy-torch``)."""
        return _tables(options.array_types, options.zero_copy_torch)


@functools.cache
def _tables(array_types: frozenset[str], zero_copy_torch: bool) -> TypeTables:
    arrays, names = catalog.ZERO_COPY_ARRAY_TYPES, catalog.ZERO_COPY_ARRAY_NAMES
    free = catalog.ARRAY_FREE_LIBRARY_TYPES | catalog.NUMPY_SCALAR_TYPES
    free_names = catalog.ARRAY_FREE_TYPES
    if zero_copy_torch:
        arrays, names = arrays | catalog.TORCH_TYPES, names | catalog.TORCH_NAMES
    else:
        free, free_names = free | catalog.TORCH_TYPES, free_names | catalog.TORCH_NAMES
    return TypeTables(arrays, names, free, free_names, array_types)


DEFAULT_TABLES = TypeTables.for_options(Options())


def unquoted(annotation: ast.expr) -> ast.expr | None:
    """A string annotation parsed (``"ObjectRef[int]"``); any other as it is."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return _parse_string(annotation.value)
    return annotation


@functools.lru_cache(maxsize=8192)
def parse_annotation(text: str) -> ast.expr | None:
    """An annotation's text as an expression (None: not one). Cached: the same few spellings
    (``int``, ``Optional[str]``...) come back tens of thousands of times in a merge; the
    trees are only read."""
    try:
        parsed = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return None
    return parsed.body


_parse_string = parse_annotation


def _leaves(node: ast.expr, results: bool = True) -> Iterable[ast.expr | None]:
    """The type names an annotation is built from (generic wrappers looked through)."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            parsed = _parse_string(node.value)
            if parsed is None:
                yield None
            else:
                yield from _leaves(parsed, results)
        else:
            yield node  # `None`
        return
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        yield from _leaves(node.left, results)
        yield from _leaves(node.right, results)
        return
    if isinstance(node, ast.Subscript):
        head = _name_of(node.value)
        if head == "Literal":
            yield node.value
            return
        wrapper = results and head in catalog.RESULT_WRAPPERS
        if head in catalog.NEUTRAL_GENERICS or wrapper:
            inner = node.slice
            elements = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            if head == "Annotated":
                elements = elements[:1]
            elif wrapper:
                elements = elements[-1:]  # `Coroutine[Y, S, R]`, `Future[R]`: what it gives
            for element in elements:
                if not (isinstance(element, ast.Constant) and element.value is Ellipsis):
                    yield from _leaves(element, results)
            return
        yield node.value  # `npt.NDArray[np.float32]`, `MyGeneric[T]`: the head decides
        return
    if isinstance(node, (ast.Tuple, ast.List)):
        for element in node.elts:
            yield from _leaves(element, results)
        return
    yield node


def _name_of(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    return None


def evidence(
    annotation: ast.expr | None,
    tables: TypeTables,
    resolve: Callable[[ast.expr], Evidence] | None = None,
    qualify: Callable[[ast.expr], str | None] | None = None,
) -> Evidence:
    """Evidence from one annotation. ``resolve`` rates the type names the tables do not know
    (project classes, by their fields); ``qualify`` gives a type name's qualified name where
    the module's imports (or its own definitions) resolve it, else None."""
    if annotation is None:
        return Evidence.UNKNOWN
    free = True
    for leaf in _leaves(annotation):
        found = _rate(leaf, tables, resolve, qualify)
        if found is Evidence.ARRAYS:
            return Evidence.ARRAYS
        if found is not Evidence.ARRAY_FREE:
            free = False
    return Evidence.ARRAY_FREE if free else Evidence.UNKNOWN


def _rate(
    leaf: ast.expr | None,
    tables: TypeTables,
    resolve: Callable[[ast.expr], Evidence] | None,
    qualify: Callable[[ast.expr], str | None] | None,
) -> Evidence:
    name = _name_of(leaf)
    if leaf is None or name is None:
        return Evidence.UNKNOWN
    if name in tables.configured:
        return Evidence.ARRAYS
    qualified = qualify(leaf) if qualify is not None else None
    if qualified is not None and "." in qualified:
        if qualified in tables.arrays or qualified in tables.configured:
            return Evidence.ARRAYS
        if qualified in tables.free:
            return Evidence.ARRAY_FREE
        if name in tables.free_names:
            # (`datetime.date`, `uuid.UUID`...; a project class so named is rated by its
            # fields when they say something: `class Tensor: data: np.ndarray`)
            found = resolve(leaf) if resolve is not None else Evidence.UNKNOWN
            return Evidence.ARRAY_FREE if found is Evidence.UNKNOWN else found
    elif name in tables.array_names:
        return Evidence.ARRAYS
    elif name in tables.free_names:
        return Evidence.ARRAY_FREE
    return resolve(leaf) if resolve is not None else Evidence.UNKNOWN


def describe(what: str, annotation: ast.expr, found: Evidence, fields: Iterable[str] = ()) -> str:
    """The reason a message gives: "<what> `T` holds arrays (`a`, `b`)" / "holds no arrays"."""
    text = _short(ast.unparse(annotation))
    if found is Evidence.ARRAY_FREE:
        return f"{what} `{text}` holds no arrays"
    named = ", ".join(f"`{name}`" for name in list(dict.fromkeys(fields))[:3])
    return f"{what} `{text}` holds arrays" + (f" ({named})" if named else "")


def _short(text: str, limit: int = 60) -> str:
    text = text.strip("'\"") if text[:1] in "'\"" else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


def leaves(annotation: ast.expr) -> list[ast.expr]:
    """The type names an annotation is built from (strings parsed, generics looked through)."""
    return [leaf for leaf in _leaves(annotation) if leaf is not None]


def names_type(annotation: ast.expr | None, names: frozenset[str]) -> bool:
    """True when any type named in ``annotation`` has its last component in ``names``."""
    if annotation is None:
        return False
    return any(_name_of(leaf) in names for leaf in _leaves(annotation, results=False))
