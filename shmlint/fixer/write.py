"""Atomic writes that keep the file's mode (and owner, where we may set it)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` via a temporary file in the same directory and a rename,
    so a crash never leaves a half-written file; mode and ownership are carried over."""
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
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
