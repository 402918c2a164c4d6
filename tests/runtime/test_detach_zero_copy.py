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


# --- pydantic v2 models and msgspec Structs ---------------------------------------------------


@pytest.fixture
def models() -> Any:
    """tests/runtime/models.py: the record types (skipped without pydantic and msgspec)."""
    return pytest.importorskip("tests.runtime.models")


def test_pydantic_model_copies_only_its_readonly_fields(models: Any) -> None:
    ro = readonly(np.arange(6))
    scores = np.ones(3)  # writeable: kept as is
    ids = [1, 2]
    batch = models.Batch(tokens=ro, scores=scores, ids=ids)
    ids = batch.ids  # pydantic may copy the list while validating
    fields_set = set(batch.model_fields_set)
    built = models.BUILT["Batch"]
    result = detach_zero_copy(batch)
    assert type(result) is models.Batch and result is not batch
    assert _detached(result.tokens, ro)
    assert result.scores is scores and result.ids is ids and result.label == "batch"
    assert result.model_fields_set == fields_set
    assert result.model_dump()["tokens"] is result.tokens  # pydantic sees the copy too
    assert batch.tokens is ro and batch.scores is scores and batch.ids is ids  # input untouched
    assert batch.model_fields_set == fields_set
    assert models.BUILT["Batch"] == built  # copied, not validated again


def test_pydantic_clean_models_are_returned_as_is(models: Any) -> None:
    batch = models.Batch(tokens=np.ones(3), ids=[1])
    assert detach_zero_copy(batch) is batch
    pair = models.Pair(left=batch, right=models.Batch(tokens=np.zeros(2)), items=[batch])
    assert detach_zero_copy(pair) is pair


def test_pydantic_nested_models_rebuild_only_the_dirty_path(models: Any) -> None:
    ro = readonly(np.ones(4))
    clean = models.Batch(tokens=np.zeros(2))
    dirty = models.Batch(tokens=ro)
    pair = models.Pair(left=dirty, right=clean, items=[dirty, "x"])
    items = pair.items
    result = detach_zero_copy(pair)
    assert result.right is clean  # untouched subtree: the same object
    assert result.left is not dirty and _detached(result.left.tokens, ro)
    assert result.items[0] is result.left  # a shared model is rebuilt once
    assert result.items is not items and result.items[1] == "x"
    assert pair.left is dirty and dirty.tokens is ro and pair.items is items
    assert items[0] is dirty


def test_pydantic_frozen_model(models: Any) -> None:
    pydantic = pytest.importorskip("pydantic")
    ro = readonly(np.arange(3.0))
    frozen = models.FrozenBatch(tokens=ro)
    result = detach_zero_copy(frozen)
    assert type(result) is models.FrozenBatch and result is not frozen
    assert _detached(result.tokens, ro) and result.label == "frozen"
    assert frozen.tokens is ro
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        result.tokens = np.zeros(1)  # the copy is as frozen as the original


def test_pydantic_extra_fields_and_private_attributes(models: Any) -> None:
    in_extra, in_private = readonly(np.ones(2)), readonly(np.zeros(2))
    loose = models.Loose(n=1, blob=in_extra)
    loose._cache = in_private
    result = detach_zero_copy(loose)
    assert _detached(result.blob, in_extra) and _detached(result._cache, in_private)
    assert "blob" not in vars(result) and result.model_extra["blob"] is result.blob  # still extra
    assert result.model_dump() == {"n": 1, "blob": result.blob}
    assert loose.blob is in_extra and loose._cache is in_private  # input untouched
    assert loose.model_extra["blob"] is in_extra

    clean = models.Loose(n=2, blob=np.ones(2))
    clean._cache = [np.zeros(1)]
    assert detach_zero_copy(clean) is clean


def test_pydantic_cycle(models: Any) -> None:
    ro = readonly(np.ones(2))
    batch = models.Batch(tokens=ro)
    pair = models.Pair(left=batch, right=batch)
    pair.items.append(pair)
    result = detach_zero_copy(pair)
    assert result.items[0] is result  # the cycle points at the rebuilt model
    assert result.left is result.right and _detached(result.left.tokens, ro)
    assert pair.items[0] is pair and pair.left is batch


@pytest.mark.parametrize("name", ["Step", "FrozenStep", "CompactStep"])
def test_msgspec_structs(models: Any, name: str) -> None:
    cls = getattr(models, name)
    ro = readonly(np.arange(4))
    struct = cls(ro)
    others = cls.__struct_fields__[1:]
    built = models.BUILT[name]
    result = detach_zero_copy(struct)
    assert type(result) is cls and result is not struct
    assert _detached(result.tokens, ro)
    assert all(getattr(result, field) is getattr(struct, field) for field in others)
    assert struct.tokens is ro  # input untouched
    assert models.BUILT[name] == built  # copied: __post_init__ does not run again
    clean = cls(np.arange(4))
    assert detach_zero_copy(clean) is clean


def test_msgspec_frozen_struct_stays_frozen(models: Any) -> None:
    result = detach_zero_copy(models.FrozenStep(readonly(np.ones(2))))
    assert result.tokens.flags.writeable
    with pytest.raises(AttributeError):
        result.tokens = np.zeros(1)


def test_msgspec_without_force_setattr(models: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """msgspec before 0.19 has no ``structs.force_setattr``: the field's slot is written."""
    msgspec = pytest.importorskip("msgspec")
    monkeypatch.delattr(msgspec.structs, "force_setattr")
    ro = readonly(np.ones(3))
    for struct in (models.FrozenStep(ro), models.CompactStep(ro, extra=[ro])):
        result = detach_zero_copy(struct)
        assert _detached(result.tokens, ro) and struct.tokens is ro


def test_msgspec_struct_fields_rebuild_only_the_dirty_path(models: Any) -> None:
    ro = readonly(np.ones(3))
    tokens = np.zeros(1)
    step = models.Step(tokens, scores=(ro, "k"))
    batch = models.Batch(tokens=np.ones(1), ids=[1])
    data = {"step": step, "batch": batch}
    result = detach_zero_copy(data)
    assert result["batch"] is batch and result["step"] is not step
    assert type(result["step"].scores) is tuple and _detached(result["step"].scores[0], ro)
    assert result["step"].tokens is tokens and result["step"].scores[1] == "k"
    assert data["step"] is step and step.scores[0] is ro
