"""Every fixture's ``--fix`` output: exact, parses, idempotent, clean, and keeps every byte it
does not need to touch."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import pytest

from shmlint.analysis.engine import check_bytes
from tests.fix_harness import fix_bytes, fix_fixtures, fixed_path, fixture_config
from tests.fixture_markers import expected_reports, markers


def _comments(source: bytes) -> list[str]:
    tokens = tokenize.tokenize(io.BytesIO(source).readline)
    return [token.string for token in tokens if token.type == tokenize.COMMENT]


@pytest.mark.parametrize("path", fix_fixtures(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fix_output_matches_the_fixed_file(path: Path) -> None:
    config = fixture_config(path)
    original = path.read_bytes()
    fixed, applied = fix_bytes(original, str(path), config)
    assert applied, "the fixture has fixable findings"
    assert fixed == fixed_path(path).read_bytes()
    ast.parse(fixed)  # parses
    again, reapplied = fix_bytes(fixed, str(path), config)
    assert not reapplied and again == fixed  # idempotent
    assert check_bytes(fixed, str(path), config).findings == ()  # nothing it fixed is left
    assert _comments(original) == _comments(fixed)  # every comment, in order
    # Untouched lines are kept byte for byte: only lines holding a read may change.
    # (and an existing import of the helper's module, which the new import merges into).
    read_lines = {f.source_line for f in applied} | {f.source_end_line for f in applied}
    helper_import = f"from {config.helper.partition(':')[0]} import ".encode()
    fixed_lines = set(fixed.splitlines())
    for number, line in enumerate(original.splitlines(), start=1):
        if number not in read_lines and not line.startswith(helper_import):
            assert line in fixed_lines, f"line {number} was changed: {line!r}"


def test_the_vllm_fixture_comes_out_in_vllms_own_shape() -> None:
    fixed = fixed_path(Path(__file__).resolve().parents[2] / "fixtures/inplace/ray_executor.py")
    text = fixed.read_text(encoding="utf-8")
    assert (
        "                output = refs[0].get()\n"
        "                detach_zero_copy_from_model_runner_output(output)\n"
        "                return output\n"
    ) in text
    assert (
        "            outputs = ray.get(refs)\n"
        "            for output in outputs:\n"
        "                detach_zero_copy_from_model_runner_output(output)\n"
        "            return self.kv_output_aggregator.aggregate(outputs)\n"
    ) in text
    assert (
        text.count(
            "from vllm.v1.executor.ray_utils import detach_zero_copy_from_model_runner_output"
        )
        == 1
    )


@pytest.mark.parametrize(
    "path",
    [p for p in fix_fixtures() if p.parent.name == "inplace" and any(markers(p).values())],
    ids=lambda p: p.name,
)
def test_inplace_fixtures_report_exactly_their_markers(path: Path) -> None:
    """(vLLM's executor copy carries none: its exact lines are the point of its fixed file.)"""
    config = fixture_config(path)
    found = check_bytes(path.read_bytes(), str(path), config).findings
    reported = {(f.line, f.code, f.confidence.value) for f in found}
    assert reported == expected_reports(path)
