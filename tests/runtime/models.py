"""pydantic v2 and msgspec record types holding arrays, for the detach tests.

Imports pydantic and msgspec (the ``test`` extra installs both); tests load this module with
``pytest.importorskip`` so the rest of the suite runs without them. Each type counts its
validations / ``__post_init__`` runs in ``BUILT``: detaching copies a record, it must not build
(and so re-validate) a new one.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec
import numpy as np
from pydantic import BaseModel, ConfigDict, PrivateAttr, model_validator

BUILT: Counter[str] = Counter()  # type name -> times validated / post-initialised


class _Counted(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    @model_validator(mode="after")
    def _count(self) -> Any:
        BUILT[type(self).__name__] += 1
        return self


class Batch(_Counted):
    """A pydantic model with array fields and plain ones."""

    tokens: np.ndarray
    scores: np.ndarray | None = None
    label: str = "batch"
    ids: list[int] = []


class FrozenBatch(_Counted):
    """A frozen pydantic model."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    tokens: np.ndarray
    label: str = "frozen"


class Pair(_Counted):
    """Nested models: only the dirty one is rebuilt."""

    left: Batch
    right: Batch
    items: list[Any] = []


class Loose(_Counted):
    """Extra fields (``extra="allow"``) and a private attribute can hold arrays too."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="allow")

    _cache: Any = PrivateAttr(default=None)
    n: int = 0


class Step(msgspec.Struct):
    """A msgspec Struct with array fields and plain ones."""

    tokens: np.ndarray
    scores: Any = None
    label: str = "step"

    def __post_init__(self) -> None:
        BUILT[type(self).__name__] += 1


class FrozenStep(msgspec.Struct, frozen=True):
    """A frozen msgspec Struct."""

    tokens: np.ndarray
    label: str = "frozen"

    def __post_init__(self) -> None:
        BUILT[type(self).__name__] += 1


class CompactStep(msgspec.Struct, array_like=True, gc=False):
    """A msgspec Struct encoded as an array and untracked by the GC."""

    tokens: np.ndarray
    extra: Any = None
