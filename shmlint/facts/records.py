"""The records of the project facts' tables (shmlint/facts/model.py): a class and its
fields, what a function returns, a returned read's chain; and each as JSON (the facts'
format, and shmlint.facts.lookups')."""

from __future__ import annotations

import dataclasses
from typing import Any

from shmlint.basics.types import SourceKind
from shmlint.facts.evidence import Evidence

# The facts' format (their JSON, ``--write-summary``, and their packed tables).
FORMAT = 4


@dataclasses.dataclass(frozen=True, slots=True)
class FieldFact:
    """A field of a project class and what its annotation says about arrays."""

    name: str
    path: str  # of the class that declares it (a base class, for inherited fields)
    line: int
    evidence: Evidence
    # Holds arrays Ray hands back zero-copy by default (numpy, pandas, pyarrow, configured
    # array types; not torch, which Ray copies): what a detach helper must copy.
    zero_copy: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class ClassFact:
    """A project class: where it is declared, its fields (own and inherited), its evidence."""

    name: str
    path: str
    line: int
    bases: tuple[str, ...]  # canonical
    fields: tuple[FieldFact, ...]
    evidence: Evidence
    record: bool = False  # dataclass / NamedTuple / ...: fields in constructor order

    def array_fields(self) -> tuple[FieldFact, ...]:
        """The fields that may hold zero-copy arrays (directly or nested in records): the
        ones a detach helper must handle."""
        return tuple(f for f in self.fields if f.zero_copy)


@dataclasses.dataclass(frozen=True, slots=True)
class ReturnFact:
    """What a project function returns: its annotation (or one ``inferred`` from evident
    return expressions) rated, and the array fields of the project classes it names."""

    evidence: Evidence
    text: str
    inferred: bool
    fields: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class ReadChain:
    """A function returns the undetached value of a read: the read, and the functions the
    value passes through on its way out (innermost first)."""

    kind: SourceKind
    path: str
    line: int
    via: tuple[str, ...]


# --- one entry of a table, as JSON (the facts' format, and shmlint.facts.lookups') ------------


def encode_class(fact: ClassFact) -> dict[str, Any]:
    """A class fact as JSON (its name is the key it is stored under)."""
    return {
        "path": fact.path,
        "line": fact.line,
        "bases": list(fact.bases),
        "evidence": fact.evidence.name,
        "record": fact.record,
        "fields": [[f.name, f.path, f.line, f.evidence.name, f.zero_copy] for f in fact.fields],
    }


def decode_class(name: str, data: dict[str, Any]) -> ClassFact:
    """The inverse of :func:`encode_class`; raises ``KeyError``/``TypeError``/``ValueError``."""
    fields = tuple(
        FieldFact(f[0], f[1], int(f[2]), Evidence[f[3]], bool(f[4])) for f in data["fields"]
    )
    return ClassFact(
        name,
        data["path"],
        int(data["line"]),
        tuple(data["bases"]),
        fields,
        Evidence[data["evidence"]],
        bool(data["record"]),
    )


def encode_return(fact: ReturnFact) -> list[Any]:
    """A return fact as JSON."""
    return [fact.evidence.name, fact.text, fact.inferred, list(fact.fields)]


def decode_return(data: list[Any]) -> ReturnFact:
    """The inverse of :func:`encode_return`."""
    return ReturnFact(Evidence[data[0]], str(data[1]), bool(data[2]), tuple(data[3]))


def encode_read(r: ReadChain) -> list[Any]:
    """One entry of ``returned_reads`` as JSON."""
    return [r.kind.value, r.path, r.line, list(r.via)]


def decode_read(r: list[Any]) -> ReadChain:
    """The inverse of :func:`encode_read`."""
    return ReadChain(SourceKind(r[0]), str(r[1]), int(r[2]), tuple(r[3]))


def encode_reads(reads: dict[str, ReadChain]) -> dict[str, list[Any]]:
    """``returned_reads`` as JSON."""
    return {name: encode_read(r) for name, r in sorted(reads.items())}


def decode_reads(data: dict[str, list[Any]]) -> dict[str, ReadChain]:
    """The inverse of :func:`encode_reads`."""
    return {name: decode_read(r) for name, r in data.items()}
