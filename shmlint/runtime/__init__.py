"""shmlint's runtime half: the helpers that fixed code calls.

Imports only the standard library and numpy: never libcst, flake8 or ray (a test checks
``sys.modules``), so production code can depend on it cheaply.
"""

from shmlint.runtime._arrays import is_zero_copy
from shmlint.runtime._detach import (
    detach_zero_copy,
    detach_zero_copy_from_model_runner_output,
)
from shmlint.runtime._tracker import (
    RetentionTracker,
    ZeroCopyRetentionError,
    ZeroCopyRetentionWarning,
    track_retention,
)

__all__ = [
    "RetentionTracker",
    "ZeroCopyRetentionError",
    "ZeroCopyRetentionWarning",
    "detach_zero_copy",
    "detach_zero_copy_from_model_runner_output",
    "is_zero_copy",
    "track_retention",
]
