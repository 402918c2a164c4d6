"""Handle kinds propagated over the recorded flows by a worklist: the least fixpoint, as
evaluating every edge in rounds until nothing changes gives it."""

from __future__ import annotations

from pathlib import Path

import pytest

from shmlint.basics.config import Config, find_pyproject, load_config
from shmlint.basics.options import Options
from shmlint.facts.evidence import TypeTables
from shmlint.facts.flow import _parameter_slot, propagate_kinds
from shmlint.facts.merge import merge
from shmlint.facts.model import ProjectFacts
from shmlint.facts.summary import CallFlow, Flow, FunctionInfo, ModuleSummary
from shmlint.run.passes import first_pass
from tests.fixture_markers import FIXTURES


def _rounds(summaries: list[ModuleSummary], facts: ProjectFacts) -> dict[str, frozenset[str]]:
    """The reference: every edge evaluated in order, round after round, to convergence."""
    params_of = {f.name: f.params for s in summaries for f in s.functions}
    edges = [(f.target, frozenset(f.kinds), f.origins) for s in summaries for f in s.flows]
    for summary in summaries:
        for call in summary.calls:
            slot = _parameter_slot(facts, params_of, call.callee, call.arg, call.bound)
            if slot is not None:
                edges.append((slot, frozenset(call.kinds), call.origins))
    kinds: dict[str, frozenset[str]] = {}
    changed = True
    while changed:
        changed = False
        for target, own, origins in edges:
            new = set(own)
            for origin in origins:
                if origin.startswith("ret:"):
                    origin = "ret:" + facts.canonical(origin[4:])
                new |= kinds.get(origin, frozenset())
            old = kinds.get(target, frozenset())
            if not new <= old:
                kinds[target] = old | new
                changed = True
    return kinds


def _again(summaries: list[ModuleSummary], facts: ProjectFacts) -> dict[str, frozenset[str]]:
    facts.slot_kinds = {}
    propagate_kinds(summaries, facts)
    return facts.slot_kinds


def _summary(module: str, flows: list[Flow], calls: tuple[CallFlow, ...] = ()) -> ModuleSummary:
    functions = tuple(
        FunctionInfo(name=f"{module}.{name}", line=1, params=params, method=False)
        for name, params in (("f", ("x",)), ("g", ("y",)), ("h", ("z",)))
    )
    return ModuleSummary(
        module=module,
        path=f"{module}.py",
        is_package=False,
        imports=(("alias_of_h", "m.h"),),
        classes=(),
        functions=functions,
        flows=tuple(flows),
        calls=calls,
    )


def test_a_chain_written_backwards_reaches_its_end() -> None:
    """Each edge reads the slot the next one writes: one round per link for the rounds, one
    pass of the worklist; a `ret:` origin named by an alias reads its function's slot."""
    flows = [
        Flow("attr:m.C.out", (), ("param:m.f.x",)),
        Flow("param:m.f.x", (), ("ret:m.alias_of_h",)),
        Flow("ret:m.h", (), ("param:m.g.y",)),
        Flow("param:m.g.y", ("ref",), ()),
    ]
    # `g(y)` is called with a ref: the call's edge starts it all.
    calls = (CallFlow("m.g", "0", ("ref",), (), False),)
    flows[-1] = Flow("param:m.g.y", (), ())
    summaries = [_summary("m", flows, calls)]
    facts = merge(summaries, _tables())
    assert facts.slot_kinds["attr:m.C.out"] == frozenset({"ref"})
    assert facts.slot_kinds == _rounds(summaries, facts)


def _tables() -> TypeTables:
    return TypeTables.for_options(Options())


def _trees() -> list[tuple[Path, Config]]:
    return [
        (case, load_config(find_pyproject(case)))
        for case in sorted((FIXTURES / "project").iterdir())
    ]


@pytest.mark.parametrize("tree,config", _trees(), ids=lambda v: getattr(v, "name", ""))
def test_the_worklist_gives_the_fixpoint_of_rounds_on_the_project_fixtures(
    tree: Path, config: Config
) -> None:
    paths = sorted(tree.rglob("*.py"))
    summaries = [
        s
        for s in (first_pass(p.read_bytes(), str(p), config).summary for p in paths)
        if s is not None
    ]
    facts = merge(summaries, _tables())
    assert _again(summaries, facts) == _rounds(summaries, facts)


@pytest.mark.slow
def test_the_worklist_gives_the_fixpoint_of_rounds_on_the_ray_tree() -> None:
    from benchmarks.corpus import corpus

    root = corpus("ray==2.60.0")
    paths = sorted(root.rglob("*.py"))
    summaries = [
        s
        for s in (first_pass(p.read_bytes(), str(p), Config()).summary for p in paths)
        if s is not None
    ]
    facts = merge(summaries, _tables())
    assert facts.slot_kinds  # the tree has handles in many slots
    assert _again(summaries, facts) == _rounds(summaries, facts)
