"""``# noqa`` comments, as flake8 reads them: bare, or with a list of codes."""

from __future__ import annotations

import re

# flake8's own pattern: a bare noqa, one with a code list (`noqa: SHM101,SHM102`), any case.
_NOQA = re.compile(
    r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?",
    re.IGNORECASE,
)
_SEPARATOR = re.compile(r"[,\s]+")


def noqa_codes(line: str) -> frozenset[str] | None:
    """None when the line has no ``# noqa``; an empty set for a bare one; else its codes."""
    if "noqa" not in line.lower():
        return None
    match = _NOQA.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return frozenset()
    return frozenset(code.upper() for code in _SEPARATOR.split(codes.strip()) if code)


def is_suppressed(line: str, code: str) -> bool:
    """True when ``line``'s ``# noqa`` covers ``code`` (a bare noqa covers every code)."""
    codes = noqa_codes(line)
    if codes is None:
        return False
    return not codes or any(code.startswith(listed) for listed in codes)
