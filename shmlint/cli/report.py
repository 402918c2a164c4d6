"""Output formats: text (ruff-like), json; statistics."""

from __future__ import annotations

import collections
import json
from collections.abc import Sequence
from typing import TextIO

from shmlint.basics.types import Finding


def shown(path: str) -> str:
    """``path`` as printed: a file name that is not UTF-8 (read by Python as surrogate
    escapes) gets U+FFFD for each undecodable byte, as ruff prints it, so that it can be
    written to any UTF-8 stream (a strict one raised ``UnicodeEncodeError``)."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def text_line(finding: Finding) -> str:
    """``path:line:col: CODE message`` (1-based column), `` [*]`` when a fix exists."""
    suffix = " [*]" if finding.fixable and not finding.unsafe_fix else ""
    where = f"{shown(finding.path)}:{finding.line}:{finding.col + 1}"
    return f"{where}: {finding.code} {finding.message}{suffix}"


def _rule_name(code: str) -> str:
    # The rule registry imports the checks: only output that names rules loads it.
    from shmlint.analysis.rules import RULES

    return RULES[code].name


def finding_dict(finding: Finding) -> dict[str, object]:
    """The JSON form of a finding (the documented fields of ``--output-format json``)."""
    return {
        "path": shown(finding.path),
        "line": finding.line,
        "column": finding.col + 1,
        "end_line": finding.end_line,
        "end_column": finding.end_col + 1,
        "code": finding.code,
        "name": _rule_name(finding.code),
        "message": finding.message,
        "confidence": finding.confidence.value,
        "evidence": finding.evidence,
        "source": {
            "kind": finding.source_kind.value,
            "line": finding.source_line,
            "column": finding.source_col + 1,
        },
        "fixable": finding.fixable,
        "unsafe_fix": finding.unsafe_fix,
        "fingerprint": finding.fingerprint,
    }


def write_text(findings: Sequence[Finding], out: TextIO) -> None:
    """One line per finding."""
    for finding in findings:
        out.write(text_line(finding) + "\n")


def write_json(findings: Sequence[Finding], out: TextIO) -> None:
    """A JSON array of finding objects."""
    json.dump([finding_dict(f) for f in findings], out, indent=2)
    out.write("\n")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def write_github(findings: Sequence[Finding], out: TextIO) -> None:
    """GitHub Actions workflow commands: annotations on the pull request's files."""
    for f in findings:
        properties = ",".join(
            (
                f"file={_escape_property(shown(f.path))}",
                f"line={f.line}",
                f"col={f.col + 1}",
                f"endLine={f.end_line}",
                f"endColumn={f.end_col + 1}",
                f"title={_escape_property(f.code + ' ' + _rule_name(f.code))}",
            )
        )
        out.write(f"::error {properties}::{_escape_data(f.code + ' ' + f.message)}\n")


def write_statistics(findings: Sequence[Finding], out: TextIO) -> None:
    """Count per code, most frequent first, with how many are fixable (like ruff)."""
    counts = collections.Counter(f.code for f in findings)
    fixable = collections.Counter(f.code for f in findings if f.fixable and not f.unsafe_fix)
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        mark = "[*]" if fixable[code] else "   "
        out.write(f"{count:5d}\t{code}\t{mark} {_rule_name(code)}\n")
