"""``shmlint server``: the language server (LSP over stdio, on pygls).

Documents are checked as part of the project: the first check waits for the project's facts
(built once, in the background, from the cache when it is warm), later ones re-run phase 1 of
the edited file only (``shmlint.run.session``). Changes are debounced; a result for a version
the editor has already moved past is dropped. When an edit changes the project's facts, the
other open documents are checked again and re-published where their findings changed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import logging
import traceback
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from shmlint._version import __version__
from shmlint.basics.types import FileResult, Finding
from shmlint.server import actions, client
from shmlint.server.client import path_of, root_of
from shmlint.server.diagnostics import diagnostics, hover
from shmlint.server.project import Project
from shmlint.server.text import Positions
from shmlint.server.worker import Worker

# Seconds after the last change before a document is checked: enough to take the changes an
# editor sends at once together; keystrokes come further apart than this anyway.
DEBOUNCE = 0.015
NAME = "shmlint"
_log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True)
class Checked:
    """A document's findings (None: shmlint does not check it) for one version of its text."""

    version: int | None
    text: str
    result: FileResult | None
    diagnostics: tuple[types.Diagnostic, ...] = ()

    @property
    def findings(self) -> tuple[Finding, ...]:
        """The findings (none for a document shmlint does not check)."""
        return self.result.findings if self.result is not None else ()


class ShmlintServer(LanguageServer):
    """The language server: diagnostics, code actions and hover over one project."""

    def __init__(self, debounce: float = DEBOUNCE) -> None:
        super().__init__(NAME, __version__)
        self.debounce = debounce
        self.worker = Worker()
        self.shut_down = False  # `shutdown` came before `exit` (exit code 0, else 1)
        self.project: Project | None = None
        self.options: Any = None
        self.checked: dict[str, Checked] = {}
        self._latest: dict[str, int | None] = {}  # the version each open document is at
        self._in_flight: set[tuple[str, int | None]] = set()
        self._built: asyncio.Event | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._errors_shown: set[str] = set()
        self._watching = False  # the client reports files changed on disk
        self._register()

    # --- registration --------------------------------------------------------------------

    def _register(self) -> None:
        kinds = [types.CodeActionKind.QuickFix, actions.FIX_ALL]
        code_actions = types.CodeActionOptions(code_action_kinds=kinds, resolve_provider=True)
        handlers: list[tuple[str, Callable[[Any], Any], Any]] = [
            (types.INITIALIZE, self._initialize, None),
            (types.INITIALIZED, self._initialized, None),
            (types.SHUTDOWN, self._shutdown, None),
            (types.TEXT_DOCUMENT_DID_OPEN, self._did_open, None),
            (types.TEXT_DOCUMENT_DID_CHANGE, self._did_change, None),
            (types.TEXT_DOCUMENT_DID_SAVE, self._did_save, None),
            (types.TEXT_DOCUMENT_DID_CLOSE, self._did_close, None),
            (types.WORKSPACE_DID_CHANGE_WATCHED_FILES, self._watched_files, None),
            (types.TEXT_DOCUMENT_CODE_ACTION, self._code_action, code_actions),
            (types.CODE_ACTION_RESOLVE, self._resolve_code_action, None),
            (types.TEXT_DOCUMENT_HOVER, self._hover, None),
        ]
        for method, handler, options in handlers:
            self.feature(method, options)(_function(handler))

    # --- lifecycle -----------------------------------------------------------------------

    def _initialize(self, params: types.InitializeParams) -> None:
        self.options = params.initialization_options
        self._built = asyncio.Event()
        self.project = Project(root_of(params), self.options)

    async def _initialized(self, params: types.InitializedParams) -> None:
        project = self._project()
        for error in project.errors:
            self._show(error, types.MessageType.Error)
        self._spawn(self._watch_files())
        self._spawn(self._build())

    def _shutdown(self, params: None) -> None:
        self.shut_down = True
        for task in list(self._tasks):
            task.cancel()
        self.worker.stop()
        if self.project is not None:
            self.project.stop()

    async def _build(self) -> None:
        project = self._project()
        built = self._events()
        built.clear()
        token = await self._progress_begin("analysing the project")
        loop = asyncio.get_running_loop()

        def progress(done: int, total: int) -> None:
            if token is not None:
                percent = 100 * done // max(total, 1)
                report = types.WorkDoneProgressReport(
                    message=f"{done}/{total} files", percentage=percent
                )
                loop.call_soon_threadsafe(self.work_done_progress.report, token, report)

        try:
            await self.worker.run(lambda: project.build(progress))
        finally:
            if token is not None:
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
            built.set()
        self._recheck_all(force=True)

    async def _progress_begin(self, message: str) -> str | None:
        if not client.reports_progress(self.client_capabilities):
            return None
        token = f"shmlint-{id(self)}-{len(self._tasks)}-{asyncio.get_running_loop().time()}"
        try:
            await self.work_done_progress.create_async(token)
        except Exception:  # the client refused: no progress, the build goes on
            return None
        begin = types.WorkDoneProgressBegin(title=NAME, message=message, percentage=0)
        self.work_done_progress.begin(token, begin)
        return token

    async def _watch_files(self) -> None:
        """Ask the client to tell of Python files and pyproject.toml changing on disk."""
        if not client.watches_files(self.client_capabilities):
            return
        watchers = [
            types.FileSystemWatcher(glob_pattern="**/*.py"),
            types.FileSystemWatcher(glob_pattern="**/pyproject.toml"),
        ]
        options = types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers)
        registration = types.Registration(
            id="shmlint-watched-files",
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=options,
        )
        try:
            await self.client_register_capability_async(types.RegistrationParams([registration]))
        except Exception as error:  # the client said it could, then refused: saves still count
            self._log(f"the client refused to watch files: {error}", types.MessageType.Warning)
        else:
            self._watching = True

    # --- documents -----------------------------------------------------------------------

    def _did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._schedule(params.text_document.uri, 0.0)

    def _did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        self._schedule(params.text_document.uri, self.debounce)

    def _did_save(self, params: types.DidSaveTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        configuration = path is not None and path.name == "pyproject.toml"
        if not self._watching:  # no file events from this client: a save is when to look
            self._spawn(self._sync_disk())
        elif configuration:
            self._spawn(self._reconfigure())
        if not configuration:
            self._schedule(params.text_document.uri, 0.0)

    async def _sync_disk(self) -> None:
        await self._events().wait()
        project = self._project()
        await self._reconfigure()
        if await self.worker.run(project.sync_disk):
            self._recheck_all()

    def _did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        self._latest.pop(uri, None)
        self.checked.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))
        self._spawn(self._closed(uri))

    async def _closed(self, uri: str) -> None:
        await self._events().wait()
        project = self._project()
        if await self.worker.run(lambda: project.close(path_of(uri))):
            self._recheck_all()

    def _watched_files(self, params: types.DidChangeWatchedFilesParams) -> None:
        changed: list[Path] = []
        created_or_deleted = False
        configuration = False
        for change in params.changes:
            path = path_of(change.uri)
            if path is None:
                continue
            if path.name == "pyproject.toml":
                configuration = True
            elif path.suffix == ".py":
                if change.type == types.FileChangeType.Changed:
                    changed.append(path)
                else:
                    created_or_deleted = True
        if configuration:
            self._spawn(self._reconfigure())
        if changed or created_or_deleted:
            self._spawn(self._disk_changed(changed, created_or_deleted))

    async def _disk_changed(self, changed: list[Path], created_or_deleted: bool) -> None:
        await self._events().wait()
        project = self._project()
        if await self.worker.run(lambda: project.disk_changed(changed, created_or_deleted)):
            self._recheck_all()

    async def _reconfigure(self) -> None:
        await self._events().wait()
        project = self._project()
        shown = list(project.errors)
        changed = await self.worker.run(project.reconfigure)
        for error in project.errors:
            if error not in shown:  # said once while it lasts
                self._show(error, types.MessageType.Error)
        if changed:
            await self._build()

    # --- checking and publishing ---------------------------------------------------------

    def _schedule(self, uri: str, delay: float, *, force: bool = True) -> None:
        document = self.workspace.get_text_document(uri)
        version = document.version
        self._latest[uri] = version
        if (uri, version) in self._in_flight:
            return  # a check of this version is still to run: it will see the latest facts
        self._in_flight.add((uri, version))
        self._spawn(self._check(uri, version, delay, force))

    async def _check(self, uri: str, version: int | None, delay: float, force: bool) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            await self._events().wait()
            if self._latest.get(uri, -1) != version:
                return  # superseded by a newer change, or closed
            checked, facts_changed = await self._run_check(uri)
        finally:
            self._in_flight.discard((uri, version))
        if self._latest.get(uri, -1) == checked.version:
            self._publish(uri, checked, force=force)
        if facts_changed:
            self._recheck_all(but=uri)

    async def _run_check(self, uri: str) -> tuple[Checked, bool]:
        document = self.workspace.get_text_document(uri)
        text, version, path = document.source, document.version, path_of(uri)
        project = self._project()
        if path is None and not uri.startswith("untitled:"):
            return Checked(version, text, None), False  # another scheme: not a file of ours
        result, changed = await self.worker.run(lambda: project.check(path, text))
        return Checked(version, text, result), changed

    def _publish(self, uri: str, checked: Checked, *, force: bool) -> None:
        positions = Positions(checked.text, self._encoding())
        found = tuple(diagnostics(checked.findings, uri, positions))
        checked = dataclasses.replace(checked, diagnostics=found)
        before = self.checked.get(uri)
        self.checked[uri] = checked
        if not force and before is not None and before.diagnostics == found:
            if before.version == checked.version:
                return  # nothing new to tell
        params = types.PublishDiagnosticsParams(uri, list(found), version=checked.version)
        self.text_document_publish_diagnostics(params)

    def _recheck_all(self, *, but: str = "", force: bool = False) -> None:
        """Check the open documents again (the facts changed); publish where it shows."""
        for uri in list(self._latest):
            if uri != but:
                self._schedule(uri, 0.0, force=force)

    async def _current(self, uri: str) -> Checked | None:
        """The document's findings for its current text (checked now if need be)."""
        document = self.workspace.get_text_document(uri)
        checked = self.checked.get(uri)
        if checked is not None and checked.version == document.version:
            return checked
        await self._events().wait()
        checked, facts_changed = await self._run_check(uri)
        if self._latest.get(uri, -1) == checked.version:
            self._publish(uri, checked, force=False)
        if facts_changed:
            self._recheck_all(but=uri)
        return checked

    # --- code actions and hover ----------------------------------------------------------

    def _document(self, uri: str, checked: Checked) -> actions.Document:
        positions = Positions(checked.text, self._encoding())
        return actions.Document(uri, checked.version, checked.text, checked.findings, positions)

    async def _code_action(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        checked = await self._current(uri)
        if checked is None or not checked.findings:
            return None
        document = self._document(uri, checked)
        only = [str(kind) for kind in params.context.only] if params.context.only else None
        config = self._project().config
        offered = actions.offer(
            document, params.range, only, config, client.versioned_edits(self.client_capabilities)
        )
        if not client.resolves_edits(self.client_capabilities):  # the client wants every edit now
            offered = [await self._resolved(action) for action in offered]
            offered = [action for action in offered if action.edit is not None]
        return offered or None

    async def _resolve_code_action(self, action: types.CodeAction) -> types.CodeAction:
        return await self._resolved(action)

    async def _resolved(self, action: types.CodeAction) -> types.CodeAction:
        """The action with its edit: the fix, made now (libcst on the worker thread)."""
        data = action.data
        uri = data.get("uri") if isinstance(data, dict) else None
        checked = self.checked.get(uri) if isinstance(uri, str) else None
        if action.edit is not None or checked is None or uri is None:
            return action
        document = self._document(uri, checked)
        fixes = actions.wanted(document, data)
        if not fixes:
            return action  # not a fix, or the document changed since: the client asks again
        config = self._project().config
        text, positions = document.text, document.positions
        edits = await self.worker.run(lambda: actions.fix_edits(text, fixes, config, positions))
        if edits:
            versioned = client.versioned_edits(self.client_capabilities)
            action.edit = actions.workspace_edit(uri, checked.version, edits, versioned)
        return action

    async def _hover(self, params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        checked = await self._current(uri)
        if checked is None:
            return None
        positions = Positions(checked.text, self._encoding())
        return hover(
            checked.findings,
            params.position,
            positions,
            client.hover_formats(self.client_capabilities),
        )

    # --- helpers -------------------------------------------------------------------------

    def _project(self) -> Project:
        if self.project is None:
            raise RuntimeError("the server is not initialized")
        return self.project

    def _events(self) -> asyncio.Event:
        if self._built is None:
            raise RuntimeError("the server is not initialized")
        return self._built

    def _encoding(self) -> str:
        encoding = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return str(getattr(encoding, "value", encoding))

    def _log(self, message: str, kind: types.MessageType) -> None:
        self.window_log_message(types.LogMessageParams(kind, f"shmlint: {message}"))

    def _show(self, message: str, kind: types.MessageType) -> None:
        self.window_show_message(types.ShowMessageParams(kind, f"shmlint: {message}"))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(self._guarded(work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _guarded(self, work: Coroutine[Any, Any, None]) -> None:
        """Run background work; an error is logged and shown, and the server goes on."""
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a bug in the analysis must not take the editor down
            _log.exception("shmlint server error")
            self._log(traceback.format_exc(), types.MessageType.Error)
            message = f"internal error: {error!r} (see the log)"
            if message not in self._errors_shown:  # not once per keystroke
                self._errors_shown.add(message)
                self._show(message, types.MessageType.Error)


def _function(method: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A plain function calling ``method`` (pygls marks its handlers with attributes, which a
    bound method cannot take), a coroutine function for a coroutine method."""
    if inspect.iscoroutinefunction(method):

        async def handler(params: Any) -> Any:
            return await method(params)

        return handler
    return functools.wraps(method, assigned=("__doc__",))(lambda params: method(params))


def serve() -> int:
    """Run the server on stdin/stdout until the client says ``exit``; the exit code is 0
    after a ``shutdown`` request, else 1 (as the protocol asks)."""
    server = ShmlintServer()
    server.start_io()
    return 0 if server.shut_down else 1
