"""Multi-module fixture packages (fixtures/project/<case>/): the exact findings of a
project-wide run, compared with the markers in every file of the case."""

from __future__ import annotations

from pathlib import Path

import pytest

from shmlint.basics.config import find_pyproject, load_config
from shmlint.run.discovery import iter_python_files
from shmlint.run.files import check_files
from shmlint.run.runner import check_project
from tests.fixture_markers import FIXTURES, expects_nothing, markers

CASES = sorted(p for p in (FIXTURES / "project").iterdir() if p.is_dir())

Reported = set[tuple[str, int, str, str]]


def _run(case: Path, *, project: bool) -> Reported:
    config = load_config(find_pyproject(case))
    files = list(iter_python_files([str(case)], config))
    if project:
        _, results = check_project(files, config, jobs=1, cache=None)
    else:
        results = check_files(files, config, jobs=1, cache=None)
    return {
        (Path(f.path).relative_to(case).as_posix(), f.line, f.code, f.confidence.value)
        for r in results
        for f in r.findings
    }


def _expected(case: Path, kind: str) -> Reported:
    found: Reported = set()
    for path in sorted(case.rglob("*.py")):
        relative = path.relative_to(case).as_posix()
        for line, code, confidence in markers(path)[kind]:
            found.add((relative, line, code, confidence))
    return found


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_reports_exactly_its_markers(case: Path) -> None:
    reported = _run(case, project=True)
    expected = _expected(case, "error") | _expected(case, "todo-ok")
    assert expected or expects_nothing(sorted(case.rglob("*.py"))), "an emptied case must fail"
    assert reported == expected


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_ok_markers_are_not_reported(case: Path) -> None:
    reported = {(p, line, code) for p, line, code, _ in _run(case, project=True)}
    assert not {(p, line, code) for p, line, code, _ in _expected(case, "ok")} & reported


def test_cross_module_findings_need_the_project_phase() -> None:
    """Per file, the wrapper's read is only an object-store read (medium), and the call-site
    sources do not exist: the project phase is what makes them."""
    case = FIXTURES / "project" / "wrapper"
    per_file = _run(case, project=False)
    project = _run(case, project=True)
    assert ("pkg/futures.py", 14, "SHM101", "medium") in per_file
    assert ("pkg/futures.py", 14, "SHM101", "high") in project
    assert ("pkg/executor.py", 16, "SHM102", "high") not in per_file
    assert ("pkg/executor.py", 16, "SHM102", "high") in project
