"""Map findings (ast coordinates turned into characters) to the libcst nodes of their reads."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from shmlint.basics.types import Finding

# (start line, start column, end line, end column): 1-based lines, 0-based character columns.
Span = tuple[int, int, int, int]


def source_span(finding: Finding) -> Span:
    """The span of the read a finding is about."""
    return (
        finding.source_line,
        finding.source_col,
        finding.source_end_line,
        finding.source_end_col,
    )


def _span(position: CodeRange) -> Span:
    return (position.start.line, position.start.column, position.end.line, position.end.column)


def locate_reads(wrapper: MetadataWrapper, spans: Iterable[Span]) -> dict[Span, cst.CSTNode]:
    """The ``Call`` / ``Await`` node of ``wrapper.module`` at each span that has one.

    libcst's positions exclude a node's own parentheses, as ast's do, and count characters, as
    the findings do: a read's span matches exactly one node.
    """
    wanted = set(spans)
    found: dict[Span, cst.CSTNode] = {}
    positions = wrapper.resolve(PositionProvider)
    for node, position in positions.items():
        if isinstance(node, (cst.Call, cst.Await)):
            span = _span(position)
            if span in wanted and span not in found:
                found[span] = node
    return found
