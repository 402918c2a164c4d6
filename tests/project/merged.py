"""What facts derived after an edit (shmlint/facts/moved.py, added.py) are held to: the facts a
merge of the whole edited tree gives, on every project fixture's tree."""

from __future__ import annotations

import ast
import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from shmlint.basics.config import Config, find_pyproject, load_config
from shmlint.cli import main
from shmlint.facts.added import Runs
from shmlint.facts.layout import module_name
from shmlint.facts.model import ProjectFacts
from shmlint.facts.moved import relined
from shmlint.facts.summary import ModuleSummary
from shmlint.run.derived import Change, edit_between, growth_of
from shmlint.run.passes import FirstPass, first_pass, syntax_summary
from shmlint.run.runner import check_project
from tests.fixture_markers import FIXTURES
from tests.speed.test_incremental import _full_runs as full_runs

PROJECT_TREES = sorted((FIXTURES / "project").iterdir())


def parses(text: str) -> bool:
    """Whether ``text`` is Python (an edit a test generated may not be)."""
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def merged_facts(tree: Path, config: Config) -> ProjectFacts:
    """The facts of a project run over every ``.py`` file under ``tree``, without a cache."""
    files = [(path, str(path)) for path in sorted(tree.rglob("*.py"))]
    return check_project(files, config, jobs=1, cache=None)[0]


def runs_of(tree: Path, config: Config) -> Runs:
    """The modules phase 1 defers, those several files claim, and each file's summary as the
    merge reads it (as ``derived._runs``)."""
    deferred, claimed = set(), Counter[str]()
    summaries: dict[str, ModuleSummary | None] = {}
    for path in tree.rglob("*.py"):
        claimed[module_name(str(path), config.root)[0]] += 1
        data = path.read_bytes()
        item = first_pass(data, str(path), config, lazy=True)
        summaries[str(path)] = item.summary
        if item.deferred:
            deferred.add(item.deferred)
            summaries[str(path)] = syntax_summary(data, str(path), config)
    shared = {module for module, count in claimed.items() if count > 1}
    return Runs(deferred, shared, summaries.get)


def derived_facts(
    before: ProjectFacts,
    old: ModuleSummary,
    new: ModuleSummary,
    questions: tuple[list[str], list[str]],
    tree: Path,
    config: Config,
) -> ProjectFacts | None:
    """What the incremental run derives from ``before`` when one module's summary (and its
    questions) go from ``old`` to ``new``: the reading ``edit_between`` takes, the facts
    relined, and what the derivation of that reading adds or removes (None: a merge)."""
    edit = edit_between(old, new, *questions)
    if edit is None:
        return None
    change = Change()
    change.take(new.path, edit)
    facts = relined(before, change.moved)
    if facts is None or not change.grows:
        return facts
    growth = growth_of(facts, change, runs_of(tree, config), config)
    return None if growth is None else growth.applied(facts, before.index)


def assert_merged(facts: ProjectFacts, tree: Path, config: Config, edited: str) -> None:
    """``facts`` (derived) are those of a merge of the edited ``tree``, their index a superset
    of the merge's (what was asked, the calls placed nowhere, the names spelled, the handles
    passed in no parameter, the classes rated in a cycle, what each class's rating was read
    for); the merge looked for the words, and its closure read the modules, the last one did
    (``FactsIndex.callers``, ``reached``: what the derivations keep)."""
    merged = merged_facts(tree, config)
    assert facts.canonical_json() == merged.canonical_json(), edited
    assert facts.index is not None and merged.index is not None
    assert facts.index.callers == merged.index.callers, edited
    assert facts.index.reached == merged.index.reached, edited
    assert facts.index is not None and merged.index is not None
    assert merged.index.asked <= facts.index.asked
    assert merged.index.unresolved <= facts.index.unresolved
    assert merged.index.spelled <= facts.index.spelled
    assert merged.index.unplaced <= facts.index.unplaced
    assert merged.index.cyclic <= facts.index.cyclic
    read_by = facts.index.read_by
    for name, readers in merged.index.read_by.items():
        assert readers <= read_by.get(name, frozenset()), (edited, name)


def copied(case: Path, tmp_path: Path) -> tuple[Path, Config, ProjectFacts]:
    """A copy of fixture tree ``case``, its configuration and the facts of a merge of it."""
    tree = tmp_path / case.name
    shutil.copytree(case, tree)
    config = load_config(find_pyproject(tree))
    return tree, config, merged_facts(tree, config)


def write_tree(root: Path, files: dict[str, str]) -> None:
    """Write ``files`` (relative path → text) under ``root``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def findings(root: Path, capsys: pytest.CaptureFixture[str], *how: str) -> list[object]:
    """The findings of ``shmlint check`` (at ``medium``) on ``root``: path, line, code and
    message each."""
    command = ["check", "--isolated", "--output-format", "json", "--min-confidence", "medium"]
    main([*command, *how, str(root)])
    return [
        (f["path"], f["line"], f["code"], f["message"]) for f in json.loads(capsys.readouterr().out)
    ]


def analysed(path: Path, config: Config) -> FirstPass | None:
    """What phase 1 gives of the file at ``path``, when it analyses it (None: deferred)."""
    item = first_pass(path.read_bytes(), str(path), config, lazy=True)
    return None if item.deferred or item.summary is None else item


def questions_of(old: FirstPass, new: FirstPass) -> tuple[list[str], list[str]]:
    """The questions of two versions of a file, as ``edit_between`` takes them."""
    return [q for q, _ in old.questions], [q for q, _ in new.questions]


def reading(
    root: Path, files: dict[str, str], edited: str, read: Callable[..., Any]
) -> tuple[ProjectFacts, ProjectFacts | None, Config]:
    """The facts a merge of ``files`` (written under ``root``) gives, what the run derives
    after ``pkg/mod.py`` becomes ``edited`` (None: a merge) and the run's configuration; the
    edit must read as ``read`` (a reading of ``edit_between``) takes it."""
    write_tree(root, files)
    config = Config(root=root)
    before = merged_facts(root, config)
    mod = root / "pkg" / "mod.py"
    old = analysed(mod, config)
    mod.write_text(edited)
    new = analysed(mod, config)
    assert old is not None and new is not None and old.summary and new.summary
    questions = questions_of(old, new)
    assert read(old.summary, new.summary, *questions) is not None
    derived = derived_facts(before, old.summary, new.summary, questions, root, config)
    return before, derived, config


def assert_changes_findings(
    root: Path, capsys: pytest.CaptureFixture[str], path: Path, before: str, after: str
) -> None:
    """With ``path`` holding ``before``, a run fills a cache; ``after`` then changes the
    findings of a run without cache, and a warm run finds the same."""
    cache = ("--cache-dir", str(root / ".cache"))
    path.write_text(before)
    quiet = findings(root, capsys, *cache)
    path.write_text(after)
    changed = findings(root, capsys, "--no-cache")
    assert changed != quiet
    assert findings(root, capsys, *cache) == changed


def warm_after(
    root: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    edits: list[tuple[Path, str]],
) -> tuple[list[object], list[object], list[int]]:
    """The findings of a run filling a cache, and of the warm run after each of ``edits`` in
    turn (the last one's, which a run without cache finds too), with the full project runs
    the warm runs made."""
    cache = ("--cache-dir", str(root / ".cache"))
    before = findings(root, capsys, *cache)
    full = full_runs(monkeypatch)
    warm = before
    for path, text in edits:
        path.write_text(text)
        warm = findings(root, capsys, *cache)
    merges = list(full)
    assert findings(root, capsys, "--no-cache") == warm
    return before, warm, merges


def file_codes(found: list[object]) -> list[tuple[str, int, str]]:
    """(file name, line, code) of each finding :func:`findings` gives."""
    codes = []
    for item in found:
        path, line, code, _ = cast(tuple[str, int, str, str], item)
        codes.append((Path(path).name, line, code))
    return codes


def warm_after_edits(
    root: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],
    texts: list[str],
) -> list[object]:
    """``files`` written under ``root``, then ``pkg/mod.py`` given each of ``texts`` in turn
    (:func:`warm_after`): the last warm run's findings, which a run without cache finds."""
    write_tree(root, files)
    mod = root / "pkg" / "mod.py"
    return warm_after(root, capsys, monkeypatch, [(mod, text) for text in texts])[1]


def read_and_run(
    root: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],
    edited: str,
    read: Callable[..., Any],
) -> tuple[ProjectFacts, ProjectFacts | None, list[object], list[object], list[int]]:
    """The edit of ``pkg/mod.py`` to ``edited`` in ``files``, twice: its facts (``reading``,
    under ``root/facts``: the last ones, and those derived, held to a merge's when derived),
    and a run (``warm_after``, under ``root/run``: the findings before and after, and the
    full runs it made)."""
    before, derived, config = reading(root / "facts", files, edited, read)
    if derived is not None:
        assert_merged(derived, root / "facts", config, edited)
    write_tree(root / "run", files)
    mod = root / "run" / "pkg" / "mod.py"
    quiet, warm, full = warm_after(root / "run", capsys, monkeypatch, [(mod, edited)])
    return before, derived, quiet, warm, full
