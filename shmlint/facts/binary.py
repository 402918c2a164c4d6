"""Project facts in the cache's binary form: ``marshal`` of plain tuples and dicts.

Every warm run that re-checks against the facts, relines them or grows them loads the last
run's whole facts first: on the ray wheel 9 MB of JSON, ~0.1 s (reading and decoding the text
0.06 s, building the objects 0.045 s), a third of such a run. ``marshal`` reads the same
tables as plain tuples in ~0.02 s, and a field or return fact shared by many entries (20,732
return facts on the ray wheel, 2,888 distinct) is stored once and built once. The JSON form
stays what ``--write-summary`` writes.

The facts' digest (part of phase-2 cache keys, ``ProjectFacts.digest``) is of the same tables
(``model.pack``), in their keys' order, as marshal writes them without references between
objects (``model.encode_tables``): equal facts give equal bytes (~0.015 s on the ray wheel,
where their JSON with sorted keys took ~0.1 s), and storing them encodes them once.

A blob is checked before it is read: its Python version (``marshal``'s format is CPython's
own), its key and a CRC of the data (a truncated or damaged file is a miss, never a crash).
"""

from __future__ import annotations

import marshal
import sys
import zlib
from typing import Any

from shmlint.basics.types import SourceKind
from shmlint.facts.evidence import Evidence
from shmlint.facts.index import FactsIndex
from shmlint.facts.model import ProjectFacts
from shmlint.facts.packed import encode_tables, pack, tables_digest
from shmlint.facts.records import FORMAT, ClassFact, FieldFact, ReadChain, ReturnFact

MAGIC = b"shmlint-facts\0"
# The layout of the tuples below (bump when it changes; the cache's code digest changes too).
LAYOUT = 1
_HEADER = MAGIC + bytes([LAYOUT, sys.version_info[0], sys.version_info[1]])
_CRC_BYTES = 4
_LENGTH_BYTES = 4


def dumps(key: str, facts: ProjectFacts) -> bytes:
    """``facts`` (with their digest and index) stored under ``key``, as bytes."""
    tables = encode_tables(pack(facts))
    if not facts.digested:
        facts.assume_digest(tables_digest(tables))
    index = None if facts.index is None else facts.index.to_json()
    head = marshal.dumps((key, facts.digest(), index))
    data = len(head).to_bytes(_LENGTH_BYTES, "little") + head + tables
    return _HEADER + zlib.crc32(data).to_bytes(_CRC_BYTES, "little") + data


def loads(blob: bytes, key: str) -> ProjectFacts | None:
    """The facts :func:`dumps` stored under ``key`` (their digest assumed, their index
    attached); None for a blob of another key, layout or Python, or a damaged one."""
    start = len(_HEADER) + _CRC_BYTES
    if not blob.startswith(_HEADER) or len(blob) < start + _LENGTH_BYTES:
        return None
    data = memoryview(blob)[start:]
    if zlib.crc32(data) != int.from_bytes(blob[len(_HEADER) : start], "little"):
        return None
    try:
        length = int.from_bytes(data[:_LENGTH_BYTES], "little")
        stored, digest, index = marshal.loads(data[_LENGTH_BYTES : _LENGTH_BYTES + length])
        tables = marshal.loads(data[_LENGTH_BYTES + length :])
        if stored != key or tables[0] != FORMAT:
            return None
        facts = _facts(tables)
        facts.index = None if index is None else FactsIndex.from_json(index)
    except (EOFError, ValueError, TypeError, KeyError, IndexError):
        return None
    facts.assume_digest(digest)
    return facts


def _facts(tables: tuple[Any, ...]) -> ProjectFacts:
    (_, modules, aliases, functions, classes, fields, slot_kinds, reads) = tables[:8]
    returns, named_returns, remote, actor_methods, external_files, actors = tables[8:]
    evidence = {e.value: e for e in Evidence}
    field_facts = [FieldFact(n, p, line, evidence[e], z) for n, p, line, e, z in fields]
    return_facts = [ReturnFact(evidence[e], t, i, f) for e, t, i, f in returns]
    return ProjectFacts(
        modules=modules,
        aliases=aliases,
        functions=set(functions),
        classes={
            name: ClassFact(
                name, path, line, bases, tuple(field_facts[i] for i in own), evidence[e], record
            )
            for name, path, line, bases, own, e, record in classes
        },
        slot_kinds={slot: frozenset(kinds) for slot, kinds in slot_kinds.items()},
        returned_reads={
            name: ReadChain(SourceKind(kind), path, line, via)
            for name, kind, path, line, via in reads
        },
        returns={name: return_facts[i] for name, i in named_returns.items()},
        remote=set(remote),
        actor_methods=actor_methods,
        external_files=external_files,
        actors=set(actors),
    )
