"""A speculation (shmlint/run/speculate.py) gives ``work()``'s result from a child process, or
runs the work again here when the child gives none: it never changes a result."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from shmlint.run.speculate import Speculation


def test_the_child_does_the_work(tmp_path: Path) -> None:
    ran: list[int] = []

    def work() -> tuple[int, str]:
        ran.append(os.getpid())  # in the child: this process's list stays empty
        (tmp_path / "done").write_text(str(os.getpid()))
        return 42, "answer"

    assert Speculation(work).result() == (42, "answer")
    assert not ran
    assert int((tmp_path / "done").read_text()) != os.getpid()


def test_an_exception_is_raised_here() -> None:
    def work() -> None:
        raise LookupError("no facts")

    with pytest.raises(LookupError, match="no facts"):
        Speculation(work).result()


def test_a_result_that_does_not_pickle_is_computed_here() -> None:
    pids: list[int] = []

    def work() -> object:
        pids.append(os.getpid())
        return lambda: "not picklable"

    made = Speculation(work).result()
    assert callable(made) and made() == "not picklable"  # type: ignore[operator]
    assert pids == [os.getpid()]


def test_a_crashed_child_is_replaced() -> None:
    def work() -> int:
        if os.environ.get("SHMLINT_TEST_PARENT") != str(os.getpid()):
            os._exit(3)  # the child dies without a word
        return 7

    os.environ["SHMLINT_TEST_PARENT"] = str(os.getpid())
    try:
        assert Speculation(work).result() == 7
    finally:
        del os.environ["SHMLINT_TEST_PARENT"]


def test_cancel_kills_the_child_at_once() -> None:
    speculation = Speculation(lambda: time.sleep(60))
    pid = speculation._pid
    assert pid
    started = time.monotonic()
    speculation.cancel()
    assert time.monotonic() - started < 10
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no zombie left
    speculation.cancel()  # twice is harmless
