"""Writing a fixed file: to the file the path names (through symbolic links), atomically where
that keeps the file what it was (its inode's links, owner, group and mode), else in place.

As ruff, a fix edits the file rather than replacing the name: a symbolic link stays a link
and its target is fixed; a file this user may not write is reported, not replaced (a rename
in a writable directory would otherwise succeed and give the file away to this user).
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path


def write_fixed(path: Path, data: bytes) -> None:
    """Write ``data`` to the file ``path`` names.

    The target of a symbolic link is written, never the link. A file this user cannot write
    raises :class:`PermissionError` and is left alone. A file with several hard links, one
    whose owner or group a new file could not be given, or one no new file can replace (its
    directory not writable, a bind mount), is rewritten in place (the same inode: not
    atomic); any other file atomically (:func:`write_atomically`).
    """
    target = Path(os.path.realpath(path))
    info = target.stat()
    if not os.access(target, os.W_OK, effective_ids=os.access in os.supports_effective_ids):
        raise PermissionError(errno.EACCES, "Permission denied (the file is not writable)")
    if info.st_nlink > 1:  # a rename would split the links: the others would keep the old text
        write_in_place(target, data)
        return
    try:
        replaced = write_atomically(target, data, keep_owner=True)
    except OSError:  # no new file beside it (a directory not writable, a bind-mounted file):
        replaced = False  # the file itself is writable, so it is edited in place, as ruff does
    if not replaced:
        write_in_place(target, data)


def write_in_place(path: Path, data: bytes) -> None:
    """Overwrite the file's contents, keeping its inode (links, owner, group, mode)."""
    with open(path, "r+b") as handle:
        handle.write(data)
        handle.truncate()
        handle.flush()
        os.fsync(handle.fileno())


def write_atomically(path: Path, data: bytes, *, keep_owner: bool = False) -> bool:
    """Replace ``path`` with ``data`` via a temporary file in the same directory and a rename,
    so a crash never leaves a half-written file; mode and ownership are carried over where
    this user may set them. With ``keep_owner``, when the owner or group cannot be carried
    over, nothing is written and False is returned (the caller writes in place instead)."""
    info = path.stat()
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".shmlint", dir=path.parent
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, info.st_mode & 0o7777)
        with contextlib.suppress(PermissionError):  # only root may give a file away
            os.chown(temporary, info.st_uid, info.st_gid)
        made = os.stat(temporary)
        if keep_owner and (made.st_uid, made.st_gid) != (info.st_uid, info.st_gid):
            os.unlink(temporary)
            return False
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    return True
