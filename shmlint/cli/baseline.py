"""Baselines: adopt shmlint on a large codebase by recording today's findings.

``shmlint baseline PATHS --write FILE`` records the current findings by fingerprint (path, code,
normalised sink and read text: no line numbers, so unrelated edits, moved code and renamed
functions keep matching); ``shmlint check --baseline FILE`` reports only findings not in it.
Rewriting an existing baseline only drops entries that are gone; new findings are added only
with ``--add-new``, never silently.
"""

from __future__ import annotations

import collections
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from shmlint._version import __version__
from shmlint.basics.types import Finding

FORMAT_VERSION = 1


class BaselineError(Exception):
    """A baseline file that cannot be read or is not a shmlint baseline."""


def key(finding: Finding) -> str:
    """The baseline key of a finding (its fingerprint; path and code for SHM001)."""
    return finding.fingerprint or f"{finding.path}:{finding.code}"


def load(path: Path) -> collections.Counter[str]:
    """The fingerprints a baseline file holds, with how many findings each stands for."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: no such baseline file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BaselineError(f"{path}: not a readable baseline: {error}") from None
    if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
        raise BaselineError(f"{path}: not a shmlint baseline (version {FORMAT_VERSION})")
    counts: collections.Counter[str] = collections.Counter()
    for entry in data.get("findings", []):
        counts[entry["fingerprint"]] += int(entry.get("count", 1))
    return counts


def new_findings(findings: Iterable[Finding], known: collections.Counter[str]) -> list[Finding]:
    """The findings the baseline does not account for (each entry absorbs ``count`` findings)."""
    left = collections.Counter(known)
    fresh = []
    for finding in findings:
        fingerprint = key(finding)
        if left[fingerprint] > 0:
            left[fingerprint] -= 1
        else:
            fresh.append(finding)
    return fresh


def _entries(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    grouped: dict[str, list[Finding]] = collections.defaultdict(list)
    for finding in findings:
        grouped[key(finding)].append(finding)
    return [
        {
            "fingerprint": fingerprint,
            "path": group[0].path,
            "code": group[0].code,
            "message": group[0].message,
            "count": len(group),
        }
        for fingerprint, group in sorted(grouped.items(), key=lambda kv: kv[1][0].sort_key())
    ]


def write(path: Path, findings: Sequence[Finding], *, add_new: bool) -> tuple[int, int, int]:
    """Write (or rewrite) the baseline; returns (kept, dropped, new findings not added)."""
    if path.exists():
        old = load(path)
        current = collections.Counter(key(f) for f in findings)
        kept_counts = current & old  # what is still there and was recorded
        dropped = sum((old - current).values())
        not_added = sum((current - old).values())
        recorded = []
        budget = collections.Counter(kept_counts)
        for finding in findings:
            if budget[key(finding)] > 0 or add_new:
                if budget[key(finding)] > 0:
                    budget[key(finding)] -= 1
                recorded.append(finding)
        if add_new:
            not_added = 0
    else:
        recorded, dropped, not_added = list(findings), 0, 0
    document = {
        "version": FORMAT_VERSION,
        "tool": f"shmlint {__version__}",
        "findings": _entries(recorded),
    }
    try:
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    except OSError as error:
        raise BaselineError(f"{path}: cannot write: {error.strerror}") from None
    return len(recorded), dropped, not_added
