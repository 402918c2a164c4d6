"""Which files a run checks, and in which order: as ``os.walk`` top-down with names sorted
(the order findings are reported in), without following links to directories."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from shmlint.basics.config import Config
from shmlint.run.discovery import iter_file_names, iter_python_files


def _walked(given: str, config: Config) -> list[tuple[Path, str]]:
    """The reference: os.walk, pruned and sorted, each path normalised."""
    from shmlint.run.discovery import _Excluder

    excluder = _Excluder(config)
    found = []
    base = os.path.abspath(given)
    for directory, subdirs, files in os.walk(given):
        here = excluder.relative(
            os.path.normpath(os.path.join(base, os.path.relpath(directory, given)))
        )
        prefix = "" if here == "." else f"{here}/"
        subdirs[:] = sorted(d for d in subdirs if not excluder.excluded(prefix + d, d))
        for name in sorted(files):
            if name.endswith(".py") and not excluder.excluded(prefix + name, name):
                path = os.path.join(directory, name)
                found.append((Path(path), os.path.normpath(path)))
    return found


def _tree(root: Path) -> Path:
    for relative in (
        "b.py",
        "a/z.py",
        "a/b/c.py",
        "a.py",
        "A.py",
        "a-b/x.py",
        "build/skipped.py",
        "pkg/build/skipped_too.py",
        "pkg/mod.py",
        "pkg/notes.txt",
        "pkg/generated/gen.py",
        "pkg/mod_test.py",
    ):
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    (root / "linked").symlink_to(root / "pkg", target_is_directory=True)
    (root / "link.py").symlink_to(root / "b.py")
    return root


def _spelled(given: str, config: Config) -> list[tuple[str, str]]:
    """What the string walk must give: each path as ``str(Path)`` spells it."""
    return [(str(path), display) for path, display in _walked(given, config)]


def test_the_order_and_the_pruning_are_those_of_a_sorted_os_walk(tmp_path: Path) -> None:
    root = _tree(tmp_path / "proj")
    config = dataclasses.replace(Config(root=root), extend_exclude=("pkg/generated", "*_test.py"))
    for given in (str(root), str(root) + "/", str(root / "a") + "/../pkg"):
        assert list(iter_python_files([given], config)) == _walked(given, config), given
        assert list(iter_file_names([given], config)) == _spelled(given, config), given
    found = [display for _, display in iter_python_files([str(root)], config)]
    relative = [os.path.relpath(display, root) for display in found]
    # A directory's files before its subdirectories'; excluded and linked directories not
    # walked; a link to a file is a file.
    assert relative == [
        "A.py",
        "a.py",
        "b.py",
        "link.py",
        "a/z.py",
        "a/b/c.py",
        "a-b/x.py",
        "pkg/mod.py",
    ]


def test_a_relative_path_is_shown_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path / "proj")
    monkeypatch.chdir(root)
    config = Config(root=root)
    for given in (".", "./", "a", "./a/"):
        assert list(iter_python_files([given], config)) == _walked(given, config), given
        assert list(iter_file_names([given], config)) == _spelled(given, config), given
    shown = [display for _, display in iter_python_files(["."], config)]
    assert shown[:3] == ["A.py", "a.py", "b.py"] and "a/z.py" in shown


def test_an_unreadable_directory_is_skipped(tmp_path: Path) -> None:
    root = _tree(tmp_path / "proj")
    locked = root / "a" / "b"
    locked.chmod(0)
    try:
        if os.access(locked, os.R_OK):  # root ignores permissions
            return
        found = [display for _, display in iter_python_files([str(root)], Config(root=root))]
        assert not any("/a/b/" in display for display in found)
        assert any(display.endswith("a/z.py") for display in found)
    finally:
        locked.chmod(0o755)
