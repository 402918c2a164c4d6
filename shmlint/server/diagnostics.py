"""Findings as LSP diagnostics, and the rule documentation shown on hover."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from lsprotocol import types

from shmlint.analysis.rules import RULES, rule_doc
from shmlint.basics.types import Finding, SourceKind
from shmlint.server.text import Positions

SOURCE = "shmlint"
# A value held across the next read of a compiled-graph channel hangs the pipeline (Ray's
# documented stall): an error. Every other finding is a warning (it pins memory, or may).
SEVERITY = {"SHM104": types.DiagnosticSeverity.Error}


def finding_range(finding: Finding, positions: Positions) -> types.Range:
    """The finding's span (its sink) in the client's positions."""
    return positions.finding_range(finding.line, finding.col, finding.end_line, finding.end_col)


def source_range(finding: Finding, positions: Positions) -> types.Range | None:
    """The span of the read whose value the finding keeps (None: not about a read)."""
    if finding.source_kind is SourceKind.NONE or finding.source_line < 1:
        return None
    return positions.finding_range(
        finding.source_line,
        finding.source_col,
        finding.source_end_line or finding.source_line,
        finding.source_end_col if finding.source_end_line else finding.source_col,
    )


def diagnostic(finding: Finding, uri: str, positions: Positions) -> types.Diagnostic:
    """One finding as a diagnostic: range = its span, code = its rule, the read as related
    information."""
    related = None
    read = source_range(finding, positions)
    if read is not None:
        message = f"the value is read here, from the {finding.source_kind.value}"
        related = [types.DiagnosticRelatedInformation(types.Location(uri, read), message)]
    data = {"fixable": finding.fixable, "unsafe": finding.unsafe_fix}
    return types.Diagnostic(
        range=finding_range(finding, positions),
        message=finding.message,
        severity=SEVERITY.get(finding.code, types.DiagnosticSeverity.Warning),
        code=finding.code,
        source=SOURCE,
        related_information=related,
        data=data,
    )


def diagnostics(
    findings: Iterable[Finding], uri: str, positions: Positions
) -> list[types.Diagnostic]:
    """Every finding of a document as a diagnostic, in report order."""
    return [diagnostic(f, uri, positions) for f in sorted(findings, key=Finding.sort_key)]


def contains(outer: types.Range, position: types.Position) -> bool:
    """``position`` lies in ``outer`` (its end included, so a cursor right after a one-word
    span still counts)."""
    start, end = outer.start, outer.end
    after_start = (position.line, position.character) >= (start.line, start.character)
    before_end = (position.line, position.character) <= (end.line, end.character)
    return after_start and before_end


def overlaps(a: types.Range, b: types.Range) -> bool:
    """The ranges share a position (touching counts)."""
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (
        b.start.line,
        b.start.character,
    ) <= (a.end.line, a.end.character)


def hover_text(findings: Iterable[Finding]) -> str:
    """Markdown for a hover over findings: each finding's message and its rule's docs (what
    ``shmlint explain CODE`` prints)."""
    parts = []
    for finding in findings:
        rule = RULES.get(finding.code)
        name = f" ({rule.name})" if rule is not None else ""
        doc = rule_doc(finding.code) if rule is not None else ""
        confidence = f" — {finding.confidence.value} confidence" if finding.source_line else ""
        parts.append(
            f"**{finding.code}**{name}{confidence}\n\n{finding.message}\n\n{_demote(doc)}".rstrip()
        )
    return "\n\n---\n\n".join(parts)


def _demote(doc: str) -> str:
    """The rule docs' ``## Heading`` lines one level down, so they sit under the finding."""
    return "\n".join("#" + line if line.startswith("#") else line for line in doc.splitlines())


def hover(
    findings: Iterable[Finding],
    position: types.Position,
    positions: Positions,
    formats: Sequence[str] | None,
) -> types.Hover | None:
    """The hover at ``position``: the findings whose span holds it (None: no finding), in
    Markdown unless the client reads only plain text (``formats``)."""
    found = [f for f in findings if contains(finding_range(f, positions), position)]
    if not found:
        return None
    markdown = types.MarkupKind.Markdown
    kind = markdown if formats is None or markdown in formats else types.MarkupKind.PlainText
    contents = types.MarkupContent(kind=kind, value=hover_text(found))
    return types.Hover(contents=contents, range=finding_range(found[0], positions))
