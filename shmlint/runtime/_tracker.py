"""The runtime retention tracker: catch a kept zero-copy value before the channel blocks.

While a :func:`track_retention` context is active, Ray's reads are wrapped: ``ray.get``,
``CompiledDAGRef.get`` and ``CompiledDAGFuture.__await__``. Each read records weak references
to the zero-copy arrays it returned (walking the value with :mod:`shmlint.runtime.walk`, as
``detach_zero_copy`` does; a view kept later keeps its base array alive, so views count). At
every compiled-graph read, if arrays from an earlier read *of the same compiled graph* are still
alive, the tracker raises :class:`ZeroCopyRetentionError` (or warns) **before** the read, naming
where both reads are.

Ray is imported lazily, when a context is entered; without Ray the tracker warns and does
nothing.
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import os
import sys
import threading
import warnings
import weakref
from collections.abc import Callable, Generator, Iterator
from types import TracebackType
from typing import Any

import numpy as np

from shmlint.runtime._arrays import is_zero_copy
from shmlint.runtime.walk import PANDAS, children, kind_of, numpy_parts

__all__ = [
    "RetentionTracker",
    "ZeroCopyRetentionError",
    "ZeroCopyRetentionWarning",
    "track_retention",
]


class ZeroCopyRetentionError(RuntimeError):
    """A value read from a compiled graph is still alive while the next read runs."""

    __module__ = "shmlint.runtime"  # the public name, in tracebacks


class ZeroCopyRetentionWarning(RuntimeWarning):
    """The warning form of :class:`ZeroCopyRetentionError` (``action="warn"``)."""

    __module__ = "shmlint.runtime"


_HERE = os.path.dirname(os.path.abspath(__file__))
_WALK_LIMIT = 10_000  # objects visited per read: a bound on the tracker's own cost


@dataclasses.dataclass(slots=True)
class _Read:
    number: int
    site: str
    graph: int | None  # id() of the compiled graph; None for object-store reads
    arrays: list[weakref.ref[np.ndarray[Any, Any]]]

    def alive(self) -> int:
        return sum(1 for ref in self.arrays if ref() is not None)


def _caller_site() -> str:
    """file:line of the first frame outside shmlint's runtime and Ray itself."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        inside_ray = f"{os.sep}ray{os.sep}" in filename and "site-packages" in filename
        if not filename.startswith(_HERE) and not inside_ray and "contextlib" not in filename:
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return "<unknown>"


def _buffer_owner(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The last ndarray of the ``.base`` chain (its base is the Ray buffer). numpy points every
    later view at it, not at the array the read returned, so it lives as long as any view."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _zero_copy_arrays(value: object) -> Iterator[np.ndarray[Any, Any]]:
    """The arrays in ``value`` whose memory Ray owns (structures walked, cycles safe)."""
    seen: set[int] = set()
    stack = [value]
    while stack and len(seen) < _WALK_LIMIT:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            if is_zero_copy(item):
                yield _buffer_owner(item)
            continue
        kind = kind_of(item)
        if kind == PANDAS:
            manager = getattr(item, "_mgr", None)
            for array in getattr(manager, "arrays", ()):
                stack.extend(numpy_parts(array))
        elif kind is not None:
            stack.extend(children(item, kind))


class RetentionTracker:
    """One ``track_retention`` context: the reads it saw, and what it does on a retention."""

    def __init__(self, action: str = "raise") -> None:
        if action not in ("raise", "warn"):
            raise ValueError("action must be 'raise' or 'warn'")
        self.action = action
        self.reads: list[_Read] = []
        self.retentions: list[str] = []  # messages of the retentions found (raised or warned)
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    def kept(self, graph: int) -> list[_Read]:
        """Earlier reads of ``graph`` whose arrays are still alive."""
        with self._lock:
            self.reads = [read for read in self.reads if read.alive()]
            return [read for read in self.reads if read.graph == graph]

    def before_channel_read(self, graph: int, site: str) -> None:
        """Called before a compiled-graph read: complain about kept values of that graph."""
        kept = self.kept(graph)
        if not kept:
            return
        earlier = kept[0]
        message = (
            f"zero-copy value read at {earlier.site} (read #{earlier.number}) is still alive "
            f"({earlier.alive()} array(s)) while the compiled-graph read at {site} runs: it "
            "holds the channel's buffer, so this read blocks until RAY_CGRAPH_get_timeout. "
            "Detach it at the read (shmlint.runtime.detach_zero_copy / "
            "detach_zero_copy_from_model_runner_output, or .copy()) or `del` it first."
        )
        self.retentions.append(message)
        if self.action == "raise":
            raise ZeroCopyRetentionError(message)
        warnings.warn(message, ZeroCopyRetentionWarning, stacklevel=4)

    def after_read(self, value: object, graph: int | None, site: str) -> None:
        """Called after a read: remember weak references to its zero-copy arrays."""
        owners = {id(array): array for array in _zero_copy_arrays(value)}
        arrays = [weakref.ref(array) for array in owners.values()]
        if arrays:
            with self._lock:
                self.reads.append(_Read(next(self._numbers), site, graph, arrays))


class _Patches:
    """Process-wide wrapping of Ray's reads, shared by every active tracker."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.trackers: list[RetentionTracker] = []
        self.patched: list[tuple[Any, str, Any]] = []  # (owner, attribute, original)
        self.local = threading.local()  # depth of nested reads (ray.get -> CompiledDAGRef.get)
        # Refs whose read was refused: dropping one runs Ray's `__del__`, which reads the
        # execution's result to discard it -- and would block while the kept value lives. They
        # are released once the arrays that blocked them are gone.
        self.deferred: list[tuple[Any, list[weakref.ref[np.ndarray[Any, Any]]]]] = []

    def install(self, tracker: RetentionTracker) -> bool:
        """Add a tracker; wrap Ray on the first. False when Ray is not installed."""
        try:
            import ray
            from ray.dag import compiled_dag_node
            from ray.experimental import compiled_dag_ref
        except ImportError:
            return False
        with self.lock:
            if not self.patched:
                self._wrap(ray, compiled_dag_ref)
                self._wrap_execute(compiled_dag_node.CompiledDAG)
            self.trackers.append(tracker)
        return True

    def uninstall(self, tracker: RetentionTracker) -> None:
        """Remove a tracker; restore Ray when it was the last (see ``_restore_if_idle``)."""
        with self.lock:
            if tracker in self.trackers:
                self.trackers.remove(tracker)
        self.release()

    def _restore_if_idle(self) -> None:
        # A refused read leaves a ref that must be dropped before the graph reads on (else its
        # result is read into the graph's cache and never freed). While one is pending, the
        # wrappers stay in place, tracking nothing, to drop it at the first read after the
        # kept value is gone; then Ray's functions are restored.
        with self.lock:
            if self.trackers or self.deferred or not self.patched:
                return
            for owner, name, original in reversed(self.patched):
                setattr(owner, name, original)
            self.patched.clear()

    def defer(self, ref: Any, graph: int) -> None:
        """Keep a refused ref until the values blocking its channel are gone."""
        blocking = [
            array_ref
            for tracker in list(self.trackers)
            for read in tracker.kept(graph)
            for array_ref in read.arrays
        ]
        with self.lock:
            self.deferred.append((ref, blocking))

    def release(self) -> None:
        """Drop the deferred refs whose blocking arrays are all gone.

        Called at the next read and on exit, never from a weakref callback: while an array is
        being freed its Ray buffer still holds the channel, and the drop would block.
        """
        if not self.deferred:
            self._restore_if_idle()
            return
        if any(r() is not None for _, refs in self.deferred for r in refs):
            # A kept value often sits in a reference cycle (a caught exception's traceback
            # and its frames): collect it before deciding it is still alive.
            gc.collect()
        with self.lock:
            ready = [item for item in self.deferred if all(r() is None for r in item[1])]
            self.deferred = [item for item in self.deferred if item not in ready]
        ready.clear()  # the refs die here, outside the lock
        self._restore_if_idle()

    def _wrap_execute(self, graph: Any) -> None:
        """``execute`` releases the deferred refs first: a refused read still counts as in
        flight for Ray until its ref is dropped."""
        original_execute = graph.execute
        original_execute_async = graph.execute_async
        patches = self

        def tracked_execute(self: Any, *args: Any, **kwargs: Any) -> Any:
            patches.release()
            return original_execute(self, *args, **kwargs)

        async def tracked_execute_async(self: Any, *args: Any, **kwargs: Any) -> Any:
            patches.release()
            return await original_execute_async(self, *args, **kwargs)

        self._patch(graph, "execute", tracked_execute)
        self._patch(graph, "execute_async", tracked_execute_async)

    def _patch(self, owner: Any, name: str, replacement: Any) -> None:
        self.patched.append((owner, name, getattr(owner, name)))
        setattr(owner, name, replacement)

    def before_channel_read(self, ref: Any) -> tuple[str, int]:
        """Shared start of a compiled-graph read (``.get()`` or ``await``): release what can be
        released, then let every tracker refuse the read; a refused ref is deferred."""
        self.release()
        site = _caller_site()
        graph = id(ref._dag)
        try:
            self._each(lambda t: t.before_channel_read(graph, site))
        except ZeroCopyRetentionError:
            self.defer(ref, graph)
            raise
        return site, graph

    def _each(self, call: Callable[[RetentionTracker], None]) -> None:
        with self.lock:
            trackers = list(self.trackers)
        for tracker in trackers:
            call(tracker)

    def _depth(self) -> int:
        return getattr(self.local, "depth", 0)

    def _wrap(self, ray: Any, refs: Any) -> None:
        original_get = ray.get
        original_ref_get = refs.CompiledDAGRef.get
        original_await = refs.CompiledDAGFuture.__await__
        patches = self

        def tracked_get(object_refs: Any, *args: Any, **kwargs: Any) -> Any:
            if patches._depth():
                return original_get(object_refs, *args, **kwargs)
            site = _caller_site()
            patches.local.depth = 1
            try:
                value = original_get(object_refs, *args, **kwargs)
            finally:
                patches.local.depth = 0
            if not isinstance(object_refs, refs.CompiledDAGRef) and not (
                isinstance(object_refs, list)
                and object_refs
                and isinstance(object_refs[0], refs.CompiledDAGRef)
            ):
                patches._each(lambda t: t.after_read(value, None, site))
            return value

        def tracked_ref_get(self: Any, *args: Any, **kwargs: Any) -> Any:
            site, graph = patches.before_channel_read(self)
            depth = patches._depth()
            patches.local.depth = depth + 1
            try:
                value = original_ref_get(self, *args, **kwargs)
            finally:
                patches.local.depth = depth
            patches._each(lambda t: t.after_read(value, graph, site))
            return value

        def tracked_await(self: Any) -> Generator[Any, None, Any]:
            site, graph = patches.before_channel_read(self)
            value = yield from original_await(self)
            patches._each(lambda t: t.after_read(value, graph, site))
            return value

        self._patch(ray, "get", tracked_get)
        self._patch(refs.CompiledDAGRef, "get", tracked_ref_get)
        self._patch(refs.CompiledDAGFuture, "__await__", tracked_await)


_PATCHES = _Patches()


class track_retention:  # noqa: N801 - used like a function: `with track_retention():`
    """Context manager: report zero-copy values kept across compiled-graph reads.

    ``action="raise"`` raises :class:`ZeroCopyRetentionError` before the blocking read;
    ``action="warn"`` warns :class:`ZeroCopyRetentionWarning` and lets the read run. Ray's
    functions are restored on exit, also after an exception. Safe with threads.
    """

    def __init__(self, action: str = "raise") -> None:
        self.tracker = RetentionTracker(action)
        self.active = False

    def __enter__(self) -> RetentionTracker:
        self.active = _PATCHES.install(self.tracker)
        if not self.active:
            warnings.warn(
                "shmlint.runtime.track_retention: ray is not installed; nothing is tracked",
                RuntimeWarning,
                stacklevel=2,
            )
        return self.tracker

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.active:
            _PATCHES.uninstall(self.tracker)
