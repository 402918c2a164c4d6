"""The project facts' tables packed as plain tuples and dicts: their digest, and the cache's
binary form (shmlint/facts/binary.py)."""

from __future__ import annotations

import hashlib
import marshal
from typing import Any, Protocol

from shmlint.facts.records import FORMAT, ClassFact, FieldFact, ReadChain, ReturnFact


class Tables(Protocol):
    """The tables of the project facts (shmlint.facts.model.ProjectFacts) that are packed."""

    modules: dict[str, tuple[str, bool]]
    aliases: dict[str, str]
    functions: set[str]
    classes: dict[str, ClassFact]
    slot_kinds: dict[str, frozenset[str]]
    returned_reads: dict[str, ReadChain]
    returns: dict[str, ReturnFact]
    remote: set[str]
    actor_methods: dict[str, tuple[str, ...]]
    external_files: dict[str, int]
    actors: set[str]


def pack(facts: Tables) -> tuple[Any, ...]:
    """The tables of ``facts`` as plain tuples and dicts, in the order of their keys (equal
    facts give equal tuples), each distinct field and return fact once."""
    fields: dict[FieldFact, int] = {}
    returns: dict[ReturnFact, int] = {}
    classes = tuple(
        (
            name,
            fact.path,
            fact.line,
            fact.bases,
            tuple(fields.setdefault(field, len(fields)) for field in fact.fields),
            fact.evidence.value,
            fact.record,
        )
        for name, fact in sorted(facts.classes.items())
    )
    named_returns = {
        name: returns.setdefault(fact, len(returns)) for name, fact in sorted(facts.returns.items())
    }
    return (
        FORMAT,
        dict(sorted(facts.modules.items())),
        dict(sorted(facts.aliases.items())),
        tuple(sorted(facts.functions)),
        classes,
        tuple((f.name, f.path, f.line, f.evidence.value, f.zero_copy) for f in fields),
        {slot: tuple(sorted(kinds)) for slot, kinds in sorted(facts.slot_kinds.items())},
        tuple(
            (name, r.kind.value, r.path, r.line, r.via)
            for name, r in sorted(facts.returned_reads.items())
        ),
        tuple((r.evidence.value, r.text, r.inferred, r.fields) for r in returns),
        named_returns,
        tuple(sorted(facts.remote)),
        dict(sorted(facts.actor_methods.items())),
        dict(sorted(facts.external_files.items())),
        tuple(sorted(facts.actors)),
    )


def encode_tables(tables: tuple[Any, ...]) -> bytes:
    """The packed tables as bytes (marshal): equal tables, equal bytes."""
    # Version 2: no references between objects and no mark of interned strings (both came
    # in version 3), so that equal tables give equal bytes, whatever objects hold them.
    return marshal.dumps(tables, 2)


def tables_digest(encoded: bytes) -> str:
    """The facts' digest, of their encoded tables."""
    return hashlib.sha256(b"shmlint facts\0" + encoded).hexdigest()
