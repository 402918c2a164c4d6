"""Results and call evidence as JSON-able data and back (the cache's and phase 1's entries)."""

from __future__ import annotations

from typing import Any

from shmlint.basics.types import Confidence, FileResult, Finding, SourceKind


def encode_result(result: FileResult) -> dict[str, Any]:
    """A result as JSON-able data."""
    findings = []
    for finding in result.findings:
        item: dict[str, Any] = {
            name: getattr(finding, name) for name in Finding.__dataclass_fields__
        }
        item["confidence"] = finding.confidence.value
        item["source_kind"] = finding.source_kind.value
        findings.append(item)
    encoded = {
        "path": result.path,
        "parsed": result.parsed,
        "skipped": result.skipped,
        "findings": findings,
    }
    if result.installed:
        encoded["installed"] = [list(item) for item in result.installed]
    return encoded


def decode_result(data: dict[str, Any]) -> FileResult:
    """The inverse of :func:`encode_result` (raises on foreign data)."""
    findings = []
    for item in data["findings"]:
        item = dict(item)
        item["confidence"] = Confidence(item["confidence"])
        item["source_kind"] = SourceKind(item["source_kind"])
        findings.append(Finding(**item))
    installed = tuple((str(path), int(mtime)) for path, mtime in data.get("installed", ()))
    return FileResult(
        str(data["path"]), tuple(findings), bool(data["parsed"]), bool(data["skipped"]), installed
    )


# A file's call evidence, as text (FirstPass.second_pass): the readers' names it spells, and
# the dotted names that would make it call one.
Calls = tuple[list[str], list[str]]
# What the run record compares of a file: size, modification and change times, inode
# (shmlint/run/record.py).
Stat = tuple[int, int, int, int]


def decode_calls(data: Any) -> list[Calls | None]:
    """Call evidence per file from JSON; raises ``TypeError``/``IndexError``/``ValueError``."""
    return [None if c is None else ([str(w) for w in c[0]], [str(n) for n in c[1]]) for c in data]
