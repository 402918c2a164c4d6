"""A project run after a few edits starts from the last run's record: only the edited files
are analysed when what they give the merge is unchanged, and the findings are always those of
a run without any cache."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import shmlint.run.files
import shmlint.run.runner
from shmlint.cli import main

CASE = Path(__file__).resolve().parents[2] / "fixtures" / "project" / "payloads"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    copy = tmp_path / "payloads"
    shutil.copytree(CASE, copy)
    return copy


def _check(tree: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> list[dict[str, object]]:
    command = ["check", "--output-format", "json", "-j", "1", *extra, str(tree)]
    assert main(command) in (0, 1)
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def _full_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the full project runs (``check_project``) from now on."""
    calls: list[int] = []
    original = shmlint.run.runner.check_project

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shmlint.run.runner, "check_project", counted)
    return calls


def _facts_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts the loads of whole project facts from the cache from now on."""
    from shmlint.run.cache import Cache

    loads: list[str] = []
    original = Cache.get_facts

    def counted(self: Cache, key: str) -> object:
        loads.append(key)
        return original(self, key)

    monkeypatch.setattr(Cache, "get_facts", counted)
    return loads


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


EDITS: dict[str, tuple[str, str, str, bool]] = {
    # name: (file, old, new, answered from the record without the facts); pkg/trainer.py is
    # the file phase 2 re-checks: it is re-checked against the lookups it made, without
    # loading the facts. (No edit here merges the tree: a field changed derives the facts,
    # shmlint/facts/refielded.py.)
    "a comment": ("pkg/trainer.py", "# ok: SHM102 (array-free)", "# ok: SHM102 (no arrays)", True),
    "a body, findings change": (
        "pkg/trainer.py",
        "self.frame = ray.get(self.workers[0].observe.remote())",
        "frame = ray.get(self.workers[0].observe.remote())",
        True,  # no flow of another module changes: only this file is analysed again
    ),
    "the payload class": (
        "pkg/records.py",
        "    reward: float\n",
        "    reward: float\n    frames: 'np.ndarray'\n",
        False,
    ),
}


def _speculations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records each speculative phase 2 (shmlint/run/speculate.py) started, then used."""
    from shmlint.run import speculate

    events: list[str] = []
    start, result = speculate.Speculation.__init__, speculate.Speculation.result

    def started(self: speculate.Speculation[object], work: Callable[[], object]) -> None:
        events.append("started")
        start(self, work)

    def used(self: speculate.Speculation[object]) -> object:
        events.append("used")
        return result(self)

    monkeypatch.setattr(speculate.Speculation, "__init__", started)
    monkeypatch.setattr(speculate.Speculation, "result", used)
    return events


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("name", EDITS)
def test_an_edit_gives_the_findings_of_a_run_without_cache(
    name: str,
    jobs: str,
    tree: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache = ("--cache-dir", str(tmp_path / "cache"), "-j", jobs)
    _check(tree, capsys, *cache)
    file, old, new, incremental = EDITS[name]
    _edit(tree / file, old, new)
    full, loads = _full_runs(monkeypatch), _facts_loads(monkeypatch)
    speculations = _speculations(monkeypatch)
    warm = _check(tree, capsys, *cache)
    assert not full
    if incremental:
        assert not loads
    # With two jobs, the phase 2 of pkg/trainer.py (re-checked last time) starts before its
    # phase 1 and is used; the payload class's module is not re-checked by phase 2.
    expected = ["started", "used"] if jobs == "2" and file == "pkg/trainer.py" else []
    assert speculations == expected
    # The record it left answers the next run alone.
    assert _check(tree, capsys, *cache) == warm
    assert not full
    assert warm == _check(tree, capsys, "--no-cache")


def test_a_deferred_module_no_one_reads(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    helpers = tree / "pkg" / "text_utils.py"
    helpers.write_text("def words(text):\n    return text.split()\n")
    cache = ("--cache-dir", str(tmp_path / "cache"))
    before = _check(tree, capsys, *cache)
    _edit(helpers, "text.split()", "text.split(' ')")
    full = _full_runs(monkeypatch)
    assert _check(tree, capsys, *cache) == before
    assert not full


def test_a_deferred_module_that_now_reads_runs_the_project(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    helpers = tree / "pkg" / "text_utils.py"
    helpers.write_text("class Holder:\n    def keep(self, ref):\n        self.value = ref\n")
    cache = ("--cache-dir", str(tmp_path / "cache"))
    _check(tree, capsys, *cache)
    _edit(helpers, "self.value = ref", "self.value = __import__('ray').get(ref)")
    full = _full_runs(monkeypatch)
    warm = _check(tree, capsys, *cache)
    assert len(full) == 1
    assert warm == _check(tree, capsys, "--no-cache")


def _many(tree: Path) -> Callable[[], None]:
    def touch_all() -> None:
        for path in sorted(tree.rglob("*.py")):
            path.write_text(path.read_text() + "\n")

    return touch_all


def test_many_changed_files_run_the_project(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import shmlint.run.incremental

    monkeypatch.setattr(shmlint.run.incremental, "MOST_CHANGED", 2)
    cache = ("--cache-dir", str(tmp_path / "cache"))
    _check(tree, capsys, *cache)
    _many(tree)()
    full = _full_runs(monkeypatch)
    warm = _check(tree, capsys, *cache)
    assert len(full) == 1
    assert warm == _check(tree, capsys, "--no-cache")


def test_a_module_that_stops_calling_a_reader_runs_the_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = tmp_path / "proj"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "reads.py").write_text(
        "import ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n"
    )
    caller = tree / "pkg" / "use.py"
    caller.write_text(
        "from pkg.reads import fetch\n\n\nclass Keeper:\n"
        "    def keep(self, ref):\n        self.value = fetch(ref)\n"
    )
    cache = ("--cache-dir", str(tmp_path / "cache"), "--min-confidence", "medium")
    assert _check(tree, capsys, *cache)  # the caller keeps the read
    caller.write_text("class Keeper:\n    def keep(self, ref):\n        self.value = ref\n")
    full = _full_runs(monkeypatch)
    warm = _check(tree, capsys, *cache)
    assert len(full) == 1
    assert warm == _check(tree, capsys, "--no-cache", "--min-confidence", "medium")
    assert not [f for f in warm if str(f["path"]).endswith("use.py")]


def test_an_edit_that_cannot_need_phase_2_does_not_load_the_facts(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from shmlint.basics.config import find_pyproject, load_config
    from shmlint.run import record
    from shmlint.run.cache import Cache
    from shmlint.run.discovery import iter_python_files

    cache_dir = tmp_path / "cache"
    _check(tree, capsys, "--cache-dir", str(cache_dir))
    config = load_config(find_pyproject(tree))
    files = list(iter_python_files([str(tree)], config))
    last = record.load(files, Cache(cache_dir, config), "project")
    assert last is not None
    analysed = [
        path
        for (path, _), given, second in zip(files, last.gives, last.second, strict=True)
        if given.startswith("a") and not second
    ]
    assert analysed, "the case has an analysed file phase 2 leaves alone"
    analysed[0].write_text(analysed[0].read_text() + "# edited\n")
    loads, full = _facts_loads(monkeypatch), _full_runs(monkeypatch)
    warm = _check(tree, capsys, "--cache-dir", str(cache_dir))
    assert not full and not loads
    assert warm == _check(tree, capsys, "--no-cache")


def test_a_summary_digest_survives_the_cache() -> None:
    """The digest of a summary decoded from the cache equals the computed one's (else every
    warm run after a cached one would merge anew)."""
    from shmlint.basics.config import Config
    from shmlint.facts.summary import ModuleSummary
    from shmlint.run.passes import first_pass
    from shmlint.run.runner import summary_digest

    for path in sorted(CASE.rglob("*.py")):
        summary = first_pass(path.read_bytes(), str(path), Config(root=CASE)).summary
        if summary is not None:
            decoded = ModuleSummary.from_json(summary.to_json())
            assert summary_digest(decoded) == summary_digest(summary)


def _reader_project(root: Path) -> Path:
    """``pkg.reads.fetch`` returns a read; ``pkg.other`` spells its name but never calls it
    (so phase 2 leaves it alone)."""
    tree = root / "proj"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "reads.py").write_text(
        "import ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n"
    )
    (tree / "pkg" / "other.py").write_text(
        "import ray\n\nfrom pkg import reads\n\n\nclass Keeper:\n"
        "    def keep(self, ref):\n"
        "        self.value = ray.get(ref)  # not fetch\n"
    )
    return tree


@pytest.mark.parametrize(
    ("new", "facts_loaded"),
    [
        ("# not fetch, still", False),  # spells only the reader names it spelled before
        ("# reads.fetch now", True),  # spells what would make it call the reader
    ],
)
def test_an_edited_file_phase_2_left_alone_is_decided_by_what_it_spells(
    new: str,
    facts_loaded: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tree = _reader_project(tmp_path)
    options = ("--min-confidence", "medium")
    cache = ("--cache-dir", str(tmp_path / "cache"), *options)
    _check(tree, capsys, *cache)
    _edit(tree / "pkg" / "other.py", "# not fetch", new)
    loads, full = _facts_loads(monkeypatch), _full_runs(monkeypatch)
    warm = _check(tree, capsys, *cache)
    assert not full
    assert bool(loads) == facts_loaded
    assert warm == _check(tree, capsys, "--no-cache", *options)


def _phase_two_analyses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files phase 2 analyses from now on (one job, so in this process)."""
    analysed: list[str] = []
    original = shmlint.run.files.check_bytes

    def counted(data: bytes, path: str, *args: object, **kwargs: object) -> object:
        if kwargs.get("facts") is not None:
            analysed.append(Path(path).name)
        return original(data, path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shmlint.run.files, "check_bytes", counted)
    return analysed


@pytest.mark.parametrize(
    ("new", "rechecked", "merged"),
    [
        # Nothing it looked up (a class no derivation takes: its base is a deferred module's).
        ("    reward: float\n\n\nclass Unused(Rollout):\n    pass\n", False, True),
        # The payload it reads (a field: derived, shmlint/facts/refielded.py).
        ("    reward: float\n    frames: 'np.ndarray'\n", True, False),
    ],
    ids=["a class nobody names", "the payload class"],
)
def test_a_facts_change_rechecks_only_the_files_whose_lookups_it_changes(
    new: str,
    rechecked: bool,
    merged: bool,
    tree: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache = ("--cache-dir", str(tmp_path / "cache"))
    _check(tree, capsys, *cache)
    _edit(tree / "pkg" / "records.py", "    reward: float\n", new)
    full, analysed = _full_runs(monkeypatch), _phase_two_analyses(monkeypatch)
    warm = _check(tree, capsys, *cache)
    assert len(full) == merged  # the facts change: a project run, or derived facts
    assert ("trainer.py" in analysed) == rechecked
    assert warm == _check(tree, capsys, "--no-cache")
    if not rechecked:
        # The result that stood is indexed under the new facts too (where the last facts'
        # cache holds it, with its lookups): the next facts change finds it there and again
        # re-checks nothing.
        _edit(tree / "pkg" / "records.py", "class Unused(", "class UnusedAgain(")
        analysed.clear()
        runs = len(full)
        assert _check(tree, capsys, *cache) == warm
        assert len(full) == runs + 1 and "trainer.py" not in analysed


def _kept_entries(tree: Path, directory: Path) -> dict[str, str]:
    """The entries the last facts' pack index holds as references to another's (kept)."""
    from shmlint.basics.config import load_config
    from shmlint.run.cache import Cache
    from shmlint.run.store import REFERENCE

    cache = Cache(directory, load_config(tree / "pyproject.toml"))
    index = cache.with_facts(cache.get_last_facts()).pack_index()
    return {key: where for key, where in index.items() if REFERENCE in where}


def test_a_kept_result_is_referenced_and_its_entry_lost_is_computed_again(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Results a facts change keeps are not written again: the new facts' index refers to
    the entries of the last (their result and lookups, through a chain of changes to the
    first). When such an entry is gone (pruned), the file is analysed again."""
    directory = tmp_path / "cache"
    cache = ("--cache-dir", str(directory))
    _check(tree, capsys, *cache)
    records = tree / "pkg" / "records.py"
    _edit(records, "    reward: float\n", "    reward: float\n\n\ndef unused():\n    return 1\n")
    analysed = _phase_two_analyses(monkeypatch)
    warm = _check(tree, capsys, *cache)
    assert "trainer.py" not in analysed
    kept = _kept_entries(tree, directory)
    assert len(kept) >= 2  # trainer.py's result and its lookups, at least
    _edit(records, "def unused():", "def unused_again():")
    assert _check(tree, capsys, *cache) == warm
    assert "trainer.py" not in analysed
    again = _kept_entries(tree, directory)
    assert set(kept.values()) <= set(again.values())  # the first entries, not copies
    for where in again.values():  # (pruned)
        pack, _, stored = where.partition(":")
        (shard,) = directory.glob(f"v*/{(pack or stored)[:2]}")
        (shard / f"{pack or stored}.json").unlink(missing_ok=True)
    _edit(records, "def unused_again():", "def unused_once_more():")
    assert _check(tree, capsys, *cache) == warm == _check(tree, capsys, "--no-cache")
    assert "trainer.py" in analysed


def test_a_new_question_about_a_module_no_import_reaches_runs_the_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a file gives the merge includes the names its questions look up: a question
    about ``pkg.extra.Payload`` brings ``pkg.extra`` (imported by no one) into the facts."""
    tree = tmp_path / "proj"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "extra.py").write_text(
        "from dataclasses import dataclass\n\n\n@dataclass\nclass Payload:\n"
        "    tokens: list[int]\n    reward: float\n"
    )
    use = tree / "pkg" / "use.py"
    use.write_text(
        "import ray\n\nimport pkg\n\n\nclass Keeper:\n    def keep(self, ref):\n"
        "        value = ray.get(ref)\n        self.value = value\n"
    )
    options = ("--min-confidence", "medium")
    cache = ("--cache-dir", str(tmp_path / "cache"), *options)
    assert _check(tree, capsys, *cache)  # an unknown payload kept
    _edit(use, "value = ray.get(ref)", 'value: "pkg.extra.Payload" = ray.get(ref)')
    full = _full_runs(monkeypatch)
    warm = _check(tree, capsys, *cache)
    assert len(full) == 1
    assert warm == _check(tree, capsys, "--no-cache", *options) == []  # array-free


def test_facts_changed_by_replace_digest_anew() -> None:
    """The digest a merge's facts keep (stored and digested from one encoding) is not carried
    to facts with other tables (the language server moves lines that way)."""
    import dataclasses

    from shmlint.facts.model import ProjectFacts

    facts = ProjectFacts(functions={"m.f"})
    digest = facts.digest()
    moved = dataclasses.replace(facts, functions={"m.g"})
    assert moved.digest() != digest
    assert moved.digest() == ProjectFacts(functions={"m.g"}).digest()
    assert facts.digest() == digest


def test_a_result_served_after_an_undo_is_kept_only_with_its_own_lookups(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An edit and its undo: the undone bytes' phase-2 result comes from the cache, not from a
    new analysis, so the lookups logged last are the edit's. When the facts then change, that
    result may stand only if the lookups of *its* analysis are answered the same."""
    cache = ("--cache-dir", str(tmp_path / "cache"))
    trainer = tree / "pkg" / "trainer.py"
    original = trainer.read_text()
    _check(tree, capsys, *cache)
    # The edit stops reading the rollout payload (which the facts change below gives arrays).
    _edit(trainer, ".rollout.remote(prompt)", ".verify.remote(prompt)")
    _check(tree, capsys, *cache)
    trainer.write_text(original)
    _check(tree, capsys, *cache)
    _edit(
        tree / "pkg" / "records.py",
        "    reward: float\n",
        "    reward: float\n    frames: 'np.ndarray'\n",
    )
    warm = _check(tree, capsys, *cache)
    assert warm == _check(tree, capsys, "--no-cache")


def test_a_deferred_module_spelling_a_possible_readers_name_stays_incremental(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deferred module that comes to spell the name of a function that may return a read
    but does not (`peek` needs a compiled-graph ref no one passes) would join a full run's
    merge, which answers no question otherwise: the edit is checked alone, and the record
    says so, so that the next full run merges what a run without the record merges."""
    from shmlint.basics.config import load_config
    from shmlint.run import record
    from shmlint.run.cache import Cache
    from shmlint.run.discovery import iter_file_names

    tree = tmp_path / "proj"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pyproject.toml").write_text("[tool.shmlint]\nmin-confidence = 'medium'\n")
    (tree / "pkg" / "__init__.py").write_text("")
    reads = tree / "pkg" / "reads.py"
    reads.write_text(
        "import ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n\n\n"
        "def peek(box):\n    return box.get()\n"
    )
    text = tree / "pkg" / "text.py"
    text.write_text("def words(line):\n    return line.split()\n")
    peeker = tree / "pkg" / "peeker.py"  # merged from the start: it spells `peek`
    peeker.write_text("def look(box):\n    return box  # peek\n")
    cache_dir = tmp_path / "cache"
    cache = ("--cache-dir", str(cache_dir))
    _check(tree, capsys, *cache)
    _edit(peeker, "# peek", "# peek at it")  # its summary the same
    full = _full_runs(monkeypatch)
    _check(tree, capsys, *cache)
    assert not full
    monkeypatch.undo()
    _edit(text, "line.split()", "line.split()  # peek")
    full = _full_runs(monkeypatch)
    warm = _check(tree, capsys, *cache)
    assert not full
    assert warm == _check(tree, capsys, "--no-cache")
    config = load_config(tree / "pyproject.toml")
    files = list(iter_file_names([str(tree)], config))
    last = record.load(files, Cache(cache_dir, config), "project")
    assert last is not None and "peek" in last.caller_words
    index = [display for _, display in files].index(str(text))
    assert last.spellers[index]
    # Edited again, its summary the same: still checked alone.
    full.clear()  # (the run without cache above was one)
    _edit(text, "# peek", "# peek again")
    assert _check(tree, capsys, *cache) == warm
    assert not full
    # A change of the facts no derivation takes (the read's parameter renamed: its origin
    # moves): the full run takes the record, and merges as a fresh run.
    _edit(reads, "def fetch(ref):\n    return ray.get(ref)", "def fetch(r):\n    return ray.get(r)")
    traces: list[object] = []
    original = shmlint.run.runner.check_project

    def traced(*args: object, **kwargs: object) -> object:
        outcome = original(*args, **kwargs)  # type: ignore[arg-type]
        traces.append(kwargs["trace"])
        return outcome

    monkeypatch.setattr(shmlint.run.runner, "check_project", traced)
    _check(tree, capsys, *cache)
    _check(tree, capsys, "--cache-dir", str(tmp_path / "fresh"))
    taken, fresh = traces
    assert taken == fresh


READS = "import ray\nclass Box: size: int\n\n\ndef fetch(ref):\n    return ray.get(ref)\n"
KEEPS = (
    "import numpy as np\n\nfrom pkg.reads import fetch\n\n\nclass Keeper:\n"
    "    def keep(self, ref) -> None:\n        self.kept: np.ndarray = fetch(ref)\n"
)


def _reads_tree(tmp_path: Path) -> Path:
    """A tree whose pkg/use.py keeps what pkg/reads.py's reader returns; pkg/reads.py."""
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "reads.py").write_text(READS)
    (tree / "pkg" / "use.py").write_text(KEEPS)
    return tree / "pkg" / "reads.py"


# name: (the edit of pkg/reads.py, a full run), the findings always those of a run without cache
MOVES: dict[str, tuple[Callable[[str], str], bool]] = {
    "lines above the reader": (lambda text: "# one\n# two\n" + text, False),
    "a line inside it": (lambda text: text.replace("(ref):\n", "(ref):\n    pass\n"), False),
    "the read folded into the def's line": (
        lambda text: text.replace("def fetch(ref):\n    return", "def fetch(ref): return"),
        False,
    ),
    "a class and its field, one line, unfolded": (  # (line 2 went to two lines: merged anew)
        lambda text: text.replace("class Box: size: int\n", "class Box:\n    size: int\n"),
        True,
    ),
    # (A function nothing looked up: the facts know its name, shmlint/facts/added.py.)
    "a function below it": (lambda text: text + "\n\ndef other():\n    pass\n", False),
    "a function above it": (lambda text: "def other():\n    pass\n\n\n" + text, False),
    # (A class or an import nothing looked up: the facts know it, shmlint/facts/declared.py.)
    "a class below it": (lambda text: text + "\n\nclass Other:\n    pass\n", False),
    "a class above it": (lambda text: "class Other:\n    x: int = 0\n\n\n" + text, False),
    "an import above it": (lambda text: "import os.path as other\n" + text, False),
    # A field added to a class the facts hold, its line unfolded: the class rated anew
    # (shmlint/facts/refielded.py).
    "a field below it": (
        lambda text: text.replace("class Box: size: int", "class Box:\n    size: int\n    n: int"),
        False,
    ),
}


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("name", MOVES)
def test_an_edit_moving_lines_relines_the_facts(
    name: str,
    jobs: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another file's finding cites the reader's line ("its read at pkg/reads.py:6"): after
    lines moved, the run takes the last facts relined, not a merge of the tree."""
    reads = _reads_tree(tmp_path)
    tree = reads.parents[1]
    options = ("--min-confidence", "medium")
    cache = ("--cache-dir", str(tmp_path / "cache"), "-j", jobs, *options)
    before = _check(tree, capsys, *cache)
    assert "pkg/reads.py:6)" in str([f["message"] for f in before])
    edit, full_run = MOVES[name]
    reads.write_text(edit(READS))
    full = _full_runs(monkeypatch)
    warm = _check(tree, capsys, *cache)
    assert len(full) == (1 if full_run else 0)
    if "below" not in name:
        assert warm != before  # (the message cites the read's new line)
    assert _check(tree, capsys, *cache) == warm  # the record it left answers alone
    assert len(full) == (1 if full_run else 0)
    assert warm == _check(tree, capsys, "--no-cache", *options)


def test_relined_facts_are_stored_as_a_derivation_a_few_deep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The relined facts are stored as the last ones relined (not their JSON), and loading
    them follows at most RELINED_DEPTH relinings: past that they are stored whole."""
    from shmlint.run.cache import RELINED_DEPTH, Cache

    reads = _reads_tree(tmp_path)
    tree = reads.parents[1]
    options = ("--min-confidence", "medium")
    cache = ("--cache-dir", str(tmp_path / "cache"), *options)
    _check(tree, capsys, *cache)
    stored: list[str] = []
    original = Cache.put_facts

    def counted(self: Cache, key: str, facts: object) -> None:
        stored.append(key)
        original(self, key, facts)  # type: ignore[arg-type]

    monkeypatch.setattr(Cache, "put_facts", counted)
    full = _full_runs(monkeypatch)
    for edit in range(1, RELINED_DEPTH + 3):
        reads.write_text("# moved\n" * edit + READS)
        warm = _check(tree, capsys, *cache)
        assert not full
        assert len(stored) == (0 if edit <= RELINED_DEPTH else 1), edit
        assert f"pkg/reads.py:{6 + edit})" in str([f["message"] for f in warm])
    monkeypatch.undo()
    assert warm == _check(tree, capsys, "--no-cache", *options)


def test_facts_knowing_functions_added_load_as_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Functions added one after another (each run a derivation of the last one's facts,
    shmlint/facts/added.py, some with lines moved): the facts the cache gives for the last
    run are those a merge of the edited tree gives, with their index, and the findings are
    those of a run without cache."""
    from shmlint.basics.config import Config
    from shmlint.run import record
    from shmlint.run.cache import RELINED_DEPTH, Cache
    from shmlint.run.discovery import iter_file_names
    from shmlint.run.runner import check_project

    reads = _reads_tree(tmp_path)
    tree = reads.parents[1]
    cache = ("--cache-dir", str(tmp_path / "cache"))
    _check(tree, capsys, *cache)
    full = _full_runs(monkeypatch)
    text = READS
    for edit in range(RELINED_DEPTH + 2):
        added = f"def helper_{edit}(x) -> int:\n    return len(x)\n\n\n"
        text = added + text if edit % 2 else text + "\n\n" + added
        reads.write_text(text)
        warm = _check(tree, capsys, *cache)
    assert not full
    monkeypatch.undo()
    assert warm == _check(tree, capsys, "--no-cache")
    config = Config()
    files = list(iter_file_names([str(tree)], config))
    last = record.load(files, Cache(tmp_path / "cache", config), "project")
    assert last is not None
    loaded = Cache(tmp_path / "cache", config).get_facts(last.facts_key)
    merged = check_project([(Path(p), d) for p, d in files], config, jobs=1, cache=None)[0]
    assert loaded is not None and loaded.index is not None and merged.index is not None
    assert {f"pkg.reads.helper_{edit}" for edit in range(RELINED_DEPTH + 2)} <= loaded.functions
    assert loaded.canonical_json() == merged.canonical_json()
    assert merged.index.asked <= loaded.index.asked
    assert merged.index.unresolved <= loaded.index.unresolved


OUTPUTS = (
    "from dataclasses import dataclass\n\nimport numpy as np\nimport ray\n\n\n@dataclass\n"
    "class Out:\n    x: np.ndarray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n"
)
DETACH = "from pkg.outputs import Out\n\n\ndef detach_zero_copy(out: Out) -> None:\n    pass\n"


def test_a_file_whose_own_answers_name_a_moved_line_runs_the_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tree importable (``python -m shmlint`` in its directory) and its paths absolute:
    phase 1 of detach.py rates ``Out`` as an installed class, read from pkg/outputs.py itself,
    so its own answer names that file's line, as the project's does, and phase 2 leaves it
    alone. Lines moved in pkg/outputs.py then change its finding: the project runs."""
    import importlib

    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    outputs = tree / "pkg" / "outputs.py"
    outputs.write_text(OUTPUTS)
    (tree / "pkg" / "detach.py").write_text(DETACH)
    monkeypatch.syspath_prepend(str(tree))
    importlib.invalidate_caches()
    options = ("--min-confidence", "medium")
    cache = ("--cache-dir", str(tmp_path / "cache"), *options)
    before = _check(tree, capsys, *cache)
    assert f"declared at {outputs}:9)" in str([f["message"] for f in before])
    outputs.write_text("# moved\n" + OUTPUTS)
    full = _full_runs(monkeypatch)
    warm = _check(tree, capsys, *cache)
    assert len(full) == 1
    assert f"declared at {outputs}:10)" in str([f["message"] for f in warm])
    assert warm == _check(tree, capsys, "--no-cache", *options)


def test_an_undone_move_takes_the_facts_stored_for_its_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Moved, undone, moved again: each run takes the facts stored for its files' bytes (the
    first run's whole facts, then the relined ones), never stores over them, never merges."""
    from shmlint.run.cache import Cache

    reads = _reads_tree(tmp_path)
    tree = reads.parents[1]
    options = ("--min-confidence", "medium")
    cache = ("--cache-dir", str(tmp_path / "cache"), *options)
    first = _check(tree, capsys, *cache)
    reads.write_text("# moved\n" + READS)
    moved = _check(tree, capsys, *cache)
    writes: list[str] = []
    for method in ("put_facts", "put_relined"):
        original = getattr(Cache, method)

        def counted(self: Cache, key: str, *args: object, _original: Any = original) -> Any:
            writes.append(key)
            return _original(self, key, *args)

        monkeypatch.setattr(Cache, method, counted)
    full = _full_runs(monkeypatch)
    for text, expected in ((READS, first), ("# moved\n" + READS, moved), (READS, first)):
        reads.write_text(text)
        assert _check(tree, capsys, *cache) == expected
    assert not full and not writes
    monkeypatch.undo()
    assert first == _check(tree, capsys, "--no-cache", *options)


ARRAY_OUT = "from dataclasses import dataclass\n\nimport numpy as np\n\n\n@dataclass\nclass Out:\n"
USES_OUT = {
    "detach.py": "from extpkg import Out\n\n\ndef detach_zero_copy(out: Out) -> None:\n    pass\n",
    "use.py": (
        "from extpkg import Out\n\nfrom pkg.reads import fetch\n\n\nclass Keeper:\n"
        "    def keep(self, ref) -> None:\n        out: Out = fetch(ref)\n        self.kept = out\n"
    ),
}


@pytest.mark.parametrize("undone_first", [True, False])
def test_moved_lines_and_an_installed_class_that_changed(
    undone_first: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Lines moved, undone, an installed class rated by the facts changed, lines moved again
    (or changed before the undo): the facts stored for earlier bytes were merged with the old
    class, and relined facts derive from facts merged anew since: neither is taken."""
    import importlib
    import os

    site = tmp_path / "site"
    (site / "extpkg").mkdir(parents=True)
    installed = site / "extpkg" / "__init__.py"
    installed.write_text(ARRAY_OUT + "    x: np.ndarray\n")
    reads = _reads_tree(tmp_path)
    tree = reads.parents[1]
    for name, text in USES_OUT.items():
        (tree / "pkg" / name).write_text(text)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()

    def int_field() -> None:
        installed.write_text(ARRAY_OUT + "    x: int\n")
        stat = installed.stat()
        os.utime(installed, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**10))

    steps = ["# moved\n" + READS, READS, int_field, "# moved\n" + READS]
    if not undone_first:
        steps = ["# moved\n" + READS, int_field, READS]
    options = ("--min-confidence", "medium")
    cache = ("--cache-dir", str(tmp_path / "cache"), *options)
    _check(tree, capsys, *cache)
    for step in steps:
        if callable(step):
            step()
        else:
            reads.write_text(step)
        assert _check(tree, capsys, *cache) == _check(tree, capsys, "--no-cache", *options)
    assert "holds arrays (`x`)" not in str(_check(tree, capsys, *cache))


def _line_on_top(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    modules: dict[str, str],
    edited: str,
) -> tuple[list[dict[str, object]], list[dict[str, object]], list[str]]:
    """``modules`` written in ``pkg/`` of a tree and checked, filling a cache; then a line
    inserted on top of ``edited``: the findings before and after (a warm run, which merged
    nothing and finds what a run without cache finds), and the files its phase 2 analysed."""
    from tests.project.merged import write_tree  # (merged.py imports this module)

    tree = tmp_path / "tree"
    write_tree(tree, {f"pkg/{name}": text for name, text in modules.items()})
    cache = ("--cache-dir", str(tmp_path / "cache"))
    before = _check(tree, capsys, *cache)
    path = tree / "pkg" / edited
    path.write_text("# a line\n" + path.read_text())
    full, analysed = _full_runs(monkeypatch), _phase_two_analyses(monkeypatch)
    warm = _check(tree, capsys, *cache)
    assert not full
    seen = list(analysed)  # (not the run without cache's)
    assert warm == _check(tree, capsys, "--no-cache")
    return before, warm, seen


def test_lines_moved_above_a_reader_recheck_only_the_files_that_looked_it_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines moved in a module defining a reader: the read's line is another answer only to
    the files that looked that reader up (a finding there cites it); another file phase 2
    re-checked keeps its result (it re-checked all of them: 2 s on the ray wheel)."""
    modules = {
        "__init__.py": "",
        "records.py": "import numpy as np\nimport ray\n\n\nclass Out:\n    x: np.ndarray\n",
        "reads.py": READS,
        "use.py": KEEPS,
        "apart.py": "import ray\n\nfrom pkg.records import Out\n\n\nclass Holder:\n"
        "    def hold(self, ref) -> None:\n        self.kept: Out = ray.get(ref)\n",
    }
    before, warm, analysed = _line_on_top(tmp_path, capsys, monkeypatch, modules, "reads.py")
    assert "pkg/reads.py:6)" in str(before) and "pkg/reads.py:7)" in str(warm)
    assert "use.py" in analysed and "apart.py" not in analysed


def test_lines_moved_recheck_only_the_files_whose_lookups_name_a_moved_class(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines moved in a module of classes (no read: the functions returning reads are the
    same): phase 2 re-checks a file whose logged lookups name a class whose fact moved, and
    keeps the result of one whose lookups name none (``check_files``' ``differing``)."""
    modules = {
        "__init__.py": "",
        "records.py": "import numpy as np\nimport ray\n\n\nclass Out:\n    x: np.ndarray\n",
        "reads.py": READS,
        "use.py": "from pkg.reads import fetch\nfrom pkg.records import Out\n\n\nclass Keeper:\n"
        "    def keep(self, ref) -> None:\n        self.kept: Out = fetch(ref)\n",
        "other.py": KEEPS,
    }
    _, _, analysed = _line_on_top(tmp_path, capsys, monkeypatch, modules, "records.py")
    assert "use.py" in analysed and "other.py" not in analysed
