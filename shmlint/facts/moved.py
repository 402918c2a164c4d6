"""The facts after an edit that only moved a module's lines (shmlint/run/incremental.py).

A module's summary carries line numbers — a class's, a field's, a function's, a read's — and
the merge copies those of classes, fields and reads into the facts, where other files'
findings cite them ("its read at pkg/x.py:12"). An edit that inserts or deletes lines, the
commonest edit there is, changes those numbers and nothing else the module gives the merge.
The merge only carries line numbers along (no decision of it reads one), so the facts of the
edited tree are the last run's with the module's numbers replaced: no merge of the whole tree
(1.3 s after such an edit of the ray wheel).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

from shmlint.facts.model import ProjectFacts
from shmlint.facts.records import ClassFact, FieldFact, ReadChain
from shmlint.facts.summary import ModuleSummary

# A path's lines: each old line number, the new one.
Lines = dict[int, int]


def moved_lines(old: ModuleSummary, new: ModuleSummary) -> Lines | None:
    """Each line of ``old`` the facts can carry (a class's, a field's, a read's) → its line in
    ``new``, when ``new`` is ``old`` with only line numbers changed and each old line gone
    to one new line; None otherwise."""
    if _unlined(old) != _unlined(new):
        return None
    pairs = [(a.line, b.line) for a, b in zip(old.classes, new.classes, strict=True)]
    for before, after in zip(old.classes, new.classes, strict=True):
        pairs += [(a.line, b.line) for a, b in zip(before.fields, after.fields, strict=True)]
    pairs += [(a.line, b.line) for a, b in zip(old.reads, new.reads, strict=True)]
    lines: Lines = {}
    for before_line, after_line in pairs:
        if lines.setdefault(before_line, after_line) != after_line:
            return None  # (a line split in two: `def f(r): return ray.get(r)` unfolded)
    return lines


def _unlined(summary: ModuleSummary) -> ModuleSummary:
    """``summary`` with every line number 0."""
    classes = tuple(
        dataclasses.replace(
            info, line=0, fields=tuple(dataclasses.replace(f, line=0) for f in info.fields)
        )
        for info in summary.classes
    )
    functions = tuple(dataclasses.replace(f, line=0) for f in summary.functions)
    reads = tuple(dataclasses.replace(r, line=0) for r in summary.reads)
    return dataclasses.replace(summary, classes=classes, functions=functions, reads=reads)


def relined(facts: ProjectFacts, moved: dict[str, Lines]) -> ProjectFacts | None:
    """``facts`` with the lines of the files ``moved`` (path → :func:`moved_lines`) replaced,
    as the merge of the moved summaries would give them (``facts`` itself when they carry no
    line that moved); None when they carry a line of such a file the mapping lacks (not one
    the summaries gave)."""
    classes: dict[str, ClassFact] = {}
    for name, fact in facts.classes.items():
        if fact.path in moved or any(field.path in moved for field in fact.fields):
            line = _line(moved, fact.path, fact.line)
            fields = tuple(_field(moved, field) for field in fact.fields)
            if line is None or None in fields:
                return None
            fact = dataclasses.replace(fact, line=line, fields=fields)  # type: ignore[arg-type]
        classes[name] = fact
    reads: dict[str, ReadChain] = {}
    for name, chain in facts.returned_reads.items():
        if chain.path in moved:
            line = _line(moved, chain.path, chain.line)
            if line is None:
                return None
            chain = dataclasses.replace(chain, line=line)
        reads[name] = chain
    if classes == facts.classes and reads == facts.returned_reads:
        return facts
    # (Memos by name stand: no name changed; the canonical one is not shared. The digest is
    # not copied: dataclasses.replace leaves it to be computed anew.)
    return dataclasses.replace(facts, classes=classes, returned_reads=reads, _canonical={})


def _line(moved: dict[str, Lines], path: str, line: int) -> int | None:
    lines = moved.get(path)
    return line if lines is None else lines.get(line)


def _field(moved: dict[str, Lines], field: FieldFact) -> FieldFact | None:
    if field.path not in moved:
        return field
    line = _line(moved, field.path, field.line)
    return None if line is None else dataclasses.replace(field, line=line)


def relined_digest(base: str, moved: dict[str, Lines], added: list[Any] | None = None) -> str:
    """The digest of the facts with digest ``base`` relined by ``moved`` and knowing the
    functions ``added`` (``Growth.content``, shmlint/facts/added.py)
    (``ProjectFacts.assume_digest``): of the derivation, not of their JSON."""
    derivation: list[Any] = ["relined", base, encode_moved(moved)]
    if added is not None:
        derivation.append(added)
    return hashlib.sha256(json.dumps(derivation).encode()).hexdigest()


def encode_moved(moved: dict[str, Lines]) -> list[Any]:
    """``moved`` as JSON: per path, sorted, the pairs of lines."""
    return [[path, sorted(lines.items())] for path, lines in sorted(moved.items())]


def decode_moved(data: list[Any]) -> dict[str, Lines]:
    """The inverse of :func:`encode_moved`; raises ``TypeError``/``ValueError``."""
    return {str(path): {int(old): int(new) for old, new in pairs} for path, pairs in data}
