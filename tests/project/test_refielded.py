"""An edit that changes classes' fields in place (a field added, removed, annotated otherwise):
the last facts with the classes, what was rated from them and the return facts naming them
rated anew are the facts a merge of the edited tree gives; other files' plans of phase 2
follow the new answers; and an edit whose fields a handle, a cycle or an unread module depends
on is left to the merge (shmlint/facts/refielded.py, shmlint/run/replan.py)."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from shmlint.basics.config import Config
from shmlint.facts.added import Runs
from shmlint.facts.evidence import TypeTables
from shmlint.facts.model import ProjectFacts
from shmlint.facts.refielded import refield, refielded_classes
from shmlint.facts.summary import ModuleSummary
from shmlint.run.passes import first_pass, syntax_summary
from shmlint.run.replan import Askers, replanned
from tests.project.merged import (
    PROJECT_TREES,
    analysed,
    assert_merged,
    copied,
    derived_facts,
    merged_facts,
    parses,
    questions_of,
    read_and_run,
    reading,
    runs_of,
    warm_after,
    write_tree,
)


def field_edits(text: str) -> list[str]:
    """The text with each class's fields changed, one edit at a time: a field ``int`` inserted
    on top of its body, one annotated as its first field is, its decorators removed (or
    ``@dataclasses.dataclass`` written, where the module imports ``dataclasses``), each field
    annotated ``int`` instead, each field removed."""
    lines = text.splitlines(keepends=True)
    edits = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.ClassDef):
            continue
        first = node.body[0]
        indent = " " * first.col_offset
        decorators = getattr(first, "decorator_list", [])
        top = min([first.lineno, *(d.lineno for d in decorators)]) - 1
        head, tail = "".join(lines[:top]), "".join(lines[top:])
        edits.append(f"{head}{indent}_extra: int = 0\n{tail}")
        fields = [s for s in node.body if isinstance(s, ast.AnnAssign) and s.simple]
        if fields:
            annotation = ast.get_source_segment(text, fields[0].annotation)
            edits.append(f"{head}{indent}_extra: {annotation}\n{tail}")
        indent_class = " " * node.col_offset
        if node.decorator_list:  # (a record no longer: its decorators removed)
            first_line = min(d.lineno for d in node.decorator_list) - 1
            edits.append("".join([*lines[:first_line], *lines[node.lineno - 1 :]]))
        elif "import dataclasses" in text:  # (a record now)
            at = node.lineno - 1
            made = f"{indent_class}@dataclasses.dataclass\n"
            edits.append("".join([*lines[:at], made, *lines[at:]]))
        for field in fields:
            start, end = field.lineno - 1, (field.end_lineno or field.lineno)
            if field.lineno != field.annotation.lineno:
                continue
            segment = ast.get_source_segment(text, field.annotation) or ""
            line = lines[start]
            if segment and line.count(segment) == 1 and field.end_lineno == field.lineno:
                edits.append("".join([*lines[:start], line.replace(segment, "int"), *lines[end:]]))
            rest = [*lines[:start], *lines[end:]]
            if len(node.body) == 1:
                rest.insert(start, f"{indent}pass\n")
            edits.append("".join(rest))
    return [edit for edit in edits if parses(edit)]


def test_facts_after_fields_changed_are_the_merged_facts(tmp_path: Path) -> None:
    """Every field edit of every project fixture's modules the merge read (analysed, or
    deferred and read) read as fields changed and derived gives the facts of a merge; and
    most of those read so are derived."""
    counts = Counter[str]()
    for case in PROJECT_TREES:
        tree, config, before = copied(case, tmp_path / "trees")
        paths = {path for path, _ in before.modules.values()}
        counts["trees"] += 1
        for path in sorted(tree.rglob("*.py")):
            if str(path) not in paths:
                continue
            original = path.read_text(encoding="utf-8")
            for edited in field_edits(original):
                counts["tried"] += 1
                path.write_text(edited, encoding="utf-8")
                pair = _summaries(path, original, edited, config)
                if pair is None:
                    continue
                old, new, questions = pair
                if refielded_classes(old, new, *questions) is None:
                    continue
                counts["read"] += 1
                counts["asking anew"] += set(questions[0]) != set(questions[1])
                facts = derived_facts(before, old, new, questions, tree, config)
                if facts is not None:
                    assert_merged(facts, tree, config, f"{path}:\n{edited}")
                    counts["derived"] += 1
            path.write_text(original, encoding="utf-8")
    assert counts["derived"] * 2 >= counts["read"] > 0, counts
    assert counts["asking anew"] > 0, counts  # (a field's default value asks of its type)


def _summaries(
    path: Path, original: str, edited: str, config: Config
) -> tuple[object, object, tuple[list[str], list[str]]] | None:
    """The summaries the merge reads of ``path`` holding ``original`` and ``edited`` (now),
    with their questions."""
    new = analysed(path, config)
    path.write_text(original, encoding="utf-8")
    old = analysed(path, config)
    path.write_text(edited, encoding="utf-8")
    if old is not None and new is not None and old.summary and new.summary:
        return old.summary, new.summary, questions_of(old, new)
    if old is None and new is None:
        before = syntax_summary(original.encode(), str(path), config)
        after = syntax_summary(edited.encode(), str(path), config)
        if before is not None and after is not None:
            return before, after, ([], [])
    return None


OUT = (
    "import dataclasses\n\nimport numpy as np\n\n\n@dataclasses.dataclass\nclass Out:\n    x: int\n"
)
KEEPER = (
    "import ray\n\nfrom pkg.mod import Out\n\n\nclass Keeper:\n    def keep(self, ref):\n"
    "        out: Out = ray.get(ref)\n        self.kept = out\n"
)
ARRAYS = OUT.replace("    x: int\n", "    x: int\n    y: np.ndarray\n")


# Not a record: its evidence is unknown, as the keeper's own facts have it (phase 2 leaves the
# keeper alone), until a field holds arrays.
PLAIN = "import numpy as np\n\n\nclass Out:\n    x: int\n"
PLAIN_ARRAYS = PLAIN + "    y: np.ndarray\n"


@pytest.mark.parametrize("direction", ["added", "removed"])
@pytest.mark.parametrize("record", [True, False])
def test_a_field_another_file_reads_is_derived_and_that_file_replanned(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    direction: str,
    record: bool,
) -> None:
    # The keeper's finding depends on whether `Out` holds arrays: its plan of phase 2
    # changes with the field (from none to a check, and back, when `Out` is no record),
    # though the keeper is unchanged.
    old, new = (OUT, ARRAYS) if record else (PLAIN, PLAIN_ARRAYS)
    old, new = (old, new) if direction == "added" else (new, old)
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": old, "pkg/user.py": KEEPER})
    mod = tmp_path / "pkg" / "mod.py"
    before, warm, full = warm_after(tmp_path, capsys, monkeypatch, [(mod, new)])
    assert not full  # (derived: no merge of the tree)
    assert warm != before


@pytest.mark.parametrize("direction", ["made", "unmade"])
def test_a_class_made_a_record_is_derived(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    direction: str,
) -> None:
    # `@dataclass` makes its fields complete: array-free, where a plain class is unknown.
    plain = "import dataclasses\n\n\nclass Out:\n    x: int\n"
    record = plain.replace("class Out:", "@dataclasses.dataclass\nclass Out:")
    old, new = (plain, record) if direction == "made" else (record, plain)
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": old, "pkg/user.py": KEEPER})
    mod = tmp_path / "pkg" / "mod.py"
    before, warm, full = warm_after(tmp_path, capsys, monkeypatch, [(mod, new)])
    assert not full
    assert bool(warm) == (direction == "unmade") != bool(before)


def test_a_file_edited_since_the_full_run_is_replanned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The keeper's lines moved since the run that noted who asked what: its question is
    # decided from its entry now, not from that run's note.
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": PLAIN, "pkg/user.py": KEEPER})
    user, mod = tmp_path / "pkg" / "user.py", tmp_path / "pkg" / "mod.py"
    edits = [(user, "# moved\n" + KEEPER), (mod, PLAIN_ARRAYS)]
    before, warm, full = warm_after(tmp_path, capsys, monkeypatch, edits)
    assert not full
    assert warm != before


def test_without_the_note_of_who_asked_what_the_tree_is_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from shmlint.run.cache import Cache

    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": OUT, "pkg/user.py": KEEPER})
    monkeypatch.setattr(Cache, "get_askers", lambda self, key: None)
    mod = tmp_path / "pkg" / "mod.py"
    before, warm, full = warm_after(tmp_path, capsys, monkeypatch, [(mod, ARRAYS)])
    assert full and warm and not before


def test_the_files_asking_an_answer_changed_and_those_edited_since_are_replanned() -> None:
    askers = Askers(["k0", "k1", "k2", None], {"c:pkg.mod.Out": [0, 2], "p:pkg.mod.f": [1]})
    keys = ["k0", "k1", "k2x", "k3"]
    analysed = [True, True, True, True]
    assert replanned(askers, ["c:pkg.mod.Out"], keys, analysed) == {0, 2, 3}
    assert replanned(askers, [], keys, [True, True, False, False]) == set()
    assert replanned(askers, ["p:pkg.mod.f"], keys[:3] + [None], analysed) == {1, 2}
    # (A file that asked, a deferred module now: it asks nothing.)
    assert replanned(askers, ["c:pkg.mod.Out"], keys, [False, True, True, True]) == {2, 3}


def _reading(
    root: Path, files: dict[str, str], edited: str
) -> tuple[ProjectFacts, ProjectFacts | None, Config]:
    return reading(root, files, edited, refielded_classes)


BOX = "import dataclasses\n\nimport ray\n\n\n@dataclasses.dataclass\nclass Box:\n    x: object\n"


def test_a_field_a_handle_lands_in_by_position_is_left_to_the_merge(tmp_path: Path) -> None:
    # `Box(a.remote())` lands in `x`, the first field: a field inserted before it takes it.
    user = "from pkg.mod import Box\n\n\ndef use(a):\n    return Box(a.remote())\n"
    files = {"pkg/__init__.py": "", "pkg/mod.py": BOX, "pkg/user.py": user}
    edited = BOX.replace("    x: object\n", "    w: int\n    x: object\n")
    before, derived, config = _reading(tmp_path, files, edited)
    assert derived is None
    assert "attr:pkg.mod.Box.x" in before.slot_kinds
    assert merged_facts(tmp_path, config).slot_kinds != before.slot_kinds


def test_a_field_a_handle_was_passed_to_by_name_is_left_to_the_merge(tmp_path: Path) -> None:
    user = "from pkg.mod import Box\n\n\ndef use(a):\n    return Box(1, h=a.remote())\n"
    files = {"pkg/__init__.py": "", "pkg/mod.py": BOX, "pkg/user.py": user}
    edited = BOX.replace("    x: object\n", "    x: object\n    h: object\n")
    before, derived, config = _reading(tmp_path, files, edited)
    assert derived is None
    assert before.index is not None and "pkg.mod.Box" in before.index.unplaced
    assert "attr:pkg.mod.Box.h" in merged_facts(tmp_path, config).slot_kinds


def test_a_field_of_a_class_with_a_constructor_is_derived(tmp_path: Path) -> None:
    # Arguments land in `__init__`'s parameters: the fields' order places none.
    module = BOX + "\n    def __init__(self, x):\n        self.x = x\n"
    user = "from pkg.mod import Box\n\n\ndef use(a):\n    return Box(a.remote())\n"
    files = {"pkg/__init__.py": "", "pkg/mod.py": module, "pkg/user.py": user}
    edited = module.replace("    x: object\n", "    w: int\n    x: object\n")
    before, derived, config = _reading(tmp_path, files, edited)
    assert derived is not None
    assert_merged(derived, tmp_path, config, edited)


CYCLE = (
    "import dataclasses\n\nimport numpy as np\nimport ray\n\n\n@dataclasses.dataclass\n"
    "class A:\n    b: 'B'\n\n\n@dataclasses.dataclass\nclass B:\n    a: A\n"
)


def test_a_field_of_a_class_in_a_reference_cycle_is_left_to_the_merge(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", "pkg/mod.py": CYCLE}
    edited = CYCLE.replace("    a: A\n", "    a: A\n    y: np.ndarray\n")
    before, derived, config = _reading(tmp_path, files, edited)
    assert derived is None
    assert before.index is not None and "pkg.mod.B" in before.index.cyclic


OTHER = "class Thing:\n    pass\n"
NAMED = (
    "import dataclasses\n\nimport ray\n\nimport pkg.other\n\n\n@dataclasses.dataclass\n"
    "class Out:\n    t: 'pkg.other.Thing'\n"
)


@pytest.mark.parametrize("direction", ["old", "new"])
def test_a_field_naming_a_module_read_for_it_alone_is_left_to_the_merge(
    tmp_path: Path, direction: str
) -> None:
    # `pkg.other` is deferred (nothing to check in it): the merge reads it for the field's
    # annotation alone, which the edit removes (or writes).
    plain = NAMED.replace("'pkg.other.Thing'", "int")
    module, edited = (NAMED, plain) if direction == "old" else (plain, NAMED)
    files = {"pkg/__init__.py": "", "pkg/other.py": OTHER, "pkg/mod.py": module}
    before, derived, config = _reading(tmp_path, files, edited)
    assert derived is None
    assert ("pkg.other" in before.modules) == (direction == "old")
    assert ("pkg.other" in merged_facts(tmp_path, config).modules) == (direction == "new")
    # (Refused for the module alone, not for an installed lookup of its class.)
    path = str(tmp_path / "pkg" / "mod.py")
    old, new = (first_pass(text.encode(), path, config).summary for text in (module, edited))
    assert old is not None and new is not None
    item = refielded_classes(old, new, [], [])
    assert item is not None
    tables = TypeTables.for_options(config.options)
    assert refield(before, [item], runs_of(tmp_path, config), tables, False) is None


def test_a_field_naming_an_installed_class_is_left_to_the_merge(
    tmp_path: Path, installed_outputs: Callable[[str], None]
) -> None:
    # Rating the field rates the installed class into the facts.
    installed_outputs("import numpy as np\n\n\nclass Ext:\n    x: np.ndarray\n")
    project = tmp_path / "project"
    module = "import ray\nfrom extpkg.outputs import Ext\n\n\nclass Out:\n    x: int\n"
    files = {"pkg/__init__.py": "", "pkg/mod.py": module}
    edited = module.replace("x: int", "x: Ext")
    before, derived, config = _reading(project, files, edited)
    assert derived is None
    assert "extpkg.outputs.Ext" in merged_facts(project, config).classes


def test_a_field_that_named_an_installed_class_is_left_to_the_merge(
    tmp_path: Path, installed_outputs: Callable[[str], None]
) -> None:
    # The merge rated the installed class into the facts for the field alone: without it,
    # it does not.
    installed_outputs("import numpy as np\n\n\nclass Ext:\n    x: np.ndarray\n")
    project = tmp_path / "project"
    module = "import ray\nfrom extpkg.outputs import Ext\n\n\nclass Out:\n    y: int\n    x: Ext\n"
    files = {"pkg/__init__.py": "", "pkg/mod.py": module}
    edited = module.replace("x: Ext", "x: int")
    before, derived, config = _reading(project, files, edited)
    assert derived is None
    assert "extpkg.outputs.Ext" in before.classes
    assert "extpkg.outputs.Ext" not in merged_facts(project, config).classes


def test_what_was_rated_from_a_class_is_rated_anew(tmp_path: Path) -> None:
    # A subclass (its fields inherited), a class naming it in a field, a function returning
    # it: all rated anew from their modules' summaries.
    other = (
        "import ray\n\nfrom pkg.mod import Out\n\n\ndef fetch(r):\n    return ray.get(r)\n"
        "\n\nclass Sub(Out):\n    pass\n\n\nclass Holder:\n"
        "    out: Out\n\n\ndef make() -> Out:\n    return Out(1)\n"
    )
    files = {"pkg/__init__.py": "", "pkg/mod.py": OUT + "import ray\n", "pkg/other.py": other}
    before, derived, config = _reading(tmp_path, files, ARRAYS + "import ray\n")
    assert derived is not None
    assert_merged(derived, tmp_path, config, "y")
    for name in ("pkg.other.Sub", "pkg.other.Holder"):
        assert derived.classes[name] != before.classes[name]
    assert derived.returns["pkg.other.make"] != before.returns["pkg.other.make"]


def test_without_the_summaries_to_rate_anew_the_tree_is_merged(tmp_path: Path) -> None:
    other = (
        "import ray\n\nfrom pkg.mod import Out\n\n\ndef fetch(r):\n    return ray.get(r)\n"
        "\n\nclass Sub(Out):\n    pass\n"
    )
    files = {"pkg/__init__.py": "", "pkg/mod.py": OUT + "import ray\n", "pkg/other.py": other}
    write_tree(tmp_path, files)
    config = Config(root=tmp_path)
    before = merged_facts(tmp_path, config)
    old = syntax_summary(files["pkg/mod.py"].encode(), str(tmp_path / "pkg/mod.py"), config)
    new = syntax_summary((ARRAYS + "import ray\n").encode(), str(tmp_path / "pkg/mod.py"), config)
    assert old is not None and new is not None
    item = refielded_classes(old, new, [], [])
    assert item is not None
    runs = runs_of(tmp_path, config)
    tables = TypeTables.for_options(config.options)
    assert refield(before, [item], runs, tables, False) is not None
    lost = Runs(runs.deferred, runs.shared, lambda path: None)
    assert refield(before, [item], lost, tables, False) is None


def test_other_edits_are_no_change_of_fields() -> None:
    def summary(text: str) -> ModuleSummary:
        found = syntax_summary(text.encode(), "pkg/mod.py", Config())
        assert found is not None
        return found

    old = summary(OUT)
    assert refielded_classes(old, summary(ARRAYS), [], []) is not None
    assert refielded_classes(old, summary(ARRAYS), [], ["x:f"]) is None  # (questions)
    assert refielded_classes(old, summary(ARRAYS), ["p:f"], []) is None
    assert refielded_classes(old, summary(ARRAYS), ["F:x"], ["n:int"]) is not None
    assert (
        refielded_classes(old, summary(OUT.replace("class Out:", "class Out(dict):")), [], [])
        is None
    )
    assert refielded_classes(old, summary(OUT + "\n\nclass Two:\n    y: int\n"), [], []) is None
    twice = OUT + "\n\nclass Out:\n    y: int\n"
    assert (
        refielded_classes(summary(twice), summary(twice.replace("y: int", "y: str")), [], [])
        is None
    )


RECORDS = (
    "import dataclasses\n\n\n@dataclasses.dataclass\nclass Other:\n    z: int\n\n\n"
    "@dataclasses.dataclass\nclass Out:\n    x: int\n    y: Other\n"
)


def test_a_field_of_a_deferred_module_naming_its_own_class_is_derived(tmp_path: Path) -> None:
    # `pkg.records` is deferred (nothing to check in it), read for the keeper's annotation:
    # the removed field's `Other` runs through `pkg` (deferred too) on the way to the module
    # itself, which stays read.
    keeper = KEEPER.replace("pkg.mod", "pkg.records")
    files = {"pkg/__init__.py": "", "pkg/records.py": RECORDS, "pkg/user.py": keeper}
    write_tree(tmp_path, files)
    config = Config(root=tmp_path)
    before = merged_facts(tmp_path, config)
    path = tmp_path / "pkg" / "records.py"
    edited = RECORDS.replace("    y: Other\n", "")
    old = syntax_summary(RECORDS.encode(), str(path), config)
    path.write_text(edited)
    new = syntax_summary(edited.encode(), str(path), config)
    assert old is not None and new is not None
    assert {"pkg", "pkg.records"} <= runs_of(tmp_path, config).deferred
    facts = derived_facts(before, old, new, ([], []), tmp_path, config)
    assert facts is not None
    assert_merged(facts, tmp_path, config, edited)


# `pkg/__init__.py` binds `pkg.sub` to its function `sub` (the alias `pkg.sub` → `pkg.sub.sub`):
# a class the merge rated before `pkg.sub.X` took `pkg.sub.X` through it, as no class
# (found by a review: rated anew, against every class, it was `X`).
SHADOWED = (
    "import dataclasses\n\nimport numpy as np\nimport ray\n\n\n@dataclasses.dataclass\n"
    "class X:\n    v: np.ndarray\n\n\ndef sub(ref):\n    return ray.get(ref)\n"
)
READER = (
    "import dataclasses\n\nimport ray\n\nfrom pkg.sub import X\n\n\n@dataclasses.dataclass\n"
    "class R:\n    x: X\n\n\ndef keep(ref):\n    r: R = ray.get(ref)\n    return r\n"
)


def test_a_class_is_rated_as_a_class_not_rated_yet_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {"pkg/__init__.py": "from pkg.sub import sub\n", "pkg/sub.py": SHADOWED}
    edited = READER.replace("    x: X\n", "    x: X\n    z: int\n")
    files["pkg/mod.py"] = READER
    before, derived, *_ = read_and_run(
        tmp_path, capsys, monkeypatch, files, edited, refielded_classes
    )
    assert before.classes["pkg.mod.R"].evidence is before.classes["pkg.sub.X"].evidence
    assert derived is not None


HOLDER = (
    "import dataclasses\nfrom typing import Union\n\nfrom extpkg.outputs import Ext\n\n"
    "from pkg.mod import Out\n\n\n@dataclasses.dataclass\nclass Holder:\n    o: Union[Out, Ext]\n"
)


def test_an_installed_class_rated_for_a_reader_alone_is_left_to_the_merge(
    tmp_path: Path, installed_outputs: Callable[[str], None]
) -> None:
    # Before, `Out` is array-free: rating `Union[Out, Ext]` goes on to `Ext` (installed, rated
    # into the facts); after, `Out` holds arrays and the rating stops there: a merge rates no
    # `Ext` (found by a review).
    installed_outputs("import dataclasses\n\n\n@dataclasses.dataclass\nclass Ext:\n    x: int\n")
    project = tmp_path / "project"
    user = (
        "import ray\n\nfrom pkg.hold import Holder\n\n\ndef keep(ref):\n"
        "    h: Holder = ray.get(ref)\n    return h\n"
    )
    reads = "import numpy as np\nimport ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n"
    module = OUT.replace("import numpy as np\n", reads)
    files = {
        "pkg/__init__.py": "",
        "pkg/mod.py": module,
        "pkg/hold.py": HOLDER,
        "pkg/user.py": user,
    }
    edited = module + "    y: np.ndarray\n"
    before, derived, config = _reading(project, files, edited)
    assert "extpkg.outputs.Ext" in before.classes
    assert derived is None
    assert "extpkg.outputs.Ext" not in merged_facts(project, config).classes


# `pkg/__init__.py` binds `pkg.mod` to `json`: `pkg.mod.X`, taken through that alias while
# `X` is out of the facts to be rated anew (sorted first: `pkg.a.R`), is `json.X`, no class.
ALIASED = (
    "import dataclasses\n\nimport numpy as np\nimport ray\n\n\n@dataclasses.dataclass\n"
    "class X:\n    v: np.ndarray\n\n\ndef other(ref):\n    return ray.get(ref)\n"
)
HOLDS_X = (
    "import dataclasses\n\nimport ray\n\nfrom pkg.mod import X\n\n\n@dataclasses.dataclass\n"
    "class R:\n    x: X\n"
)


def test_classes_rated_anew_are_names_a_name_stops_at(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    keeper = KEEPER.replace("pkg.mod import Out", "pkg.a import R").replace("Out", "R")
    files = {"pkg/__init__.py": "import json as mod\n", "pkg/a.py": HOLDS_X, "pkg/user.py": keeper}
    edited = ALIASED.replace("    v: np.ndarray\n", "    v: np.ndarray\n    w: int\n")
    files["pkg/mod.py"] = ALIASED
    _, derived, _, _, full = read_and_run(
        tmp_path, capsys, monkeypatch, files, edited, refielded_classes
    )
    assert derived is not None and not full


CYCLE_READ = (
    "from dataclasses import dataclass\n\nimport numpy as np\nimport ray\n\n\n@dataclass\n"
    "class Holder:\n    x: int\n\n\n@dataclass\nclass A:\n    b: 'B'\n    arr: np.ndarray\n\n\n"
    "@dataclass\nclass B:\n    a: A\n\n\ndef fetch(ref) -> B:\n    return ray.get(ref)\n"
)


def test_a_field_reading_a_class_of_a_reference_cycle_is_left_to_the_merge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `Holder`, rated before `A` (file order), enters the cycle at `B` once its field names
    # `B`: `B` is rated holding arrays then, unknown before (found by a fuzz run).
    edited = CYCLE_READ.replace("    x: int\n", "    x: B\n")
    files = {"pkg/__init__.py": "", "pkg/mod.py": CYCLE_READ}
    before, derived, *_ = read_and_run(
        tmp_path, capsys, monkeypatch, files, edited, refielded_classes
    )
    assert derived is None
    merged = merged_facts(tmp_path / "facts", Config(root=tmp_path / "facts"))
    assert merged.classes["pkg.mod.B"] != before.classes["pkg.mod.B"]


def test_a_field_beside_one_naming_another_deferred_module_is_derived(tmp_path: Path) -> None:
    # `Out.l` names a class of `pkg.lists` (deferred, read for it): a field added beside it
    # uses no name the closure did not follow (vLLM's `ModelRunnerOutput` and its
    # `LogprobsLists`: merged before).
    lists = "import dataclasses\n\n\n@dataclasses.dataclass\nclass Lists:\n    n: int\n"
    records = (
        "import dataclasses\n\nfrom pkg.lists import Lists\n\n\n@dataclasses.dataclass\n"
        "class Out:\n    x: int\n    l: Lists\n"
    )
    files = {
        "pkg/__init__.py": "",
        "pkg/lists.py": lists,
        "pkg/records.py": records,
        "pkg/user.py": KEEPER.replace("pkg.mod", "pkg.records"),
    }
    write_tree(tmp_path, files)
    config = Config(root=tmp_path)
    before = merged_facts(tmp_path, config)
    assert "pkg.lists" in before.modules and "pkg.lists" in runs_of(tmp_path, config).deferred
    path = tmp_path / "pkg" / "records.py"
    edited = records + "    z: int = 0\n"
    old = syntax_summary(records.encode(), str(path), config)
    path.write_text(edited)
    new = syntax_summary(edited.encode(), str(path), config)
    assert old is not None and new is not None
    facts = derived_facts(before, old, new, ([], []), tmp_path, config)
    assert facts is not None
    assert_merged(facts, tmp_path, config, edited)
