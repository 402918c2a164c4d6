"""Fewer garbage collections while a batch of files is analysed.

A cold run allocates millions of container objects (syntax trees, abstract values, frozensets)
and keeps some of them alive (the trees of the file being analysed, the summaries, the facts),
so CPython's default thresholds (700, 10, 10) run dozens of full collections, each walking the
whole heap — and they find nothing to free: trees and values hold no reference cycles. On the
ray 2.60 wheel (one job) that was 54 full collections, none collecting anything, and ~17 % of
the run. mypy raises the thresholds for the same reason (``gc.set_threshold(200 * 1000, 30,
30)`` in its build). Garbage still goes by reference counting; only the cycle detector waits.

The command line's process does one run and ends: it turns the cycle detector off for good
(:func:`off`; its forked workers inherit that). Even the raised thresholds cost the ray 2.60
wheel ~0.4 s of a cold run and ~0.2 s of a warm run after an edit of its facts, for no memory:
the peak is the same on the six corpora of docs/performance.md.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

# A first-generation collection every 100,000 net allocations instead of 700.
THRESHOLDS = (100_000, 10, 10)


def off() -> None:
    """No cycle collection for the rest of this process (one that ends after one run)."""
    gc.disable()


def tune() -> None:
    """Set the batch thresholds for the rest of this process (a worker of the pool)."""
    gc.set_threshold(*THRESHOLDS)


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """The batch thresholds inside the block (or the decorated function), the caller's
    restored after it (a library user's process, or the language server, keeps its own)."""
    old = gc.get_threshold()
    if old[0] >= THRESHOLDS[0]:  # already raised (a nested run, or the caller's choice)
        yield
        return
    gc.set_threshold(*THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*old)
