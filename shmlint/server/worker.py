"""One thread that runs the project's work, in order, for the server's event loop.

The analysis keeps one in-memory project and is not thread-safe, so all of it runs on one
thread; the event loop stays free to answer the editor meanwhile. The thread is a daemon: an
``exit`` never waits for a build still running.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
_Job = tuple[Callable[[], Any], "asyncio.Future[Any]", asyncio.AbstractEventLoop]


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # the waiter was cancelled
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class Worker:
    """Runs callables on its own thread, one at a time, in the order they were given."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="shmlint-worker", daemon=True)
        self._thread.start()

    async def run(self, job: Callable[[], T]) -> T:
        """Run ``job`` on the worker thread; its result (or exception) comes back here."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put((job, future, loop))
        return await future

    def stop(self) -> None:
        """Stop once the jobs already given have run."""
        self._jobs.put(None)

    def _loop(self) -> None:
        while True:
            item = self._jobs.get()
            if item is None:
                return
            job, future, loop = item
            if future.done():
                continue
            result: Any = None
            error: BaseException | None = None
            try:
                result = job()
            except Exception as caught:  # handed to the awaiting coroutine, never lost
                error = caught
            try:
                loop.call_soon_threadsafe(_settle, future, result, error)
            except RuntimeError:  # the loop is closed: the server is exiting
                return
