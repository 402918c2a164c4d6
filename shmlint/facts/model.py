"""The merge of every module summary: project-wide facts phase 2 checks each file against.

- ``slot_kinds``: which Ray handles (compiled graph, compiled-graph ref...) each attribute,
  parameter and return value may hold, by any construction path in the project (a fixpoint
  over the recorded flows; a channel anywhere wins over plain refs elsewhere).
- ``returned_reads``: functions that return an undetached read, with the chain of calls.
- ``classes``: each class's fields with their payload evidence, resolved transitively through
  NamedTuples / dataclasses / Optional / unions and across modules.

All of it is plain data, so it can be pickled to worker processes and written as JSON
(``shmlint check --write-summary``) for the flake8 plugin.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, Protocol

from shmlint.basics.stamps import stale
from shmlint.facts.evidence import (
    FRESH_RESULT,
    PASSES_INPUT,
    UNKNOWN_PAYLOAD,
    Evidence,
    Payload,
    fresh_returns,
)
from shmlint.facts.index import FactsIndex
from shmlint.facts.packed import encode_tables, pack, tables_digest
from shmlint.facts.records import (
    FORMAT,
    ClassFact,
    ReadChain,
    ReturnFact,
    decode_class,
    decode_reads,
    decode_return,
    encode_class,
    encode_reads,
    encode_return,
)

MODEL_OUTPUT_FIELD = "logprobs"  # what makes a payload class a model-runner output
ALIAS_DEPTH = 16


def realias(aliases: dict[str, str], name: str) -> str | None:
    """``name`` with its longest prefix that is an alias (``module.local``) replaced by what
    it aliases; None when no prefix is one (a step of :meth:`ProjectFacts.canonical`)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        head = ".".join(parts[:cut])
        target = aliases.get(head)
        if target is not None and target != head:
            return ".".join([target, *parts[cut:]])
    return None


class ExternalLookup(Protocol):
    """Rates classes of installed packages by name (see shmlint.facts.external)."""

    def lookup(self, name: str) -> ClassFact | None:
        """The class ``name`` read from an installed package, or None."""


@dataclasses.dataclass(slots=True)
class ProjectFacts:
    """Merged facts of a project (or of one file, in per-file mode)."""

    modules: dict[str, tuple[str, bool]] = dataclasses.field(default_factory=dict)  # path, pkg
    aliases: dict[str, str] = dataclasses.field(default_factory=dict)
    functions: set[str] = dataclasses.field(default_factory=set)
    classes: dict[str, ClassFact] = dataclasses.field(default_factory=dict)
    slot_kinds: dict[str, frozenset[str]] = dataclasses.field(default_factory=dict)
    returned_reads: dict[str, ReadChain] = dataclasses.field(default_factory=dict)
    # What functions return (rated annotations), which run remotely, and the methods of actor
    # classes by their last name (`handle.m.remote()` resolves by name).
    returns: dict[str, ReturnFact] = dataclasses.field(default_factory=dict)
    remote: set[str] = dataclasses.field(default_factory=set)
    actor_methods: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    # The actor classes: `@ray.remote`, or made remote anywhere (`ray.remote(...)(Cls)`).
    actors: set[str] = dataclasses.field(default_factory=set)
    # Installed packages' files whose classes are in ``classes``, with their mtime: cached
    # facts are stale when one of them changed (a package upgrade).
    external_files: dict[str, int] = dataclasses.field(default_factory=dict)
    # Classes outside the tree, looked up by name on demand (None: `external-types = false`).
    # Not serialised: who loads facts attaches it (the classes phase 1 asked about are merged
    # into ``classes``, so they count in the digest).
    external: ExternalLookup | None = dataclasses.field(default=None, repr=False, compare=False)
    # What the merge and the plan looked up that these facts lack (None: not known). Kept
    # beside them, not in their digest (shmlint/facts/added.py).
    index: FactsIndex | None = dataclasses.field(default=None, repr=False, compare=False)
    _readers: tuple[frozenset[str], dict[str, frozenset[str]]] | None = dataclasses.field(
        default=None, repr=False, compare=False
    )
    _canonical: dict[str, str] = dataclasses.field(default_factory=dict, repr=False, compare=False)
    _reader_words: frozenset[bytes] | None = dataclasses.field(
        default=None, repr=False, compare=False
    )
    _reader_pattern: re.Pattern[bytes] | None = dataclasses.field(
        default=None, repr=False, compare=False
    )
    # The classes the merge is rating (shmlint/facts/merge.py): a name stops at one as at a
    # class already rated, so what rates a class never depends on the order they are rated in.
    _pending: frozenset[str] = dataclasses.field(default=frozenset(), repr=False, compare=False)
    # Not copied by dataclasses.replace (init=False): facts with other tables digest anew.
    _digest: str | None = dataclasses.field(default=None, init=False, repr=False, compare=False)
    # The module-level readers by last name (call_evidence asks it of every file).
    _by_last: dict[bytes, list[tuple[int, str]]] | None = dataclasses.field(
        default=None, init=False, repr=False, compare=False
    )

    # --- lookups ---------------------------------------------------------------------------------

    def canonical(self, name: str) -> str:
        """``name`` with re-exports followed (``pkg.Output`` → ``pkg.outputs.Output``)."""
        known = self._canonical.get(name)
        if known is None:
            known = self._canonical[name] = self._follow(name)
        return known

    def _follow(self, name: str) -> str:
        return self.steps(name)[-1]

    def steps(self, name: str) -> list[str]:
        """``name`` and each name :meth:`canonical` steps through from it, in order (the
        last is its canonical name)."""
        steps = [name]
        for _ in range(ALIAS_DEPTH):
            if name in self.classes or name in self.functions or name in self._pending:
                break
            step = realias(self.aliases, name)
            if step is None:
                break
            name = step
            steps.append(name)
        return steps

    def kinds(self, slot: str) -> frozenset[str]:
        """The handle kinds a slot may hold (``ret:`` names are canonicalised)."""
        if slot.startswith("ret:"):
            slot = "ret:" + self.canonical(slot[4:])
        return self.slot_kinds.get(slot, frozenset())

    def attr_kinds(self, class_name: str, attr: str) -> frozenset[str]:
        """Kinds of ``self.attr`` in ``class_name``, looking through project base classes."""
        seen: set[str] = set()
        todo = [class_name]
        kinds: frozenset[str] = frozenset()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            kinds |= self.slot_kinds.get(f"attr:{name}.{attr}", frozenset())
            fact = self.classes.get(name)
            if fact is not None:
                todo.extend(fact.bases)
        return kinds

    def class_named(self, name: str) -> ClassFact | None:
        """The class ``name`` (canonical or absolute): the project's, else an installed
        package's when external types are on."""
        name = self.canonical(name)
        fact = self.classes.get(name)
        if fact is None and self.external is not None:
            fact = self.external.lookup(name)
        return fact

    def function_payload(self, name: str) -> Payload | None:
        """What calling (or reading the ref of) project function ``name`` gives; None when
        ``name`` is no project function."""
        name = self.canonical(name)
        if name not in self.functions and name not in self.returns and name not in self.remote:
            return None
        fact = self.returns.get(name)
        if fact is not None and fact.text == PASSES_INPUT:
            return Payload(Evidence.UNKNOWN, PASSES_INPUT)
        fresh = fact is not None and fact.text.startswith(FRESH_RESULT)
        if fact is None or fact.evidence is Evidence.UNKNOWN:
            return Payload(fresh=True) if fresh else UNKNOWN_PAYLOAD
        model_output = MODEL_OUTPUT_FIELD in fact.fields
        return Payload(fact.evidence, self._why(name, fact), model_output, fresh)

    def returns_nothing(self, name: str) -> bool:
        """True when project function ``name`` returns nothing: its return annotation is
        ``None``, or (unannotated) it returns no value. (``function_payload`` names the same
        text: a question about it is answered by the payload's answer.)"""
        fact = self.returns.get(self.canonical(name))
        return fact is not None and fresh_returns(fact.text)[1].strip("'\" ") == "None"

    def is_project_callable(self, name: str) -> bool:
        """True when ``name`` is a function or class of the project."""
        name = self.canonical(name)
        return name in self.functions or name in self.classes

    def is_remote(self, name: str) -> bool:
        """True for a ``@ray.remote`` function or a method of an actor class."""
        return self.canonical(name) in self.remote

    def actor_method_payload(self, method: str) -> Payload | None:
        """What ``handle.<method>.remote()`` gives, resolved by name among the actor classes
        (evidence only where every class defining the method agrees); None: no actor class
        defines it."""
        names = self.actor_methods.get(method)
        if not names:
            return None
        payloads = [self.function_payload(name) or UNKNOWN_PAYLOAD for name in names]
        if len({(p.evidence, p.why == PASSES_INPUT) for p in payloads}) != 1:
            return UNKNOWN_PAYLOAD
        return dataclasses.replace(payloads[0], fresh=False)  # (what reading its ref gives)

    def _why(self, name: str, fact: ReturnFact) -> str:
        owner, _, last = name.rpartition(".")
        label = f"{owner.rpartition('.')[2]}.{last}" if owner in self.classes else last
        kind = "function"
        if name in self.remote:
            kind = "remote method" if owner in self.classes else "remote function"
        verb = "evidently returns" if fact.inferred else "returns"
        text = fresh_returns(fact.text)[1]
        text = text if len(text) <= 60 else text[:59] + "…"
        named = ", ".join(f"`{f}`" for f in fact.fields[:3])
        arrays = f", which holds arrays ({named})" if named else ""
        return f"{kind} `{label}` {verb} `{text}`{arrays}"

    def answer(self, question: str) -> str:
        """The answer to a question a module's analysis asked (``ProjectView.deps``), as a
        string: equal answers from two sets of facts mean an equal analysis."""
        kind, _, key = question.partition(":")
        if kind == "k":
            return ",".join(sorted(self.kinds(key)))
        if kind == "a":
            class_name, _, attr = key.partition("|")
            return ",".join(sorted(self.attr_kinds(class_name, attr)))
        if kind == "r":
            return repr(self.returned_reads.get(self.canonical(key)))
        if kind == "c":
            # What the analysis uses of a class: its evidence, and (SHM301) its array fields.
            fact = self.class_named(key)
            if fact is None:
                return Evidence.UNKNOWN.name
            fields = fact.array_fields()
            named = f"|{fact.name}|{fields!r}" if fields else ""
            return fact.evidence.name + named
        if kind == "p":
            return repr(self.function_payload(key))
        if kind == "m":
            return repr(self.actor_method_payload(key))
        if kind == "F":
            fact = self.class_named(key)
            if fact is None:
                return "None"
            return repr((fact.record, [(f.name, f.evidence.name) for f in fact.fields]))
        if kind == "x":
            return repr((self.is_project_callable(key), self.is_remote(key)))
        if kind == "n":
            # A name the analysis looked up for an answer it did not use (a sink's declared
            # type no read reached, ProjectView.names_only): the merge follows it, as it
            # follows a class question, but no answer to it can change the analysis.
            return ""
        raise ValueError(f"unknown question {question!r}")

    def _reader_index(self) -> tuple[frozenset[str], dict[str, frozenset[str]]]:
        """Module-level functions returning a read (by last name), and per module defining
        any reader the last names of its methods that do (callable as ``self.m()`` in that
        module only)."""
        if self._readers is None:
            functions: set[str] = set()
            methods: dict[str, set[str]] = {}
            for name in self.returned_reads:
                owner, _, last = name.rpartition(".")
                if owner in self.classes:
                    methods.setdefault(owner.rpartition(".")[0], set()).add(last)
                else:
                    functions.add(last)
                    methods.setdefault(owner, set())  # its module calls it by its bare name
            self._readers = (
                frozenset(functions),
                {module: frozenset(names) for module, names in methods.items()},
            )
        return self._readers

    def reader_index(self) -> tuple[frozenset[str], dict[str, frozenset[str]]]:
        """The readers by last name (see ``_reader_index``): what a replay of a file's
        lookups (shmlint.facts.lookups) carries whole."""
        return self._reader_index()

    def set_reader_index(
        self, functions: frozenset[str], methods: dict[str, frozenset[str]]
    ) -> None:
        """Facts rebuilt from a log of lookups: their reader index, as recorded."""
        self._readers = (functions, methods)
        self._reader_words = self._reader_pattern = None

    def gate_words(self, module: str) -> frozenset[str]:
        """Names whose calls are reads in ``module`` (for its per-body gate)."""
        functions, methods = self._reader_index()
        return functions | methods.get(module, frozenset())

    def defines_readers(self, module: str) -> bool:
        """``module`` defines a function or method that returns a read (its own calls of it
        are reads)."""
        return module in self._reader_index()[1]

    def reader_words(self) -> frozenset[bytes]:
        """The last names of module-level functions returning a read, as bytes."""
        if self._reader_words is None:
            self._reader_words = frozenset(n.encode() for n in self._reader_index()[0] if n)
        return self._reader_words

    def reader_pattern(self) -> re.Pattern[bytes]:
        """A byte pattern matching the name of a module-level function returning a read."""
        if self._reader_pattern is None:
            words = "|".join(sorted(re.escape(n) for n in self._reader_index()[0] if n))
            self._reader_pattern = re.compile(
                rb"\b(?:" + words.encode() + rb")\b" if words else rb"(?!)"
            )
        return self._reader_pattern

    def call_evidence(
        self,
        imports: tuple[tuple[str, str], ...],
        data: bytes,
        spelled: frozenset[bytes] | None = None,
    ) -> tuple[frozenset[bytes], tuple[bytes, ...] | None]:
        """Whether a module with these imports and this text may call a module-level function
        of another module that returns a read (it imports the function or a re-export of it,
        or imports a module above it and spells the rest of its dotted name), as evidence:
        the readers' last names ``data`` spells, and the dotted names whose presence in the
        text makes it call one (None: it does, by an import alone). For any text spelling no
        other reader name the evidence is the same: a warm run decides an edited file by it
        without these facts (shmlint/run/incremental.py). ``spelled``: the readers' names
        ``data`` spells, when known (the last run's scan of the same bytes for the same
        names, :meth:`reader_words`): the text is not scanned again."""
        # Substring tests (C memmem) beat one regex with many alternatives; a name inside a
        # longer word only costs a closer look below.
        if spelled is None:
            spelled = frozenset(word for word in self.reader_words() if word in data)
        if not spelled:
            return spelled, ()
        if self._by_last is None:
            self._by_last = {}
            for index, name in enumerate(self.returned_reads):
                owner, _, last = name.rpartition(".")
                if owner not in self.classes:
                    self._by_last.setdefault(last.encode(), []).append((index, name))
        found = sorted(entry for word in spelled for entry in self._by_last.get(word, ()))
        readers = [name for _, name in found]  # in the table's order
        needles: list[bytes] = []
        for local, target in imports:
            base = self.canonical(target)
            for reader in readers:
                last = reader.rpartition(".")[2]
                if base == reader:
                    return spelled, None
                if reader.startswith(base + "."):
                    needles.append(f"{local}.{reader[len(base) + 1 :]}".encode())
                elif self.canonical(f"{target}.{last}") == reader:
                    needles.append(f"{local}.{last}".encode())
        return spelled, tuple(needles)

    def may_matter(self, text: str) -> bool:
        """Whether a file that mentions no read (and no helper shape) may still have project
        findings: it names a module-level function that returns a read."""
        return self.reader_pattern().search(text.encode("utf-8", "surrogateescape")) is not None

    def digest(self) -> str:
        """A stable digest (part of phase-2 cache keys): of the tables' content
        (:func:`pack`, :func:`encode_tables`), or the one assumed (:meth:`assume_digest`)."""
        if self._digest is None:
            self._digest = tables_digest(encode_tables(pack(self)))
        return self._digest

    @property
    def digested(self) -> bool:
        """True when the digest is known (computed or assumed)."""
        return self._digest is not None

    def assume_digest(self, digest: str) -> None:
        """Take ``digest`` as these facts' digest: facts derived from others (relined,
        shmlint/facts/moved.py) are digested by their derivation, which names their content
        as surely as their JSON (other facts never get it), for ~0.15 s less on the ray
        wheel. The same facts merged have another digest: phase 2's cache misses, no more."""
        self._digest = digest

    def canonical_json(self) -> str:
        """The ``--write-summary`` JSON as canonical text (keys sorted): equal facts, equal
        text."""
        return json.dumps(self.to_json(), sort_keys=True)

    # --- serialisation ---------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The ``--write-summary`` format."""
        return {
            "format": FORMAT,
            "modules": {m: list(v) for m, v in sorted(self.modules.items())},
            "aliases": dict(sorted(self.aliases.items())),
            "functions": sorted(self.functions),
            "classes": {name: encode_class(c) for name, c in sorted(self.classes.items())},
            "slot_kinds": {s: sorted(k) for s, k in sorted(self.slot_kinds.items())},
            "returned_reads": encode_reads(self.returned_reads),
            "returns": {name: encode_return(r) for name, r in sorted(self.returns.items())},
            "remote": sorted(self.remote),
            "actor_methods": {m: list(n) for m, n in sorted(self.actor_methods.items())},
            "actors": sorted(self.actors),
            "external_files": dict(sorted(self.external_files.items())),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProjectFacts:
        """Load ``--write-summary`` output; raises ``ValueError`` for another format."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError("not a shmlint summary of this format")
        facts = cls()
        facts.modules = {m: (str(v[0]), bool(v[1])) for m, v in data["modules"].items()}
        facts.aliases = {str(k): str(v) for k, v in data["aliases"].items()}
        facts.functions = set(data["functions"])
        facts.classes = {name: decode_class(name, c) for name, c in data["classes"].items()}
        facts.slot_kinds = {s: frozenset(k) for s, k in data["slot_kinds"].items()}
        facts.returned_reads = decode_reads(data["returned_reads"])
        facts.returns = {name: decode_return(r) for name, r in data["returns"].items()}
        facts.remote = set(data["remote"])
        facts.actor_methods = {m: tuple(n) for m, n in data["actor_methods"].items()}
        facts.actors = set(map(str, data["actors"]))
        facts.external_files = {str(p): int(t) for p, t in data["external_files"].items()}
        return facts

    def external_files_changed(self) -> bool:
        """True when an installed file these facts read has changed or gone since."""
        return stale(self.external_files.items())


__all__ = ["ProjectFacts"]
