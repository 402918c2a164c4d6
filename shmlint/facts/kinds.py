"""Kinds of Ray handle a value, an attribute or a function's result may be.

They are facts vocabulary (summaries record them in slots, the merge propagates them), and the
dataflow's abstract values carry them; handles are not taint: they hold no zero-copy memory.
"""

from __future__ import annotations

DAG = "dag"  # a compiled graph (`experimental_compile()`)
REF = "ref"  # a CompiledDAGRef, or a container of them
CORO = "coro"  # the coroutine `execute_async()` returns
FUTURE = "future"  # the CompiledDAGFuture awaiting that coroutine gives

__all__ = ["CORO", "DAG", "FUTURE", "REF"]
