"""The cache stays bounded: the least recently used entries go past its size limit, never the
ones in use; a cache directory shmlint creates is marked as one."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from shmlint.basics.config import Config, ConfigError, config_from_table
from shmlint.cli import main
from shmlint.run.cache import Cache
from shmlint.run.prune import PRUNE_EVERY, REFRESH_AFTER, STAMP, maybe_prune, prune
from shmlint.run.salts import FORMAT

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DAY = 86_400.0


def _entry(root: Path, name: str, size: int, age: float, form: int = FORMAT) -> Path:
    """A file of ``size`` bytes in a shard of the cache ``root`` (of format ``form``), last
    used ``age`` seconds ago."""
    path = root / f"v{form}" / name[:2] / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))
    return path


def _recent() -> float:
    """What a run starting now keeps: what it reads or writes, and what was marked used
    within REFRESH_AFTER before (a read renews no newer mark)."""
    return time.time() - REFRESH_AFTER


def _age(directory: Path, seconds: float) -> None:
    """Make every file under ``directory`` last used ``seconds`` ago."""
    stamp = time.time() - seconds
    for path in directory.rglob("*"):
        if path.is_file():
            os.utime(path, (stamp, stamp))


def test_the_least_recently_used_go_first_down_to_three_quarters(tmp_path: Path) -> None:
    # Ten 100-byte entries last used 10..1 days ago; a 600-byte limit keeps the 4 newest
    # (three quarters of the limit is 450 bytes).
    paths = [_entry(tmp_path, f"k{i}.json", 100, (10 - i) * DAY) for i in range(10)]
    pruned = prune(tmp_path, 600, _recent())
    assert (pruned.files, pruned.freed, pruned.left) == (6, 600, 400)
    assert [p.exists() for p in paths] == [False] * 6 + [True] * 4
    # Within the limit: nothing goes.
    assert prune(tmp_path, 600, _recent()).files == 0
    assert all(p.exists() for p in paths[6:])


def test_entries_in_use_stay_whatever_the_limit(tmp_path: Path) -> None:
    old = _entry(tmp_path, "k-old.json", 1000, DAY)
    # Read by the run without a new mark (marked 9 minutes before it started), and written
    # at its start, 20 minutes before it prunes (a long run).
    read = _entry(tmp_path, "k-read.json", 1000, 29 * 60)
    written = _entry(tmp_path, "k-written.json", 1000, 20 * 60)
    started = time.time() - 20 * 60
    pruned = prune(tmp_path, 10, started - REFRESH_AFTER)
    assert not old.exists()
    assert read.exists() and written.exists()
    assert pruned.left == 2000


def test_a_run_keeps_what_it_read_without_marking(tmp_path: Path) -> None:
    """A run that started 5 minutes ago read an entry marked 12 minutes ago (7 minutes old
    then: no new mark); its prune keeps it."""
    read = _entry(tmp_path, "k-read.json", 2**20 + 1, 12 * 60)
    old = _entry(tmp_path, "k-old.json", 2**20 + 1, DAY)
    pruned = maybe_prune(tmp_path / f"v{FORMAT}", 1, True, time.time() - 5 * 60)
    assert pruned is not None and pruned.files == 1
    assert read.exists() and not old.exists()


def test_an_old_format_goes_first(tmp_path: Path) -> None:
    stale = _entry(tmp_path, "k-v1.json", 1000, 2 * DAY, form=FORMAT - 1)
    current = _entry(tmp_path, "k-now.json", 1000, DAY)
    prune(tmp_path, 1500, _recent())
    assert not stale.exists() and current.exists()


def test_an_entry_marked_used_during_the_prune_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another run reads an entry between the prune's scan and its delete: it stays."""
    entry = _entry(tmp_path, "k-read.json", 1000, DAY)
    scanned = prune.__globals__["_entries"]

    def then_read(root: Path, now: float) -> list[tuple[float, int, str]]:
        found = scanned(root, now)
        os.utime(entry)
        return found  # type: ignore[no-any-return]

    monkeypatch.setitem(prune.__globals__, "_entries", then_read)
    assert prune(tmp_path, 10, _recent()).files == 0
    assert entry.exists()


def test_a_write_left_unfinished_goes_once_it_is_old(tmp_path: Path) -> None:
    stale = _entry(tmp_path, "ab12.tmp", 10, DAY)
    writing = _entry(tmp_path, "ab34.tmp", 10, 1)  # (another run may be writing it now)
    prune(tmp_path, 10**9, _recent())
    assert not stale.exists()
    assert writing.exists()


def test_reading_an_entry_marks_it_used(tmp_path: Path) -> None:
    cache = Cache(tmp_path, Config())
    cache.put_record("r" + "0" * 8, {"x": 1})
    (stored,) = list(cache.directory.rglob("r*.json"))
    _age(cache.directory, DAY)
    assert cache.get_record("r" + "0" * 8) == {"x": 1}
    assert time.time() - stored.stat().st_mtime < REFRESH_AFTER
    # A recent mark is not renewed on every read (one write per file per period).
    _age(cache.directory, REFRESH_AFTER / 2)
    before = stored.stat().st_mtime
    cache.get_record("r" + "0" * 8)
    assert stored.stat().st_mtime == before


def test_a_garbled_entry_is_a_miss(tmp_path: Path) -> None:
    cache = Cache(tmp_path, Config())
    cache.put_record("r1", {"x": 1})
    (stored,) = list(cache.directory.rglob("r1.json"))
    stored.write_bytes(b'{"key": "r1", "body": "\xff\xfe"}')
    assert cache.get_record("r1") is None


def test_a_cache_directory_created_is_marked(tmp_path: Path) -> None:
    created = tmp_path / "new" / ".shmlint_cache"
    Cache(created, Config()).put_record("r1", {})
    assert (created / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (
        (created / "CACHEDIR.TAG")
        .read_text()
        .startswith("Signature: 8a477f597d28d172789f06886806bc55")
    )
    # A directory that was there (`--cache-dir /tmp/somewhere`) is not littered.
    existing = tmp_path / "existing"
    existing.mkdir()
    Cache(existing, Config()).put_record("r1", {})
    assert sorted(p.name for p in existing.iterdir()) == [f"v{FORMAT}"]


def test_a_project_run_prunes_what_other_runs_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entries of another configuration (or an older shmlint) unused for days go when a run
    that stores facts finds the cache over its limit; this run's entries all stay: after a
    change of the facts, the next run analyses only the edited file."""
    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLES, tree)
    cache = tmp_path / "cache"
    command = ["check", "--output-format", "json", "-j", "1", "--cache-dir", str(cache)]
    assert main([*command, "--min-confidence", "medium", str(tree)]) == 1
    capsys.readouterr()
    others = set(cache.rglob("*.json"))
    others.add(_entry(cache, "k" + "0" * 63 + ".json", 2**20, 0))  # what older runs left
    _age(cache, 2 * DAY)
    (cache / f"v{FORMAT}" / STAMP).touch()  # pruned a moment ago: only storing facts prunes
    (tree / "pyproject.toml").write_text("[tool.shmlint]\ncache-max-size = 1\n")
    assert main([*command, str(tree)]) == 1
    cold = json.loads(capsys.readouterr().out)
    assert not any(p.exists() for p in others)
    left = list(cache.rglob("*.json"))
    assert left and all(time.time() - p.stat().st_mtime < REFRESH_AFTER for p in left)

    import shmlint.run.incremental
    import shmlint.run.runner

    analysed: list[str] = []
    first_pass = shmlint.run.runner.first_pass

    def counted(data: bytes, path: str, *args: Any, **kwargs: Any) -> Any:
        analysed.append(Path(path).name)
        return first_pass(data, path, *args, **kwargs)

    for module in (shmlint.run.runner, shmlint.run.incremental):  # (it tries first)
        monkeypatch.setattr(module, "first_pass", counted)
    edited = next(p for p in sorted(tree.rglob("*.py")) if "ray.get" in p.read_text())
    edited.write_text(edited.read_text() + "\n\ndef _added():\n    return None\n")
    assert main([*command, str(tree)]) == 1
    assert analysed == [edited.name]
    assert json.loads(capsys.readouterr().out) == cold


def test_a_run_storing_no_facts_prunes_once_a_day(tmp_path: Path) -> None:
    directory = tmp_path / f"v{FORMAT}"
    started = time.time()
    _entry(tmp_path, "k-old.json", 2**20 + 1, 2 * DAY)
    first = maybe_prune(directory, 1, False, started)  # never pruned: due
    assert first is not None and first.files == 1
    _entry(tmp_path, "k-old2.json", 2**20 + 1, 2 * DAY)
    assert maybe_prune(directory, 1, False, started) is None  # pruned a moment ago
    assert maybe_prune(directory, 1, True, started) is not None  # facts stored: due
    os.utime(directory / STAMP, (time.time() - PRUNE_EVERY - 1,) * 2)
    _entry(tmp_path, "k-old3.json", 2**20 + 1, 2 * DAY)
    again = maybe_prune(directory, 1, False, started)
    assert again is not None and again.files == 1
    assert maybe_prune(directory, 0, True, started) is None  # 0: no limit


def test_a_cache_that_cannot_be_written_is_never_pruned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Facts that could not be stored do not count as grown, and a cache directory this
    process cannot write to is used as it is (not scanned on every run)."""
    import tempfile

    from shmlint.facts.model import ProjectFacts

    cache = Cache(tmp_path, Config())
    cache.put_record("r1", {})

    def refuse(*args: object, **kwargs: object) -> object:
        raise PermissionError("read-only")

    with monkeypatch.context() as patch:
        patch.setattr(tempfile, "mkstemp", refuse)
        cache.put_facts("f1", ProjectFacts())
    assert not cache.grown
    cache.put_facts("f1", ProjectFacts())
    assert cache.grown
    stale = _entry(tmp_path, "k-old.json", 2**20 + 1, 2 * DAY)
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    assert maybe_prune(cache.directory, 1, True, time.time()) is None
    assert stale.exists()


@pytest.mark.parametrize("value", [-1, 1.5, "512", True])
def test_a_bad_cache_size_names_the_key(value: object) -> None:
    with pytest.raises(ConfigError, match="tool.shmlint.cache-max-size"):
        config_from_table({"cache-max-size": value}, "pyproject.toml", None)


def test_the_cache_size_changes_no_result() -> None:
    from shmlint.run.salts import config_digest

    small = config_from_table({"cache-max-size": 1}, "pyproject.toml", None)
    assert small.cache_max_size == 1
    assert config_digest(small) == config_digest(config_from_table({}, "pyproject.toml", None))
