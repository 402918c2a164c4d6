"""Enums are array-free across modules (a member unpickles as the class's own), also through
a base that is an enum without members; an edit making an ancestor no enum is followed by a
warm run as a run without cache follows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.project.merged import findings, warm_after_edits, write_tree

ENUM_BASE = """\
import enum


class GrandBase(enum.Enum):
    tag: int
"""
RECORD_BASE = """\
import dataclasses


@dataclasses.dataclass
class GrandBase:
    tag: int
"""
FILES = {
    "pkg/__init__.py": "",
    "pkg/mod.py": ENUM_BASE,
    "pkg/parent.py": """\
import dataclasses

from pkg.mod import GrandBase


@dataclasses.dataclass
class Parent(GrandBase):
    rank: int
""",
    "pkg/child.py": """\
import numpy as np

from pkg.parent import Parent


class Child(Parent):
    data: np.ndarray
""",
    "pkg/use.py": """\
import ray

from pkg.child import Child


class Keeper:
    def keep(self, ref):
        child: Child = ray.get(ref)
        self.child = child
""",
}


def test_an_enum_through_its_ancestors_holds_no_array(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tree(tmp_path, FILES)
    assert findings(tmp_path, capsys, "--no-cache") == []
    assert findings(tmp_path, capsys, "--no-cache", "--per-file") != []  # (other modules)


def test_an_ancestor_made_no_enum_is_followed_warm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    warm = warm_after_edits(tmp_path, capsys, monkeypatch, FILES, [RECORD_BASE])
    assert [(Path(p).name, code) for p, _, code, _ in warm] == [("use.py", "SHM102")]


def test_an_enum_base_imported_from_elsewhere_is_followed_warm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        **FILES,
        "pkg/mod.py": "from enum import Enum\n\n\nclass GrandBase(Enum):\n    tag: int\n",
        "pkg/other.py": "class Enum:\n    pass\n",
    }
    edited = "from pkg.other import Enum\n\n\nclass GrandBase(Enum):\n    tag: int\n"
    warm = warm_after_edits(tmp_path, capsys, monkeypatch, files, [edited])
    assert [(Path(p).name, code) for p, _, code, _ in warm] == [("use.py", "SHM102")]
