"""Phase 1 counts a question only when its answer is used: a sink's declared type is asked
about once a read reaches the sink (``ProjectView.names_only``); until then the merge only
follows the names it looks up, so the facts are the same and the file is not sent to phase 2
for an answer that could not change its findings (fixtures/project/sink_types)."""

from __future__ import annotations

import ast

from shmlint.basics.config import find_pyproject, load_config
from shmlint.basics.names import Scope
from shmlint.facts.model import ProjectFacts
from shmlint.facts.view import ProjectView
from shmlint.run.discovery import iter_python_files
from shmlint.run.files import check_files
from shmlint.run.passes import first_pass
from shmlint.run.runner import check_project
from tests.fixture_markers import FIXTURES

CASE = FIXTURES / "project" / "sink_types"
CONFIG = load_config(find_pyproject(CASE))


def _questions(name: str) -> dict[str, str]:
    path = CASE / "pkg" / name
    return dict(first_pass(path.read_bytes(), str(path), CONFIG).questions)


def test_a_sink_type_is_asked_only_once_a_read_reaches_the_sink() -> None:
    asked = _questions("keeper.py")
    assert "c:pkg.records.Batch" in asked  # `self.latest = ray.get(ref)`
    assert "c:pkg.records.Summary" not in asked  # `return self.total`: no read kept
    assert "c:pkg.records.Summary" in _questions("fetch.py")  # `return ray.get(ref)`
    assert "c:pkg.records.Tally" not in asked  # `return Tally(len(ray.get(ref)))`: no read kept
    assert asked["n:pkg.records.Tally"] == ""  # a name the merge follows, no answer


def test_an_unused_sink_type_sends_no_file_to_phase_two() -> None:
    files = list(iter_python_files([str(CASE)], CONFIG))
    facts, results = check_project(files, CONFIG, jobs=1, cache=None)
    assert "pkg.records.Tally" in facts.classes  # the merge rated it as before
    path = CASE / "pkg" / "counts.py"
    data = path.read_bytes()
    item = first_pass(data, str(path), CONFIG, lazy=True)
    assert not item.needs_second_pass(facts, data)
    # ... and its phase-1 result is its project result.
    (again,) = check_files([(path, str(path))], CONFIG, jobs=1, cache=None, facts=facts)
    assert again.findings == item.result.findings
    keeper = CASE / "pkg" / "keeper.py"
    item = first_pass(keeper.read_bytes(), str(keeper), CONFIG, lazy=True)
    assert item.needs_second_pass(facts, keeper.read_bytes())  # Batch's answer is used


def test_names_only_records_names_and_asked_records_the_questions() -> None:
    deps: set[str] = set()
    view = ProjectView(ProjectFacts(), "m", False, deps=deps)
    with view.names_only() as aside:
        view.kinds("param:m.f.x")
    assert aside == {"k:param:m.f.x"}
    assert deps == {"k:param:m.f.x"}  # only class questions become names
    deps.clear()
    with view.names_only() as aside:
        tree = ast.parse("from pkg import C\n")
        leaf = ast.parse("C", mode="eval").body
        view.class_fact(leaf, Scope(tree, None))
    assert aside == {"c:pkg.C"}
    assert deps == {"n:pkg.C"}
    view.asked(aside)
    assert deps == {"n:pkg.C", "c:pkg.C"}
