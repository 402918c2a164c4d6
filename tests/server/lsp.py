"""A real LSP client for the server tests (pytest-lsp's, over stdio), with the waits the tests
need: diagnostics of a given version, messages, and applying a code action's edit."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

SERVER = [sys.executable, "-m", "shmlint", "server"]
TIMEOUT = 60.0  # the first diagnostics wait for the project build (and a cold interpreter)
VSCODE = "visual-studio-code"
NEOVIM = "neovim@v0.7.0"


class Client(LanguageClient):
    """pytest-lsp's client, keeping every published diagnostics in order."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.published: list[types.PublishDiagnosticsParams] = []
        self.registrations: list[types.Registration] = []
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}

    # --- documents -----------------------------------------------------------------------

    def open(self, path: Path, text: str | None = None) -> str:
        uri = path.as_uri()
        text = path.read_text(encoding="utf-8") if text is None else text
        self.versions[uri], self.texts[uri] = 1, text
        item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        self.text_document_did_open(types.DidOpenTextDocumentParams(item))
        return uri

    def change(self, uri: str, text: str) -> int:
        """Replace the whole text (a full-text change); returns the new version."""
        version = self.versions[uri] = self.versions[uri] + 1
        self.texts[uri] = text
        document = types.VersionedTextDocumentIdentifier(uri=uri, version=version)
        change = types.TextDocumentContentChangeWholeDocument(text=text)
        self.text_document_did_change(types.DidChangeTextDocumentParams(document, [change]))
        return version

    def edit(self, uri: str, edits: list[types.TextEdit]) -> int:
        """Apply ``edits`` here and send them as incremental changes (as an editor does)."""
        text = self.texts[uri]
        changes: list[types.TextDocumentContentChangeEvent] = []
        for edit in sorted(edits, key=_start, reverse=True):
            text = apply_edits(text, [edit])
            changes.append(
                types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)
            )
        version = self.versions[uri] = self.versions[uri] + 1
        self.texts[uri] = text
        document = types.VersionedTextDocumentIdentifier(uri=uri, version=version)
        self.text_document_did_change(types.DidChangeTextDocumentParams(document, changes))
        return version

    def close(self, uri: str) -> None:
        document = types.TextDocumentIdentifier(uri=uri)
        self.text_document_did_close(types.DidCloseTextDocumentParams(document))

    # --- waiting -------------------------------------------------------------------------

    async def until(self, ready: Callable[[], Any], timeout: float = TIMEOUT) -> Any:
        """Poll ``ready()`` until it returns something true (fails after ``timeout``)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            value = ready()
            if value:
                return value
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"timed out after {timeout} s waiting for {ready}")
            await asyncio.sleep(0.01)

    async def diagnostics_for(
        self, uri: str, version: int | None = None, *, after: int = 0
    ) -> list[types.Diagnostic]:
        """The first diagnostics published for ``uri`` (at ``version``, when given) among
        the publications from index ``after`` on."""

        def found() -> list[types.Diagnostic] | None:
            for params in self.published[after:]:
                if params.uri == uri and (version is None or params.version == version):
                    return list(params.diagnostics)
            return None

        await self.until(lambda: found() is not None)
        return found() or []

    async def actions(
        self, uri: str, where: types.Range, only: list[str] | None = None
    ) -> list[types.CodeAction]:
        """The code actions the server offers for ``where`` (resolved, as an editor does
        before applying one)."""
        context = types.CodeActionContext(diagnostics=[], only=only)
        params = types.CodeActionParams(types.TextDocumentIdentifier(uri), where, context)
        found = await self.text_document_code_action_async(params) or []
        resolved = []
        for action in found:
            assert isinstance(action, types.CodeAction), action
            if action.edit is None:
                action = await self.code_action_resolve_async(action)
            resolved.append(action)
        return resolved

    def latest(self, uri: str) -> list[types.Diagnostic]:
        """The diagnostics last published for ``uri``."""
        for params in reversed(self.published):
            if params.uri == uri:
                return list(params.diagnostics)
        return []


def _publish(client: Client, params: types.PublishDiagnosticsParams) -> None:
    client.published.append(params)
    client.diagnostics[params.uri] = params.diagnostics


def _register_capability(client: Client, params: types.RegistrationParams) -> None:
    client.registrations.extend(params.registrations)


def _start(edit: types.TextEdit) -> tuple[int, int]:
    return (edit.range.start.line, edit.range.start.character)


def _make_client() -> Client:
    client = Client(converter_factory=default_converter)
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = _publish
    features[types.CLIENT_REGISTER_CAPABILITY] = _register_capability
    register_lsp_features(client, features)
    return client


def _offset(text: str, position: types.Position) -> int:
    """UTF-16 position → string index (lines end at \\n, \\r\\n or \\r)."""
    lines = text.splitlines(keepends=True)
    offset = sum(len(line) for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    units = 0
    for index, char in enumerate(line):
        if units >= position.character:
            return offset + index
        units += 2 if ord(char) > 0xFFFF else 1
    return offset + len(line.rstrip("\r\n"))


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """``text`` with non-overlapping ``edits`` applied (from the last one up)."""
    for edit in sorted(edits, key=_start, reverse=True):
        start, end = _offset(text, edit.range.start), _offset(text, edit.range.end)
        text = text[:start] + edit.new_text + text[end:]
    return text


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    """The text edits a code action makes to ``uri``."""
    edit = action.edit
    assert edit is not None, f"no edit in {action.title!r}"
    if edit.document_changes:
        return [
            e  # type: ignore[misc]
            for change in edit.document_changes
            if isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri
            for e in change.edits
        ]
    return list((edit.changes or {}).get(uri, []))


@contextlib.asynccontextmanager
async def lsp_session(
    root: Path,
    *,
    client: str = VSCODE,
    options: dict[str, Any] | None = None,
    encodings: list[str] | None = None,
) -> AsyncIterator[Client]:
    """A server started with ``shmlint server`` for the project at ``root``, initialized
    (as ``client`` would; ``encodings``: the position encodings it offers), and shut down
    (shutdown, exit) at the end."""
    config = ClientServerConfig(server_command=SERVER, client_factory=_make_client)
    started = await config.start()
    assert isinstance(started, Client)
    capabilities = client_capabilities(client)
    if encodings is not None:
        capabilities.general = types.GeneralClientCapabilities(position_encodings=encodings)
    try:
        folder = types.WorkspaceFolder(uri=root.as_uri(), name=root.name)
        params = types.InitializeParams(
            capabilities=capabilities,
            root_uri=root.as_uri(),
            workspace_folders=[folder],
            initialization_options=options,
        )
        await started.initialize_session(params)
        yield started
        await started.shutdown_session()
    finally:
        await started.stop()
