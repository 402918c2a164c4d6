"""The rule registry: one :class:`Rule` per code, its docs in its docstring.

Rules do not detect anything themselves: the dataflow reports sink events with a code, and a
rule supplies that code's name, message and documentation (``shmlint explain``).
"""

from __future__ import annotations

import inspect

from shmlint.rules.base import Rule
from shmlint.rules.parse import ParseError
from shmlint.rules.retention import (
    CapturedByClosure,
    HeldAcrossRead,
    ReturnedUndetached,
    StoredInContainer,
    StoredInGlobal,
    StoredOnObject,
    YieldedUndetached,
)

RULES: dict[str, type[Rule]] = {
    rule.code: rule
    for rule in (
        ParseError,
        ReturnedUndetached,
        StoredOnObject,
        StoredInContainer,
        HeldAcrossRead,
        YieldedUndetached,
        StoredInGlobal,
        CapturedByClosure,
    )
}


def rule_doc(code: str) -> str:
    """The rule's documentation (its docstring, dedented)."""
    return inspect.cleandoc(RULES[code].__doc__ or "")


__all__ = ["RULES", "Rule", "rule_doc"]
