"""Rule docs: fixed headings, examples that trigger, fixes that do not, pages not stale."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shmlint.analysis.engine import check_text
from shmlint.analysis.rules import DOC_HEADINGS, RULES, render_markdown, rule_doc
from shmlint.basics.config import Config
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence
from shmlint.cli import main

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules"
MEDIUM = Config(options=Options(min_confidence=Confidence.MEDIUM))


def _block(doc: str, heading: str) -> str:
    match = re.search(rf"## {re.escape(heading)}\n```python\n(.*?)```", doc, re.S)
    assert match, f"no python block under {heading!r}"
    return match.group(1)


@pytest.mark.parametrize("code", list(RULES))
def test_headings_in_order(code: str) -> None:
    headings = re.findall(r"^## (.+)$", rule_doc(code), re.M)
    assert tuple(headings) == DOC_HEADINGS


@pytest.mark.parametrize("code", list(RULES))
def test_example_triggers_and_use_instead_does_not(code: str) -> None:
    doc = rule_doc(code)
    example = check_text(_block(doc, "Example"), "example.py", MEDIUM, prefilter=False)
    assert code in {f.code for f in example.findings}
    fixed = check_text(_block(doc, "Use instead"), "fixed.py", MEDIUM, prefilter=False)
    assert fixed.findings == ()


@pytest.mark.parametrize("code", list(RULES))
def test_generated_page_is_current(code: str) -> None:
    page = DOCS / f"{code}.md"
    assert page.read_text(encoding="utf-8") == render_markdown(code), (
        "stale: run python scripts/render_rule_docs.py"
    )


def test_explain_prints_the_doc(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "SHM103"]) == 0
    assert rule_doc("SHM103") in capsys.readouterr().out


def test_every_rule_is_reported_by_exactly_one_registered_check() -> None:
    from shmlint.analysis.rules import CHECKS

    codes = [code for _, family in CHECKS for code in family]
    assert len(codes) == len(set(codes))
    assert set(codes) | {"SHM001"} == set(RULES)


def test_explain_confidence_documents_the_order_and_its_page_is_fresh(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from shmlint.analysis.rules import confidence

    assert main(["explain", "confidence"]) == 0
    text = capsys.readouterr().out
    order = ["own annotation", "payload of the read", "sink's declared type"]
    assert all(part in text for part in order)
    assert [text.index(part) for part in order] == sorted(text.index(part) for part in order)
    page = Path(__file__).resolve().parents[2] / "docs" / "rules" / "confidence.md"
    assert page.read_text(encoding="utf-8") == confidence.render_markdown(), (
        "stale: run python scripts/render_rule_docs.py"
    )
