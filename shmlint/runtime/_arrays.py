"""Array-level facts shared by the detach helpers and the retention tracker (numpy only)."""

from __future__ import annotations

from typing import Any

import numpy as np


def is_zero_copy(arr: object) -> bool:
    """Return True when ``arr`` is an ndarray whose memory is owned by a Ray buffer.

    Walks the ``.base`` chain (through ndarray views and memoryviews) and looks at the owner's
    type: Ray's buffers (``ray._raylet.SubBuffer``, channel buffers) live in ``ray.*`` modules.
    """
    if not isinstance(arr, np.ndarray):
        return False
    base: object = arr.base
    seen = 0
    while base is not None and seen < 64:  # bounded: a base chain is never this deep
        seen += 1
        if isinstance(base, np.ndarray):
            base = base.base
        elif isinstance(base, memoryview):
            base = base.obj
        else:
            module = type(base).__module__ or ""
            return module == "ray" or module.startswith("ray.")
    return False


def needs_copy(arr: np.ndarray[Any, Any]) -> bool:
    """True when ``arr`` may be a view of Ray memory and must be copied to detach it."""
    # Ray hands every zero-copy array back read-only; a writeable array may still be a view of a
    # Ray buffer only if someone forced the flag, which `is_zero_copy` catches.
    return not arr.flags.writeable or is_zero_copy(arr)


def copy_if_readonly(value: object) -> object:
    """A copy of ``value`` if it is a read-only ndarray, else ``value`` itself."""
    if isinstance(value, np.ndarray) and not value.flags.writeable:
        return value.copy()
    return value


def rebuild_tuple(original: tuple[Any, ...], items: list[Any]) -> tuple[Any, ...]:
    """A tuple of the same type as ``original`` holding ``items``."""
    cls = type(original)
    make = getattr(cls, "_make", None)  # NamedTuple (and namedtuple)
    if make is not None:
        result: tuple[Any, ...] = make(items)
        return result
    if cls is tuple:
        return tuple(items)
    return cls(items)  # a tuple subclass taking one iterable, like tuple itself
