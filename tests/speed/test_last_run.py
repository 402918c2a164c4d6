"""A full project run after a change of the facts takes from the last run's record what it
computed of the files whose bytes did not change (what each gives the merge, the readers'
names each spells), and leaves the record a run without it would leave."""

from __future__ import annotations

from pathlib import Path

import pytest

from shmlint.basics.config import Config
from shmlint.facts.model import ProjectFacts
from shmlint.run import record
from shmlint.run.cache import Cache
from shmlint.run.runner import RunTrace, check_project

READER = "import ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n"


def _project(root: Path) -> list[tuple[Path, str]]:
    """``pkg.reads.fetch`` returns a read; ``pkg.other`` spells its name but never calls it
    (phase 2 leaves it alone, on the evidence of what it spells)."""
    tree = root / "proj"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "reads.py").write_text(READER)
    (tree / "pkg" / "other.py").write_text(
        "import ray\n\nfrom pkg import reads\n\n\nclass Keeper:\n"
        "    def keep(self, ref):\n"
        "        self.value = ray.get(ref)  # not fetch\n"
    )
    return [(path, str(path)) for path in sorted(tree.rglob("*.py"))]


def _run(
    files: list[tuple[Path, str]], cache: Cache, last: record.Record | None = None
) -> tuple[RunTrace, list[object]]:
    trace = RunTrace()
    _, results = check_project(files, Config(), jobs=1, cache=cache, trace=trace, last=last)
    return trace, list(results)


def _recorded(files: list[tuple[Path, str]], cache: Cache, trace: RunTrace) -> record.Record:
    _, results = check_project(files, Config(), jobs=1, cache=None)
    stats = [record.stat_of(path) for path, _ in files]
    record.write(files, stats, results, {}, cache, "project", trace)
    last = record.load(files, cache, "project")
    assert last is not None
    return last


def _scans(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """Per call evidence asked from now on: the module, and whether its text was scanned."""
    asked: list[tuple[str, bool]] = []
    original = ProjectFacts.call_evidence

    def spy(
        self: ProjectFacts,
        imports: tuple[tuple[str, str], ...],
        data: bytes,
        spelled: frozenset[bytes] | None = None,
    ) -> tuple[frozenset[bytes], tuple[bytes, ...] | None]:
        asked.append((data.decode(), spelled is None))
        return original(self, imports, data, spelled)

    monkeypatch.setattr(ProjectFacts, "call_evidence", spy)
    return asked


def test_a_facts_change_takes_what_stands_from_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _project(tmp_path)
    cache = Cache(tmp_path / "cache", Config())
    first, _ = _run(files, cache)
    assert first.calls[files.index(next(f for f in files if f[0].name == "other.py"))] == (
        ["fetch"],
        ["reads.fetch"],
    )
    last = _recorded(files, cache, first)
    reads = next(path for path, _ in files if path.name == "reads.py")
    reads.write_text(READER + "\n\ndef added():\n    return None\n")  # the facts change
    scans = _scans(monkeypatch)
    taken, taken_results = _run(files, cache, last)
    other = [scanned for text, scanned in scans if "class Keeper" in text]
    assert other == [False], "the unchanged file's text is not scanned again"
    fresh, fresh_results = _run(files, Cache(tmp_path / "fresh", Config()))
    assert taken == fresh
    assert taken_results == fresh_results


def test_a_facts_change_takes_the_deferred_modules_from_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module with nothing to check per file, bytes unchanged, is deferred again without
    its text check; an edited one is checked again."""
    from shmlint.run import runner

    files = _project(tmp_path)
    plain = files[0][0].parent / "plain.py"
    plain.write_text("def helper(x):\n    return x\n")
    edited = files[0][0].parent / "edited.py"
    edited.write_text("VALUE = 1\n")
    files = sorted([*files, (plain, str(plain)), (edited, str(edited))])
    cache = Cache(tmp_path / "cache", Config())
    first, _ = _run(files, cache)
    assert first.gives[files.index((plain, str(plain)))].startswith("d")
    last = _recorded(files, cache, first)
    reads = next(path for path, _ in files if path.name == "reads.py")
    reads.write_text(READER + "\n\ndef added():\n    return None\n")  # the facts change
    edited.write_text("VALUE = 2\n")
    checked: list[str] = []
    original = runner.deferred_pass

    def spy(data: bytes, path: str, config: Config) -> object:
        checked.append(Path(path).name)
        return original(data, path, config)

    monkeypatch.setattr(runner, "deferred_pass", spy)
    taken, taken_results = _run(files, cache, last)
    assert sorted(checked) == ["edited.py", "reads.py"]
    fresh, fresh_results = _run(files, Cache(tmp_path / "fresh", Config()))
    assert taken == fresh
    assert taken_results == fresh_results


def _reading(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files read from now on."""
    read: list[str] = []
    original = Path.read_bytes

    def spy(self: Path) -> bytes:
        read.append(self.name)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", spy)
    return read


def test_files_of_unchanged_stat_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the stats taken before the run, a file whose stat is the recorded one keeps its
    recorded key and is read only if the run needs its bytes: after a change of the facts,
    the edited file, and what the plan must look at."""
    files = _project(tmp_path)
    alone = files[0][0].parent / "alone.py"  # analysed, spelling no reader's name
    alone.write_text("import ray\n\n\ndef drop(ref):\n    value = ray.get(ref)\n    del value\n")
    files = sorted([*files, (alone, str(alone))])
    cache = Cache(tmp_path / "cache", Config())
    first, _ = _run(files, cache)
    last = _recorded(files, cache, first)
    reads = next(path for path, _ in files if path.name == "reads.py")
    reads.write_text(READER + "\n\ndef added():\n    return None\n")  # the facts change
    stats = [record.stat_of(path) for path, _ in files]
    read = _reading(monkeypatch)
    trace = RunTrace()
    _, results = check_project(
        files, Config(), jobs=1, cache=cache, trace=trace, last=last, stats=stats
    )
    # The edited file (phase 1, then phase 2: it defines a reader), and the file spelling a
    # reader's name (where it spells it is looked at); never the deferred `__init__.py`, nor
    # `alone.py`, which spells none.
    assert sorted(read) == ["other.py", "reads.py", "reads.py"]
    monkeypatch.undo()
    fresh, fresh_results = _run(files, Cache(tmp_path / "fresh", Config()))
    assert trace == fresh
    assert list(results) == fresh_results


def test_a_trusted_file_read_with_other_bytes_starts_the_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file whose stat was the recorded one but whose bytes the run finds changed when it
    reads them (edited during the run): the run starts again, trusting no stat."""
    files = _project(tmp_path)
    cache = Cache(tmp_path / "cache", Config())
    first, _ = _run(files, cache)
    last = _recorded(files, cache, first)
    stats = [record.stat_of(path) for path, _ in files]  # as recorded
    other = next(path for path, _ in files if path.name == "other.py")
    other.write_text(other.read_text() + "\n\nVALUE = 1\n")
    empty = Cache(tmp_path / "empty", Config())  # no entry: every file is read
    read = _reading(monkeypatch)
    trace = RunTrace()
    _, results = check_project(
        files, Config(), jobs=1, cache=empty, trace=trace, last=last, stats=stats
    )
    assert read.count("other.py") == 2, "read once trusted, once again from the start"
    monkeypatch.undo()
    fresh, fresh_results = _run(files, Cache(tmp_path / "fresh", Config()))
    assert trace == fresh
    assert list(results) == fresh_results


def test_other_readers_scan_every_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _project(tmp_path)
    cache = Cache(tmp_path / "cache", Config())
    first, _ = _run(files, cache)
    last = _recorded(files, cache, first)
    reads = next(path for path, _ in files if path.name == "reads.py")
    reads.write_text(READER + "\n\ndef fetch_all(refs):\n    return ray.get(refs)\n")  # a reader
    scans = _scans(monkeypatch)
    taken, _ = _run(files, cache, last)
    assert scans and all(scanned for _, scanned in scans)
    assert "fetch_all" in taken.reader_words
    fresh, _ = _run(files, Cache(tmp_path / "fresh", Config()))
    assert taken == fresh


def test_the_command_hands_the_record_to_the_full_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from shmlint.cli import main

    files = _project(tmp_path)
    tree = files[0][0].parent.parent
    command = ["check", "-j", "1", "--cache-dir", str(tmp_path / "cache"), str(tree)]
    main(command)
    capsys.readouterr()
    reads = next(path for path, _ in files if path.name == "reads.py")
    # (The facts merged anew: the read's parameter renamed, which no derivation takes.)
    reads.write_text(READER.replace("ref", "r"))
    scans = _scans(monkeypatch)
    warm = main(command), capsys.readouterr().out
    assert [scanned for text, scanned in scans if "class Keeper" in text] == [False]
    assert warm == (main([*command[:3], "--no-cache", str(tree)]), capsys.readouterr().out)


def test_a_full_run_after_an_incremental_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The record an incremental run leaves (a deferred module edited) serves the full run
    after it as a full run's does: the same findings, unchanged files unread."""
    from shmlint.cli import main

    files = _project(tmp_path)
    tree = files[0][0].parent.parent
    plain = tree / "pkg" / "plain.py"
    plain.write_text("def helper(x):\n    return x\n")
    command = ["check", "-j", "1", "--cache-dir", str(tmp_path / "cache"), str(tree)]
    main(command)
    plain.write_text("def helper(x):\n    return x  # edited\n")  # incremental
    main(command)
    capsys.readouterr()
    reads = next(path for path, _ in files if path.name == "reads.py")
    reads.write_text(READER + "\n\ndef added():\n    return None\n")  # the facts change
    read = _reading(monkeypatch)
    warm = main(command), capsys.readouterr().out
    assert "plain.py" not in read and "__init__.py" not in read
    monkeypatch.undo()
    assert warm == (main([*command[:3], "--no-cache", str(tree)]), capsys.readouterr().out)


def test_a_record_of_other_lengths_gives_nothing() -> None:
    """A garbled record (lists shorter than its keys) is not trusted, never a crash."""
    last = record.Record([], [], {}, ["k0", "k1"], ["a0"], "", "", ["fetch"], [], [])
    assert last.gave(0, "k0") == "a0"
    assert last.gave(1, "k1") is None
    assert last.gave(0, "other") is None
    assert last.spelled(0, "k0") is None
    assert last.spelled(5, "k5") is None
    assert last.deferred(1, "k1") is None
    deferred = record.Record([], [], {}, ["k0"], ["dpkg.m"], "", "", [], [], [])
    assert deferred.deferred(0, "k0") == "pkg.m"
    assert deferred.deferred(0, "other") is None
    read = record.Record([], [], {}, ["k0", "k1"], ["dpkg.m\0digest", "d"], "", "", [], [], [])
    assert read.deferred(0, "k0") == "pkg.m"  # (a module the merge read: its syntax digest)
    assert read.deferred(1, "k1") is None
    stats = [(1, 2, 3, 4)]
    stood = record.Record(stats, [], {}, ["k0"], ["a0"], "", "", [], [], [], [True])
    assert stood.stood(0, (1, 2, 3, 4)) == "k0"
    assert stood.stood(0, (1, 2, 3, 5)) is None
    assert stood.stood(0, None) is None
    assert stood.stood(1, (1, 2, 3, 4)) is None
    assert stood.called(0, "k0") is True
    assert stood.called(0, "other") is None
    assert record.Record([], [], {}, ["k0"], ["d"], "", "", [], [], []).called(0, "k0") is None


def test_a_garbled_record_of_names_gives_nothing() -> None:
    from shmlint.run.runner import _spelled

    garbled = record.Record([], [], {}, ["k0"], ["a0"], "", "", ["\ud800"], [], [(["\ud800"], [])])
    assert garbled.spelled(0, "k0") is None
    assert _spelled(garbled, ["k0"], ProjectFacts()) is None
