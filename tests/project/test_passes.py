"""The project run's shortcut is exact: phase 1 gives each file its per-file result, and
re-checking only the files whose questions get new answers gives the same findings as
re-checking every file against the project's facts."""

from __future__ import annotations

from pathlib import Path

import pytest

from shmlint.analysis.engine import check_path
from shmlint.basics.config import Config, find_pyproject, load_config
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence, FileResult
from shmlint.run.files import check_files
from shmlint.run.passes import first_pass
from shmlint.run.runner import check_project
from tests.fixture_markers import FIXTURES

MEDIUM = Config(options=Options(min_confidence=Confidence.MEDIUM))


def _trees() -> list[tuple[Path, Config]]:
    trees = [(FIXTURES, MEDIUM)]
    for case in sorted((FIXTURES / "project").iterdir()):
        trees.append((case, load_config(find_pyproject(case))))
    return trees


def _key(result: FileResult) -> tuple[object, ...]:
    return (result.path, result.findings, result.parsed, result.skipped)


def _compare(paths: list[Path], config: Config) -> list[tuple[str, str]]:
    differences = []
    files = [(p, str(p)) for p in paths]
    for path in paths:
        phase_one = first_pass(path.read_bytes(), str(path), config).result
        per_file = check_path(path, str(path), config)
        if _key(phase_one) != _key(per_file):
            differences.append((str(path), "phase 1 != per-file"))
    facts, shortcut = check_project(files, config, jobs=1, cache=None)
    full = check_files(files, config, jobs=1, cache=None, facts=facts)
    for fast, slow in zip(shortcut, full, strict=True):
        if fast.findings != slow.findings:
            differences.append((fast.path, "shortcut != full phase 2"))
    return differences


@pytest.mark.parametrize("tree,config", _trees(), ids=lambda v: getattr(v, "name", ""))
def test_shortcut_is_exact_on_fixtures(tree: Path, config: Config) -> None:
    assert not _compare(sorted(tree.rglob("*.py")), config)


# Real trees: the ray wheel (nearly every file analysed), and training frameworks that call
# `ray.get` every day (SkyRL keeps its own reader's result: fixtures/project/own_reader).
CORPORA = ["ray==2.60.0", "skyrl==0.3.0", "verl==0.9.1"]


@pytest.mark.slow
@pytest.mark.parametrize("requirement", CORPORA)
def test_shortcut_is_exact_on_real_trees(requirement: str) -> None:
    from benchmarks.corpus import corpus

    root = corpus(requirement)
    assert not _compare(sorted(root.rglob("*.py")), MEDIUM)[:5]


def _lazy_differences(paths: list[Path], config: Config) -> list[str]:
    files = [(p, str(p)) for p in paths]
    lazy_facts, lazy = check_project(files, config, jobs=2, cache=None)
    eager_facts, eager = check_project(files, config, jobs=2, cache=None, lazy=False)
    differences = [a.path for a, b in zip(lazy, eager, strict=True) if a.findings != b.findings]
    # The facts of the modules reached answer like the facts of every module.
    assert lazy_facts.returned_reads == eager_facts.returned_reads
    assert lazy_facts.slot_kinds == eager_facts.slot_kinds
    return differences


@pytest.mark.parametrize("tree,config", _trees(), ids=lambda v: getattr(v, "name", ""))
def test_lazy_parsing_is_exact_on_fixtures(tree: Path, config: Config) -> None:
    assert not _lazy_differences(sorted(tree.rglob("*.py")), config)


@pytest.mark.slow
@pytest.mark.parametrize("requirement", CORPORA)
def test_lazy_parsing_is_exact_on_real_trees(requirement: str) -> None:
    from benchmarks.corpus import corpus

    root = corpus(requirement)
    assert not _lazy_differences(sorted(root.rglob("*.py")), MEDIUM)[:5]
