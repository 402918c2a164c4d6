"""What project functions return, rated once per module and annotation in the merge
(``ClassResolver.return_evidence``): the same facts as rating every function afresh."""

from __future__ import annotations

from shmlint.basics.config import Config
from shmlint.basics.options import Options
from shmlint.facts.classes import ClassResolver
from shmlint.facts.evidence import Evidence, TypeTables
from shmlint.facts.merge import merge
from shmlint.facts.model import ProjectFacts
from shmlint.facts.summary import ClassInfo, FieldInfo, FunctionInfo, ModuleSummary
from shmlint.run.passes import first_pass
from tests.fixture_markers import fixture_sources

TABLES = TypeTables.for_options(Options())


def _module(name: str, field: str, functions: int) -> ModuleSummary:
    """A module defining a record ``Out`` with one field, and functions returning ``Out``."""
    out = ClassInfo(f"{name}.Out", 1, ("NamedTuple",), True, (FieldInfo("x", field, 2),))
    returning = tuple(
        FunctionInfo(f"{name}.f{i}", 3 + i, (), False, returns="Out") for i in range(functions)
    )
    imports = (("np", "numpy"), ("NamedTuple", "typing.NamedTuple"))
    return ModuleSummary(name, f"{name}.py", False, imports, (out,), returning)


def test_one_annotation_is_rated_in_each_module_of_its_own() -> None:
    # `-> Out` names an array record in one module and an array-free one in the other.
    facts = merge([_module("a", "np.ndarray", 3), _module("b", "int", 3)], TABLES)
    assert {facts.returns[f"a.f{i}"].evidence for i in range(3)} == {Evidence.ARRAYS}
    assert {facts.returns[f"b.f{i}"].evidence for i in range(3)} == {Evidence.ARRAY_FREE}
    assert facts.returns["a.f0"].fields == ("x",)


def test_the_memo_gives_what_rating_afresh_gives_on_every_fixture() -> None:
    config = Config()
    summaries = []
    for path in fixture_sources():
        item = first_pass(path.read_bytes(), str(path), config)
        if item.summary is not None:
            summaries.append(item.summary)
    facts = merge(summaries, TABLES)
    fresh = ClassResolver(summaries, ProjectFacts(), TABLES)
    fresh.facts = facts  # every class resolved: rate each function's annotation anew
    rated = 0
    for summary in summaries:
        for function in summary.functions:
            if function.returns:
                found, fields = fresh._return_evidence(summary, function.returns)
                assert facts.returns[function.name].evidence is found, function.name
                assert facts.returns[function.name].fields == fields, function.name
                rated += 1
    assert rated > 100


def test_a_rating_inside_a_class_resolution_is_not_kept() -> None:
    resolver = ClassResolver([_module("a", "np.ndarray", 1)], ProjectFacts(), TABLES)
    summary = _module("a", "np.ndarray", 1)
    resolver.in_progress.add("a.Out")  # a cycle through Out: unknown for now
    assert resolver.return_evidence(summary, "Out")[0] is Evidence.UNKNOWN
    resolver.in_progress.clear()
    assert resolver.return_evidence(summary, "Out")[0] is Evidence.ARRAYS
