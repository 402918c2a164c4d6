"""The project behind a language server: its configuration, its files and their results.

The server runs in its project's root directory, so files are named as ``shmlint check .``
run there names them (and share its cache). Every method runs on the server's one worker
thread, never two at a time.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from shmlint.analysis.engine import check_bytes
from shmlint.basics.config import Config
from shmlint.basics.types import FileResult
from shmlint.run.cache import Cache, default_directory
from shmlint.run.discovery import iter_python_files
from shmlint.run.passes import first_pass
from shmlint.run.pool import default_jobs
from shmlint.run.prune import maybe_prune
from shmlint.run.session import ProjectSession
from shmlint.server.settings import load_settings
from shmlint.server.text import to_bytes

UNSAVED = "<unsaved>"  # the name a document that is no file is checked under


class Project:
    """One workspace root: configuration, the in-memory project, per-file checks."""

    def __init__(self, root: Path, options: object) -> None:
        self.root = root.resolve()
        os.chdir(self.root)
        self.options = options
        self.config, self.errors = load_settings(self.root, options)
        self.session: ProjectSession | None = None
        self._not_in_project: set[str] = set()  # files under the root the scan skips
        self._stamps: dict[str, tuple[int, int]] = {}  # (mtime, size) of each file, last seen
        self._helper: ProcessPoolExecutor | None = None

    def _files(self) -> list[tuple[Path, str]]:
        return list(iter_python_files(["."], self.config))

    def build(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Scan the root and build the project (phase 1 of every file, then the merge)."""
        gc.unfreeze()  # the last build's objects may be garbage now
        self.session = None
        if self._helper is None and default_jobs() > 1:
            self._helper = _helper_process()
        cache = Cache(default_directory(self.config), self.config)
        started = time.time()
        files = self._files()
        self._stamps = _stamps(files)
        session = ProjectSession(files, self.config, cache, executor=self._helper)
        session.build(progress)
        maybe_prune(cache.directory, self.config.cache_max_size, cache.grown, started)
        self.session = session
        self._not_in_project.clear()
        # The project's facts and files live as long as the server: the collector need not
        # scan them on every edit (a full collection of them takes ~30 ms on vLLM's tree).
        gc.collect()
        gc.freeze()

    def stop(self) -> None:
        """Stop the helper process (the server is shutting down)."""
        if self._helper is not None:
            self._helper.shutdown(wait=False, cancel_futures=True)
            self._helper = None

    def reconfigure(self) -> bool:
        """Read the configuration again; True when it changed (the project must be built
        anew). ``errors`` holds what is wrong with it."""
        config, self.errors = load_settings(self.root, self.options)
        if config == self.config:
            return False
        self.config = config
        return True

    def display(self, path: Path) -> str | None:
        """The name of ``path`` in this project (relative to the root); None outside it."""
        relative = os.path.relpath(os.path.abspath(path), self.root)
        if relative == ".." or relative.startswith(".." + os.sep):
            return None
        return relative.replace(os.sep, "/") if os.sep != "/" else relative

    def _session(self) -> ProjectSession:
        if self.session is None:
            raise RuntimeError("the project is not built yet")
        return self.session

    def _member(self, display: str) -> bool:
        """Whether the file belongs to the project (a new file is found by scanning again;
        an excluded one is remembered until files are created or deleted)."""
        session = self._session()
        if display in session:
            return True
        if display in self._not_in_project or not display.endswith(".py"):
            return False
        session.set_files(self._files())
        if display in session:
            return True
        self._not_in_project.add(display)
        return False

    def check(self, path: Path | None, text: str) -> tuple[FileResult | None, bool]:
        """The findings of an open document whose text is ``text`` (None: shmlint does not
        check it: excluded, or not Python), and whether the project's facts changed."""
        data = to_bytes(text)
        if path is None:
            return check_bytes(data, UNSAVED, self.config), False
        display = self.display(path)
        if display is None:  # outside the project: on its own, as `shmlint check FILE`
            return check_bytes(data, str(path), self.config), False
        if self.session is None:  # the build failed (and said so): each file on its own
            return check_bytes(data, display, self.config), False
        if not self._member(display):
            return None, False
        session = self._session()
        changed = session.set_text(display, data, edited=True)
        return session.result(display), changed

    def close(self, path: Path | None) -> bool:
        """The editor closed the document: the file on disk stands for it again. True when
        the facts changed."""
        display = self.display(path) if path is not None else None
        session = self.session
        if display is None or session is None or display not in session:
            return False
        return session.release(display)

    def disk_changed(self, changed: Iterable[Path], created_or_deleted: bool) -> bool:
        """Files changed on disk (the editor's text still stands in for open ones); True when
        the facts changed."""
        session = self.session
        if session is None:
            return False
        facts_changed = False
        if created_or_deleted:
            self._not_in_project.clear()
            facts_changed = session.set_files(self._files())
        for path in changed:
            display = self.display(path)
            if display is not None and display in session:
                facts_changed = session.reload(display) or facts_changed
        return facts_changed

    def sync_disk(self) -> bool:
        """Find the files changed, created or deleted on disk since the last look, by their
        modification time and size (for clients that do not watch files); True when the
        facts changed."""
        if self.session is None:
            return False
        stamps = _stamps(self._files())
        changed = [
            self.root / display
            for display, stamp in stamps.items()
            if display in self._stamps and self._stamps[display] != stamp
        ]
        created_or_deleted = stamps.keys() != self._stamps.keys()
        self._stamps = stamps
        if not changed and not created_or_deleted:
            return False
        return self.disk_changed(changed, created_or_deleted)


def _stamps(files: Iterable[tuple[Path, str]]) -> dict[str, tuple[int, int]]:
    stamps = {}
    for path, display in files:
        try:
            info = path.stat()
        except OSError:
            stamps[display] = (-1, -1)
        else:
            stamps[display] = (info.st_mtime_ns, info.st_size)
    return stamps


def _helper_process() -> ProcessPoolExecutor:
    """One process for the phase 1 of edited files (``ProjectSession.executor``): on two
    cores an edit then costs one analysis's time, not two (median 90 ms against 140 ms on
    vLLM's executor). Spawned, not forked (this process runs threads), and started now: its
    imports take a second, better spent during the build than on the first edit."""
    context = multiprocessing.get_context("spawn")
    helper = ProcessPoolExecutor(
        max_workers=1, mp_context=context, initializer=_start_helper, initargs=(os.getpid(),)
    )
    helper.submit(first_pass, b"", "warm_up.py", Config())
    return helper


def _start_helper(server: int) -> None:
    """In the helper: its standard output is the editor's protocol stream, so it goes to
    stderr; and it ends when the server does, even a killed one (a pool's worker would wait
    for work forever)."""
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    threading.Thread(target=_end_with, args=(server,), name="end-with-server", daemon=True).start()


def _end_with(server: int) -> None:
    while os.getppid() == server:
        time.sleep(1.0)
    os._exit(0)
