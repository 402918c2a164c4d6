"""Shared fixtures: one real Ray session for the whole test session (ray.init costs ~4 s), and
a result cache of its own for every test (a warm cache left by another run never answers)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from shmlint.run.cache import DIRECTORY_VARIABLE


@pytest.fixture(autouse=True)
def own_cache_directory(tmp_path_factory: pytest.TempPathFactory, monkeypatch: Any) -> None:
    """Every test's runs (in process and in subprocesses) use a fresh cache directory; tests
    about the default location remove the variable themselves."""
    monkeypatch.setenv(DIRECTORY_VARIABLE, str(tmp_path_factory.mktemp("shmlint_cache")))


@pytest.fixture(scope="session")
def ray_session() -> Iterator[Any]:
    """A local, CPU-only Ray started once per test session and shut down at the end."""
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(
            address="local",  # always a fresh local instance, never a cluster left running
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    yield ray
    ray.shutdown()


pytest_plugins = ["pytester"]
