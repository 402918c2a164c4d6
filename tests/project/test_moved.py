"""An edit that only moves a module's lines: the last facts with its lines replaced are the
facts a merge of the edited tree gives (shmlint/facts/moved.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from shmlint.basics.config import Config, find_pyproject, load_config
from shmlint.facts.moved import moved_lines, relined
from shmlint.facts.summary import ModuleSummary
from shmlint.run.passes import first_pass
from tests.project.merged import PROJECT_TREES, merged_facts


def _summary(path: Path, config: Config) -> ModuleSummary | None:
    item = first_pass(path.read_bytes(), str(path), config, lazy=True)
    return None if item.deferred else item.summary


def _edits(text: str) -> list[str]:
    """A comment line on top, and a blank line after the middle line."""
    lines = text.splitlines(keepends=True)
    middle = len(lines) // 2
    return ["# moved\n" + text, "".join([*lines[:middle], "\n", *lines[middle:]])]


@pytest.mark.parametrize("case", PROJECT_TREES, ids=lambda path: path.name)
def test_relined_facts_are_the_merged_facts(case: Path, tmp_path: Path) -> None:
    tree = tmp_path / case.name
    shutil.copytree(case, tree)
    config = load_config(find_pyproject(tree))
    before = merged_facts(tree, config)
    relined_some = False
    for path in sorted(tree.rglob("*.py")):
        old_summary = _summary(path, config)
        if old_summary is None:
            continue  # (deferred: the incremental run leaves a moved one to the full run)
        original = path.read_text(encoding="utf-8")
        for edited in _edits(original):
            path.write_text(edited, encoding="utf-8")
            new_summary = _summary(path, config)
            assert new_summary is not None
            lines = moved_lines(old_summary, new_summary)
            if lines is not None:
                facts = relined(before, {str(path): lines})
                if facts is not None:
                    assert facts.canonical_json() == merged_facts(tree, config).canonical_json()
                    relined_some = relined_some or facts is not before
            path.write_text(original, encoding="utf-8")
    if case.name in ("payloads", "quiet_wrapper", "own_reader"):
        assert relined_some  # (lines the facts carry moved, and the test saw them)


def _module(text: str, tmp_path: Path) -> ModuleSummary:
    path = tmp_path / "mod.py"
    path.write_text(text, encoding="utf-8")
    summary = _summary(path, Config())
    assert summary is not None
    return summary


READER = "import numpy as np\nimport ray\n\n\nclass A:\n    x: np.ndarray\n\n\n{body}"


def test_moved_lines_maps_each_line_the_facts_carry(tmp_path: Path) -> None:
    old = _module(READER.format(body="def f(r):\n    return ray.get(r)\n"), tmp_path)
    new = _module("\n\n" + READER.format(body="def f(r):\n    return ray.get(r)\n"), tmp_path)
    assert moved_lines(old, new) == {5: 7, 6: 8, 10: 12}  # class, field, read


def test_moved_lines_refuses_other_edits(tmp_path: Path) -> None:
    old = _module(READER.format(body="def f(r):\n    return ray.get(r)\n"), tmp_path)
    renamed = _module(READER.format(body="def g(r):\n    return ray.get(r)\n"), tmp_path)
    assert moved_lines(old, renamed) is None
    one_line = _module("import ray\nclass A: x: int\n", tmp_path)
    unfolded = _module("import ray\nclass A:\n    x: int\n", tmp_path)
    assert moved_lines(one_line, unfolded) is None  # line 2 went to lines 2 and 3
