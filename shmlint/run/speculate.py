"""Work done in a forked child while this process goes on, its result taken if wanted.

A warm run that re-checks an edited file runs its phase 1 (to learn whether what it gives the
merge changed) and then its phase 2 against the lookups phase 2 logged last time — which does
not depend on phase 1 at all. On two cores the second can start first, in a child, and is
used only when phase 1 says it is needed (shmlint/run/incremental.py).

A speculation never changes a result: when the child fails in any way (no ``fork``, an
exception, a crash, a result that does not pickle) the work is done again here, where it
raises or returns as it would have; a speculation not wanted is killed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Speculation(Generic[T]):
    """``work()`` started now in a child process (where ``fork`` exists)."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._work = work
        self._pid = 0
        self._read = -1
        if not hasattr(os, "fork"):
            return
        import pickle  # noqa: F401 - before the fork: both processes need it, import once

        read, write = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            return
        if pid == 0:  # the child: never returns
            os.close(read)
            _child(work, write)
        os.close(write)
        self._pid, self._read = pid, read

    def result(self) -> T:
        """The child's result, or ``work()`` run here when the child did not give one."""
        if self._pid:
            import pickle

            chunks = []
            with os.fdopen(self._read, "rb") as pipe:
                while chunk := pipe.read(1 << 16):
                    chunks.append(chunk)
            os.waitpid(self._pid, 0)
            self._pid = 0
            try:
                done, value = pickle.loads(b"".join(chunks))
            except Exception:  # noqa: BLE001 - a crashed child: nothing or a torn payload
                done = False
            if done:
                return value  # type: ignore[no-any-return]
        return self._work()

    def cancel(self) -> None:
        """Kill the child if it is still running (its result is not wanted)."""
        if self._pid:
            import signal

            os.close(self._read)
            try:
                os.kill(self._pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self._pid, 0)
            self._pid = 0


def _child(work: Callable[[], object], write: int) -> None:
    import pickle

    status = 0
    try:
        try:
            payload = pickle.dumps((True, work()))
        except BaseException:  # noqa: BLE001 - the parent runs the work again and raises
            payload = pickle.dumps((False, None))
        with os.fdopen(write, "wb") as pipe:
            pipe.write(payload)
    except BaseException:  # noqa: BLE001
        status = 1
    finally:
        os._exit(status)  # no atexit handlers, no flush of the parent's buffered output
