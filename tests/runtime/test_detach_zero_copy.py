"""``detach_zero_copy``: deep, non-mutating, structure-preserving, cycle-safe."""

from __future__ import annotations

import collections
import dataclasses
from typing import Any, NamedTuple

import numpy as np
import pytest

from shmlint.runtime import detach_zero_copy, is_zero_copy
from tests.runtime.outputs import readonly


def _detached(new: Any, old: Any) -> bool:
    return (
        new is not old
        and new.flags.writeable
        and np.array_equal(new, old)
        and not np.shares_memory(new, old)
    )


def test_bare_arrays() -> None:
    ro = readonly(np.arange(6))
    assert _detached(detach_zero_copy(ro), ro)
    rw = np.arange(6)
    assert detach_zero_copy(rw) is rw


def test_dict_and_list_rebuild_only_the_dirty_path() -> None:
    clean = {"a": [1, 2], "b": np.ones(3)}
    ro = readonly(np.arange(3))
    data = {"dirty": [0, ro], "clean": clean, "n": 5}
    snapshot = dict(data)
    result = detach_zero_copy(data)
    assert result is not data
    assert data == snapshot and data["dirty"][1] is ro  # input not mutated
    assert result["clean"] is clean  # untouched subtree is the same object
    assert _detached(result["dirty"][1], ro)
    assert result["n"] == 5


def test_nothing_to_detach_returns_the_same_object() -> None:
    data = {"a": [np.ones(2), (1, "x")], "b": None}
    assert detach_zero_copy(data) is data


def test_dict_subclasses_keep_their_type() -> None:
    data = collections.defaultdict(list, {"x": readonly(np.ones(2))})
    result = detach_zero_copy(data)
    assert isinstance(result, collections.defaultdict)
    assert result.default_factory is list
    assert result["x"].flags.writeable


class Pair(NamedTuple):
    left: Any
    right: Any


def test_tuples_and_namedtuples() -> None:
    ro = readonly(np.zeros(2))
    plain = (ro, 1)
    named = Pair(ro, "keep")
    assert type(detach_zero_copy(plain)) is tuple
    result = detach_zero_copy(named)
    assert type(result) is Pair
    assert _detached(result.left, ro)
    assert result.right == "keep"
    # the same array reached twice is copied once
    both = detach_zero_copy(Pair(ro, ro))
    assert both.left is both.right


@dataclasses.dataclass(frozen=True)
class Frozen:
    x: Any
    label: str = "f"


@dataclasses.dataclass(slots=True)
class Slotted:
    x: Any
    y: Any = None


def test_dataclasses_frozen_and_slotted() -> None:
    ro = readonly(np.ones(3))
    frozen = Frozen(ro)
    result = detach_zero_copy(frozen)
    assert isinstance(result, Frozen) and result is not frozen
    assert _detached(result.x, ro) and frozen.x is ro
    slotted = Slotted(ro, [1])
    result2 = detach_zero_copy(slotted)
    assert _detached(result2.x, ro) and slotted.x is ro
    assert result2.y is slotted.y


def test_cycles() -> None:
    ro = readonly(np.ones(2))
    loop: list[Any] = [ro]
    loop.append(loop)
    result = detach_zero_copy(loop)
    assert result is not loop
    assert result[1] is result  # the cycle points at the rebuilt copy
    assert _detached(result[0], ro)
    assert loop[0] is ro

    # A cycle whose array is reachable only through the back edge.
    a: dict[str, Any] = {}
    b: dict[str, Any] = {"a": a}
    a["b"] = b
    a["arr"] = ro
    result_a = detach_zero_copy(b)["a"]
    assert result_a["arr"].flags.writeable
    assert result_a["b"]["a"] is result_a

    # A tuple inside a cycle through a list.
    holder: list[Any] = []
    tup = (ro, holder)
    holder.append(tup)
    new_holder = detach_zero_copy(holder)
    assert new_holder[0][0].flags.writeable


def test_clean_cycle_is_returned_as_is() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    assert detach_zero_copy(loop) is loop


def test_pandas() -> None:
    pd = pytest.importorskip("pandas")
    ro = readonly(np.arange(10.0))
    frame = pd.DataFrame({"a": np.arange(10.0)})
    assert detach_zero_copy(frame) is frame  # writeable blocks: nothing to do
    for value in (pd.Series(ro, copy=False), pd.DataFrame({"a": ro}, copy=False)):
        assert not any(a.flags.writeable for a in value._mgr.arrays)  # a zero-copy-like frame
        result = detach_zero_copy({"v": value})["v"]
        assert result is not value
        assert result.equals(value)
        assert all(a.flags.writeable for a in result._mgr.arrays)
        assert not any(np.shares_memory(a, ro) for a in result._mgr.arrays)


def test_pyarrow() -> None:
    pa = pytest.importorskip("pyarrow")
    buffer = pa.py_buffer(memoryview(np.arange(8.0)).toreadonly())
    array = pa.Array.from_buffers(pa.float64(), 8, [None, buffer])
    table = pa.table({"x": array, "y": pa.array(np.arange(8))})
    result = detach_zero_copy({"t": table})
    new = result["t"]
    assert new.equals(table)
    new_buffer = new.column("x").chunks[0].buffers()[1]
    assert new_buffer.is_mutable and new_buffer.address != buffer.address
    clean = pa.array([1, 2, 3])
    assert detach_zero_copy(clean) is clean


def test_is_zero_copy_without_ray() -> None:
    assert not is_zero_copy(readonly(np.ones(2)))  # read-only is necessary, not sufficient
    assert not is_zero_copy(np.ones(2))
    assert not is_zero_copy([1, 2])
    assert not is_zero_copy(np.frombuffer(b"abcd", dtype=np.uint8))
