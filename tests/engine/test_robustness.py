"""The engine never raises: generated programs, mutated fixtures, and a real corpus."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shmlint.analysis.dataflow import analyze_module
from shmlint.analysis.engine import check_bytes, check_text
from shmlint.basics.config import Config
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence
from tests.fixture_markers import fixture_files

MEDIUM = Config(options=Options(min_confidence=Confidence.MEDIUM, ref_name_pattern=r"refs?"))
ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles what it generates
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_engine_never_raises_on_generated_programs(source: str) -> None:
    # Prefix a Ray import so the prefilter never skips the program.
    result = check_text("import ray\n" + source, "generated.py", MEDIUM, prefilter=False)
    assert all(f.code.startswith("SHM") for f in result.findings)


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node())
def test_dataflow_never_raises_on_generated_trees(source: str) -> None:
    analyze_module(ast.parse(source), MEDIUM.options, source)


_FIXTURE_SOURCES = [p.read_text(encoding="utf-8") for p in fixture_files()]


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(_FIXTURE_SOURCES), st.data())
def test_engine_never_raises_on_truncated_or_spliced_fixtures(
    source: str, data: st.DataObject
) -> None:
    lines = source.splitlines(keepends=True)
    start = data.draw(st.integers(0, len(lines)))
    stop = data.draw(st.integers(start, len(lines)))
    check_text("".join(lines[start:stop]), "cut.py", MEDIUM)


@settings(max_examples=50, deadline=None)
@given(st.binary(max_size=400))
def test_engine_never_raises_on_arbitrary_bytes(data: bytes) -> None:
    result = check_bytes(b"import ray\n" + data, "bytes.py", MEDIUM)
    assert all(f.code.startswith("SHM") for f in result.findings)


def test_deep_nesting_is_a_finding_not_a_crash() -> None:
    source = "import ray\nx = " + "(" * 5000 + "1" + ")" * 5000 + "\n"
    result = check_text(source, "deep.py", MEDIUM)
    assert [f.code for f in result.findings] in ([], ["SHM001"])


def test_a_long_chain_of_terms_is_analysed() -> None:
    """Generated code concatenates hundreds of strings: CPython parses 600 terms, so the file's
    findings are reported (its analysis once recursed a level per term: SHM001)."""
    source = (
        "import numpy as np\nimport ray\n\nMSG = "
        + " + ".join(['"s"'] * 600)
        + "\n\n\ndef f(ref) -> np.ndarray:\n    return ray.get(ref)\n"
    )
    result = check_text(source, "long.py", MEDIUM)
    assert [(f.code, f.line) for f in result.findings] == [("SHM101", 8)]


@pytest.mark.slow
def test_ray_wheel_corpus_has_no_crash() -> None:
    """Every .py file of the ray 2.60 wheel (downloaded once into .corpus/)."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run_corpus.py"), "ray==2.60.0", "--show", "0"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "crashes: 0" in proc.stdout
