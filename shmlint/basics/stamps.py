"""Files a cached answer depends on besides its own bytes, by modification time (installed
packages' sources, shmlint/facts/external.py): the answer stands while none changed."""

from __future__ import annotations

import os
from collections.abc import Iterable


def stale(files: Iterable[tuple[str, int]]) -> bool:
    """True when one of these files (path, modification time in ns) changed or went."""
    for path, mtime in files:
        try:
            if os.stat(path).st_mtime_ns != mtime:
                return True
        except OSError:
            return True
    return False
