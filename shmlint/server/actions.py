"""Code actions: the fix of one finding, every fix of a file, and ``# noqa: CODE``.

A fix is the edit ``shmlint --fix`` makes (the same helper, style and import), as the smallest
whole-line edits from the old text to the fixed one. libcst is imported only when an edit is
made, never for the list of actions.
"""

from __future__ import annotations

import dataclasses
import io
import re
import tokenize
from collections.abc import Iterable, Sequence
from typing import Any

from lsprotocol import types

from shmlint.analysis.engine import decode_source
from shmlint.analysis.suppress import noqa_codes
from shmlint.basics.config import Config
from shmlint.basics.types import Finding
from shmlint.server.diagnostics import diagnostic, finding_range, overlaps
from shmlint.server.text import Positions, line_edits, to_bytes

FIX_ALL = "source.fixAll.shmlint"
_LINE_ENDS = (tokenize.NL, tokenize.NEWLINE)
# A noqa comment with codes (flake8's spelling): new codes go after the last one.
_NOQA_CODES = re.compile(r"#\s*noqa:[\s]?[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*", re.IGNORECASE)


def fixable(findings: Iterable[Finding], *, unsafe: bool = False) -> list[Finding]:
    """The findings with a fix (``unsafe``: those whose fix may change behaviour too)."""
    return [f for f in findings if f.fixable and (unsafe or not f.unsafe_fix)]


def fix_edits(
    text: str, findings: list[Finding], config: Config, positions: Positions
) -> list[types.TextEdit]:
    """The edits that fix ``findings`` in ``text`` (none when the fixer cannot)."""
    from shmlint.fixer import apply_fixes  # libcst: only when an edit is wanted

    if not findings:
        return []
    outcome = apply_fixes(to_bytes(text), findings, config)
    if not outcome.changed:
        return []
    return line_edits(text, decode_source(outcome.source), positions)


def fix_title(finding: Finding, config: Config) -> str:
    """What the quick fix of ``finding`` says it does."""
    helper = (finding.helper or config.helper).rpartition(":")[2]
    title = f"Detach the read at line {finding.source_line}: wrap it in {helper}()"
    if config.helper_style == "in-place":
        title = f"Detach the read at line {finding.source_line}: call {helper}() on it after"
    return title + " (unsafe fix)" if finding.unsafe_fix else title


def _comment_fits(text: str, line: int) -> bool:
    """A comment can end the 1-based ``line``: it does not end inside a string or with a
    backslash continuation (a comment there would change the code or break it)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] > line:
                return True
            if token.start[0] <= line < token.end[0] and token.type not in _LINE_ENDS:
                return False  # a string (or an f-string's part) runs on past the line
    except (tokenize.TokenError, SyntaxError):
        return False
    return True


def noqa_edit(text: str, finding: Finding, positions: Positions) -> types.TextEdit | None:
    """The edit that adds ``finding.code`` to the ``# noqa`` of its line (None: the line
    cannot take a comment)."""
    index = finding.line - 1
    line = positions.line_text(index)
    if line.rstrip().endswith("\\") or not _comment_fits(text, finding.line):
        return None
    codes = noqa_codes(line)
    if codes is not None and not codes:
        return None  # a bare noqa comment already covers every code
    match = _NOQA_CODES.search(line) if codes else None
    if match is not None:
        at = positions.position(index, match.end())
        return types.TextEdit(types.Range(at, at), f", {finding.code}")
    kept = len(line.rstrip())
    start, end = positions.position(index, kept), positions.position(index, len(line))
    return types.TextEdit(types.Range(start, end), f"  # noqa: {finding.code}")


def workspace_edit(
    uri: str, version: int | None, edits: list[types.TextEdit], versioned: bool
) -> types.WorkspaceEdit:
    """Edits of one document, tied to its version where the client takes that."""
    if versioned:
        document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        change = types.TextDocumentEdit(text_document=document, edits=list(edits))
        return types.WorkspaceEdit(document_changes=[change])
    return types.WorkspaceEdit(changes={uri: list(edits)})


def wants(only: Sequence[str] | None, kind: str) -> bool:
    """The client asked for actions of ``kind`` (``only`` lists kinds or their prefixes)."""
    if not only:
        return True
    return any(kind == asked or kind.startswith(asked + ".") for asked in only)


@dataclasses.dataclass(frozen=True, slots=True)
class Document:
    """One checked version of a document: what its actions are made from."""

    uri: str
    version: int | None
    text: str
    findings: tuple[Finding, ...]
    positions: Positions


def key(finding: Finding) -> list[object]:
    """Names one finding of a document's result (in an action's data, JSON)."""
    return [finding.code, finding.line, finding.col, finding.source_line, finding.source_col]


def offer(
    document: Document,
    where: types.Range,
    only: Sequence[str] | None,
    config: Config,
    versioned: bool,
) -> list[types.CodeAction]:
    """The actions for ``where``: a fix per fixable finding there and a noqa per finding
    (quick fixes), and "fix all" for the document. Fixes carry ``data`` and get their edit
    when resolved (:func:`wanted`, :func:`fix_edits`): libcst runs only for a chosen one."""
    found = [
        f
        for f in sorted(document.findings, key=Finding.sort_key)
        if overlaps(finding_range(f, document.positions), where)
    ]
    data: dict[str, Any] = {"uri": document.uri, "version": document.version}
    result: list[types.CodeAction] = []
    if wants(only, types.CodeActionKind.QuickFix):
        for finding in found:
            if finding.fixable:
                result.append(
                    types.CodeAction(
                        title=fix_title(finding, config),
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic(finding, document.uri, document.positions)],
                        is_preferred=not finding.unsafe_fix,
                        data={**data, "fix": key(finding)},
                    )
                )
        for finding in found:
            action = _noqa_action(document, finding, versioned)
            if action is not None:
                result.append(action)
    if fixable(document.findings) and wants(only, FIX_ALL):
        result.append(
            types.CodeAction(
                title="Fix all shmlint findings in this file",
                kind=FIX_ALL,
                data={**data, "fix": "all"},
            )
        )
    return result


def _noqa_action(document: Document, finding: Finding, versioned: bool) -> types.CodeAction | None:
    if finding.code == "SHM001":
        return None  # a file that does not parse is not analysed: nothing to suppress
    edit = noqa_edit(document.text, finding, document.positions)
    if edit is None:
        return None
    return types.CodeAction(
        title=f"Suppress {finding.code} on this line (# noqa: {finding.code})",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic(finding, document.uri, document.positions)],
        edit=workspace_edit(document.uri, document.version, [edit], versioned),
    )


def wanted(document: Document, data: object) -> list[Finding] | None:
    """The findings an action's ``data`` asks to fix in ``document`` (None: the data is not
    a fix's, or is of another version of the document)."""
    if not isinstance(data, dict) or "fix" not in data:
        return None
    if data.get("uri") != document.uri or data.get("version") != document.version:
        return None
    if data["fix"] == "all":
        return fixable(document.findings)
    return [f for f in document.findings if f.fixable and key(f) == data["fix"]]
