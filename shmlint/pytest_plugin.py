"""pytest plugin (entry point ``pytest11``): run tests under the retention tracker.

- ``pytest --shm-track`` tracks every test;
- ``@pytest.mark.shm_track`` tracks one test (``@pytest.mark.shm_track(action="warn")`` warns).

A kept zero-copy value then fails the test with ``ZeroCopyRetentionError`` at the read that
would have blocked, instead of a compiled-graph timeout. Importing this module is cheap: the
tracker (and Ray) load only for tracked tests.
"""

from __future__ import annotations

import traceback
from collections.abc import Generator
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register ``--shm-track``."""
    group = parser.getgroup("shmlint")
    group.addoption(
        "--shm-track",
        action="store_true",
        default=False,
        help="fail tests that keep Ray zero-copy values across compiled-graph reads",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``shm_track`` marker."""
    config.addinivalue_line(
        "markers",
        "shm_track(action='raise'): track zero-copy retention in this test (shmlint)",
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, None]:
    """Run the test body inside ``track_retention`` when asked to."""
    marker = item.get_closest_marker("shm_track")
    if marker is None and not item.config.getoption("--shm-track"):
        yield
        return
    from shmlint.runtime import track_retention

    action = marker.kwargs.get("action", "raise") if marker is not None else "raise"
    with track_retention(action=action):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    """Once a retention failure is reported, free the zero-copy values its frames still hold.

    pytest keeps the failed test's traceback (and its frames' locals) until the session ends;
    those locals are the very values that hold Ray's buffers, and a compiled graph torn down
    under them (a module fixture's teardown) can crash the interpreter.
    """
    yield
    excinfo = call.excinfo
    if excinfo is None:
        return
    from shmlint.runtime import ZeroCopyRetentionError

    if isinstance(excinfo.value, ZeroCopyRetentionError):
        traceback.clear_frames(excinfo.tb)
