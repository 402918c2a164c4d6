"""Result types: frozen, slotted, picklable data with no tree nodes in them.

They cross process boundaries (``--jobs``), serialise to JSON/SARIF and are all the front ends
(CLI reporters, flake8 adapter, fixer) ever see of the analysis.
"""

from __future__ import annotations

import dataclasses
import enum


class Confidence(str, enum.Enum):
    """How sure a finding is that the value holds zero-copy Ray memory."""

    MEDIUM = "medium"
    HIGH = "high"

    @property
    def rank(self) -> int:
        """Ordering for ``--min-confidence`` (higher is surer)."""
        return 1 if self is Confidence.MEDIUM else 2


class SourceKind(str, enum.Enum):
    """Where the retained value was read from."""

    CHANNEL = "compiled-graph channel"
    OBJECT_STORE = "object store"
    CONFIGURED = "configured source"
    NONE = "none"  # findings that are not about a read (SHM001)


@dataclasses.dataclass(frozen=True, slots=True)
class Finding:
    """One reported problem.

    ``line`` is 1-based and ``col`` 0-based (as flake8), in characters; ``end_*`` likewise.
    ``source_line``/``source_col`` locate the read whose value is retained.
    """

    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    code: str
    message: str
    confidence: Confidence
    source_kind: SourceKind
    source_line: int
    source_col: int
    source_end_line: int = 0
    source_end_col: int = 0
    fixable: bool = False  # a fix exists (applied by --fix when safe, --unsafe-fixes otherwise)
    fingerprint: str = ""  # stable across unrelated edits (see shmlint.analysis.fingerprint)
    unsafe_fix: bool = False  # the fix may change behaviour (see the rule's "Fix safety")
    evidence: str = ""  # the payload evidence that set the confidence ("" : none decided)
    helper: str = ""  # "pkg.mod:func" the fix calls, chosen by the payload ("": the configured)

    def sort_key(self) -> tuple[str, int, int, str]:
        """Stable report order: path, position, code."""
        return (self.path, self.line, self.col, self.code)


@dataclasses.dataclass(frozen=True, slots=True)
class FileResult:
    """Everything the analysis says about one file."""

    path: str
    findings: tuple[Finding, ...]
    parsed: bool  # False when the prefilter skipped the file or it failed to parse
    skipped: bool = False  # True when the prefilter proved the file cannot contain a source
    # The installed packages' files the analysis read (path, modification time): a cached
    # result stands only while they are unchanged (shmlint/facts/external.py).
    installed: tuple[tuple[str, int], ...] = ()
