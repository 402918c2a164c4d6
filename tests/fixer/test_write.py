"""How ``--fix`` writes a file: through symbolic links, keeping hard links and the owner, never
replacing a file this user may not write."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from shmlint.cli import main
from shmlint.fixer import write

SOURCE = "import numpy as np\nimport ray\n\n\ndef f(ref) -> np.ndarray:\n    return ray.get(ref)\n"
FIXED = "detach_zero_copy(ray.get(ref))"
NOBODY = 65534


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def fix(*paths: str) -> int:
    return main(["check", "--no-cache", "--isolated", "--fix", "-j", "1", *paths])


def test_a_symbolic_link_named_fixes_its_target(workdir: Path) -> None:
    (workdir / "real.py").write_text(SOURCE)
    (workdir / "link.py").symlink_to("real.py")
    assert fix("link.py") == 0
    assert (workdir / "link.py").is_symlink()
    assert FIXED in (workdir / "real.py").read_text()


def test_a_symbolic_link_found_in_a_directory_fixes_its_target(workdir: Path) -> None:
    (workdir / "src").mkdir()
    outside = workdir / "real.txt"  # (not a .py file: only the link is found)
    outside.write_text(SOURCE)
    (workdir / "src" / "link.py").symlink_to(outside)
    assert fix("src") == 0
    assert (workdir / "src" / "link.py").is_symlink()
    assert FIXED in outside.read_text()


def test_a_hard_link_stays_a_link(workdir: Path) -> None:
    (workdir / "a.py").write_text(SOURCE)
    os.link(workdir / "a.py", workdir / "b.txt")
    inode = (workdir / "a.py").stat().st_ino
    assert fix("a.py") == 0
    assert (workdir / "a.py").stat().st_ino == inode
    assert FIXED in (workdir / "b.txt").read_text()


def test_a_plain_file_is_still_replaced_atomically(workdir: Path) -> None:
    path = workdir / "a.py"
    path.write_text(SOURCE)
    inode = path.stat().st_ino
    write.write_fixed(path, b"x = 1\n")
    assert path.read_bytes() == b"x = 1\n" and path.stat().st_ino != inode


@contextlib.contextmanager
def as_nobody() -> Iterator[None]:
    """This process's effective user is ``nobody`` (root only: the tests below need a file
    owned by another user than the one fixing it)."""
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)


@pytest.fixture
def shared() -> Iterator[Path]:
    """A world-writable directory ``nobody`` can reach (pytest's tmp_path is private)."""
    directory = Path(tempfile.mkdtemp(prefix="shmlint-write-"))
    directory.chmod(0o777)
    yield directory
    for path in directory.iterdir():
        path.unlink()
    directory.rmdir()


def test_a_read_only_file_is_reported_and_not_written(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if os.geteuid() == 0:
        pytest.skip("root may write any file (see the test as nobody below)")
    path = workdir / "a.py"
    path.write_text(SOURCE)
    path.chmod(0o444)
    inode = path.stat().st_ino
    assert fix("a.py") == 1
    assert "a.py: not fixed: Permission denied" in capsys.readouterr().err
    assert path.read_text() == SOURCE and path.stat().st_ino == inode


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to act as another user")
def test_another_users_read_only_file_is_not_replaced(shared: Path) -> None:
    path = shared / "a.py"
    path.write_text(SOURCE)
    path.chmod(0o444)
    with as_nobody(), pytest.raises(PermissionError, match="not writable"):
        write.write_fixed(path, b"x = 1\n")
    info = path.stat()
    assert path.read_text() == SOURCE and info.st_uid == 0
    assert sorted(p.name for p in shared.iterdir()) == ["a.py"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to act as another user")
def test_another_users_writable_file_keeps_its_owner(shared: Path) -> None:
    path = shared / "a.py"
    path.write_text(SOURCE)
    path.chmod(0o666)
    with as_nobody():
        write.write_fixed(path, b"x = 1\n")
    info = path.stat()
    assert path.read_bytes() == b"x = 1\n"
    assert info.st_uid == 0 and stat.S_IMODE(info.st_mode) == 0o666
    assert sorted(p.name for p in shared.iterdir()) == ["a.py"]


def test_a_file_no_rename_can_replace_is_edited_in_place(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bind-mounted file (a container's single-file mount: EBUSY) or a directory this user
    cannot write into: the rename fails, the file itself is writable, so it is edited in
    place (as ruff does) rather than left unfixed."""
    path = workdir / "mounted.py"
    path.write_text(SOURCE)
    inode = path.stat().st_ino

    def busy(src: object, dst: object) -> None:
        raise OSError(16, "Device or resource busy")

    monkeypatch.setattr(write.os, "replace", busy)
    assert fix("mounted.py") == 0
    assert FIXED in path.read_text() and path.stat().st_ino == inode
    assert [p.name for p in workdir.iterdir()] == ["mounted.py"]  # no temporary file left
