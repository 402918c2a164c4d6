"""A warm run where nothing changed is answered from the run record (one entry); any change
to a file (content, even at the same size and modification time), to the configuration, or to
an installed file the facts read falls back to the content-keyed cache."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import shmlint.analysis.engine
import shmlint.run.passes
from shmlint.basics.config import Config
from shmlint.basics.types import FileResult
from shmlint.cli import main
from shmlint.run import record
from shmlint.run.cache import Cache

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _refuse(monkeypatch: pytest.MonkeyPatch, *, entries: bool) -> None:
    """Parsing fails the test; with ``entries``, so does reading any entry but a record."""

    def refuse_parse(text: str, path: str) -> None:
        raise AssertionError(f"a warm run parsed {path}")

    monkeypatch.setattr(shmlint.analysis.engine, "parse_source", refuse_parse)
    monkeypatch.setattr(shmlint.run.passes, "parse_source", refuse_parse)
    if entries:
        original = Cache._entry

        def only_records(self: Cache, key: str) -> object:
            assert key.startswith("w"), f"a warm run read the entry {key}"
            return original(self, key)

        monkeypatch.setattr(Cache, "_entry", only_records)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    copy = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copy)
    return copy


def _check(
    tree: Path, cache: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> list[dict[str, object]]:
    command = ["check", "--output-format", "json", "-j", "1", "--cache-dir", str(cache)]
    assert main([*command, *extra, str(tree)]) in (0, 1)
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", [[], ["--per-file"]], ids=["project", "per-file"])
def test_nothing_changed_is_answered_from_the_record_alone(
    mode: list[str],
    tree: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cold = _check(tree, tmp_path / "cache", capsys, *mode)
    assert len(cold) == 5
    with monkeypatch.context() as patched:
        _refuse(patched, entries=True)
        assert _check(tree, tmp_path / "cache", capsys, *mode) == cold
    # The refusal is real: a touched file is not served from the record (main() reports the
    # refusal as an internal error: its traceback, and exit 2).
    os.utime(tree / "trainer.py")
    with monkeypatch.context() as patched:
        _refuse(patched, entries=True)
        command = ["check", "--output-format", "json", "-j", "1", "--cache-dir"]
        assert main([*command, str(tmp_path / "cache"), *mode, str(tree)]) == 2
        assert "AssertionError: a warm run read the entry" in capsys.readouterr().err


def test_a_touched_file_is_answered_by_content_without_parsing(
    tree: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cold = _check(tree, tmp_path / "cache", capsys)
    os.utime(tree / "trainer.py", ns=(1, 1))
    _refuse(monkeypatch, entries=False)
    assert _check(tree, tmp_path / "cache", capsys) == cold


def test_an_edit_at_the_same_size_and_mtime_is_seen(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cold = _check(tree, tmp_path / "cache", capsys)
    trainer = tree / "trainer.py"
    before = os.stat(trainer)
    text = trainer.read_text()
    assert "return ray.get(" in text
    # Same size, same modification time: the returned value is no read any more.
    trainer.write_text(text.replace("return ray.get(", "return ray_get(", 1))
    os.utime(trainer, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(trainer).st_size == before.st_size
    assert os.stat(trainer).st_mtime_ns == before.st_mtime_ns
    warm = _check(tree, tmp_path / "cache", capsys)
    assert len(warm) == len(cold) - 1
    assert warm == _check(tree, tmp_path / "other-cache", capsys)


def test_another_configuration_is_another_record(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    medium = _check(tree, tmp_path / "cache", capsys, "--min-confidence", "medium")
    high = _check(tree, tmp_path / "cache", capsys)
    assert _check(tree, tmp_path / "cache", capsys, "--min-confidence", "medium") == medium
    assert _check(tree, tmp_path / "cache", capsys) == high


def test_a_changed_installed_file_is_not_served(tree: Path, tmp_path: Path) -> None:
    files = [(path, str(path)) for path in sorted(tree.glob("*.py"))]
    cache = Cache(tmp_path / "cache", Config())
    stats = [record.stat_of(path) for path, _ in files]
    results = [FileResult(display, (), parsed=True) for _, display in files]
    installed = tmp_path / "site" / "pkg.py"
    installed.parent.mkdir()
    installed.write_text("class Output: ...\n")
    mtime = os.stat(installed).st_mtime_ns
    record.write(files, stats, results, {str(installed): mtime}, cache, "project")
    assert record.served(files, cache, "project") == results
    assert record.served(files, cache, "per-file") is None  # another mode
    assert record.served(files[1:], cache, "project") is None  # other files
    os.utime(installed, ns=(mtime + 10**9, mtime + 10**9))
    assert record.served(files, cache, "project") is None
    installed.unlink()
    assert record.served(files, cache, "project") is None


def test_an_unreadable_file_writes_no_record(tree: Path, tmp_path: Path) -> None:
    files = [(path, str(path)) for path in sorted(tree.glob("*.py"))]
    cache = Cache(tmp_path / "cache", Config())
    stats = [record.stat_of(path) for path, _ in files]
    stats[0] = None
    results = [FileResult(display, (), parsed=True) for _, display in files]
    record.write(files, stats, results, {}, cache, "project")
    assert record.served(files, cache, "project") is None
