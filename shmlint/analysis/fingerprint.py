"""Fingerprints of findings that survive unrelated edits: no line numbers in them.

A finding is identified by its path, its code, and the normalised text of its sink line and of
its read's line. Identical fingerprints in one file are told apart by their order of
appearance, so two equal findings stay two.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

from shmlint.basics.types import Finding

_SPACE = re.compile(r"\s+")
_NOQA = re.compile(r"#\s*noqa\b.*$", re.IGNORECASE)


def _normalise(line: str) -> str:
    # Whitespace, and a noqa comment added later, do not change what a line does.
    return _SPACE.sub(" ", _NOQA.sub("", line)).strip()


def finding_key(finding: Finding, lines: Sequence[str], path: str) -> tuple[str, str, str, str]:
    """(path, code, sink text, source text) of a finding in a file with ``lines``."""

    def text(number: int) -> str:
        return _normalise(lines[number - 1]) if 1 <= number <= len(lines) else ""

    return (path.replace("\\", "/"), finding.code, text(finding.line), text(finding.source_line))


def fingerprints(findings: Iterable[Finding], lines: Sequence[str], path: str) -> list[str]:
    """One fingerprint per finding (same order), unique within the file; ``path`` is the file's
    path relative to the project root, so the spelling of the command line does not matter."""
    seen: dict[tuple[str, str, str, str], int] = {}
    result = []
    for finding in findings:
        key = finding_key(finding, lines, path)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        digest = hashlib.sha256(
            "\0".join((*key, str(occurrence))).encode("utf-8", "surrogateescape")
        )
        result.append(digest.hexdigest()[:32])
    return result
