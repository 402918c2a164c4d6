"""The rule registry: one :class:`Rule` per code, its docs in its docstring.

Rules do not detect anything themselves: the dataflow reports sink events with a code, and a
rule supplies that code's name, message and documentation (``shmlint explain``).
"""

from __future__ import annotations

import inspect

from shmlint.rules.base import Rule
from shmlint.rules.helpers import IncompleteDetachHelper
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
        IncompleteDetachHelper,
    )
}


# The headings every rule's documentation has, in this order (as ruff's rule docs).
DOC_HEADINGS = (
    "What it does",
    "Why is this bad?",
    "Example",
    "Use instead",
    "Fix safety",
    "References",
)


def rule_doc(code: str) -> str:
    """The rule's documentation (its docstring, dedented)."""
    return inspect.cleandoc(RULES[code].__doc__ or "")


def render_markdown(code: str) -> str:
    """The page ``docs/rules/<code>.md`` (generated: ``python scripts/render_rule_docs.py``)."""
    rule = RULES[code]
    return (
        f"# {code}: {rule.name}\n\n"
        "<!-- Generated from the rule's docstring by scripts/render_rule_docs.py: edit the "
        "docstring, then re-run the script. -->\n\n"
        f"{rule.summary}. Fix: {rule.fix_safety}.\n\n{rule_doc(code)}\n"
    )


__all__ = ["DOC_HEADINGS", "RULES", "Rule", "render_markdown", "rule_doc"]
