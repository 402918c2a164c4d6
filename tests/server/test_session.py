"""The in-memory project (``shmlint.run.session``) finds what ``check_project`` finds on the
same bytes: after the build, and after every kind of edit, with the edited text standing in
for the file — facts and results alike. And it only merges when it must."""

from __future__ import annotations

import dataclasses
import multiprocessing
import shutil
import typing
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

from shmlint.basics.config import find_pyproject, load_config
from shmlint.basics.types import FileResult
from shmlint.facts import model, records
from shmlint.run.cache import Cache
from shmlint.run.discovery import iter_python_files
from shmlint.run.runner import check_project
from shmlint.run.session import ProjectSession
from tests.fixture_markers import FIXTURES

CASES = sorted(p for p in (FIXTURES / "project").iterdir() if p.is_dir())
ROOT = Path(__file__).resolve().parents[2]


def _files(root: Path) -> list[tuple[Path, str]]:
    config = load_config(find_pyproject(root))
    return list(iter_python_files(["."], config))


def _reference(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, object], dict[str, FileResult]]:
    """``check_project`` on ``root`` as it is on disk: facts (JSON) and results by file."""
    monkeypatch.chdir(root)
    config = load_config(find_pyproject(root))
    files = _files(root)
    facts, results = check_project(files, config, jobs=1, cache=None)
    return facts.to_json(), {display: r for (_, display), r in zip(files, results)}


@dataclasses.dataclass
class Pair:
    """A session over ``live`` (edits are the editor's) and a copy of the same project
    (``disk``) where each edit is written, for ``check_project`` to read."""

    live: Path
    disk: Path
    session: ProjectSession
    monkeypatch: pytest.MonkeyPatch

    def edit(self, display: str, text: str) -> bool:
        (self.disk / display).write_text(text, encoding="utf-8")
        self.monkeypatch.chdir(self.live)
        return self.session.set_text(display, text.encode(), edited=True)

    def assert_same(self) -> None:
        facts, expected = _reference(self.disk, self.monkeypatch)
        self.monkeypatch.chdir(self.live)
        assert self.session.facts.to_json() == facts
        assert {d: self.session.result(d) for d in self.session.displays} == expected


@pytest.fixture
def make_pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[typing.Any]:
    def make(case: Path, cache: Cache | None = None, executor: Executor | None = None) -> Pair:
        live, disk = tmp_path / "live", tmp_path / "disk"
        shutil.copytree(case, live)
        shutil.copytree(case, disk)
        monkeypatch.chdir(live)
        config = load_config(find_pyproject(live))
        session = ProjectSession(_files(live), config, cache, executor=executor)
        session.build()
        return Pair(live, disk, session, monkeypatch)

    yield make


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_build_finds_what_check_project_finds(case: Path, make_pair: typing.Any) -> None:
    pair = make_pair(case)
    pair.assert_same()
    assert any(r.findings for r in map(pair.session.result, pair.session.displays))


def _edits(text: str) -> Iterator[tuple[str, str]]:
    """Edits an editor makes: lines inserted (above everything, in the middle), a line
    removed, a function added, the text emptied, broken, and put back."""
    lines = text.splitlines(keepends=True)
    middle = len(lines) // 2
    yield "comment on top", "# edited\n" + text
    yield "line in the middle", "".join([*lines[:middle], "\n", *lines[middle:]])
    if len(lines) > 3:
        yield "line removed", "".join([*lines[:2], *lines[3:]])
    yield "function added", text + "\n\ndef added(ref):\n    import ray\n    return ray.get(ref)\n"
    yield "broken", text + "\ndef broken(:\n"
    yield "emptied", ""
    yield "back as it was", text


@pytest.mark.parametrize("elsewhere", [False, True], ids=["here", "phase-1-elsewhere"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_edit_gives_what_check_project_gives_on_the_edited_bytes(
    case: Path, elsewhere: bool, make_pair: typing.Any
) -> None:
    executor = ThreadPoolExecutor(1) if elsewhere else None
    pair = make_pair(case, executor=executor)
    for display in pair.session.displays:
        original = (pair.live / display).read_text(encoding="utf-8")
        for name, text in _edits(original):
            pair.edit(display, text)
            try:
                pair.assert_same()
            except AssertionError as error:
                raise AssertionError(f"{display}: {name}") from error
    if executor is not None:
        executor.shutdown()


def test_a_body_edit_does_not_merge_and_a_line_shift_moves_lines(make_pair: typing.Any) -> None:
    pair = make_pair(FIXTURES / "project" / "wrapper")
    display = "pkg/futures.py"
    text = (pair.live / display).read_text(encoding="utf-8")
    merges = pair.session.merges
    edited = text.replace("timeout=timeout)", "timeout=timeout)  # wait at most this long")
    assert edited != text and not pair.edit(display, edited)
    pair.assert_same()
    # Lines above a class and its reads: the facts change (their lines move) without a merge.
    assert pair.edit(display, "# one\n# two\n" + text)
    pair.assert_same()
    assert pair.session.merges == merges
    # A new read-returning function does change the facts: merged.
    assert pair.edit(display, text + "\n\ndef again(refs):\n    return refs[0].get()\n")
    pair.assert_same()
    assert pair.session.merges == merges + 1


def test_files_created_and_deleted(make_pair: typing.Any) -> None:
    pair = make_pair(FIXTURES / "project" / "wrapper")
    source = (FIXTURES / "project" / "wrapper" / "pkg" / "executor.py").read_text()
    for root in (pair.live, pair.disk):
        (root / "pkg" / "second.py").write_text(source.replace("Executor", "Second"))
        (root / "pkg" / "plain.py").unlink()
    pair.monkeypatch.chdir(pair.live)
    assert pair.session.set_files(_files(pair.live))
    assert "pkg/second.py" in pair.session and "pkg/plain.py" not in pair.session
    pair.assert_same()
    assert not pair.session.set_files(_files(pair.live))  # the same files: nothing to do


def test_the_editor_text_stands_in_until_released(make_pair: typing.Any) -> None:
    pair = make_pair(FIXTURES / "project" / "wrapper")
    display = "pkg/executor.py"
    on_disk = (pair.live / display).read_bytes()
    pair.session.set_text(display, b"", edited=True)
    assert (pair.live / display).read_bytes() == on_disk  # the disk is never written
    assert not pair.session.reload(display)  # a disk change does not beat the editor
    assert pair.session.result(display).findings == ()
    assert pair.session.release(display)  # closed: the disk's text again
    (pair.disk / display).write_bytes(on_disk)
    pair.assert_same()


def test_a_warm_build_reads_the_facts_from_the_cache(make_pair: typing.Any, tmp_path: Path) -> None:
    case = FIXTURES / "project" / "wrapper"
    config = load_config(find_pyproject(case))
    pair = make_pair(case, Cache(tmp_path / "cache", config))
    assert pair.session.merges == 1
    warm = ProjectSession(_files(pair.live), pair.session.config, Cache(tmp_path / "cache", config))
    warm.build()
    assert warm.merges == 0
    assert warm.facts.to_json() == pair.session.facts.to_json()
    assert [warm.result(d) for d in warm.displays] == [
        pair.session.result(d) for d in pair.session.displays
    ]
    # Cached facts do not say which deferred modules went into them: an edit merges.
    pair.session = warm
    assert pair.edit("pkg/__init__.py", "# a package\n")
    assert warm.merges == 1
    pair.assert_same()


def test_only_known_facts_carry_lines() -> None:
    """The line shift moves the lines of ClassFact, FieldFact and ReadChain, reached through
    ProjectFacts.classes and .returned_reads: a new fact with a line must be moved too."""
    with_lines = {
        name
        for name, value in vars(records).items()
        if dataclasses.is_dataclass(value)
        and isinstance(value, type)
        and "line" in {f.name for f in dataclasses.fields(value)}
    }
    assert with_lines == {"ClassFact", "FieldFact", "ReadChain"}
    hints = typing.get_type_hints(model.ProjectFacts)
    holding = {
        name
        for name, hint in hints.items()
        if any(kind in str(hint) for kind in ("ClassFact", "FieldFact", "ReadChain"))
    }
    assert holding == {"classes", "returned_reads"}


CALLER = {
    "pyproject.toml": '[tool.shmlint]\nmin-confidence = "medium"\n',
    "pkg/__init__.py": "",
    "pkg/reader.py": (
        "import numpy as np\nimport ray\n\n\ndef fetch(ref) -> np.ndarray:\n"
        "    return ray.get(ref)\n"
    ),
    # Spells no read: phase 1 defers it; only the facts make its call of fetch() a read.
    "pkg/user.py": (
        "from pkg.reader import fetch\n\n\nclass Keeper:\n    def keep(self, ref):\n"
        "        self.value = fetch(ref)\n"
    ),
}


def test_a_module_that_only_calls_a_reader(tmp_path: Path, make_pair: typing.Any) -> None:
    case = tmp_path / "case"
    for name, text in CALLER.items():
        (case / name).parent.mkdir(parents=True, exist_ok=True)
        (case / name).write_text(text, encoding="utf-8")
    pair = make_pair(case)
    pair.assert_same()
    assert [f.code for f in pair.session.result("pkg/user.py").findings] == ["SHM102"]
    pair.edit("pkg/user.py", CALLER["pkg/user.py"].replace("fetch(ref)", "fetch(ref).copy()"))
    pair.assert_same()
    assert pair.session.result("pkg/user.py").findings == ()


def test_phase_one_elsewhere_while_phase_two_runs_here(
    make_pair: typing.Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With an executor, an edit's phase 2 runs while its phase 1 runs there, and is the
    result when the facts stay the same: one phase 2, not two; the same findings either way."""
    with ThreadPoolExecutor(1) as executor:
        pair = make_pair(FIXTURES / "project" / "wrapper", executor=executor)
        session = pair.session
        calls: list[str] = []
        phase_two = session._phase_two

        def counted(display: str, data: bytes, facts: typing.Any = None) -> typing.Any:
            calls.append(display)
            return phase_two(display, data, facts)

        monkeypatch.setattr(session, "_phase_two", counted)
        display = "pkg/futures.py"
        text = (pair.live / display).read_text(encoding="utf-8")
        commented = text.replace("=timeout)", "=timeout)  # at most")
        assert not pair.edit(display, commented)
        assert calls == [display]  # checked while phase 1 ran elsewhere ...
        assert len(session.result(display).findings) == 4
        assert calls == [display]  # ... and that is the result: not checked again
        # A line inserted: the facts' lines below it move, as the text diff predicted.
        assert pair.edit(display, "# moved down\n" + commented)
        assert calls == [display] * 2
        session.result(display)
        assert calls == [display] * 2
        pair.assert_same()
        calls.clear()
        # A new reader: the facts change otherwise (merged), so phase 2 runs again.
        assert pair.edit(display, text + "\n\ndef again(refs):\n    return refs[0].get()\n")
        assert calls == [display]
        session.result(display)
        assert calls == [display] * 2
        for _, edited in _edits(text):
            pair.edit(display, edited)
            pair.assert_same()


def test_phase_one_in_a_spawned_process(make_pair: typing.Any) -> None:
    """What the server does: the helper is a spawned process (all of it crosses by pickle)."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=context) as executor:
        pair = make_pair(FIXTURES / "project" / "wrapper", executor=executor)
        text = (pair.live / "pkg" / "executor.py").read_text(encoding="utf-8")
        pair.edit("pkg/executor.py", text.replace("refs[0]", "refs[1]"))
        pair.assert_same()
