"""Kinds of Ray handle a value, an attribute or a function's result may be.

They are facts vocabulary (summaries record them in slots, the merge propagates them), and the
dataflow's abstract values carry them; handles are not taint: they hold no zero-copy memory.
"""

from __future__ import annotations

from shmlint.facts.evidence import PASSES_INPUT, UNKNOWN_PAYLOAD, Evidence, Payload

DAG = "dag"  # a compiled graph (`experimental_compile()`)
REF = "ref"  # a CompiledDAGRef, or a container of them
CORO = "coro"  # the coroutine `execute_async()` returns
FUTURE = "future"  # the CompiledDAGFuture awaiting that coroutine gives
# Object-store reads that happen when awaited: `asyncio.to_thread(ray.get, ref)`,
# `loop.run_in_executor(None, ray.get, ref)`, `ray.util.queue.Queue.get_async()`.
AWAITS_READ = "awaits-read"
NEXT_REF = "next-ref"  # `gen.__anext__()` of a ref generator: awaiting it gives a ref
RAY_QUEUE = "ray-queue"  # a `ray.util.queue.Queue`: its `get*` methods read the object store


# What a Ray ref will read back, carried with the handle kinds (so it flows wherever refs flow:
# lists of refs, attributes, parameters, across modules): `payload:arrays:<why>`,
# `payload:free:<why>`, or `payload:unknown` for a ref whose producer says nothing.
PAYLOAD = "payload:"
_ARRAYS = "payload:arrays:"
_FREE = "payload:free:"
UNKNOWN = "payload:unknown"
INPUT = "payload:input"  # a graph node that outputs what flows into the graph


def payload_kind(payload: Payload) -> str:
    """The kind a ref carries for what reading it returns."""
    if payload.evidence is Evidence.ARRAYS:
        return _ARRAYS + payload.why
    if payload.evidence is Evidence.ARRAY_FREE:
        return _FREE + payload.why
    return INPUT if payload.why == PASSES_INPUT else UNKNOWN


def payload_kinds(kinds: frozenset[str]) -> frozenset[str]:
    """The payload kinds among ``kinds``."""
    if not kinds:
        return kinds
    return frozenset(k for k in kinds if k.startswith(PAYLOAD))


# A remote callable held as a value (`task = f.options(num_cpus=2)`, `ray.remote(f)`), with what
# reading the ref its `.remote()` makes returns: `callable:` + that ref's payload kind, so it
# flows wherever handles flow and `task.remote()` reads what `f` returns.
CALLABLE = "callable:"
CALLABLE_UNKNOWN = CALLABLE + UNKNOWN


def holds(kinds: frozenset[str], family: str) -> bool:
    """True when a kind of ``family`` (its prefix: :data:`CALLABLE`, :data:`COROUTINE`) is
    among ``kinds`` (a test for hot paths: nothing is built)."""
    return any(k.startswith(family) for k in kinds)


def callable_payloads(kinds: frozenset[str]) -> frozenset[str]:
    """The payload kinds of the refs the remote callables among ``kinds`` make."""
    if not kinds:
        return kinds
    return frozenset(k[len(CALLABLE) :] for k in kinds if k.startswith(CALLABLE))


# A coroutine of the module's own `async def`, not yet awaited: `coroutine:` + each kind its
# result holds. Awaiting it (directly, or through `asyncio.create_task` / `gather`) gives those
# kinds back: a ref it returns is a ref, not a read (an awaited ref is one).
COROUTINE = "coroutine:"


def as_coroutine(kinds: frozenset[str]) -> frozenset[str]:
    """The kinds of a coroutine whose result holds ``kinds``."""
    return frozenset(COROUTINE + k for k in kinds)


def coroutine_results(kinds: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """``kinds`` split: the kinds awaiting the coroutines among them gives, and the rest."""
    if not holds(kinds, COROUTINE):
        return frozenset(), kinds
    results = frozenset(k[len(COROUTINE) :] for k in kinds if k.startswith(COROUTINE))
    return results, frozenset(k for k in kinds if not k.startswith(COROUTINE))


def element_kinds(kinds: frozenset[str]) -> frozenset[str]:
    """What an element of a container of these kinds may be (a subscript, a `for` target):
    a ref and what it reads, a remote callable, a coroutine (not the graph or the queue)."""
    if not kinds:
        return kinds
    return frozenset(k for k in kinds if k == REF or k.startswith((PAYLOAD, CALLABLE, COROUTINE)))


def read_payload(kinds: frozenset[str]) -> Payload:
    """What a read of a ref with these kinds returns: arrays if any producer returns arrays,
    array-free only if every producer is known to return none."""
    found = sorted(payload_kinds(kinds))
    if not found:
        return UNKNOWN_PAYLOAD
    arrays = [k for k in found if k.startswith(_ARRAYS)]
    if arrays:
        return Payload(Evidence.ARRAYS, arrays[0][len(_ARRAYS) :])
    if all(k.startswith(_FREE) for k in found):
        return Payload(Evidence.ARRAY_FREE, found[0][len(_FREE) :])
    return UNKNOWN_PAYLOAD


__all__ = [
    "AWAITS_READ",
    "CALLABLE",
    "CALLABLE_UNKNOWN",
    "COROUTINE",
    "CORO",
    "DAG",
    "FUTURE",
    "INPUT",
    "NEXT_REF",
    "PAYLOAD",
    "RAY_QUEUE",
    "REF",
    "UNKNOWN",
    "as_coroutine",
    "callable_payloads",
    "coroutine_results",
    "element_kinds",
    "holds",
    "payload_kind",
    "payload_kinds",
    "read_payload",
]
