"""The abstract values of the taint analysis and the per-path state, with their joins."""

from __future__ import annotations

import ast
import dataclasses

from shmlint.basics.types import SourceKind
from shmlint.facts.evidence import UNKNOWN_PAYLOAD, Evidence, Payload
from shmlint.facts.kinds import CALLABLE, CALLABLE_UNKNOWN, COROUTINE, UNKNOWN, holds, payload_kinds


@dataclasses.dataclass(frozen=True, slots=True)
class Site:
    """A source range (ast coordinates: 1-based lines, UTF-8 byte columns)."""

    line: int
    col: int
    end_line: int
    end_col: int

    @classmethod
    def of(cls, node: ast.AST) -> Site:
        """The range of ``node``."""
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        end_line = getattr(node, "end_lineno", None) or line
        end_col = getattr(node, "end_col_offset", None)
        return cls(line, col, end_line, col if end_col is None else end_col)


@dataclasses.dataclass(frozen=True, slots=True)
class Label:
    """One read (a source expression); every value derived from it carries the label."""

    site: Site
    kind: SourceKind
    key: int  # identity of the source node within the analysed tree
    # Where the read sits, for the in-place fix: "statement" (a simple statement can be split
    # around it), "conditional" (under `and`/`or`/`if-else`: hoisting changes evaluation),
    # "none" (a loop header, comprehension, lambda...: only the wrap fix applies).
    placement: str = "statement"
    # Phase 1 only: the slots of the read's argument (a ref there makes it a channel read), and
    # whether it is a read at all only if one of them holds a compiled-graph ref (`x.get()`).
    origins: frozenset[str] = frozenset()
    needs_ref: bool = False
    # Phase 2: the value comes from calling a project function that returns a read (the chain,
    # outermost function first, then the read's location).
    via: str = ""
    # What the read returns, from the declared return type of what produced its ref (a remote
    # function, an actor method, the methods bound at a compiled graph's outputs).
    payload: Payload = UNKNOWN_PAYLOAD


@dataclasses.dataclass(frozen=True, slots=True)
class Value:
    """What the analysis knows of one value."""

    labels: frozenset[Label] = frozenset()
    kinds: frozenset[str] = frozenset()
    direct: bool = False  # exactly the payload of the read (not derived from it)
    closure: bool = False  # a function object capturing tainted values
    evidence: Evidence = Evidence.UNKNOWN  # from the value's own annotation (ARRAYS kept)
    # Where a label entered this (local) container: a later escape is reported there (SHM103).
    entries: frozenset[tuple[Label, Site]] = frozenset()
    # Project slots (see shmlint.facts.summary) the value may come from, for phase 1.
    origins: frozenset[str] = frozenset()
    why: str = ""  # the annotation behind ``evidence`` (for the message)
    model_output: bool = False  # ``evidence`` names a model-runner output (see Payload)

    @property
    def tainted(self) -> bool:
        """True when the value may hold memory of some read."""
        return bool(self.labels)

    def derived(self, *, view: bool = False) -> Value:
        """A value computed from this one that may share its memory.

        ``view``: an element, slice or view of an array-bearing value bears arrays too; an
        attribute of it says nothing (array evidence is kept only for views).
        """
        if not self.direct and not self.model_output:
            if self.evidence is Evidence.UNKNOWN and not self.why:
                return self  # what the rest would build (values are immutable): the hot path
            if view and self.evidence is Evidence.ARRAYS:
                return self
        kept = view and self.evidence is Evidence.ARRAYS
        evidence = Evidence.ARRAYS if kept else Evidence.UNKNOWN
        return Value(
            self.labels,
            self.kinds,
            False,
            self.closure,
            evidence,
            self.entries,
            self.origins,
            self.why if kept else "",
        )

    def join(self, other: Value) -> Value:
        """Either of the two values (control-flow merge or a union of parts)."""
        if self is other:
            return self
        if self.evidence == other.evidence:
            evidence = self.evidence
        elif Evidence.ARRAYS in (self.evidence, other.evidence):
            evidence = Evidence.ARRAYS
        else:
            evidence = Evidence.UNKNOWN
        why = ""
        if evidence is not Evidence.UNKNOWN:
            why = self.why if self.evidence is evidence and self.why else other.why
        return Value(
            self.labels | other.labels,
            _joined_kinds(self.kinds, other.kinds),
            self.direct and other.direct,
            self.closure or other.closure,
            evidence,
            self.entries | other.entries,
            self.origins | other.origins,
            why,
        )

    def without(self, labels: frozenset[Label]) -> Value:
        """This value with ``labels`` removed (they were detached in place)."""
        if not labels & self.labels:
            return self
        kept = frozenset(e for e in self.entries if e[0] not in labels)
        return dataclasses.replace(self, labels=self.labels - labels, entries=kept)


EMPTY = Value()


def _joined_kinds(left: frozenset[str], right: frozenset[str]) -> frozenset[str]:
    """Kinds of either value; a ref whose producer is known joined with a value whose is not
    reads something unknown (an array-free producer must not make the other side free), and
    so do the refs of a remote callable, and what a coroutine gives, so joined."""
    if left == right:  # the common case (both empty): nothing to build on this hot path
        return left
    kinds = left | right
    if bool(payload_kinds(left)) != bool(payload_kinds(right)):
        kinds |= {UNKNOWN}
    if holds(left, CALLABLE) != holds(right, CALLABLE):
        kinds |= {CALLABLE_UNKNOWN}  # (the same for a remote callable's refs)
    if holds(left, COROUTINE) != holds(right, COROUTINE):
        kinds |= {COROUTINE + UNKNOWN}  # (and for what an awaited coroutine gives)
    return kinds


def union(values: list[Value]) -> Value:
    """The join of several parts of one value (a tuple display, call arguments)."""
    result: Value | None = None  # not EMPTY: a part may be EMPTY itself, and still joins
    for value in values:
        part = value.derived(view=True)
        result = part if result is None else result.join(part)
    return EMPTY if result is None else result


@dataclasses.dataclass(slots=True)
class State:
    """The facts on one control-flow path at one point of a function."""

    vars: dict[str, Value] = dataclasses.field(default_factory=dict)
    bound_at: dict[str, Site] = dataclasses.field(default_factory=dict)
    reported: set[Label] = dataclasses.field(default_factory=set)
    dead: bool = False  # after return / raise / break / continue
    # Reached a sink whose finding the confidence threshold dropped: not reported (a later
    # sink may be rated higher), but no returned read for phase 1's summary, whose ratings
    # phase 2 may change (the sink rated high there would report it twice).
    passed: set[Label] = dataclasses.field(default_factory=set)

    def copy(self) -> State:
        """An independent copy, for analysing one branch."""
        return State(
            dict(self.vars), dict(self.bound_at), set(self.reported), self.dead, set(self.passed)
        )

    def holding_handles(self) -> tuple[str, ...]:
        """The variables that hold a handle (what a nested body starts with)."""
        return tuple(name for name, value in self.vars.items() if value.kinds)

    def live_labels(self) -> set[Label]:
        """Every label some variable may still hold."""
        live: set[Label] = set()
        for value in self.vars.values():
            live |= value.labels
        return live


def join_states(states: list[State]) -> State:
    """Merge paths: a variable may hold what it holds on any path; a label counts as reported
    only if it was reported on every path where it is alive (first sink *on each path*)."""
    alive = [s for s in states if not s.dead]
    if not alive:
        return State(dead=True)
    if len(alive) == 1:
        return alive[0].copy()
    result = State()
    for state in alive:
        for name, value in state.vars.items():
            old = result.vars.get(name)
            result.vars[name] = value if old is None else old.join(value)
        for name, site in state.bound_at.items():
            result.bound_at.setdefault(name, site)
    live = [(s, s.live_labels()) for s in alive]
    candidates = set().union(*(s.reported for s in alive))
    for label in candidates:
        voters = [s for s, labels in live if label in labels or label in s.reported]
        if all(label in s.reported for s in voters):
            result.reported.add(label)
    # Passed over on every path where alive (or reported there): as `reported`, for phase 1.
    for label in set().union(*(s.passed for s in alive)) - result.reported:
        voters = [
            s for s, labels in live if label in labels or label in s.reported or label in s.passed
        ]
        if all(label in s.reported or label in s.passed for s in voters):
            result.passed.add(label)
    return result
