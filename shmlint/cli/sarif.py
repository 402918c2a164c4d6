"""SARIF 2.1.0 output, for GitHub code scanning and other SARIF consumers.

Locations are relative to the repository root (``%SRCROOT%``; a file outside it gets an
absolute ``file:`` URI and no base), percent-encoded; columns count code points (the run's
``columnKind``); ``partialFingerprints`` use the line-free fingerprints of
:mod:`shmlint.analysis.fingerprint`; a fixable finding carries its ``fixes`` (the
replacements ``--fix`` would make for it alone).
"""

from __future__ import annotations

import difflib
import json
import os
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from shmlint._version import __version__
from shmlint.analysis.rules import RULES, rule_doc
from shmlint.basics.types import Finding

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY = "shmlint/v1"
BASE = "%SRCROOT%"  # the repository root, which relative artifact URIs are resolved against

# (old source, new source) for one finding fixed on its own, or None when it has no fix.
FixFor = Callable[[Finding], tuple[bytes, bytes] | None]


def repository_root(start: Path) -> Path:
    """The nearest directory holding ``.git`` above ``start`` (else ``start`` itself)."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def artifact_location(path: str, root: Path) -> dict[str, str]:
    """The SARIF ``artifactLocation`` of a file: a URI reference relative to ``%SRCROOT%``
    for a file below the repository root, else an absolute ``file:`` URI, which takes no
    base. Either is percent-encoded (RFC 3986: a ``#``, ``%``, space or non-ASCII character
    of a name is escaped, its UTF-8 bytes; a name that is not UTF-8, its own bytes), as
    ``Path.as_uri`` encodes an absolute one."""
    resolved = Path(path).resolve()
    try:
        relative = resolved.relative_to(root).as_posix()
    except ValueError:
        return {"uri": resolved.as_uri()}
    return {"uri": urllib.parse.quote_from_bytes(os.fsencode(relative)), "uriBaseId": BASE}


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
    artifact = artifact_location(finding.path, root)
    location = {
        "physicalLocation": {
            "artifactLocation": artifact,
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
                    "artifactLocation": artifact,
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
                        "artifactLocation": artifact,
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
                "originalUriBaseIds": {BASE: {"uri": root.as_uri() + "/"}},
                # Our columns count characters (code points), not SARIF's default UTF-16
                # units: a reader told so places a finding after an astral character right.
                "columnKind": "unicodeCodePoints",
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
