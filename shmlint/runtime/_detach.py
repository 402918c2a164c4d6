"""Detach values read from Ray shared memory (numpy + stdlib only).

Ray deserializes numpy arrays zero-copy: `ray.get` and compiled-graph reads return read-only
views whose `.base` chain ends in a Ray buffer. Holding such a view keeps the buffer (and, for
compiled graphs, the channel's read lock) alive. Copying the array breaks that link.

Nothing here imports ray, pandas, pyarrow, pydantic or msgspec: those objects are recognised by
duck typing or by the modules they already live in (if a value is a pandas frame, pandas is
imported already).
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from shmlint.runtime._arrays import copy_if_readonly, rebuild_tuple
from shmlint.runtime._detacher import Detacher

T = TypeVar("T")

# `ModelRunnerOutput.logprobs` is a `LogprobsLists(logprob_token_ids, logprobs,
# sampled_token_ranks, cu_num_generated_tokens)`; index 3 is a plain list and must stay the very
# same object (vLLM PR 35736).
_LOGPROBS_KEEP_INDEX = 3
# Top-level fields the vLLM fix deliberately leaves alone: `prompt_logprobs_dict` holds torch
# tensors (copied by Ray unless RAY_ENABLE_ZERO_COPY_TORCH_TENSORS is set).
_OUTPUT_KEEP_FIELDS = frozenset({"logprobs", "prompt_logprobs_dict"})


# Types a top-level field value can have that never hold a detachable array: skipped with one
# set lookup each, which keeps the no-op path of the helper under a microsecond.
_PLAIN_TYPES = frozenset({type(None), list, dict, str, int, float, bool, bytes})

# Per dataclass type: its field names (minus the kept ones) and a C-level getter for them all.
_FIELDS: dict[type, tuple[tuple[str, ...], Callable[[object], tuple[object, ...]]]] = {}


def _detach_logprobs(logprobs: tuple[Any, ...]) -> tuple[Any, ...]:
    if len(logprobs) == 4:
        # Fast path for vLLM's LogprobsLists: three arrays and `cu_num_generated_tokens`.
        a, b, c, cu = logprobs
        if type(a) is type(b) is type(c) is np.ndarray:
            wa, wb, wc = a.flags.writeable, b.flags.writeable, c.flags.writeable
            if wa and wb and wc:
                return logprobs
            copied = [a if wa else a.copy(), b if wb else b.copy(), c if wc else c.copy(), cu]
            return rebuild_tuple(logprobs, copied)
    items: list[Any] | None = None
    for index, item in enumerate(logprobs):
        if index != _LOGPROBS_KEEP_INDEX and isinstance(item, np.ndarray):
            if not item.flags.writeable:
                if items is None:
                    items = list(logprobs)
                items[index] = item.copy()
    return logprobs if items is None else rebuild_tuple(logprobs, items)


def _getter(names: tuple[str, ...]) -> Callable[[object], tuple[object, ...]]:
    if len(names) == 1:  # attrgetter of one name returns the value, not a 1-tuple
        name = names[0]
        return lambda obj: (getattr(obj, name),)
    if not names:
        return lambda obj: ()
    return operator.attrgetter(*names)


def _instance_fields(obj: object) -> tuple[str, ...]:
    names: list[str] = list(vars(obj)) if hasattr(obj, "__dict__") else []
    for klass in type(obj).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot not in ("__dict__", "__weakref__") and slot not in names:
                names.append(slot)
    return tuple(name for name in names if name not in _OUTPUT_KEEP_FIELDS)


def _other_fields(obj: object) -> tuple[tuple[str, ...], tuple[object, ...]]:
    """The output's top-level fields other than the kept ones, and their values."""
    cls = type(obj)
    cached = _FIELDS.get(cls)
    if cached is None:
        if not dataclasses.is_dataclass(cls):  # fields vary per instance: no cache
            names = _instance_fields(obj)
            return names, tuple(getattr(obj, name, None) for name in names)
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name not in _OUTPUT_KEEP_FIELDS)
        cached = _FIELDS[cls] = (names, _getter(names))
    return cached[0], cached[1](obj)


def _is_record(value: object) -> bool:
    """A NamedTuple or a dataclass instance: the shapes new array fields come in."""
    cls = type(value)
    return hasattr(cls, "__dataclass_fields__") or (
        isinstance(value, tuple) and hasattr(cls, "_fields")
    )


def _is_frozen(obj: object) -> bool:
    params = getattr(type(obj), "__dataclass_params__", None)
    return bool(params is not None and params.frozen)


def _detach_output(output: T) -> T:
    changes: dict[str, object] | None = None
    logprobs = getattr(output, "logprobs", None)
    if logprobs is not None and isinstance(logprobs, tuple):
        new_logprobs = _detach_logprobs(logprobs)
        if new_logprobs is not logprobs:
            changes = {"logprobs": new_logprobs}
    cached = _FIELDS.get(type(output))
    if cached is not None:  # a dataclass seen before: one C-level getter for every field
        names, values = cached[0], cached[1](output)
    else:
        names, values = _other_fields(output)
    if not _PLAIN_TYPES.issuperset(map(type, values)):
        changes = _detach_fields(names, values, changes)
    if changes is None:
        return output
    if _is_frozen(output):
        # A frozen output cannot be detached in place: the wrap style still gets a detached
        # value back; the in-place style cannot apply to frozen types.
        return dataclasses.replace(output, **changes)  # type: ignore[type-var]
    for name, new in changes.items():
        setattr(output, name, new)
    return output


def _detach_fields(
    names: tuple[str, ...], values: tuple[object, ...], changes: dict[str, object] | None
) -> dict[str, object] | None:
    for name, value in zip(names, values):
        if isinstance(value, np.ndarray):
            new = copy_if_readonly(value)
        elif _is_record(value):
            new = detach_zero_copy(value)
        else:
            continue
        if new is not value:
            changes = {} if changes is None else changes
            changes[name] = new
    return changes


def detach_zero_copy_from_model_runner_output(output: T) -> T:
    """Detach Ray zero-copy arrays from a vLLM ``ModelRunnerOutput`` (in place) and return it.

    - ``None`` is returned as is.
    - A list or tuple of outputs: each output is detached; a list is updated in place.
    - A bare ndarray: a copy if it is read-only, else the array itself.
    - A dict (a plain ``ray.get`` payload): its values are deep-detached in place.
    - An output: if ``output.logprobs`` is not None, each read-only ndarray among its fields
      (except ``cu_num_generated_tokens``, index 3, kept as the very same object) is copied and the
      tuple rebuilt with the same type, only when something was copied. Every other top-level
      field holding a read-only ndarray or a NamedTuple/dataclass of them is detached too, so
      fields added later (``routed_experts``, ``sampling_masks``) are not missed.
      ``prompt_logprobs_dict`` is never touched.

    Returns its argument (mutated in place), so ``out = helper(ref.get())`` and ``helper(out)``
    both work; only a bare array or a frozen dataclass yields a new object.
    """
    if output is None:
        return output
    if isinstance(output, (np.ndarray, list, tuple, dict)) and not hasattr(type(output), "_fields"):
        return _detach_collection(output)  # type: ignore[no-any-return]
    return _detach_output(output)


def _detach_collection(output: Any) -> Any:
    if isinstance(output, np.ndarray):
        return copy_if_readonly(output)
    if isinstance(output, dict):
        # A plain `ray.get` payload: its values are deep-detached in place.
        for key, value in output.items():
            new = detach_zero_copy(value)
            if new is not value:
                output[key] = new
        return output
    if isinstance(output, list):
        for index, item in enumerate(output):
            new = detach_zero_copy_from_model_runner_output(item)
            if new is not item:
                output[index] = new
        return output
    items = [detach_zero_copy_from_model_runner_output(item) for item in output]
    if any(new is not old for new, old in zip(items, output)):
        return rebuild_tuple(output, items)
    return output


def detach_zero_copy(obj: T) -> T:
    """Return ``obj`` with every read-only / Ray-owned ndarray in it replaced by a copy.

    Walks dicts, lists, tuples, NamedTuples, dataclasses (frozen and slotted too), pydantic v2
    models (frozen too, extra fields and private attributes included) and msgspec Structs
    (frozen too), pandas and pyarrow values. Never mutates its input: containers on the path to a
    copied array are shallow-copied (records are copied, never built again, so no validation or
    ``__post_init__`` runs), every untouched subtree is returned as the same object, and an
    object with nothing to detach is returned itself. Cycles are safe.
    """
    return Detacher().detach(obj)
