"""The value walker shared by the detach helpers and the retention tracker (numpy + stdlib only).

`kind_of` sorts a value into one of the kinds below (or None: a leaf never looked into),
`children` yields the values a container holds, `record_items` / `set_record_item` read and
write a record's items, and `numpy_parts` finds the ndarrays behind a pandas array. The detacher
(``_detacher.Detacher``) and the tracker (``_tracker``) walk values with these, so both see the
same structure.

Nothing here imports pandas, pyarrow, pydantic or msgspec: their values are recognised by duck
typing or through the modules they already live in (a pandas frame means pandas is imported
already).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = [
    "ARRAY",
    "ARROW",
    "DICT",
    "EXTRA",
    "FIELD",
    "LIST",
    "PANDAS",
    "PRIVATE",
    "RECORD",
    "TUPLE",
    "children",
    "kind_of",
    "numpy_parts",
    "record_items",
    "set_record_item",
]

# Kinds of value the walker understands; everything else is a leaf that is never copied.
ARRAY, DICT, LIST, TUPLE, RECORD, PANDAS, ARROW = range(7)

# Where a record keeps an item: a declared field, or (pydantic) an extra field of a model with
# `extra="allow"` (in `__pydantic_extra__`) or a private attribute (in `__pydantic_private__`).
# An array in any of them keeps Ray's buffer alive the same.
FIELD, EXTRA, PRIVATE = range(3)
_PYDANTIC_STORES = {EXTRA: "__pydantic_extra__", PRIVATE: "__pydantic_private__"}

_PANDAS_TYPES = ("DataFrame", "Series", "Index")
_ARROW_TYPES = ("Array", "ChunkedArray", "Table", "RecordBatch")


def kind_of(value: object) -> int | None:
    """The walker's kind of ``value`` (``ARRAY`` ... ``ARROW``), or None for a leaf.

    ``RECORD`` covers dataclasses, msgspec Structs and pydantic v2 models, told apart by duck
    typing; ``PANDAS`` and ``ARROW`` only when that library is imported already.
    """
    if isinstance(value, np.ndarray):
        return ARRAY
    if isinstance(value, dict):
        return DICT
    if isinstance(value, list):
        return LIST
    if isinstance(value, tuple):
        return TUPLE
    cls = type(value)
    if dataclasses.is_dataclass(cls) or hasattr(cls, "__struct_fields__"):
        return RECORD  # dataclass or msgspec.Struct
    if hasattr(cls, "model_fields") and hasattr(value, "__pydantic_fields_set__"):
        return RECORD  # pydantic v2 model
    module = cls.__module__ or ""
    if module.startswith("pandas") and _is_instance_named(value, "pandas", _PANDAS_TYPES):
        return PANDAS
    if module.startswith("pyarrow") and _is_instance_named(value, "pyarrow", _ARROW_TYPES):
        return ARROW
    return None


def _is_instance_named(value: object, module: str, names: tuple[str, ...]) -> bool:
    # The library is imported already (the value's type lives there); never import it here.
    lib = sys.modules.get(module)
    return lib is not None and isinstance(value, tuple(getattr(lib, name) for name in names))


def _is_struct(cls: type) -> bool:
    return hasattr(cls, "__struct_fields__")  # msgspec.Struct


def record_items(record: object) -> list[tuple[int, str, object]]:
    """``(place, name, value)`` for every item of a ``RECORD``: its fields (``FIELD``), and a
    pydantic model's extra fields (``EXTRA``) and private attributes (``PRIVATE``)."""
    cls: Any = type(record)
    pydantic = False
    if dataclasses.is_dataclass(cls):
        names = [f.name for f in dataclasses.fields(cls)]
    elif _is_struct(cls):
        names = list(cls.__struct_fields__)
    else:  # a pydantic model (`kind_of` checked that its class has `model_fields`)
        names = list(cls.model_fields)
        pydantic = True
    items = [(FIELD, name, getattr(record, name, None)) for name in names]
    if pydantic:
        for place, store in _PYDANTIC_STORES.items():
            values = getattr(record, store, None)  # None when the model has none
            if values:
                items.extend((place, name, value) for name, value in values.items())
    return items


def set_record_item(record: object, place: int, name: str, value: object) -> None:
    """Store ``value`` as the item ``(place, name)`` of ``record``, a shallow copy the caller
    just made: frozen records are written too, and nothing is validated or run again."""
    if place != FIELD:
        store = _PYDANTIC_STORES[place]
        # A fresh dict: the copy may share the original's (`copy.copy` need not copy it).
        object.__setattr__(record, store, {**getattr(record, store), name: value})
    elif _is_struct(type(record)):
        _struct_setattr(record, name, value)
    else:
        # object.__setattr__ also works for frozen dataclasses, slotted records and pydantic
        # models (frozen or validating assignment): it bypasses their __setattr__.
        object.__setattr__(record, name, value)


def _struct_setattr(struct: object, name: str, value: object) -> None:
    # A msgspec Struct's own __setattr__ refuses object.__setattr__ (and frozen Structs refuse
    # every write); `msgspec.structs.force_setattr` (msgspec >= 0.19) writes past both.
    structs = getattr(sys.modules.get("msgspec"), "structs", None)
    force_setattr = getattr(structs, "force_setattr", None)
    if force_setattr is not None:
        force_setattr(struct, name, value)
        return
    for cls in type(struct).__mro__:  # older msgspec: the field's slot descriptor
        slot = cls.__dict__.get(name)
        if slot is not None:
            slot.__set__(struct, value)
            return
    raise AttributeError(f"{type(struct).__name__} has no field {name!r}")


def children(value: Any, kind: int) -> Iterator[object]:
    """The values a ``DICT``, ``LIST``, ``TUPLE`` or ``RECORD`` holds (none for other kinds)."""
    if kind == DICT:
        yield from value.values()
    elif kind in (LIST, TUPLE):
        yield from value
    elif kind == RECORD:
        for _, _, item in record_items(value):
            yield item


def numpy_parts(array: object) -> list[object]:
    """The numpy arrays behind a pandas block / extension array (best effort, public-ish)."""
    if isinstance(array, np.ndarray):
        return [array]
    parts = [getattr(array, name, None) for name in ("_ndarray", "_data", "_mask")]
    return [part for part in parts if isinstance(part, np.ndarray)]
