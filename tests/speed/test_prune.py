"""The cache stays bounded: the least recently used entries go past its size limit, never the
ones in use; a cache directory shmlint creates is marked as one."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from shmlint.basics.config import Config, ConfigError, config_from_table
from shmlint.cli import main
from shmlint.run.cache import FORMAT, Cache
from shmlint.run.prune import PRUNE_EVERY, REFRESH_AFTER, STAMP, maybe_prune, prune

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DAY = 86_400.0


def _entry(directory: Path, name: str, size: int, age: float) -> Path:
    """A file of ``size`` bytes in a shard of ``directory``, last used ``age`` seconds ago."""
    path = directory / name[:2] / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))
    return path


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
    pruned = prune(tmp_path, 600)
    assert (pruned.files, pruned.freed, pruned.left) == (6, 600, 400)
    assert [p.exists() for p in paths] == [False] * 6 + [True] * 4
    # Within the limit: nothing goes.
    assert prune(tmp_path, 600).files == 0
    assert all(p.exists() for p in paths[6:])


def test_entries_in_use_stay_whatever_the_limit(tmp_path: Path) -> None:
    old = _entry(tmp_path, "k-old.json", 1000, DAY)
    recent = [_entry(tmp_path, f"k{i}.json", 1000, REFRESH_AFTER / 2) for i in range(3)]
    pruned = prune(tmp_path, 10)
    assert not old.exists()
    assert all(p.exists() for p in recent)
    assert pruned.left == 3000


def test_a_write_left_unfinished_goes_once_it_is_old(tmp_path: Path) -> None:
    stale = _entry(tmp_path, "ab12.tmp", 10, DAY)
    writing = _entry(tmp_path, "ab34.tmp", 10, 1)  # (another run may be writing it now)
    prune(tmp_path, 10**9)
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
    that stores facts finds the cache over its limit; this run's entries all stay, and the
    next run is answered from them."""
    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLES, tree)
    cache = tmp_path / "cache"
    command = ["check", "--output-format", "json", "-j", "1", "--cache-dir", str(cache)]
    assert main([*command, "--min-confidence", "medium", str(tree)]) == 1
    capsys.readouterr()
    others = set(cache.rglob("*.json"))
    _entry(cache / f"v{FORMAT}", "k" + "0" * 63 + ".json", 2**20, 0)  # what older runs left
    _age(cache, 2 * DAY)
    others |= set(cache.rglob("k0000*.json"))
    (tree / "pyproject.toml").write_text("[tool.shmlint]\ncache-max-size = 1\n")
    assert main([*command, str(tree)]) == 1
    cold = json.loads(capsys.readouterr().out)
    assert others and not any(p.exists() for p in others)
    left = list(cache.rglob("*.json"))
    assert left and all(time.time() - p.stat().st_mtime < REFRESH_AFTER for p in left)

    import shmlint.run.runner

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("a warm run after a prune analysed")

    monkeypatch.setattr(shmlint.run.runner, "check_project", refuse)
    assert main([*command, str(tree)]) == 1
    assert json.loads(capsys.readouterr().out) == cold


def test_a_run_storing_no_facts_prunes_once_a_day(tmp_path: Path) -> None:
    _entry(tmp_path, "k-old.json", 2**20 + 1, 2 * DAY)
    first = maybe_prune(tmp_path, 1, grew=False)  # never pruned: due
    assert first is not None and first.files == 1
    _entry(tmp_path, "k-old2.json", 2**20 + 1, 2 * DAY)
    assert maybe_prune(tmp_path, 1, grew=False) is None  # pruned a moment ago
    assert maybe_prune(tmp_path, 1, grew=True) is not None  # facts stored: due
    stamp = tmp_path / STAMP
    os.utime(stamp, (time.time() - PRUNE_EVERY - 1,) * 2)
    _entry(tmp_path, "k-old3.json", 2**20 + 1, 2 * DAY)
    again = maybe_prune(tmp_path, 1, grew=False)
    assert again is not None and again.files == 1
    assert maybe_prune(tmp_path, 0, grew=True) is None  # 0: no limit


@pytest.mark.parametrize("value", [-1, 1.5, "512", True])
def test_a_bad_cache_size_names_the_key(value: object) -> None:
    with pytest.raises(ConfigError, match="tool.shmlint.cache-max-size"):
        config_from_table({"cache-max-size": value}, "pyproject.toml", None)


def test_the_cache_size_changes_no_result() -> None:
    from shmlint.run.cache import config_digest

    small = config_from_table({"cache-max-size": 1}, "pyproject.toml", None)
    assert small.cache_max_size == 1
    assert config_digest(small) == config_digest(config_from_table({}, "pyproject.toml", None))
