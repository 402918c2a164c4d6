"""What the analysis of one module shares across its functions: options, facts, findings."""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from shmlint.analysis.dataflow.gate import Gate
from shmlint.analysis.dataflow.quiet import Quiet
from shmlint.analysis.dataflow.values import Label, Site, State, Value
from shmlint.basics.names import Scope, ScopeNode
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence, SourceKind
from shmlint.facts.evidence import UNKNOWN_PAYLOAD, Evidence, Payload, TypeTables

if TYPE_CHECKING:  # the project package imports the dataflow's values: no import cycle
    from shmlint.facts.view import ProjectView


@dataclasses.dataclass(frozen=True, slots=True)
class RawFinding:
    """A finding in ast coordinates, before it is given a path, a message and char columns."""

    code: str
    site: Site
    label: Label
    confidence: Confidence
    message: str = ""  # set by rules whose message is not about a read (SHM301)
    why: str = ""  # the payload evidence that set the confidence (empty: none decided)
    payload: Payload = UNKNOWN_PAYLOAD  # that evidence (the fix picks its helper by it)


@dataclasses.dataclass(slots=True)
class Facts:
    """Module-wide facts the functions of a module need about each other.

    Keys: ``"Class.attr"`` for attributes of ``self``, ``"func"`` / ``"Class.method"`` for what a
    function returns, plain names for module-level variables.
    """

    attr_kinds: dict[str, frozenset[str]] = dataclasses.field(default_factory=dict)
    attr_annotations: dict[str, ast.expr] = dataclasses.field(default_factory=dict)
    module_annotations: dict[str, ast.expr] = dataclasses.field(default_factory=dict)
    return_kinds: dict[str, frozenset[str]] = dataclasses.field(default_factory=dict)
    module_kinds: dict[str, frozenset[str]] = dataclasses.field(default_factory=dict)
    coroutines: set[str] = dataclasses.field(default_factory=set)  # `async def`s, by key
    # Those a decorator may turn into anything (`@run_sync`): their calls are not wrapped.
    decorated_coroutines: set[str] = dataclasses.field(default_factory=set)
    # The keys read since the round began (by table), and whether one of them grew after it
    # was read: only then can another round see anything this one did not.
    read: set[tuple[int, str]] = dataclasses.field(default_factory=set)
    stale: bool = False

    def begin_round(self) -> None:
        """A pass of the facts pre-pass starts."""
        self.read.clear()
        self.stale = False

    def kinds(self, table: dict[str, frozenset[str]], key: str) -> frozenset[str]:
        """The kinds under ``key`` (every read of the kinds tables goes through here)."""
        self.read.add((id(table), key))
        return table.get(key, frozenset())

    def merge_kinds(
        self, table: dict[str, frozenset[str]], key: str, kinds: frozenset[str]
    ) -> bool:
        """Add ``kinds`` under ``key``; True when that changed the table."""
        old = table.get(key, frozenset())
        if kinds <= old:
            return False
        table[key] = old | kinds
        if (id(table), key) in self.read:
            self.stale = True  # something this round read is out of date
        return True


def confidence_for(kind: SourceKind, evidence: Evidence) -> Confidence | None:
    """DESIGN §3: channel and configured reads are high; object-store reads are high only with
    array evidence; anything known to be array-free is not reported (None)."""
    if evidence is Evidence.ARRAY_FREE:
        return None
    if kind is SourceKind.OBJECT_STORE and evidence is not Evidence.ARRAYS:
        return Confidence.MEDIUM
    return Confidence.HIGH


# What a sink's declared type says: called only when a finding's confidence needs it, so that
# phase 1 counts its questions only then (ExpressionMixin.sink_payload).
Sink = Callable[[], Payload]


def no_sink() -> Payload:
    """A sink with no declared type."""
    return UNKNOWN_PAYLOAD


def rate(label: Label, value: Value, sink: Sink) -> Payload:
    """DESIGN §3's order, the first that decides: the value's own annotation, the payload of
    the read (the declared return type of what produced its ref), the sink's declared type.
    (A value annotated array-free holds no labels: it never gets here.)"""
    if value.evidence is Evidence.ARRAYS:
        why = value.why or "the value is annotated as holding arrays"
        return Payload(Evidence.ARRAYS, why, value.model_output)
    if label.payload.known:
        return label.payload
    return sink()


class ModuleContext:
    """Per-module analysis state shared by every function analysis."""

    def __init__(self, options: Options, project: ProjectView | None = None) -> None:
        self.options = options
        self.tables = TypeTables.for_options(options)
        self.project = project
        self.ref_regex: re.Pattern[str] | None = options.ref_name_regex()
        self.facts = Facts()
        self.reporting = True  # False during the facts pre-pass (unless its rounds report)
        self.pre_pass = False  # a round of the facts pre-pass is running
        # Which bodies may make a read (None: analyse every body); see gate.py.
        self.gate: Gate | None = None
        # Which bodies a handle may reach (None: every body, in a round); see quiet.py. The
        # bodies a round skipped, with the enclosing scope's names holding a handle then.
        self.quiet: Quiet | None = None
        self.skipped: list[tuple[ast.AST, tuple[str, ...]]] = []
        self.findings: dict[tuple[str, Site, int], RawFinding] = {}
        # Whether a finding of this code on this line is suppressed (None: none is).
        self.dropped: Callable[[str, int], bool] | None = None
        self._labels: dict[int, Label] = {}
        # What depends on the tree alone, kept across the passes over it (by node id: the
        # tree outlives the context).
        self._scopes: dict[int, Scope] = {}
        self.loop_assigned: dict[int, frozenset[str]] = {}  # by loop: see LoopFrame.assigned
        self.rebound: dict[int, frozenset[str]] = {}  # by module: see unpack.rebound
        self.local_annotations: dict[int, list[tuple[str, ast.expr]]] = {}  # by function
        self.serialized: dict[int, bool] = {}  # by function: see returns_serialized
        self._direct_calls: dict[int, tuple[frozenset[str], frozenset[str]]] = {}

    def scope(self, node: ScopeNode, parent: Scope) -> Scope:
        """The scope of a nested body: built once per module analysis, not once per pass."""
        scope = self._scopes.get(id(node))
        if scope is None or scope.parent is not parent:
            scope = self._scopes[id(node)] = Scope(node, parent)
        return scope

    def direct_calls(self, node: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
        """The names called directly anywhere under ``node`` (a class or the module): as
        ``x.m(...)`` of a plain name ``x`` (the ``m``), and as ``f(...)``. Walked once per
        node, not once per remote function that asks (``returns_serialized``)."""
        found = self._direct_calls.get(id(node))
        if found is None:
            methods: set[str] = set()
            functions: set[str] = set()
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call):
                    func = sub.func
                    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                        methods.add(func.attr)
                    elif isinstance(func, ast.Name):
                        functions.add(func.id)
            found = self._direct_calls[id(node)] = (frozenset(methods), frozenset(functions))
        return found

    def label(
        self,
        node: ast.AST,
        kind: SourceKind,
        placement: str = "statement",
        origins: frozenset[str] = frozenset(),
        needs_ref: bool = False,
        via: str = "",
        payload: Payload = UNKNOWN_PAYLOAD,
    ) -> Label:
        """The (one) label of a source node in this pass, however often the node is
        evaluated (a loop's body twice). Each pass starts afresh (:meth:`begin_pass`): a
        later round may see the node read otherwise — a channel where the first saw only a
        ref's slot (``needs_ref``), another payload — and reports with what it knows."""
        key = id(node)
        label = self._labels.get(key)
        if label is None:
            label = Label(Site.of(node), kind, key, placement, origins, needs_ref, via, payload)
            self._labels[key] = label
        return label

    def begin_pass(self) -> None:
        """A round of the pre-pass, or the reporting pass, starts: no finding and no label
        of an earlier pass stands."""
        self.findings.clear()
        self._labels.clear()

    @property
    def recording(self) -> bool:
        """True in phase 1 (every pass): flows go to the module summary (a set: repeated
        passes add nothing twice)."""
        return self.project is not None and self.project.recorder is not None

    def should_analyse(self, body: ast.AST, outer: tuple[str, ...] = ()) -> bool:
        """False for a body this pass may skip. The reporting pass skips a body that cannot
        make a read (phase 1 also needs class bodies and constructors: what they store on
        ``self`` is a project fact); a round of the pre-pass, one that moreover no handle can
        reach (quiet.py; ``outer``: the enclosing scope's variables holding one)."""
        if self.pre_pass:
            if self.quiet is None or self.gate is None or self.gate.may_read(body):
                return True
            if self.quiet.reachable(body, self.handle_names(outer)):
                return True
            self.skipped.append((body, outer))
            return False
        if self.gate is None or self.gate.may_read(body):
            return True
        if not self.recording:
            return False
        return isinstance(body, ast.ClassDef) or getattr(body, "name", "") == "__init__"

    def handle_names(self, outer: tuple[str, ...] = ()) -> list[str]:
        """The names through which this module's facts give a body a handle now: attributes
        (``self.<attr>``), functions and methods (their calls), module variables."""
        facts = self.facts
        names = [key.rpartition(".")[2] for key in facts.attr_kinds]
        names += [key.rpartition(".")[2] for key in facts.return_kinds]
        names += facts.module_kinds
        return names + list(outer)

    def skipped_reachable(self) -> bool:
        """True when a body this round skipped may now see a handle (a name it spells got one
        after its turn): the round must be repeated, as for a fact read before it grew."""
        assert self.quiet is not None
        return any(
            self.quiet.reachable(body, self.handle_names(outer)) for body, outer in self.skipped
        )

    def is_ref_name(self, name: str) -> bool:
        """True when the configured ``ref-name-pattern`` marks ``name`` as holding refs."""
        return self.ref_regex is not None and self.ref_regex.fullmatch(name) is not None

    def report(
        self,
        state: State,
        value: Value,
        code: str,
        site: Site,
        sink: Sink = no_sink,
    ) -> None:
        """``value`` reaches a sink of ``code`` at ``site`` on the path ``state``; ``sink``:
        what the sink's declared type says (the last evidence consulted, see :func:`rate`).

        Each label is reported at the first sink it reaches on a path that is not suppressed
        (``dropped``: the code deselected for the file, or a ``# noqa`` for it on the sink's
        line; or the finding's confidence there is below the threshold, as the sink's declared
        type may raise it at a later one): a suppressed sink hides no other. Where it entered
        a local container that now escapes, it is reported at that entry (SHM103); a closure
        that escapes is SHM107 whatever the sink.
        """
        for label in sorted(value.labels, key=lambda lab: (lab.site.line, lab.site.col)):
            if label in state.reported:
                continue
            if not self.reporting or (label.via and code == "SHM101"):
                # A read returned from a call of a project function is followed into the
                # caller of this function (reported where it is finally kept), not here.
                state.reported.add(label)
                continue
            final_code, final_site = code, site
            entry_sites = sorted(
                (entry_site for entry_label, entry_site in value.entries if entry_label == label),
                key=lambda s: (s.line, s.col),
            )
            if entry_sites:
                final_code, final_site = "SHM103", entry_sites[0]
            if value.closure:
                final_code = "SHM107"
            if self.dropped is not None and self.dropped(final_code, final_site.line):
                continue
            payload = rate(label, value, sink)
            confidence = confidence_for(label.kind, payload.evidence)
            if (
                self.dropped is not None
                and confidence is not None
                and confidence.rank < self.options.min_confidence.rank
            ):
                state.passed.add(label)  # (a later sink's own evidence may reach the threshold)
                continue
            state.reported.add(label)
            if confidence is None:
                continue
            key = (final_code, final_site, label.key)
            found = RawFinding(
                final_code, final_site, label, confidence, why=payload.why, payload=payload
            )
            self.findings.setdefault(key, found)
