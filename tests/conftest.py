"""Shared fixtures: one real Ray session for the whole test session (ray.init costs ~4 s), a
result cache of its own for every test (a warm cache left by another run never answers), and
installed modules looked up afresh by every test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shmlint.facts import classes, external
from shmlint.run.cache import DIRECTORY_VARIABLE


@pytest.fixture(autouse=True)
def own_cache_directory(tmp_path_factory: pytest.TempPathFactory, monkeypatch: Any) -> None:
    """Every test's runs (in process and in subprocesses) use a fresh cache directory; tests
    about the default location remove the variable themselves."""
    monkeypatch.setenv(DIRECTORY_VARIABLE, str(tmp_path_factory.mktemp("shmlint_cache")))


@pytest.fixture(autouse=True)
def forgotten_lookups() -> Iterator[None]:
    """Every test looks installed modules up afresh, and leaves no lookup behind: the lookups
    are cached per process (shmlint/facts/external.py, classes.py), and another test's
    package of the same name lives elsewhere."""
    caches = (external.module_file, external._summary, classes._external_class)
    for cached in caches:
        cached.cache_clear()
    yield
    for cached in caches:
        cached.cache_clear()


@pytest.fixture
def installed_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Installs a package ``extpkg`` whose ``outputs`` module holds the text given, in a site
    directory on the interpreter's path."""

    def install(text: str) -> None:
        package = tmp_path / "site" / "extpkg"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "outputs.py").write_text(text)
        monkeypatch.syspath_prepend(str(tmp_path / "site"))

    return install


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
