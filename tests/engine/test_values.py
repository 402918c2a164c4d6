"""The dataflow's value algebra: shortcuts on the hot path give what the long way gives."""

from __future__ import annotations

from shmlint.analysis.dataflow.values import EMPTY, Value, union
from shmlint.facts.evidence import Evidence
from shmlint.facts.kinds import UNKNOWN

FREE_REF = Value(kinds=frozenset({"payload:free:declared `-> str`"}))


def test_an_empty_part_still_joins_a_union() -> None:
    # `f(name, handle.m.remote())`: a part with no producer beside a ref whose producer is
    # known reads something unknown, whether the empty part is EMPTY itself or equal to it.
    for empty in (EMPTY, Value()):
        assert UNKNOWN in union([empty, FREE_REF]).kinds
        assert UNKNOWN in union([FREE_REF, empty]).kinds
    assert union([FREE_REF]).kinds == FREE_REF.kinds
    assert union([]) is EMPTY


def test_derived_is_what_it_would_build() -> None:
    values = [
        EMPTY,
        FREE_REF,
        Value(direct=True),
        Value(evidence=Evidence.ARRAYS, why="annotated"),
        Value(evidence=Evidence.ARRAY_FREE, why="annotated"),
        Value(why="stale"),
        Value(model_output=True, evidence=Evidence.ARRAYS),
    ]
    for value in values:
        for view in (False, True):
            kept = view and value.evidence is Evidence.ARRAYS
            built = Value(
                value.labels,
                value.kinds,
                False,
                value.closure,
                Evidence.ARRAYS if kept else Evidence.UNKNOWN,
                value.entries,
                value.origins,
                value.why if kept else "",
            )
            assert value.derived(view=view) == built
