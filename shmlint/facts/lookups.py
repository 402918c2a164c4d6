"""What one file's analysis looked up in the project facts, and facts rebuilt from that.

On a large tree the merged facts are megabytes (the ray wheel's: 9 MB of JSON, 0.3 s to load),
and a warm run that re-checks one edited file against the facts of the last run would spend
most of its time loading them. But an analysis reads the facts only through a few tables,
one key at a time: canonical names (and the aliases, classes and functions behind them),
classes, functions, return facts, remote functions, the handle kinds of slots, actor methods,
the functions returning reads, plus the small index of those by last name. :func:`watched`
records every key a
file's analysis looks up, with what it found; :func:`replayed` builds facts whose tables
answer those keys from the record and load the whole facts (once, through ``load``) for any
other key. The analysis is a function of the answers it gets, so a re-check of the edited
file against the replayed facts finds what it finds against the whole facts — quickly when
the edit asks nothing new, and exactly either way.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, cast

from shmlint.facts.model import ProjectFacts
from shmlint.facts.records import (
    decode_class,
    decode_read,
    decode_return,
    encode_class,
    encode_read,
    encode_return,
)

# The tables looked up by key (``_canonical`` is the memo of ``canonical``: watching it logs
# every name resolved, also those a memo answered).
TABLES = (
    "_canonical",
    "aliases",
    "functions",
    "classes",
    "slot_kinds",
    "returns",
    "remote",
    "actor_methods",
    # (By key too: a read's line moved by an edit of its module is another answer only to the
    # files that looked that reader up, which cite it.)
    "returned_reads",
)
_ABSENT = object()
# The tables that are sets: a lookup finds membership (logged as ``True``).
_MEMBERS = frozenset({"functions", "remote"})


class LookupLog:
    """Per table, each key looked up with the value found (``_ABSENT``: not there)."""

    def __init__(self) -> None:
        self.seen: dict[str, dict[str, Any]] = {table: {} for table in TABLES}
        self.complete = True  # False: a table was iterated (the log cannot stand for it)

    def to_json(self) -> dict[str, Any]:
        """The log as JSON (what a replay also needs whole is :func:`shared_json`'s)."""
        tables: dict[str, dict[str, Any]] = {}
        for table, seen in self.seen.items():
            tables[table] = {key: _encode(table, key, value) for key, value in seen.items()}
        return {"tables": tables}


def shared_json(facts: ProjectFacts) -> dict[str, Any]:
    """What of ``facts`` a replay of any file's log needs whole: the index of the functions
    returning reads by last name (one per facts, not per log)."""
    functions, methods = facts.reader_index()
    return {"readers": [sorted(functions), {m: sorted(n) for m, n in sorted(methods.items())}]}


class _Watch:
    """A table seen through a log: lookups by key are recorded, anything else spoils it."""

    def __init__(self, table: Any, seen: dict[str, Any], log: LookupLog, members: bool) -> None:
        self._table, self._seen, self._log = table, seen, log
        self._members = members  # a set (functions, remote): membership is what is found

    def get(self, key: str, default: Any = None) -> Any:
        value = self._table.get(key, _ABSENT)
        self._seen[key] = value
        return default if value is _ABSENT else value

    def __contains__(self, key: object) -> bool:
        found = key in self._table
        if isinstance(key, str) and key not in self._seen:
            if not found:
                self._seen[key] = _ABSENT
            else:  # a set's member, or a mapping's value (the table may be a replay's)
                self._seen[key] = True if self._members else self._table[key]
        return found

    def __getitem__(self, key: str) -> Any:
        value = self._table.get(key, _ABSENT)
        self._seen[key] = value
        if value is _ABSENT:
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, value: Any) -> None:  # the ``canonical`` memo
        self._table[key] = value
        self._seen[key] = value

    def __iter__(self) -> Iterator[Any]:
        self._log.complete = False
        return iter(self._table)

    def __len__(self) -> int:
        self._log.complete = False
        return len(self._table)


@contextlib.contextmanager
def watched(facts: ProjectFacts) -> Iterator[LookupLog]:
    """Record the lookups made in ``facts`` inside the block (one file's analysis)."""
    log = LookupLog()
    facts.reader_index()  # (built by walking ``returned_reads``: once, not in a file's log)
    saved = {table: getattr(facts, table) for table in TABLES}
    for table, value in saved.items():
        setattr(facts, table, _Watch(value, log.seen[table], log, table in _MEMBERS))
    try:
        yield log
    finally:
        for table, value in saved.items():
            setattr(facts, table, value)


class FactsUnavailable(Exception):
    """A replay needed a lookup its log lacks, and the whole facts could not be loaded."""


class _Loader:
    """Loads the whole facts once, for every replay that misses."""

    def __init__(self, load: Callable[[], ProjectFacts | None]) -> None:
        self._load, self._facts = load, cast("ProjectFacts | None", None)
        self.loaded = False

    def table(self, name: str) -> Any:
        if self._facts is None:
            self._facts = self._load()
            self.loaded = True
            if self._facts is None:
                raise FactsUnavailable("the project facts of the last run are gone")
        return getattr(self._facts, name)


class _Partial(dict[str, Any]):
    """The keys a log saw (``absent``: those it saw missing); any other key, and any walk
    over the table, is answered by the whole table. The ``canonical`` memo is answered by
    itself: a name it does not hold is resolved again, through the other tables."""

    def __init__(self, name: str, known: dict[str, Any], absent: set[str], loader: _Loader):
        super().__init__(known)
        self._name, self._absent, self._loader = name, absent, loader

    def _whole(self) -> Any:
        if self._name == "_canonical":
            return {}
        return self._loader.table(self._name)

    def __contains__(self, key: object) -> bool:
        if dict.__contains__(self, key):
            return True
        if key in self._absent:
            return False
        return key in self._whole()

    def get(self, key: str, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        if key in self._absent:
            return default
        return self._whole().get(key, default)

    def __getitem__(self, key: str) -> Any:
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        if key in self._absent:
            raise KeyError(key)
        return self._whole()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._whole())

    def __len__(self) -> int:
        return len(self._whole())


def replayed(
    data: dict[str, Any], shared: dict[str, Any], load: Callable[[], ProjectFacts | None]
) -> ProjectFacts:
    """Facts answering the lookups of a log (:meth:`LookupLog.to_json`, with the facts'
    :func:`shared_json`) from it, and any other from the whole facts ``load`` returns
    (called at most once; None raises :class:`FactsUnavailable`). Raises
    ``KeyError``/``TypeError``/``ValueError`` for a log that is not of this format."""
    loader = _Loader(load)
    facts = ProjectFacts()
    for table in TABLES:
        known: dict[str, Any] = {}
        absent: set[str] = set()
        for key, value in data["tables"][table].items():
            if value is None:
                absent.add(str(key))
            else:
                known[str(key)] = _decode(table, key, value)
        setattr(facts, table, _Partial(table, known, absent, loader))
    functions, methods = shared["readers"]
    facts.set_reader_index(
        frozenset(map(str, functions)), {str(m): frozenset(n) for m, n in methods.items()}
    )
    return facts


def answers_same(data: dict[str, Any], facts: ProjectFacts) -> bool:
    """True when ``facts`` answer every lookup of a log (:meth:`LookupLog.to_json`) as the
    facts it was made against did: an analysis that made it finds the same against them
    (their :func:`shared_json` must be equal too). Raises ``KeyError``/``TypeError``/
    ``AttributeError`` for a log that is not of this format."""
    for table, entries in data["tables"].items():
        if table not in TABLES:
            return False
        if table == "_canonical":
            if any(facts.canonical(key) != value for key, value in entries.items()):
                return False
            continue
        current = getattr(facts, table)
        for key, value in entries.items():
            if key not in current:
                now = None
            else:
                now = _encode(table, key, current[key] if isinstance(current, dict) else True)
            if now != value:
                return False
    return True


def loaded(facts: ProjectFacts) -> bool:
    """True when replayed ``facts`` had to load the whole facts (for tests and benchmarks)."""
    table = cast(Any, facts.classes)
    return isinstance(table, _Partial) and table._loader.loaded


# Per table: a found value as JSON, and back (given its key). Sets (functions, remote) log
# membership as ``True``; names are strings already.
_CODECS: dict[str, tuple[Callable[[Any], Any], Callable[[str, Any], Any]]] = {
    "classes": (encode_class, decode_class),
    "returns": (encode_return, lambda key, value: decode_return(value)),
    "slot_kinds": (sorted, lambda key, value: frozenset(value)),
    "actor_methods": (list, lambda key, value: tuple(value)),
    "returned_reads": (encode_read, lambda key, value: decode_read(value)),
    "functions": (lambda value: True, lambda key, value: True),
    "remote": (lambda value: True, lambda key, value: True),
}
_NAMES: tuple[Callable[[Any], Any], Callable[[str, Any], Any]] = (
    lambda value: value,
    lambda key, value: str(value),
)


def _encode(table: str, key: str, value: Any) -> Any:
    return None if value is _ABSENT else _CODECS.get(table, _NAMES)[0](value)


def _decode(table: str, key: str, value: Any) -> Any:
    return _CODECS.get(table, _NAMES)[1](key, value)
