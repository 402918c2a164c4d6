"""The rule registry: one :class:`Rule` per code, its docs in its docstring.

Rules do not detect anything themselves: a check (:mod:`shmlint.analysis.checks`) reports
findings with a code, and a rule supplies that code's name, message and documentation
(``shmlint explain``). :data:`CHECKS` registers each check with the codes it reports: the
engine runs every registered check, the same way.
"""

from __future__ import annotations

import inspect

from shmlint.analysis.checks import (
    Check,
    find_in_place_results,
    find_incomplete_helpers,
    find_retentions,
)
from shmlint.analysis.rules.base import Rule
from shmlint.analysis.rules.helpers import IncompleteDetachHelper
from shmlint.analysis.rules.inplace import InPlaceHelperResult
from shmlint.analysis.rules.parse import ParseError
from shmlint.analysis.rules.retention import (
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
        InPlaceHelperResult,
        IncompleteDetachHelper,
    )
}

# Every check the engine runs, with the codes it reports (SHM001 comes from the engine itself,
# for a file it cannot read or parse).
CHECKS: tuple[tuple[Check, frozenset[str]], ...] = (
    (find_retentions, frozenset({f"SHM10{n}" for n in range(1, 8)})),
    (find_in_place_results, frozenset({"SHM201"})),
    (find_incomplete_helpers, frozenset({"SHM301"})),
)


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


__all__ = ["CHECKS", "DOC_HEADINGS", "RULES", "Rule", "render_markdown", "rule_doc"]
