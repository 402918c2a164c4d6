"""``--fix`` on generated modules (the Ray-shaped templates of the generated projects), in
both helper styles: the output parses, a second fix changes nothing, and no finding it fixed
is left — only the findings it had no fix for remain."""

from __future__ import annotations

import ast
import dataclasses

import pytest
from hypothesis import given

from shmlint.analysis.engine import check_bytes
from shmlint.basics.config import Config
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence, Finding
from shmlint.fixer import apply_fixes, fixable_findings
from tests.project.test_generated_projects import _HEADER, _module, budget

WRAP = Config(options=Options(min_confidence=Confidence.MEDIUM))
IN_PLACE = dataclasses.replace(
    WRAP, helper="pkg.helpers:detach_zero_copy_from_model_runner_output", helper_style="in-place"
)


def _key(finding: Finding) -> tuple[str, str, int]:
    """A finding, by what stays when lines move: its code, message and source column."""
    return (finding.code, finding.message.split(" at line ")[0], finding.source_col)


def _fixed(data: bytes, config: Config) -> tuple[bytes, list[Finding], list[Finding]]:
    found = check_bytes(data, "generated.py", config).findings
    fixable = fixable_findings(found, unsafe=True)
    outcome = apply_fixes(data, fixable, config)
    assert outcome.error is None, outcome.error
    kept = [f for f in found if f not in fixable]
    return outcome.source, fixable, kept


@pytest.mark.parametrize("config", [WRAP, IN_PLACE], ids=["wrap", "in-place"])
@budget(60)
@given(body=_module(0))
def test_fixing_generated_modules_converges(config: Config, body: str) -> None:
    source = (_HEADER.format(imports="") + body + "\n").encode()
    fixed, applied, unfixable = _fixed(source, config)
    ast.parse(fixed)  # parses
    again, reapplied, _ = _fixed(fixed, config)
    assert not reapplied and again == fixed  # idempotent
    left = check_bytes(fixed, "generated.py", config).findings
    assert sorted(map(_key, left)) == sorted(map(_key, unfixable)), (applied, left)
