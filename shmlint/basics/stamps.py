"""Files a cached answer depends on besides its own bytes, by modification time (installed
packages' sources, shmlint/facts/external.py): the answer stands while none changed."""

from __future__ import annotations

import os
from collections.abc import Iterable

# The stamp of a place that did not exist (a directory of the path not created yet): the
# answer stands while it still does not.
ABSENT = -1


def stale(files: Iterable[tuple[str, int]]) -> bool:
    """True when one of these files (path, modification time in ns) changed or went, or
    one stamped :data:`ABSENT` is there now."""
    for path, mtime in files:
        try:
            if os.stat(path).st_mtime_ns != mtime:
                return True
        except OSError:
            if mtime != ABSENT:
                return True
    return False
