"""SARIF 2.1.0 output, for GitHub code scanning and other SARIF consumers.

Locations are relative to the repository root (``%SRCROOT%``); ``partialFingerprints`` use
the line-free fingerprints of :mod:`shmlint.analysis.fingerprint`; a fixable finding carries
its ``fixes`` (the replacements ``--fix`` would make for it alone).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from shmlint._version import __version__
from shmlint.analysis.rules import RULES, rule_doc
from shmlint.basics.types import Finding

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY = "shmlint/v1"

# (old source, new source) for one finding fixed on its own, or None when it has no fix.
FixFor = Callable[[Finding], tuple[bytes, bytes] | None]


def repository_root(start: Path) -> Path:
    """The nearest directory holding ``.git`` above ``start`` (else ``start`` itself)."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def _relative_uri(path: str, root: Path) -> str:
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        return resolved.as_uri()


def _rule(code: str) -> dict[str, Any]:
    rule = RULES[code]
    doc = rule_doc(code)
    what = doc.split("## Why is this bad?")[0].replace("## What it does", "")
    return {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": " ".join(what.split())},
        "help": {"text": doc, "markdown": doc},
        "defaultConfiguration": {"level": "error"},
        "properties": {"fixSafety": rule.fix_safety, "tags": ["ray", "shared-memory"]},
    }


def _region(start_line: int, start_col: int, end_line: int, end_col: int) -> dict[str, int]:
    # SARIF columns are 1-based; ours are 0-based characters.
    return {
        "startLine": start_line,
        "startColumn": start_col + 1,
        "endLine": end_line,
        "endColumn": end_col + 1,
    }


def _replacements(old: bytes, new: bytes) -> list[dict[str, Any]]:
    """Line-level replacements turning ``old`` into ``new``."""
    old_lines = old.decode("utf-8", "replace").splitlines(keepends=True)
    new_lines = new.decode("utf-8", "replace").splitlines(keepends=True)
    starts = [0]
    for line in old_lines:
        starts.append(starts[-1] + len(line))
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    replacements = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        # Character offsets: exact for replacements, deletions and insertions alike.
        region = {"charOffset": starts[i1], "charLength": starts[i2] - starts[i1]}
        replacements.append(
            {"deletedRegion": region, "insertedContent": {"text": "".join(new_lines[j1:j2])}}
        )
    return replacements


def _result(
    finding: Finding, rule_index: int, root: Path, fix_for: FixFor | None
) -> dict[str, Any]:
    uri = _relative_uri(finding.path, root)
    location = {
        "physicalLocation": {
            "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
            "region": _region(finding.line, finding.col, finding.end_line, finding.end_col),
        }
    }
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": "error",
        "message": {"text": finding.message},
        "locations": [location],
        "properties": {
            "confidence": finding.confidence.value,
            "evidence": finding.evidence,
            "sourceKind": finding.source_kind.value,
        },
    }
    if finding.fingerprint:
        result["partialFingerprints"] = {FINGERPRINT_KEY: finding.fingerprint}
    if finding.source_line:
        result["relatedLocations"] = [
            {
                "id": 1,
                "message": {"text": f"read from the {finding.source_kind.value}"},
                "physicalLocation": {
                    "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
                    "region": _region(
                        finding.source_line,
                        finding.source_col,
                        finding.source_end_line or finding.source_line,
                        finding.source_end_col,
                    ),
                },
            }
        ]
    change = fix_for(finding) if (fix_for is not None and finding.fixable) else None
    if change is not None and change[0] != change[1]:
        result["fixes"] = [
            {
                "description": {"text": "Detach the value at the read"},
                "artifactChanges": [
                    {
                        "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
                        "replacements": _replacements(*change),
                    }
                ],
            }
        ]
    return result


def sarif_log(
    findings: Sequence[Finding], root: Path, fix_for: FixFor | None = None
) -> dict[str, Any]:
    """The SARIF log of one run."""
    codes = list(RULES)
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "shmlint",
                        "version": __version__,
                        "rules": [_rule(code) for code in codes],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri() + "/"}},
                "results": [_result(f, codes.index(f.code), root, fix_for) for f in findings],
            }
        ],
    }


def write_sarif(
    findings: Sequence[Finding], out: TextIO, root: Path, fix_for: FixFor | None = None
) -> None:
    """Write the SARIF log as JSON."""
    json.dump(sarif_log(findings, root, fix_for), out, indent=2)
    out.write("\n")
