"""What the client said at ``initialize``: what it can do, and where the project is."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path


def reports_progress(capabilities: types.ClientCapabilities) -> bool:
    """The client shows work done progress (``window/workDoneProgress/create``)."""
    window = capabilities.window
    return bool(window is not None and window.work_done_progress)


def watches_files(capabilities: types.ClientCapabilities) -> bool:
    """The client takes a registration of file watchers (``didChangeWatchedFiles``)."""
    workspace = capabilities.workspace
    watched = workspace.did_change_watched_files if workspace is not None else None
    return bool(watched is not None and watched.dynamic_registration)


def versioned_edits(capabilities: types.ClientCapabilities) -> bool:
    """The client applies edits tied to a document's version (``documentChanges``)."""
    workspace = capabilities.workspace
    edit = workspace.workspace_edit if workspace is not None else None
    return bool(edit is not None and edit.document_changes)


def resolves_edits(capabilities: types.ClientCapabilities) -> bool:
    """The client asks for a code action's edit when the user picks it (``resolveSupport``)."""
    document = capabilities.text_document
    action = document.code_action if document is not None else None
    support = action.resolve_support if action is not None else None
    return support is not None and "edit" in support.properties


def hover_formats(capabilities: types.ClientCapabilities) -> Sequence[str] | None:
    """The markup kinds the client shows in a hover (None: it did not say)."""
    document = capabilities.text_document
    hover = document.hover if document is not None else None
    return hover.content_format if hover is not None else None


def path_of(uri: str) -> Path | None:
    """The file behind a ``file:`` URI (None for other schemes)."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(path) if path else None


def root_of(params: types.InitializeParams) -> Path:
    """The project root: the first workspace folder, else the root URI, else the current
    directory."""
    for folder in params.workspace_folders or ():
        path = path_of(folder.uri)
        if path is not None and path.is_dir():
            return path
    if params.root_uri:
        path = path_of(params.root_uri)
        if path is not None and path.is_dir():
            return path
    if params.root_path and Path(params.root_path).is_dir():
        return Path(params.root_path)
    return Path.cwd()
