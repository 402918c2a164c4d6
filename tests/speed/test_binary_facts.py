"""The facts' binary cache form (shmlint/facts/binary.py) gives back the facts it stored."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from shmlint.basics.config import Config
from shmlint.facts import binary
from shmlint.facts.evidence import Evidence
from shmlint.facts.index import FactsIndex
from shmlint.facts.model import ProjectFacts
from shmlint.facts.packed import encode_tables, pack, tables_digest
from shmlint.facts.records import ReturnFact
from shmlint.run.cache import FACTS_SUFFIX, Cache
from shmlint.run.runner import check_project
from tests.project.merged import PROJECT_TREES, merged_facts
from tests.speed.test_incremental import _reads_tree


def _same(loaded: ProjectFacts | None, facts: ProjectFacts) -> None:
    assert loaded is not None
    assert loaded == facts  # every table (not the memos)
    # In the order their JSON gives them (call_evidence reads returned_reads in table order).
    expected = ProjectFacts.from_json(facts.to_json())
    for table in ("modules", "aliases", "classes", "returned_reads", "returns", "actor_methods"):
        assert list(getattr(loaded, table).items()) == list(getattr(expected, table).items())
    assert loaded.digest() == facts.digest()
    assert loaded.index == facts.index


@pytest.mark.parametrize("tree", PROJECT_TREES, ids=lambda tree: tree.name)
def test_every_fixture_tree_s_facts_come_back_equal(tree: Path) -> None:
    facts = merged_facts(tree, Config(root=tree))
    assert facts.index is not None
    _same(binary.loads(binary.dumps("key", facts), "key"), facts)


def test_facts_without_an_index_and_empty_facts_come_back() -> None:
    _same(binary.loads(binary.dumps("k", ProjectFacts()), "k"), ProjectFacts())
    facts = merged_facts(PROJECT_TREES[0], Config(root=PROJECT_TREES[0]))
    facts.index = None
    _same(binary.loads(binary.dumps("k", facts), "k"), facts)


def test_a_return_fact_many_functions_share_is_stored_and_built_once() -> None:
    shared = ReturnFact(Evidence.ARRAY_FREE, "list[int] | Shared", False)
    facts = ProjectFacts(
        functions={f"m.f{i}" for i in range(50)},
        returns={f"m.f{i}": dataclasses.replace(shared) for i in range(50)},
    )
    blob = binary.dumps("k", facts)
    assert blob.count(b"Shared") == 1
    loaded = binary.loads(blob, "k")
    assert loaded is not None and len({id(fact) for fact in loaded.returns.values()}) == 1
    _same(loaded, facts)


def test_a_damaged_or_foreign_blob_is_a_miss() -> None:
    facts = merged_facts(PROJECT_TREES[0], Config(root=PROJECT_TREES[0]))
    facts.index = FactsIndex(frozenset({"a"}), frozenset())
    blob = binary.dumps("key", facts)
    assert binary.loads(blob, "other key") is None
    assert binary.loads(blob[: len(blob) // 2], "key") is None
    assert binary.loads(b"", "key") is None
    assert binary.loads(b"{not json", "key") is None
    flipped = bytearray(blob)
    flipped[-10] ^= 0xFF
    assert binary.loads(bytes(flipped), "key") is None
    header = len(binary.MAGIC)
    other_python = bytearray(blob)
    other_python[header + 2] = sys.version_info[1] + 1
    assert binary.loads(bytes(other_python), "key") is None
    other_layout = bytearray(blob)
    other_layout[header] = binary.LAYOUT + 1
    assert binary.loads(bytes(other_layout), "key") is None


def test_the_cache_stores_facts_in_their_binary_form(tmp_path: Path) -> None:
    config = Config()
    cache = Cache(tmp_path / "cache", config)
    facts = merged_facts(PROJECT_TREES[0], Config(root=PROJECT_TREES[0]))
    cache.put_facts("f" + "0" * 63, facts)
    (stored,) = (tmp_path / "cache").rglob(f"*{FACTS_SUFFIX}")
    assert stored.read_bytes().startswith(binary.MAGIC)
    _same(Cache(tmp_path / "cache", config).get_facts("f" + "0" * 63), facts)
    assert Cache(tmp_path / "cache", config).get_facts("f" + "1" * 63) is None


@pytest.mark.parametrize("damage", ["truncated", "garbled", "gone"])
def test_a_run_whose_stored_facts_are_damaged_merges_again(tmp_path: Path, damage: str) -> None:
    """Facts that cannot be read are merged again, with the results of a run without cache."""
    tree = _reads_tree(tmp_path).parents[1]
    files = [(path, str(path)) for path in sorted(tree.rglob("*.py"))]
    config = Config()
    expected = check_project(files, config, jobs=1, cache=None)
    directory = tmp_path / "cache"
    check_project(files, config, jobs=1, cache=Cache(directory, config))
    (stored,) = directory.rglob(f"*{FACTS_SUFFIX}")
    if damage == "gone":
        stored.unlink()
    else:
        data = stored.read_bytes()
        stored.write_bytes(data[: len(data) // 2] if damage == "truncated" else data[:-3] + b"xyz")
    facts, results = check_project(files, config, jobs=1, cache=Cache(directory, config))
    assert results == expected[1]
    assert facts.canonical_json() == expected[0].canonical_json()
    assert binary.loads(stored.read_bytes(), stored.stem) is not None  # stored again


def test_the_digest_is_of_the_content_not_its_order_or_index() -> None:
    facts = merged_facts(PROJECT_TREES[0], Config(root=PROJECT_TREES[0]))
    same = ProjectFacts.from_json(facts.to_json())
    for table in ("modules", "aliases", "classes", "slot_kinds", "returns", "actor_methods"):
        setattr(same, table, dict(reversed(list(getattr(same, table).items()))))
    same.index = None
    assert same.digest() == facts.digest()
    name, fact = next(iter(facts.classes.items()))
    moved = ProjectFacts.from_json(facts.to_json())
    moved.classes[name] = dataclasses.replace(fact, line=fact.line + 1)
    assert moved.digest() != facts.digest()
    assert tables_digest(encode_tables(pack(moved))) == moved.digest()


def test_a_foreign_blob_beside_a_derivation_is_passed_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Facts stored as a derivation (lines moved) are read as such when a blob under the same
    key cannot be read (another Python's, a damaged one)."""
    from shmlint.cli import main
    from shmlint.run import record
    from shmlint.run.discovery import iter_file_names

    reads = _reads_tree(tmp_path)
    tree = reads.parents[1]
    command = ["check", "--isolated", "-j", "1", "--cache-dir", str(tmp_path / "cache"), str(tree)]
    main(command)
    reads.write_text("# a line\n" + reads.read_text())
    main(command)
    capsys.readouterr()
    config = Config(root=None)
    files = list(iter_file_names([str(tree)], config))
    cache = Cache(tmp_path / "cache", config)
    last = record.load(files, cache, "project")
    assert last is not None
    derived = cache.get_facts(last.facts_key)
    assert derived is not None
    (shard,) = (tmp_path / "cache").glob(f"v*/{last.facts_key[:2]}")
    (shard / f"{last.facts_key}{FACTS_SUFFIX}").write_bytes(binary.MAGIC + b"junk")
    again = Cache(tmp_path / "cache", config).get_facts(last.facts_key)
    assert again is not None and again.canonical_json() == derived.canonical_json()
