"""Deep detach of arbitrary structures: the engine behind ``detach_zero_copy``.

Two passes, so cycles and shared subtrees are handled exactly:

1. walk the object graph once, recording which containers hold (directly) an array that must be
   copied, and every container's parents; mark dirty every container from which such an array
   is reachable;
2. rebuild only the dirty containers (shallow copy, then replace dirty children), memoised by
   identity, so a shared subtree is rebuilt once and a cycle points at the rebuilt copy.

Clean subtrees are returned as the very same objects, and the input is never mutated.

What is a container and what it holds comes from :mod:`shmlint.runtime.walk`, shared with the
retention tracker.
"""

from __future__ import annotations

import copy
import sys
from typing import Any, TypeVar

from shmlint.runtime._arrays import needs_copy, rebuild_tuple
from shmlint.runtime.walk import (
    ARRAY,
    ARROW,
    DICT,
    LIST,
    PANDAS,
    TUPLE,
    children,
    kind_of,
    numpy_parts,
    record_items,
    set_record_item,
)

T = TypeVar("T")


def _pandas_dirty(value: Any) -> bool:
    manager = getattr(value, "_mgr", None)
    arrays = getattr(manager, "arrays", None)
    if arrays is None:  # an Index
        arrays = [getattr(value, "_data", None)]
    for array in arrays:
        parts = numpy_parts(array)
        if not parts:  # an array type we cannot see into: copying is the safe choice
            return True
        if any(needs_copy(part) for part in parts):  # type: ignore[arg-type]
            return True
    return False


def _arrow_dirty(value: Any) -> bool:
    # Ray hands pyarrow values back over immutable buffers that point into the object store.
    columns = getattr(value, "columns", None)
    if columns is not None:  # Table / RecordBatch
        return any(_arrow_dirty(column) for column in columns)
    chunks = getattr(value, "chunks", None)
    if chunks is not None:  # ChunkedArray
        return any(_arrow_dirty(chunk) for chunk in chunks)
    return any(buf is not None and not buf.is_mutable for buf in value.buffers())


def _arrow_copy(value: Any) -> Any:
    pa: Any = sys.modules["pyarrow"]
    if isinstance(value, pa.Table):
        return pa.Table.from_arrays([_arrow_copy(c) for c in value.columns], schema=value.schema)
    if isinstance(value, pa.RecordBatch):
        columns = [_arrow_copy(c) for c in value.columns]
        return pa.RecordBatch.from_arrays(columns, schema=value.schema)
    if isinstance(value, pa.ChunkedArray):
        return pa.chunked_array([_arrow_copy(c) for c in value.chunks], type=value.type)
    return pa.concat_arrays([value])  # allocates fresh buffers, even for one array


class Detacher:
    """One deep-detach run (its memo tables live as long as the run)."""

    def __init__(self) -> None:
        self._dirty: set[int] = set()
        self._memo: dict[int, object] = {}
        self._building: set[int] = set()
        self._keep_alive: list[object] = []  # ids are only stable while the objects live

    def detach(self, obj: T) -> T:
        """Return ``obj`` with every array that needs it copied (see module docstring)."""
        self._mark(obj)
        result: T = self._rebuild(obj)  # type: ignore[assignment]
        return result

    def _mark(self, root: object) -> None:
        parents: dict[int, list[int]] = {}
        seen: set[int] = set()
        stack = [root]
        while stack:
            value = stack.pop()
            key = id(value)
            if key in seen:
                continue
            seen.add(key)
            self._keep_alive.append(value)
            kind = kind_of(value)
            if kind == ARRAY:
                if needs_copy(value):  # type: ignore[arg-type]
                    self._dirty.add(key)
            elif kind == PANDAS:
                if _pandas_dirty(value):
                    self._dirty.add(key)
            elif kind == ARROW:
                if _arrow_dirty(value):
                    self._dirty.add(key)
            elif kind is not None:
                for child in children(value, kind):
                    if kind_of(child) is not None:
                        parents.setdefault(id(child), []).append(key)
                        stack.append(child)
        queue = list(self._dirty)
        while queue:
            for parent in parents.get(queue.pop(), ()):
                if parent not in self._dirty:
                    self._dirty.add(parent)
                    queue.append(parent)

    def _rebuild(self, value: object) -> object:
        key = id(value)
        if key not in self._dirty:
            return value
        if key in self._memo:
            return self._memo[key]
        kind = kind_of(value)
        if kind == ARRAY:
            new: object = value.copy()  # type: ignore[attr-defined]
        elif kind == PANDAS:
            new = value.copy(deep=True)  # type: ignore[attr-defined]
        elif kind == ARROW:
            new = _arrow_copy(value)
        elif kind == TUPLE:
            new = self._rebuild_tuple(value)  # type: ignore[arg-type]
        else:
            new = self._rebuild_mutable(value, kind)
        self._memo[key] = new
        return new

    def _rebuild_tuple(self, value: tuple[Any, ...]) -> object:
        key = id(value)
        if key in self._building:
            # A tuple reached again while its own items are being rebuilt (a cycle through a
            # mutable container): the copy does not exist yet, so the back edge keeps the original.
            return value
        self._building.add(key)
        items = [self._rebuild(item) for item in value]
        self._building.discard(key)
        if key in self._memo:  # built meanwhile through the cycle
            return self._memo[key]
        return rebuild_tuple(value, items)

    def _rebuild_mutable(self, value: Any, kind: int | None) -> object:
        # Shallow copy first and register it, so cycles through this container point at the copy.
        new: Any = copy.copy(value)
        self._memo[id(value)] = new
        if kind == DICT:
            for k, item in value.items():
                new[k] = self._rebuild(item)
        elif kind == LIST:
            for index, item in enumerate(value):
                new[index] = self._rebuild(item)
        else:
            for place, name, item in record_items(value):
                rebuilt = self._rebuild(item)
                if rebuilt is not item:
                    set_record_item(new, place, name, rebuilt)
        return new
