"""The value walker shared by the detach helpers and the retention tracker (numpy + stdlib only).

`kind_of` sorts a value into one of the kinds below (or None: a leaf never looked into),
`children` yields the values a container holds, `record_fields` names a record's fields and
`numpy_parts` finds the ndarrays behind a pandas array. The detacher (``_detacher.Detacher``)
and the tracker (``_tracker``) walk values with these, so both see the same structure.

Nothing here imports pandas or pyarrow: their values are recognised through the modules they
already live in (a pandas frame means pandas is imported already).
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
    "LIST",
    "PANDAS",
    "RECORD",
    "TUPLE",
    "children",
    "kind_of",
    "numpy_parts",
    "record_fields",
]

# Kinds of value the walker understands; everything else is a leaf that is never copied.
ARRAY, DICT, LIST, TUPLE, RECORD, PANDAS, ARROW = range(7)

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


def record_fields(value: object) -> list[str]:
    """The field names of a ``RECORD`` (dataclass, msgspec Struct or pydantic model)."""
    cls = type(value)
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls)]
    struct_fields = getattr(cls, "__struct_fields__", None)
    if struct_fields is not None:
        return list(struct_fields)
    model: Any = cls  # a pydantic model class (`kind_of` checked `model_fields` exists)
    return list(model.model_fields)


def children(value: Any, kind: int) -> Iterator[object]:
    """The values a ``DICT``, ``LIST``, ``TUPLE`` or ``RECORD`` holds (none for other kinds)."""
    if kind == DICT:
        yield from value.values()
    elif kind in (LIST, TUPLE):
        yield from value
    elif kind == RECORD:
        for name in record_fields(value):
            yield getattr(value, name, None)


def numpy_parts(array: object) -> list[object]:
    """The numpy arrays behind a pandas block / extension array (best effort, public-ish)."""
    if isinstance(array, np.ndarray):
        return [array]
    parts = [getattr(array, name, None) for name in ("_ndarray", "_data", "_mask")]
    return [part for part in parts if isinstance(part, np.ndarray)]
