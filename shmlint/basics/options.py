"""The analysis options a configuration yields (what the dataflow needs to know of config)."""

from __future__ import annotations

import dataclasses
import re

from shmlint.basics.types import Confidence


@dataclasses.dataclass(frozen=True, slots=True)
class Options:
    """Knobs of the analysis; hashable, so it can be part of a cache key."""

    extend_sources: frozenset[str] = frozenset()  # qualified names whose call result is a read
    extend_sanitizers: frozenset[str] = frozenset()  # qualified or bare names that detach
    array_types: frozenset[str] = frozenset()  # extra type names that hold arrays
    ref_name_pattern: str = ""  # names (variables, attributes) that hold compiled-graph refs
    min_confidence: Confidence = Confidence.HIGH
    # Ray copies torch tensors unless RAY_ENABLE_ZERO_COPY_TORCH_TENSORS is set; this mirrors it.
    zero_copy_torch: bool = False
    # Rate payload classes of installed packages by their source (`external-types`).
    external_types: bool = True

    def ref_name_regex(self) -> re.Pattern[str] | None:
        """The compiled ``ref-name-pattern`` (None when unset)."""
        return re.compile(self.ref_name_pattern) if self.ref_name_pattern else None
