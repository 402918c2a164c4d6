"""The facts pre-pass repeats a round only when the round read a fact that grew after the read
(shmlint/analysis/dataflow/__init__.py): the same findings as repeating on any growth."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

import shmlint.analysis.dataflow as dataflow
from shmlint.analysis.dataflow import analyze_module
from shmlint.analysis.dataflow import function as function_module
from shmlint.analysis.dataflow.context import Facts
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence

ROOT = Path(__file__).resolve().parents[2]

WRITE_THEN_READ = """\
import ray


class Engine:
    def __init__(self, dag):
        self.compiled = dag.experimental_compile()

    def step(self, x):
        out = self.compiled.execute(x).get()
        return out
"""

# `step` reads `Engine.compiled` before `__init__` (below it) records its kind: a second round.
READ_THEN_WRITE = """\
import ray


class Engine:
    def step(self, x):
        out = self.compiled.execute(x).get()
        return out

    def __init__(self, dag):
        self.compiled = dag.experimental_compile()
"""

# A chain read backwards: `step` needs `ref`, which `launch` makes from `compiled`, which
# `__init__` (last) makes. Only a third round reads what `step` needs, before reporting.
CHAIN = """\
class Engine:
    def step(self):
        out = self.ref.get()
        return out

    def launch(self, x):
        self.ref = self.compiled.execute(x)

    def __init__(self, dag):
        self.compiled = dag.experimental_compile()
"""


def _every_growth_is_stale(
    self: Facts, table: dict[str, frozenset[str]], key: str, kinds: frozenset[str]
) -> bool:
    """The rule before: another round whenever a table grew."""
    old = table.get(key, frozenset())
    if kinds <= old:
        return False
    table[key] = old | kinds
    self.stale = True
    return True


def _run(text: str) -> tuple[list[tuple[str, int]], int]:
    """Findings (code, line) and how many times the module body was analysed."""
    runs = 0
    real = function_module.FunctionAnalysis.run

    def counted(self: function_module.FunctionAnalysis) -> object:
        nonlocal runs
        runs += isinstance(self.node, ast.Module)
        return real(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(function_module.FunctionAnalysis, "run", counted)
        found = analyze_module(ast.parse(text), Options(), text)
    return [(f.code, f.site.line) for f in found], runs


def test_a_round_that_read_nothing_stale_is_not_repeated() -> None:
    found, runs = _run(WRITE_THEN_READ)
    assert found == [("SHM101", 10)]
    assert runs == 1  # one pre-pass round, which read the final facts: it is the reporting pass


def test_a_fact_read_before_it_grew_repeats_the_round() -> None:
    found, runs = _run(READ_THEN_WRITE)
    assert found == [("SHM101", 7)]
    assert runs == 2


def test_a_chain_read_backwards_takes_every_round() -> None:
    found, runs = _run(CHAIN)
    assert found == [("SHM101", 4)]
    assert runs == 3  # three rounds (the last finds nothing stale, and reports)


def _sources() -> list[Path]:
    return sorted((ROOT / "fixtures").rglob("*.py")) + sorted((ROOT / "examples").rglob("*.py"))


def test_the_findings_are_those_of_repeating_on_any_growth(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sources = _sources()
    assert len(sources) > 20
    texts = [path.read_text(encoding="utf-8") for path in sources]
    now = [_run(text) for text in texts]
    monkeypatch.setattr(Facts, "merge_kinds", _every_growth_is_stale)
    before = [_run(text) for text in texts]
    for path, (found, runs), (expected, more) in zip(sources, now, before):
        assert found == expected, path
        assert runs <= more, path
    assert sum(runs for _, runs in now) < sum(runs for _, runs in before)


def _raw(text: str) -> list[object]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    found = analyze_module(tree, Options(min_confidence=Confidence.MEDIUM), text)
    # (A label's key is its node's identity: another parse, another key.)
    return [dataclasses.replace(f, label=dataclasses.replace(f.label, key=0)) for f in found]


def test_the_last_round_reports_what_a_reporting_pass_of_its_own_reports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A round that read only final facts is the reporting pass: the same raw findings
    (messages, payloads, labels) as analysing the module once more, on every fixture."""
    texts = [path.read_text(encoding="utf-8") for path in _sources()]
    fused = [_raw(text) for text in texts]
    monkeypatch.setattr(dataflow, "_FUSE_LAST_ROUND", False)
    apart = [_raw(text) for text in texts]
    assert fused == apart
    assert sum(map(len, fused)) > 100


# One link longer than the rounds: the third round still reads a fact that grows after it.
LONGER_CHAIN = """\
class Engine:
    def step(self):
        out = self.ref.get()
        return out

    def launch(self, x):
        self.ref = self.compiled.execute(x)

    def build(self):
        self.compiled = self.graph

    def __init__(self, dag):
        self.graph = dag.experimental_compile()
"""


def test_a_stale_last_round_still_gets_a_reporting_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three rounds, the third still stale: its findings are dropped and the reporting pass
    runs on the facts as they are (it sees what the third round recorded)."""
    found, runs = _run(LONGER_CHAIN)
    assert (found, runs) == ([("SHM101", 4)], 4)
    monkeypatch.setattr(dataflow, "_FUSE_LAST_ROUND", False)
    assert _run(LONGER_CHAIN) == (found, runs)


@pytest.mark.slow
def test_the_last_round_reports_as_a_pass_of_its_own_on_the_ray_tree(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from benchmarks.corpus import corpus

    texts = [p.read_text("utf-8", "replace") for p in sorted(corpus("ray==2.60.0").rglob("*.py"))]
    fused = [_raw(text) for text in texts]
    monkeypatch.setattr(dataflow, "_FUSE_LAST_ROUND", False)
    assert [_raw(text) for text in texts] == fused
