"""An edit that removes imports nothing looked up: the last facts forgetting their aliases are the
facts a merge of the edited tree gives, and an import something reached is left to the merge
(shmlint/facts/unimported.py, shmlint/run/derived.py)."""

from __future__ import annotations

import ast
import json
from collections import Counter
from pathlib import Path

import pytest

from shmlint.basics.config import Config
from shmlint.facts.added import Growth, Runs
from shmlint.facts.model import ProjectFacts
from shmlint.facts.unimported import unimport, unimported
from shmlint.run.passes import syntax_summary
from tests.project.merged import (
    PROJECT_TREES,
    analysed,
    assert_changes_findings,
    assert_merged,
    copied,
    derived_facts,
    findings,
    merged_facts,
    questions_of,
    reading,
    write_tree,
)
from tests.project.test_declared import _edits as _declarations
from tests.speed.test_incremental import _full_runs


def import_removals(text: str) -> list[str]:
    """The text without each of its top-level imports, one at a time (a line left blank)."""
    lines = text.splitlines(keepends=True)
    texts = []
    for node in ast.parse(text).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node.end_lineno is not None:
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                continue
            start, end = node.lineno - 1, node.end_lineno
            texts.append("".join([*lines[:start], "\n", *lines[end:]]))
    return texts


@pytest.mark.parametrize("case", PROJECT_TREES, ids=lambda path: path.name)
def test_facts_forgetting_imports_removed_are_the_merged_facts(case: Path, tmp_path: Path) -> None:
    tree, config, _ = copied(case, tmp_path)
    counts = Counter[str]()
    for path in sorted(tree.rglob("*.py")):
        if analysed(path, config) is None:
            continue
        original = path.read_text(encoding="utf-8")
        # The module's own imports removed; the imports test_declared adds, removed again.
        pairs = [(original, removed) for removed in import_removals(original)]
        pairs += [(added, original) for added in _declarations(original)[:2]]
        for before_text, after_text in pairs:
            counts["tried"] += 1
            path.write_text(before_text, encoding="utf-8")
            old = analysed(path, config)
            before = merged_facts(tree, config)
            path.write_text(after_text, encoding="utf-8")
            new = analysed(path, config)
            if old is None or new is None or old.summary is None or new.summary is None:
                continue
            questions = questions_of(old, new)
            if unimported(old.summary, new.summary, *questions) is None:
                continue  # (questions changed, or another reading)
            counts["read"] += 1
            facts = derived_facts(before, old.summary, new.summary, questions, tree, config)
            if facts is not None:
                assert_merged(facts, tree, config, after_text)
                counts["derived"] += 1
        path.write_text(original, encoding="utf-8")
    assert counts["tried"] and counts["derived"] <= counts["read"] <= counts["tried"]


def test_the_fixtures_imports_added_are_removed_again_without_a_merge(tmp_path: Path) -> None:
    """Removing the imports test_declared adds (which nothing uses) is derived on every
    fixture's analysed modules (the test above would pass if none were)."""
    counts = Counter[str]()
    for case in PROJECT_TREES:
        tree, config, _ = copied(case, tmp_path / "trees")
        for path in sorted(tree.rglob("*.py")):
            if analysed(path, config) is None:
                continue
            original = path.read_text(encoding="utf-8")
            path.write_text(_declarations(original)[0], encoding="utf-8")
            old = analysed(path, config)
            before = merged_facts(tree, config)
            path.write_text(original, encoding="utf-8")
            new = analysed(path, config)
            assert old is not None and new is not None and old.summary and new.summary
            questions = questions_of(old, new)
            derived = derived_facts(before, old.summary, new.summary, questions, tree, config)
            counts["tried"] += 1
            counts["derived"] += derived is not None
    assert counts["derived"] == counts["tried"] > 0, counts


def test_the_growth_survives_the_cache() -> None:
    growth = Growth((), {}, frozenset(), frozenset(), unaliased=("pkg.a.np",))
    assert Growth.from_json(json.loads(json.dumps(growth.to_json()))) == growth
    assert growth.content() != Growth((), {}, frozenset(), frozenset()).content()


HOLDER = (
    "import dataclasses\n\nimport numpy as np\n\n\n@dataclasses.dataclass\nclass Rec:\n"
    "    arr: np.ndarray\n"
)
MOD = "import ray\nfrom pkg.rec import Rec\n\n\ndef start(actor):\n    return actor.run.remote()\n"
USER = (
    "import ray\n\nfrom pkg.mod import Rec\n\n\nclass Keeper:\n    def keep(self, ref):\n"
    "        value: Rec = ray.get(ref)\n        self.value = value\n"
)


def _refused(root: Path, files: dict[str, str], edited: str) -> tuple[ProjectFacts, Config]:
    """The facts a merge of ``files`` gives, with the run's configuration, when the edit of
    ``pkg/mod.py`` to ``edited`` reads as imports removed and is left to the merge."""
    before, derived, config = reading(root, files, edited, unimported)
    assert derived is None
    return before, config


def test_an_import_another_file_imports_from_is_left_to_the_merge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The user's `Rec` runs through `pkg.mod.Rec` (FactsIndex.spelled): without it, the
    # annotation names nothing the project defines.
    files = {
        "pkg/__init__.py": "",
        "pkg/rec.py": "import ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n\n\n" + HOLDER,
        "pkg/mod.py": MOD,
        "pkg/user.py": USER,
    }
    edited = MOD.replace("from pkg.rec import Rec\n", "")
    _refused(tmp_path, files, edited)
    assert_changes_findings(tmp_path, capsys, tmp_path / "pkg" / "mod.py", MOD, edited)


def test_an_import_reaching_a_deferred_module_is_left_to_the_merge(tmp_path: Path) -> None:
    # `pkg.rec` (no Ray in it: phase 1 defers it) is read by the merge for this import alone.
    files = {"pkg/__init__.py": "", "pkg/rec.py": HOLDER, "pkg/mod.py": MOD}
    before, config = _refused(tmp_path, files, MOD.replace("from pkg.rec import Rec\n", ""))
    assert "pkg.rec" in before.modules
    assert "pkg.rec" not in merged_facts(tmp_path, config).modules


def test_a_reader_s_re_export_is_left_to_the_merge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `mod.fetch(ref)` in the user calls the reader through the re-export (call_evidence
    # builds the name; nothing spells it).
    reads = "import ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n"
    mod = "import ray\nfrom pkg.reads import fetch\n\n\ndef start(a):\n    return a.run.remote()\n"
    user = (
        "from pkg import mod\n\n\nclass Keeper:\n    def keep(self, ref):\n"
        "        self.value = mod.fetch(ref)\n"
    )
    files = {"pkg/__init__.py": "", "pkg/reads.py": reads, "pkg/mod.py": mod, "pkg/user.py": user}
    edited = mod.replace("from pkg.reads import fetch\n", "")
    _refused(tmp_path, files, edited)
    assert_changes_findings(tmp_path, capsys, tmp_path / "pkg" / "mod.py", mod, edited)


def test_an_unused_import_removed_is_derived(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = "import os\n\nimport ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n"
    user = (
        "from pkg.reads import fetch\n\n\nclass Keeper:\n    def keep(self, ref):\n"
        "        self.kept = fetch(ref)\n"
    )
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/reads.py": reads, "pkg/user.py": user})
    cache = ("--cache-dir", str(tmp_path / ".cache"))
    before = findings(tmp_path, capsys, *cache)
    assert before  # (the kept read)
    (tmp_path / "pkg" / "reads.py").write_text(reads.replace("import os\n\n", ""))
    full = _full_runs(monkeypatch)
    warm = findings(tmp_path, capsys, *cache)
    assert not full  # (derived: no merge of the tree)
    assert warm != before  # (the read's line moved, and the finding citing it)
    assert findings(tmp_path, capsys, "--no-cache") == warm


def test_an_import_of_a_deferred_module_s_function_is_left_to_the_merge(tmp_path: Path) -> None:
    # `pkg.rec` is read for this import alone, though what it imports is no class.
    rec = "def helper(x):\n    return x\n"
    mod = MOD.replace("from pkg.rec import Rec", "from pkg.rec import helper")
    files = {"pkg/__init__.py": "", "pkg/rec.py": rec, "pkg/mod.py": mod}
    before, config = _refused(tmp_path, files, mod.replace("from pkg.rec import helper\n", ""))
    assert "pkg.rec" in before.modules
    assert "pkg.rec" not in merged_facts(tmp_path, config).modules


def test_an_import_a_package_re_exports_is_left_to_the_merge(tmp_path: Path) -> None:
    # The merge reads `pkg/__init__.py` whatever the edit (the module's own names run through
    # it), but follows its `Rec` on to `pkg.rec`, for this import alone.
    mod = MOD.replace("from pkg.rec import Rec", "from pkg import Rec")
    files = {
        "pkg/__init__.py": "from pkg.rec import Rec\n",
        "pkg/rec.py": HOLDER,
        "pkg/mod.py": mod,
    }
    before, config = _refused(tmp_path, files, mod.replace("from pkg import Rec\n", ""))
    assert "pkg.rec" in before.modules
    assert "pkg.rec" not in merged_facts(tmp_path, config).modules


def test_an_import_of_a_module_several_files_claim_is_left_to_the_merge(tmp_path: Path) -> None:
    # (The merge keeps the first file's binding of a name several files' module defines.)
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": MOD})
    config = Config(root=tmp_path)
    before = merged_facts(tmp_path, config)
    old = analysed(tmp_path / "pkg" / "mod.py", config)
    (tmp_path / "pkg" / "mod.py").write_text(MOD.replace("from pkg.rec import Rec\n", ""))
    new = analysed(tmp_path / "pkg" / "mod.py", config)
    assert old is not None and new is not None and old.summary and new.summary
    removal = unimported(old.summary, new.summary, [], [])
    assert removal is not None
    assert unimport(before, [removal], Runs(set(), set())) is not None
    assert unimport(before, [removal], Runs(set(), {"pkg.mod"})) is None


READS = (
    "import ray\n\n\ndef fetch(ch):\n    return ch.get()\n\n\n"
    "def go(a):\n    return ray.get(a.run.remote())\n"
)
HEAVY = "def helper(x):\n    return x\n\n\nclass Base:\n    pass\n"
CALLER = (
    "import pkg\nfrom pkg.heavy import helper\n\n\nclass C(pkg.heavy.Base):\n    pass\n\n\n"
    "# fetch\n"
)


def _deferred_reading(
    root: Path, files: dict[str, str], name: str, edited: str
) -> tuple[ProjectFacts, ProjectFacts | None, Config]:
    """As ``merged.reading``, for the deferred module ``name`` the merge read: what the run
    derives between its syntactic summaries (the edit must read as imports removed)."""
    write_tree(root, files)
    config = Config(root=root)
    before = merged_facts(root, config)
    path = root / name
    old = syntax_summary(path.read_bytes(), str(path), config)
    path.write_text(edited)
    new = syntax_summary(path.read_bytes(), str(path), config)
    assert unimported(old, new, [], []) is not None
    return before, derived_facts(before, old, new, ([], []), root, config), config


def test_an_import_of_a_deferred_caller_is_left_to_the_merge(tmp_path: Path) -> None:
    # The merge takes a deferred module spelling a caller's word (`fetch`) whole and follows
    # its imports' targets, not its classes' bases: `pkg.heavy` is read for the import alone
    # (found by a review).
    files = {
        "pkg/__init__.py": "",
        "pkg/reads.py": READS,
        "pkg/heavy.py": HEAVY,
        "pkg/caller.py": CALLER,
    }
    edited = CALLER.replace("from pkg.heavy import helper\n", "")
    before, derived, config = _deferred_reading(tmp_path, files, "pkg/caller.py", edited)
    assert derived is None
    assert "pkg.heavy" in before.modules
    assert "pkg.heavy" not in merged_facts(tmp_path, config).modules


def test_an_unused_import_removed_from_a_deferred_module_is_derived(tmp_path: Path) -> None:
    holder = "import os\n" + HOLDER
    files = {"pkg/__init__.py": "", "pkg/rec.py": holder, "pkg/mod.py": MOD}
    edited = holder.replace("import os\n", "")
    _, facts, config = _deferred_reading(tmp_path, files, "pkg/rec.py", edited)
    assert facts is not None
    assert_merged(facts, tmp_path, config, "rec.py")
