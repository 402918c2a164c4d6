"""The garbage collector's thresholds during a batch run: raised inside, the caller's after."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from shmlint.basics.config import Config
from shmlint.run import files, pool, runner
from shmlint.run.collector import THRESHOLDS, fewer_collections
from tests.fixture_markers import fixture_files


@pytest.fixture
def default_thresholds() -> Iterator[tuple[int, int, int]]:
    old = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield gc.get_threshold()
    gc.set_threshold(*old)


def _files() -> list[tuple[Path, str]]:
    return [(path, str(path)) for path in fixture_files()[:6]]


def _seen_while_reading(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, int]]:
    """The thresholds each time a run reads its files, from now on."""
    seen: list[tuple[int, int, int]] = []
    read_all = files._read_all

    def spy(files: list[tuple[Path, str]]) -> list[bytes | None]:
        seen.append(gc.get_threshold())
        return read_all(files)

    monkeypatch.setattr(files, "_read_all", spy)
    return seen


def test_a_project_run_raises_them_and_restores_the_callers(
    default_thresholds: tuple[int, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _seen_while_reading(monkeypatch)
    runner.check_project(_files(), Config(), jobs=1, cache=None)
    assert seen and all(threshold == THRESHOLDS for threshold in seen)  # phase 1 and phase 2
    assert gc.get_threshold() == default_thresholds


def test_a_per_file_run_raises_them_and_restores_the_callers(
    default_thresholds: tuple[int, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _seen_while_reading(monkeypatch)
    files.check_files(_files(), Config(), jobs=1, cache=None)
    assert seen == [THRESHOLDS]
    assert gc.get_threshold() == default_thresholds


def test_restored_when_the_run_fails(default_thresholds: tuple[int, int, int]) -> None:
    with pytest.raises(RuntimeError), fewer_collections():
        assert gc.get_threshold() == THRESHOLDS
        raise RuntimeError("boom")
    assert gc.get_threshold() == default_thresholds


def test_a_callers_higher_thresholds_are_left_alone() -> None:
    old = gc.get_threshold()
    try:
        gc.set_threshold(500_000, 20, 20)
        with fewer_collections():
            assert gc.get_threshold() == (500_000, 20, 20)
        assert gc.get_threshold() == (500_000, 20, 20)
    finally:
        gc.set_threshold(*old)


def test_a_worker_of_the_pool_runs_with_them(default_thresholds: tuple[int, int, int]) -> None:
    pool._set_worker(None, None)  # the pool's initializer (a spawned worker inherits nothing)
    assert gc.get_threshold() == THRESHOLDS
