"""Every entry of the source, sink, sanitizer and view tables has a fixture case that fails
when the entry is dropped from its table or moved to the opposite one.

The tables are read from ``shmlint.basics.catalog`` itself: a new entry without a case, or a new
table
this test does not know, fails here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shmlint.analysis.engine import check_path
from shmlint.basics import catalog
from shmlint.basics.config import Config
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence
from tests.fixture_markers import expected_reports, fixture_files

MEDIUM = Config(options=Options(min_confidence=Confidence.MEDIUM))

Tables = dict[str, frozenset[str]]
Mutation = Callable[[Tables, str], None]


def _drop(tables: Tables, table: str, entry: str) -> None:
    tables[table] = tables[table] - {entry}


def _dropped_from(table: str) -> Mutation:
    return lambda tables, entry: _drop(tables, table, entry)


def _copy_call_made_a_view(tables: Tables, entry: str) -> None:
    """A copying call dropped; numpy's and torch's become views (their default is a copy)."""
    _drop(tables, "COPY_CALLS", entry)
    head, _, last = entry.rpartition(".")
    views = {"numpy": "NUMPY_VIEW_FUNCTIONS", "torch": "TORCH_VIEW_FUNCTIONS"}.get(head)
    if views is not None:
        tables[views] = tables[views] | {last}


# How each table's entries are mutated. Dropping a method, builtin or attribute that copies
# makes it an unknown call on the value (a view); dropping a numpy or torch view makes it a copy.
MUTATIONS: dict[str, Mutation] = {
    "RAY_GET": _dropped_from("RAY_GET"),
    "RAY_WAIT": _dropped_from("RAY_WAIT"),
    "COMPILE_METHODS": _dropped_from("COMPILE_METHODS"),
    "EXECUTE_METHODS": _dropped_from("EXECUTE_METHODS"),
    "EXECUTE_ASYNC_METHODS": _dropped_from("EXECUTE_ASYNC_METHODS"),
    "HELPER_NAMES": _dropped_from("HELPER_NAMES"),
    "COPY_CALLS": _copy_call_made_a_view,
    "CLEAN_BUILTINS": _dropped_from("CLEAN_BUILTINS"),
    "COPY_METHODS": _dropped_from("COPY_METHODS"),
    "CLEAN_ATTRIBUTES": _dropped_from("CLEAN_ATTRIBUTES"),
    "NUMPY_VIEW_FUNCTIONS": _dropped_from("NUMPY_VIEW_FUNCTIONS"),
    "TORCH_VIEW_FUNCTIONS": _dropped_from("TORCH_VIEW_FUNCTIONS"),
    "CONTAINER_METHODS": _dropped_from("CONTAINER_METHODS"),
    "CHANNEL_METHODS": _dropped_from("CHANNEL_METHODS"),
    "CONTAINER_FUNCTIONS": _dropped_from("CONTAINER_FUNCTIONS"),
    "REMOTE_METHODS": _dropped_from("REMOTE_METHODS"),
    "OPTIONS_METHODS": _dropped_from("OPTIONS_METHODS"),
    "HANDLE_CALLS": _dropped_from("HANDLE_CALLS"),
    "BIND_METHODS": _dropped_from("BIND_METHODS"),
    "REF_PASSING_BUILTINS": _dropped_from("REF_PASSING_BUILTINS"),
    "TO_THREAD_CALLS": _dropped_from("TO_THREAD_CALLS"),
    "EXECUTOR_METHODS": _dropped_from("EXECUTOR_METHODS"),
    "REF_FUTURE_METHODS": _dropped_from("REF_FUTURE_METHODS"),
    "FUTURE_RESULT_METHODS": _dropped_from("FUTURE_RESULT_METHODS"),
    "RAY_QUEUES": _dropped_from("RAY_QUEUES"),
    "QUEUE_READ_METHODS": _dropped_from("QUEUE_READ_METHODS"),
    "QUEUE_ASYNC_READ_METHODS": _dropped_from("QUEUE_ASYNC_READ_METHODS"),
    "NEXT_REF_METHODS": _dropped_from("NEXT_REF_METHODS"),
    "SERIALIZING_DECORATORS": _dropped_from("SERIALIZING_DECORATORS"),
    "RUN_COROUTINE_CALLS": _dropped_from("RUN_COROUTINE_CALLS"),
    "RUN_COROUTINE_METHODS": _dropped_from("RUN_COROUTINE_METHODS"),
    "WAIT_CALLS": _dropped_from("WAIT_CALLS"),
    "LAZY_IMPORTERS": _dropped_from("LAZY_IMPORTERS"),
    "ENUM_BASES": _dropped_from("ENUM_BASES"),
    "CAST_CALLS": _dropped_from("CAST_CALLS"),
}
# Payload-evidence and annotation tables: covered by the confidence fixtures, not entry by entry.
NOT_ENTRY_BY_ENTRY = {
    "COMPILED_DAG_TYPES",
    "COMPILED_REF_TYPES",
    "PLAIN_REF_TYPES",
    "ZERO_COPY_ARRAY_TYPES",
    "ZERO_COPY_ARRAY_NAMES",
    "TORCH_TYPES",
    "TORCH_NAMES",
    "ARRAY_FREE_TYPES",
    "ARRAY_FREE_LIBRARY_TYPES",
    "NUMPY_SCALAR_TYPES",
    "NEUTRAL_GENERICS",
    "RESULT_WRAPPERS",
}


def _tables() -> Tables:
    return {
        name: value
        for name, value in vars(catalog).items()
        if name.isupper() and isinstance(value, frozenset)
    }


def test_every_table_is_known() -> None:
    assert set(_tables()) == set(MUTATIONS) | NOT_ENTRY_BY_ENTRY


def _cases() -> Iterator[tuple[str, str]]:
    for table, entries in sorted(_tables().items()):
        if table in MUTATIONS:
            yield from ((table, entry) for entry in sorted(entries))


def _word(entry: str) -> str:
    return entry.rpartition(".")[2]


def _differs(path: Path) -> bool:
    result = check_path(path, str(path), MEDIUM)
    got = {(f.line, f.code, f.confidence.value) for f in result.findings}
    return got != expected_reports(path)


@pytest.mark.parametrize(("table", "entry"), list(_cases()), ids=lambda v: str(v))
def test_the_entry_has_a_failing_case(
    table: str, entry: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only fixtures that spell the entry can change: the others are not re-run.
    candidates = [p for p in fixture_files() if _word(entry) in p.read_text(encoding="utf-8")]
    assert candidates, f"no fixture spells {entry!r} ({table})"
    tables = _tables()
    MUTATIONS[table](tables, entry)
    for name, value in tables.items():
        monkeypatch.setattr(catalog, name, value)
    assert any(_differs(p) for p in candidates), f"no fixture fails without {table} {entry!r}"


def _scalar_cases() -> list[str]:
    return sorted(catalog.SCALAR_RESULT_CALLS)


@pytest.mark.parametrize("entry", _scalar_cases())
def test_the_scalar_call_has_a_failing_case(entry: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``SCALAR_RESULT_CALLS`` (a mapping, not a frozenset): each entry dropped, a fixture
    that spells it fails."""
    word = entry.rpartition(".")[2]
    candidates = [p for p in fixture_files() if word in p.read_text(encoding="utf-8")]
    assert candidates, f"no fixture spells {entry!r}"
    dropped = {k: v for k, v in catalog.SCALAR_RESULT_CALLS.items() if k != entry}
    monkeypatch.setattr(catalog, "SCALAR_RESULT_CALLS", dropped)
    assert any(_differs(p) for p in candidates), f"no fixture fails without {entry!r}"
