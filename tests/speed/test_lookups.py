"""Facts rebuilt from one file's logged lookups answer that file's analysis exactly as the
whole facts do, and load the whole facts only for a lookup the log lacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shmlint.analysis.engine import check_bytes
from shmlint.basics.config import Config, find_pyproject, load_config
from shmlint.facts.lookups import (
    FactsUnavailable,
    answers_same,
    loaded,
    replayed,
    shared_json,
    watched,
)
from shmlint.facts.model import ProjectFacts
from shmlint.run.discovery import iter_python_files
from shmlint.run.merging import with_external
from shmlint.run.runner import check_project

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "project"
CASES = sorted(path for path in ROOT.iterdir() if path.is_dir())


def _project(case: Path) -> tuple[Config, list[tuple[Path, str]], ProjectFacts]:
    config = load_config(find_pyproject(case))
    files = list(iter_python_files([str(case)], config))
    facts, _ = check_project(files, config, jobs=1, cache=None)
    return config, files, facts


def _log(facts: ProjectFacts, data: bytes, display: str, config: Config) -> dict[str, object]:
    with watched(facts) as log:
        check_bytes(data, display, config, facts=facts)
    assert log.complete
    # Through JSON, as the cache keeps it.
    return json.loads(json.dumps(log.to_json()))  # type: ignore[no-any-return]


def _shared(facts: ProjectFacts) -> dict[str, object]:
    return json.loads(json.dumps(shared_json(facts)))  # type: ignore[no-any-return]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_replay_of_a_files_lookups_finds_what_the_facts_find(case: Path) -> None:
    config, files, facts = _project(case)
    for path, display in files:
        data = path.read_bytes()
        expected = check_bytes(data, display, config, facts=facts)
        # (Installed classes looked up on demand, as the warm run's replays do.)
        log = _log(facts, data, display, config)
        replay = with_external(replayed(log, _shared(facts), lambda: None), config)
        assert check_bytes(data, display, config, facts=replay) == expected, display
        assert not loaded(replay)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_another_files_analysis_loads_the_whole_facts_and_finds_the_same(case: Path) -> None:
    config, files, facts = _project(case)
    logs = {display: _log(facts, path.read_bytes(), display, config) for path, display in files}
    empty = next(iter(logs.values()))
    loads: list[int] = []

    def load() -> ProjectFacts:
        loads.append(1)
        return facts

    for path, display in files:
        data = path.read_bytes()
        # Each file against the lookups of the first file (mostly not its own).
        replay = with_external(replayed(empty, _shared(facts), load), config)
        assert check_bytes(data, display, config, facts=replay) == check_bytes(
            data, display, config, facts=facts
        ), display
    assert len(loads) <= len(files)


def test_a_lookup_the_log_lacks_with_no_facts_to_load_raises() -> None:
    config, files, facts = _project(ROOT / "payloads")
    path, display = next((p, d) for p, d in files if d.endswith("trainer.py"))
    log = _log(facts, path.read_bytes(), display, config)
    replay = replayed(log, _shared(facts), lambda: None)
    with pytest.raises(FactsUnavailable):
        replay.class_named("pkg.not_looked_up.Anything")


def test_a_table_walked_whole_spoils_the_log() -> None:
    facts = ProjectFacts(classes={}, functions={"m.f"})
    with watched(facts) as log:
        assert "m.f" in facts.functions
        assert facts.canonical("m.f") == "m.f"
    assert log.complete
    with watched(facts) as log:
        list(facts.functions)
    assert not log.complete
    assert facts.functions == {"m.f"}  # the tables are put back


def test_the_log_keeps_what_was_absent() -> None:
    facts = ProjectFacts(functions={"m.f"})
    with watched(facts) as log:
        assert facts.function_payload("m.g") is None
    replay = replayed(json.loads(json.dumps(log.to_json())), _shared(facts), lambda: None)
    assert replay.function_payload("m.g") is None  # answered without loading
    assert not loaded(replay)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_log_is_answered_the_same_by_its_own_facts(case: Path) -> None:
    config, files, facts = _project(case)
    for path, display in files:
        assert answers_same(_log(facts, path.read_bytes(), display, config), facts), display


def test_a_log_is_not_answered_the_same_by_changed_facts() -> None:
    config, files, facts = _project(ROOT / "payloads")
    path, display = next((p, d) for p, d in files if d.endswith("trainer.py"))
    log = _log(facts, path.read_bytes(), display, config)
    looked_up = [table for table, entries in log["tables"].items() if entries]  # type: ignore[union-attr]
    assert "_canonical" in looked_up
    name = next(iter(log["tables"]["_canonical"]))  # type: ignore[index]
    facts.aliases[name] = "somewhere.else"
    facts._canonical.clear()
    assert not answers_same(log, facts)


def test_replayed_facts_can_be_watched_again() -> None:
    """A warm run re-checks an edited file against replayed facts with its lookups watched
    (its new log): a set table's member the old log lacks is looked up in the whole facts,
    and logged as a member, as the whole facts' would be."""
    facts = ProjectFacts(functions={"m.f", "m.g"}, remote={"m.g"})
    with watched(facts) as log:
        assert facts.is_project_callable("m.f")
    replay = replayed(json.loads(json.dumps(log.to_json())), _shared(facts), lambda: facts)
    with watched(replay) as again:
        assert replay.is_project_callable("m.g")  # not in the first log: loaded
        assert replay.is_remote("m.g")
        assert not replay.is_project_callable("m.h")
    assert loaded(replay)
    assert answers_same(json.loads(json.dumps(again.to_json())), facts)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_relined_facts_answer_a_log_otherwise_when_it_names_a_relined_class(case: Path) -> None:
    """What a run that relines the facts decides a kept result by (``check_files``'
    ``differing``): a log is answered the same unless it names a class or a reader whose
    fact relining changed. Each module's carried lines moved down one in turn."""
    from shmlint.facts.moved import relined

    config, files, facts = _project(case)
    logs = [_log(facts, path.read_bytes(), display, config) for path, display in files]
    paths = {fact.path for fact in facts.classes.values()} | {
        chain.path for chain in facts.returned_reads.values()
    }
    changed = 0
    for path in sorted(paths):
        lines = {fact.line for fact in facts.classes.values() if fact.path == path}
        lines |= {f.line for c in facts.classes.values() for f in c.fields if f.path == path}
        lines |= {r.line for r in facts.returned_reads.values() if r.path == path}
        moved = relined(facts, {path: {line: line + 1 for line in lines}})
        assert moved is not None
        moved._canonical.clear()
        differing = {
            "classes": {n for n, f in moved.classes.items() if f is not facts.classes.get(n)},
            "returned_reads": {
                n for n, r in moved.returned_reads.items() if r is not facts.returned_reads.get(n)
            },
        }
        for log in logs:
            tables = log["tables"]
            named = any(not keys.isdisjoint(tables[t]) for t, keys in differing.items())  # type: ignore[index]
            assert answers_same(log, moved) is not named
            changed += named
    assert changed or case.name != "payloads"  # (the test saw logs it changed)
