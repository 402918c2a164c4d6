"""An edit that removes functions nothing else reached: the last facts forgetting their names
are the facts a merge of the edited tree gives, and a function another file reached is left to
the merge (shmlint/facts/removed.py, shmlint/run/derived.py)."""

from __future__ import annotations

import ast
import dataclasses
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from shmlint.basics.config import Config, find_pyproject, load_config
from shmlint.basics.options import Options
from shmlint.basics.types import SourceKind
from shmlint.cli import main
from shmlint.facts.added import Growth, Runs, added_functions
from shmlint.facts.evidence import TypeTables
from shmlint.facts.index import FactsIndex
from shmlint.facts.model import ProjectFacts
from shmlint.facts.moved import moved_lines, relined
from shmlint.facts.records import ReadChain
from shmlint.facts.removed import renamed_functions, shrink
from shmlint.facts.summary import FunctionInfo, ModuleSummary
from shmlint.run.passes import FirstPass
from tests.project.merged import (
    PROJECT_TREES,
    assert_merged,
    derived_facts,
    merged_facts,
    write_tree,
)
from tests.project.test_added import ACTORS, _edits, _item, _runs
from tests.speed.test_incremental import _full_runs


def _derived(
    before: ProjectFacts, old: FirstPass, new: FirstPass, tree: Path
) -> ProjectFacts | None:
    """What the incremental run derives from ``before`` for the edit ``old`` → ``new``."""
    assert old.summary is not None and new.summary is not None
    questions = ([q for q, _ in new.questions], [q for q, _ in old.questions])
    removed = added_functions(new.summary, old.summary, *questions)
    if removed is None:
        return None
    lines = moved_lines(removed.summary, new.summary)
    if lines is None:
        return None
    tables = TypeTables.for_options(Options())
    growth = shrink(before, [removed], _runs(tree), tables, external=True)
    facts = relined(before, {new.summary.path: lines})
    return None if growth is None or facts is None else growth.applied(facts, before.index)


def _removals(text: str) -> list[str]:
    """The text without each of its functions and methods (decorators included), one at a
    time."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    texts = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            assert node.end_lineno is not None
            indent = " " * node.col_offset
            keep = f"{indent}pass\n"  # (a body left empty must still parse)
            texts.append("".join([*lines[:start], keep, *lines[node.end_lineno :]]))
    return texts


def _compare(tree: Path, path: Path, config: Config, before_text: str, after_text: str) -> bool:
    """Write ``before_text``, merge, write ``after_text``: True when the facts were derived
    (and then equal to a merge of the edited tree)."""
    path.write_text(before_text, encoding="utf-8")
    old = _item(path, config)
    before = merged_facts(tree, config)
    path.write_text(after_text, encoding="utf-8")
    new = _item(path, config)
    if old is None or new is None:
        return False
    facts = _derived(before, old, new, tree)
    if facts is None:
        return False
    merged = merged_facts(tree, config)
    assert facts.canonical_json() == merged.canonical_json(), after_text
    assert facts.index is not None and merged.index is not None
    assert merged.index.asked <= facts.index.asked  # (a superset: what was asked)
    assert merged.index.unresolved <= facts.index.unresolved
    return True


@pytest.mark.parametrize("case", PROJECT_TREES, ids=lambda path: path.name)
def test_facts_forgetting_functions_removed_are_the_merged_facts(
    case: Path, tmp_path: Path
) -> None:
    tree = tmp_path / case.name
    shutil.copytree(case, tree)
    config = load_config(find_pyproject(tree))
    derived = tried = 0
    for path in sorted(tree.rglob("*.py")):
        if _item(path, config) is None:
            continue
        original = path.read_text(encoding="utf-8")
        # The module's own functions and methods removed; the additions of test_added undone.
        pairs = [(original, removed) for removed in _removals(original)]
        pairs += [(added, original) for added in _edits(original)]
        for before_text, after_text in pairs:
            tried += 1
            derived += _compare(tree, path, config, before_text, after_text)
        path.write_text(original, encoding="utf-8")
    assert tried and derived >= 1  # (removals were taken, and the test saw them)


MODULE = (
    "import ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n\n\n"
    "def helper(x) -> int:\n    return len(x)\n"
)


@pytest.mark.parametrize(
    ("user", "taken"),
    [
        ("from pkg.mod import fetch\n\n\ndef use(r):\n    return fetch(r)\n", True),
        ("from pkg.mod import helper\n\n\ndef use(r):\n    return helper(r)\n", True),
        (
            "import ray\nfrom pkg.mod import helper\n\n\nclass K:\n    def keep(self, ref):\n"
            "        self.kept = helper(ray.get(ref))\n",
            False,
        ),
        (
            "import ray\nfrom pkg.mod import helper\n\n\ndef use(a):\n    h = a.remote()\n"
            "    return helper(h)\n",
            False,
        ),
    ],
    ids=["nobody calls it", "a call gives it nothing", "a read passes it", "a handle reaches it"],
)
def test_a_function_another_module_reached_is_left_to_the_merge(
    tmp_path: Path, user: str, taken: bool
) -> None:
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": MODULE, "pkg/use.py": user})
    config = Config(root=tmp_path)
    path = tmp_path / "pkg" / "mod.py"
    removed = MODULE.replace("def helper(x) -> int:\n    return len(x)\n", "")
    assert _compare(tmp_path, path, config, MODULE, removed) is taken


def test_a_warm_run_after_a_removal_finds_what_a_run_without_cache_finds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Functions removed one after another (each run a derivation of the last), some with
    lines moved: no merge, and the findings of a run without cache."""
    keeps = (
        "import numpy as np\n\nfrom pkg.mod import fetch\n\n\nclass Keeper:\n"
        "    def keep(self, ref) -> None:\n        self.kept: np.ndarray = fetch(ref)\n"
    )
    helpers = "".join(f"\n\ndef helper_{i}(x) -> int:\n    return len(x)\n" for i in range(6))
    write_tree(
        tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": MODULE + helpers, "pkg/use.py": keeps}
    )
    command = ["check", "--isolated", "--output-format", "json", "--min-confidence", "medium"]
    cache = ["--cache-dir", str(tmp_path / "cache")]
    main([*command, *cache, str(tmp_path / "pkg")])
    capsys.readouterr()
    merges = _full_runs(monkeypatch)
    path = tmp_path / "pkg" / "mod.py"
    for i in range(6):
        text = path.read_text().replace(f"\n\ndef helper_{i}(x) -> int:\n    return len(x)\n", "")
        path.write_text(("# a line\n" if i % 2 else "") + text)
        main([*command, *cache, str(tmp_path / "pkg")])
        warm = capsys.readouterr().out
        assert not merges
        main([*command, "--no-cache", str(tmp_path / "pkg")])
        assert warm == capsys.readouterr().out
        merges.clear()


def _refused_removal(root: Path, mod: Path, removed: str) -> None:
    """Removing the text ``removed`` from ``mod`` is left to the merge, whose facts differ
    from the last ones merely forgetting the function (what taking it would give)."""
    config = Config(root=root)
    text = mod.read_text()
    assert not _compare(root, mod, config, text, text.replace(removed, ""))
    mod.write_text(text)
    old = _item(mod, config)
    before = merged_facts(root, config)
    mod.write_text(text.replace(removed, ""))
    new = _item(mod, config)
    assert old is not None and new is not None and old.summary and new.summary
    backwards = added_functions(new.summary, old.summary, [], [])
    assert backwards is not None
    forgetting = Growth((), {}, frozenset(), frozenset(), removed=backwards.names)
    naive = forgetting.applied(before, before.index)
    assert naive.canonical_json() != merged_facts(root, config).canonical_json()


def test_a_function_whose_body_reaches_a_deferred_module_is_left_to_the_merge(
    tmp_path: Path,
) -> None:
    # Its call of `pkg.extra.make` (a re-export) made the merge read `pkg.deep`, for it alone.
    removed = "def gone(x, d):\n    pkg.extra.make(x)\n    return d.get(1)\n"
    files = {
        "pkg/__init__.py": "",
        "pkg/extra.py": "from pkg.deep import make\n",
        "pkg/deep.py": "class Out:\n    size: int\n\n\ndef make(x):\n    return Out()\n",
        "pkg/mod.py": f"import ray\nimport pkg.extra\n\n\n{removed}",
    }
    write_tree(tmp_path, files)
    _refused_removal(tmp_path, tmp_path / "pkg" / "mod.py", removed)


@pytest.mark.parametrize("how", sorted(ACTORS))
def test_a_method_of_an_actor_s_class_is_left_to_the_merge(tmp_path: Path, how: str) -> None:
    name, other = ACTORS[how]
    removed = "    def extra(self):\n        return None\n"
    files = {
        "pkg/__init__.py": "",
        "pkg/mod.py": f"import ray\n\n\nclass {name}:\n    def run(self):\n        return 1\n\n"
        + removed,
        "pkg/other.py": other,
    }
    write_tree(tmp_path, files)
    _refused_removal(tmp_path, tmp_path / "pkg" / "mod.py", removed)


@pytest.mark.parametrize("named", ["Out", "Alias"], ids=["a class", "an alias (no class)"])
def test_a_function_rating_an_installed_name_is_left_to_the_merge(
    tmp_path: Path, installed_outputs: Callable[[str], None], named: str
) -> None:
    # Its annotation names an installed class nothing else rates: the merge rated it into the
    # facts' classes for it alone; or another installed name: the merge noted the file it read
    # (found by a review).
    installed_outputs("import numpy as np\n\n\nclass Out:\n    x: np.ndarray\n\n\nAlias = dict\n")
    project = tmp_path / "project"
    removed = f"def gone(x) -> {named}:\n    return x\n"
    files = {
        "pkg/__init__.py": "",
        "pkg/mod.py": f"import ray\nfrom extpkg.outputs import {named}\n\n\n{removed}",
    }
    write_tree(project, files)
    _refused_removal(project, project / "pkg" / "mod.py", removed)


def _shrunk(facts: ProjectFacts) -> Growth | None:
    summary = ModuleSummary("pkg.mod", "pkg/mod.py", False, (), (), ())
    info = FunctionInfo("pkg.mod.gone", 1, ("v",), False)
    removal = added_functions(summary, dataclasses.replace(summary, functions=(info,)), [], [])
    assert removal is not None
    if facts.index is None:
        facts.index = FactsIndex(frozenset(), frozenset())
    tables = TypeTables.for_options(Options())
    return shrink(facts, [removal], Runs(set(), set()), tables, external=False)


def test_what_the_facts_say_of_the_function_refuses_its_removal() -> None:
    plain = ProjectFacts(functions={"pkg.mod.gone"}, modules={"pkg.mod": ("pkg/mod.py", False)})
    growth = _shrunk(plain)
    assert growth == Growth((), {}, frozenset(), frozenset({"pkg.mod.gone"}), ("pkg.mod.gone",))
    reached = {"ret:pkg.mod.gone", "param:pkg.mod.gone.v"}
    for slot in reached:  # a handle reached it
        assert _shrunk(dataclasses.replace(plain, slot_kinds={slot: frozenset({"ref"})})) is None
    other = dataclasses.replace(plain, slot_kinds={"param:pkg.mod.gone_too.v": frozenset({"r"})})
    assert _shrunk(other) is not None
    assert _shrunk(dataclasses.replace(plain, remote={"pkg.mod.gone"})) is None
    read = ReadChain(SourceKind.OBJECT_STORE, "pkg/mod.py", 2, ())
    assert _shrunk(dataclasses.replace(plain, returned_reads={"pkg.mod.gone": read})) is None
    assert _shrunk(ProjectFacts()) is None  # (not a function of the facts)
    asked = dataclasses.replace(plain)
    asked.index = FactsIndex(frozenset({"pkg.mod.gone"}), frozenset())
    assert _shrunk(asked) is None


def _renames(text: str) -> list[str]:
    """The text with each of its functions and methods renamed, one at a time; and with the
    first one removed and a function added at the end."""
    texts = []
    for match in re.finditer(r"^(\s*(?:async )?def )(\w+)\(", text, re.M):
        texts.append(f"{text[: match.end(2)]}_renamed{text[match.end(2) :]}")
    removals = _removals(text)
    if removals:
        texts.append(removals[0] + "\n\ndef _replacement(a):\n    return a\n")
    return texts


@pytest.mark.parametrize("case", PROJECT_TREES, ids=lambda path: path.name)
def test_facts_after_functions_renamed_are_the_merged_facts(case: Path, tmp_path: Path) -> None:
    tree = tmp_path / case.name
    shutil.copytree(case, tree)
    config = load_config(find_pyproject(tree))
    before = merged_facts(tree, config)
    derived = tried = 0
    for path in sorted(tree.rglob("*.py")):
        old = _item(path, config)
        if old is None:
            continue
        original = path.read_text(encoding="utf-8")
        for edited in _renames(original):
            path.write_text(edited, encoding="utf-8")
            new = _item(path, config)
            tried += 1
            if new is None or new.summary is None or old.summary is None:
                continue
            questions = ([q for q, _ in old.questions], [q for q, _ in new.questions])
            if not renamed_functions(old.summary, new.summary, *questions):
                continue  # (another reading: test_added, test_declared)
            facts = derived_facts(before, old.summary, new.summary, questions, tree, config)
            if facts is not None:
                assert_merged(facts, tree, config, edited)
                derived += 1
        path.write_text(original, encoding="utf-8")
    # (Few are taken on these small trees, where another file reaches most functions: 21 of
    # 120; test_a_renamed_helper_nothing_reached_is_derived shows one taken.)
    assert tried and derived <= tried


USER = (
    "from pkg.mod import fetch\n\n\nclass Keeper:\n    def keep(self, ref):\n"
    "        self.kept = fetch(ref)\n"
)


def test_a_renamed_helper_nothing_reached_is_derived(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": MODULE, "pkg/user.py": USER})
    cache = ("--cache-dir", str(tmp_path / ".cache"))
    command = ["check", "--isolated", "--output-format", "json", "--min-confidence", "medium"]
    main([*command, *cache, str(tmp_path)])
    before = capsys.readouterr().out
    mod = tmp_path / "pkg" / "mod.py"
    mod.write_text("# moved\n" + MODULE.replace("def helper(", "def helper_renamed("))
    full = _full_runs(monkeypatch)
    main([*command, *cache, str(tmp_path)])
    warm = capsys.readouterr().out
    assert not full  # (derived: no merge of the tree)
    assert warm != before  # (the read's line moved, and the finding citing it)
    main([*command, "--no-cache", str(tmp_path)])
    assert capsys.readouterr().out == warm
