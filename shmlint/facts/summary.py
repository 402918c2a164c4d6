"""Per-module summaries: what one module tells the rest of the project (phase 1).

A summary is plain data (strings, ints, tuples): it crosses process boundaries, is cached as
JSON, and holds no tree nodes. Names in it are *qualified* (``pkg.mod.Class.method``) but not yet
*canonical*: an imported name is recorded as the importing module spells its origin, and the
merge (``facts.py``) follows re-exports.

Slots name the places a Ray handle can flow between modules:

- ``attr:pkg.mod.Class.attr`` — an attribute of ``self`` in a method of ``Class``;
- ``param:pkg.mod.func.p`` / ``param:pkg.mod.Class.method.p`` — a parameter;
- ``ret:pkg.mod.func`` — what a function (or, for a class, its constructor call) returns.
"""

from __future__ import annotations

import dataclasses
from typing import Any

# Base classes and decorators that make a class a record: its annotated fields are all it holds.
RECORD_BASES = frozenset({"NamedTuple", "TypedDict", "BaseModel", "Struct"})
RECORD_DECORATORS = frozenset({"dataclass", "dataclasses.dataclass", "define", "frozen", "attrs"})


@dataclasses.dataclass(frozen=True, slots=True)
class FieldInfo:
    """One annotated field of a class (``name: annotation``), with its line."""

    name: str
    annotation: str  # the annotation's source text (resolved in the declaring module)
    line: int


@dataclasses.dataclass(frozen=True, slots=True)
class ClassInfo:
    """A class of the project: its fields and how its constructor binds arguments."""

    name: str  # qualified
    line: int
    bases: tuple[str, ...]  # qualified names as the module spells them
    record: bool  # dataclass / NamedTuple / TypedDict / pydantic / msgspec: fields are complete
    fields: tuple[FieldInfo, ...]
    actor: bool = False  # `@ray.remote` class (or made one by `ray.remote(Cls)`)


@dataclasses.dataclass(frozen=True, slots=True)
class FunctionInfo:
    """A function or method: its parameters in order (``self`` included for methods)."""

    name: str  # qualified: pkg.mod.func or pkg.mod.Class.method
    line: int
    params: tuple[str, ...]
    method: bool  # a method taking self/cls first (not a staticmethod)
    # What it returns: the return annotation's text, or (``inferred``) an annotation written
    # from evident return expressions (`return np.zeros(n)` → ``numpy.ndarray``); "" unknown.
    returns: str = ""
    inferred: bool = False
    remote: bool = False  # `@ray.remote` function, a method of an actor class, `ray.remote(f)`


@dataclasses.dataclass(frozen=True, slots=True)
class Flow:
    """Handle kinds (and the kinds of the ``origins`` slots) flow into ``target``."""

    target: str
    kinds: tuple[str, ...]
    origins: tuple[str, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class CallFlow:
    """An argument with handle kinds or origins passed to ``callee`` (positional index or
    keyword name in ``arg``); ``bound``: called as ``self.method(...)``."""

    callee: str
    arg: str
    kinds: tuple[str, ...]
    origins: tuple[str, ...]
    bound: bool


@dataclasses.dataclass(frozen=True, slots=True)
class ReadInfo:
    """A read whose undetached value a function returns.

    ``kind`` is the source kind known locally; ``origins`` are the slots of the read's
    argument (a compiled-graph ref there makes it a channel read); ``needs_ref``: ``x.get()``
    that is a read only if ``x`` holds a compiled-graph ref.
    """

    function: str
    kind: str
    line: int
    origins: tuple[str, ...]
    needs_ref: bool


@dataclasses.dataclass(frozen=True, slots=True)
class ModuleSummary:
    """Everything phase 2 needs from one module."""

    module: str
    path: str  # as reported
    is_package: bool
    imports: tuple[tuple[str, str], ...]  # module-level local name → absolute qualified name
    classes: tuple[ClassInfo, ...]
    functions: tuple[FunctionInfo, ...]
    flows: tuple[Flow, ...] = ()
    calls: tuple[CallFlow, ...] = ()
    reads: tuple[ReadInfo, ...] = ()
    # Names made remote in the module's code (`ray.remote(num_gpus=1)(Worker).remote()`, in
    # any scope), qualified as it resolves them: a project class among them is an actor class.
    actors: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (the cache's format): the module's fields by name, each class,
        field, function, flow, call and read as a list of its fields in order (a dict per
        item made decoding the ray wheel's entries ~0.13 s slower: most of its objects were
        those dicts). Written out, not ``dataclasses`` helpers: they deep-copy every leaf,
        and a cold run with a cache encodes every module's summary (a test compares the two
        on every fixture)."""
        return {
            "module": self.module,
            "path": self.path,
            "is_package": self.is_package,
            "imports": [list(pair) for pair in self.imports],
            "classes": [
                [
                    c.name,
                    c.line,
                    list(c.bases),
                    c.record,
                    [[f.name, f.annotation, f.line] for f in c.fields],
                    c.actor,
                ]
                for c in self.classes
            ],
            "functions": [
                [f.name, f.line, list(f.params), f.method, f.returns, f.inferred, f.remote]
                for f in self.functions
            ],
            "flows": [[f.target, list(f.kinds), list(f.origins)] for f in self.flows],
            "calls": [
                [c.callee, c.arg, list(c.kinds), list(c.origins), c.bound] for c in self.calls
            ],
            "reads": [
                [r.function, r.kind, r.line, list(r.origins), r.needs_ref] for r in self.reads
            ],
            "actors": list(self.actors),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModuleSummary:
        """The inverse of :meth:`to_json`; raises ``KeyError``/``TypeError``/``ValueError``
        on bad data."""
        return cls(
            module=str(data["module"]),
            path=str(data["path"]),
            is_package=bool(data["is_package"]),
            imports=tuple((str(a), str(b)) for a, b in data["imports"]),
            classes=tuple(
                ClassInfo(
                    name,
                    line,
                    tuple(bases),
                    record,
                    tuple(FieldInfo(*field) for field in fields),
                    bool(actor),
                )
                for name, line, bases, record, fields, actor in data["classes"]
            ),
            functions=tuple(
                FunctionInfo(
                    name,
                    line,
                    tuple(params),
                    method,
                    str(returns),
                    bool(inferred),
                    bool(remote),
                )
                for name, line, params, method, returns, inferred, remote in data["functions"]
            ),
            flows=tuple(
                Flow(target, tuple(kinds), tuple(origins))
                for target, kinds, origins in data["flows"]
            ),
            calls=tuple(
                CallFlow(callee, arg, tuple(kinds), tuple(origins), bound)
                for callee, arg, kinds, origins, bound in data["calls"]
            ),
            reads=tuple(
                ReadInfo(function, kind, line, tuple(origins), needs_ref)
                for function, kind, line, origins, needs_ref in data["reads"]
            ),
            actors=tuple(map(str, data["actors"])),
        )
