"""An edit that adds imports or classes nothing looked up: the last facts knowing the aliases and
the classes (rated in their module) are the facts a merge of the edited tree gives, and a name
another file, a question or the module itself reached is left to the merge
(shmlint/facts/declared.py, shmlint/run/derived.py)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from shmlint.basics.config import Config
from shmlint.basics.options import Options
from shmlint.facts.added import Growth
from shmlint.facts.declared import declare, declared
from shmlint.facts.evidence import Evidence, TypeTables
from shmlint.facts.model import ProjectFacts
from shmlint.facts.records import ClassFact
from shmlint.facts.summary import ClassInfo, ModuleSummary
from shmlint.run.passes import FirstPass
from tests.project.merged import (
    PROJECT_TREES,
    assert_merged,
    copied,
    derived_facts,
    findings,
    merged_facts,
    reading,
    write_tree,
)
from tests.project.test_added import _item, _runs, _tree

ARRAY_RECORD = (
    "import dataclasses as _dc\nimport numpy as _np\n\n\n@_dc.dataclass\nclass _Added:\n"
    "    arr: _np.ndarray\n    n: int = 0\n"
)


def _edits(text: str) -> list[str]:
    """Imports inserted on top and above the first function; classes appended: plain, a record
    holding an array (with its imports), a subclass of the module's first class, one with a
    method; an import and a class at once."""
    classes = re.findall(r"^class (\w+)", text, re.M)
    future = [m.end() for m in re.finditer(r"^from __future__ import .*\n", text, re.M)]
    if future:  # (imports go below these)
        head, text = text[: future[-1]], text[future[-1] :]
        return [head + edit for edit in _edits(text)]
    plain = "class _Added:\n    x: int = 0\n"
    edits = [
        f"import os.path as _added\n{text}",
        f"from json import dumps as _added, loads as _added_too\n{text}",
        f"{text}\n\n{plain}",
        f"{text}\n\n{ARRAY_RECORD}",
        f"{text}\n\nclass _Added:\n    def get(self, a):\n        return a\n",
        f"import collections as _added\n{text}\n\n{plain}",
    ]
    if classes:
        edits.append(f"{text}\n\nclass _Added({classes[0]}):\n    extra: 'bytes' = b''\n")
    first = re.search(r"^(@.*\n)*def ", text, re.M)
    if first:
        edits.append(f"{text[: first.start()]}import typing as _added\n\n\n{text[first.start() :]}")
    return edits


@pytest.mark.parametrize("case", PROJECT_TREES, ids=lambda path: path.name)
def test_facts_knowing_imports_and_classes_added_are_the_merged_facts(
    case: Path, tmp_path: Path
) -> None:
    tree, config, before = copied(case, tmp_path)
    derived = 0
    for path in sorted(tree.rglob("*.py")):
        old = _item(path, config)
        if old is None or old.summary is None:
            continue
        original = path.read_text(encoding="utf-8")
        for edited in _edits(original):
            path.write_text(edited, encoding="utf-8")
            new = _item(path, config)
            assert new is not None and new.summary is not None, edited
            questions = ([q for q, _ in old.questions], [q for q, _ in new.questions])
            facts = derived_facts(before, old.summary, new.summary, questions, tree, config)
            if facts is not None:
                assert_merged(facts, tree, config, edited)
                derived += 1
        path.write_text(original, encoding="utf-8")
    assert derived >= 2  # (edits were taken, and the test saw them)


def test_the_growth_survives_the_cache() -> None:
    fact = ClassFact("pkg.a.C", "pkg/a.py", 3, (), (), Evidence.UNKNOWN, False)
    growth = Growth(
        (), {}, frozenset(), frozenset(), aliases={"pkg.a.x": "os.path"}, classes={"pkg.a.C": fact}
    )
    assert Growth.from_json(json.loads(json.dumps(growth.to_json()))) == growth
    assert growth.content() != Growth((), {}, frozenset(), frozenset()).content()


KEEPER = (
    "import ray\n\n{imports}\n\n\nclass Keeper:\n    def keep(self, ref):\n"
    "        value: {annotation} = ray.get(ref)\n        self.value = value\n"
)
MOD = "import ray\n\n\ndef existing(actor):\n    return actor.run.remote()\n"
LATER = (
    "\n\nimport dataclasses\n\nimport numpy as np\n\n\n@dataclasses.dataclass\nclass Later:\n"
    "    arr: np.ndarray\n"
)
# A module the merge reads whatever the edit (it reads: phase 1 analyses it), defining the class.
RECORDS = "import ray\n\n\ndef fetch_all(refs):\n    return ray.get(refs)\n" + LATER
# Trees where something reached the name before the edit added it: the facts or another
# file's plan change, so the merge runs (each check, undone, fails its case). The files, the
# file edited, its text before and after.
REACHED = {
    # Another file imported the class before it was defined (FactsIndex.spelled).
    "imported by another file": (
        {"pkg/user.py": KEEPER.format(imports="from pkg.mod import Later", annotation="Later")},
        MOD,
        MOD + LATER,
    ),
    # ... through a module that re-exports the module (spelled at a later step).
    "named through a re-export": (
        {
            "pkg/api.py": "from pkg import mod\n",
            "pkg/user.py": KEEPER.format(imports="from pkg.api import mod", annotation="mod.Later"),
        },
        MOD,
        MOD + LATER,
    ),
    # The module's own annotation spells the name it imports now (it resolves there first:
    # the index holds it as qualified in the module, `pkg.mod.Later`).
    "spelled by the module itself": (
        {
            "pkg/records.py": RECORDS,
            "pkg/user.py": "from pkg.mod import fetch\n\n\nclass Keeper:\n"
            "    def keep(self, ref):\n        self.value = fetch(ref)\n",
        },
        "import ray\n\n\ndef fetch(ref) -> 'Later':\n    return ray.get(ref)\n",
        "from pkg.records import Later\nimport ray\n\n\ndef fetch(ref) -> 'Later':\n"
        "    return ray.get(ref)\n",
    ),
    # An import another file looked up through the module (`pkg.mod.Later` was nothing).
    "an import another file named": (
        {
            "pkg/records.py": RECORDS,
            "pkg/user.py": KEEPER.format(imports="from pkg.mod import Later", annotation="Later"),
        },
        MOD,
        "from pkg.records import Later\n" + MOD,
    ),
    # The import re-exports a reader by its name: another file's call of `mod.fetch`, which
    # no module spells, becomes a call of a reader (ProjectFacts.call_evidence: a review's).
    "a reader re-exported by its name": (
        {
            "pkg/reader.py": "import ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n",
            "pkg/user.py": "import ray\nfrom pkg import mod\n\n\nclass Keeper:\n"
            "    def keep(self):\n        self.value = mod.fetch(1)\n",
        },
        MOD,
        "from pkg.reader import fetch\n" + MOD,
    ),
    # The import binds the first part of a class's base (`pkg.records.Base`): the merge
    # resolves bases through the module's imports and names first (a review's).
    "an import named as a base's package": (
        {
            "pkg/records.py": RECORDS.replace("class Later", "class Base"),
            "pkg/user.py": KEEPER.format(
                imports="from pkg.mod import Payload", annotation="Payload"
            ),
        },
        "from pkg.records import Base\n" + MOD + "\n\nclass Payload(Base):\n    n: int = 0\n",
        "import json as pkg\nfrom pkg.records import Base\n"
        + MOD
        + "\n\nclass Payload(Base):\n    n: int = 0\n",
    ),
    # A class added early in file order rates an existing class of a reference cycle first,
    # which enters the cycle elsewhere (each class of it is unknown while being rated: the
    # order decides which): the review's.
    "a class entering a cycle elsewhere": (
        {
            "pkg/z.py": MOD
            + "\n\nimport dataclasses\n\nimport numpy as np\n\n\n@dataclasses.dataclass\n"
            "class B:\n    arr: np.ndarray\n    c: 'C'\n\n\n@dataclasses.dataclass\nclass C:\n"
            "    b: B\n    n: int\n",
            "pkg/user.py": KEEPER.format(imports="from pkg.z import C", annotation="C"),
        },
        MOD,
        "from pkg.z import C\n"
        + MOD
        + "\n\nimport dataclasses\n\n\n@dataclasses.dataclass\nclass A:\n    c: C\n",
    ),
}


@pytest.mark.parametrize("name", REACHED)
def test_a_name_something_reached_is_left_to_the_merge(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files, before_text, after_text = REACHED[name]
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": before_text, **files})
    cache = ("--cache-dir", str(tmp_path / ".cache"))
    before = findings(tmp_path, capsys, *cache)
    (tmp_path / "pkg" / "mod.py").write_text(after_text)
    after = findings(tmp_path, capsys, "--no-cache")
    assert after != before  # (the name added changes a finding)
    assert findings(tmp_path, capsys, *cache) == after


def _derived(
    before: ProjectFacts, old: FirstPass, new: FirstPass, tree: Path
) -> ProjectFacts | None:
    """What the incremental run derives from ``before`` for the edit ``old`` → ``new``."""
    assert old.summary is not None and new.summary is not None
    questions = ([q for q, _ in old.questions], [q for q, _ in new.questions])
    config = Config(root=tree)
    return derived_facts(before, old.summary, new.summary, questions, tree, config)


def _refused(
    tmp_path: Path, modules: dict[str, str], added: str, appended: str = ""
) -> ProjectFacts:
    """``added`` inserted on top of ``pkg/mod.py`` (and ``appended`` at its end) is left to
    the merge: its facts."""
    mod = _tree(tmp_path, modules)
    config = Config(root=tmp_path)
    before = merged_facts(tmp_path, config)
    old = _item(mod, config)
    mod.write_text(added + mod.read_text() + appended)
    new = _item(mod, config)
    assert old is not None and new is not None
    assert _derived(before, old, new, tmp_path) is None
    return merged_facts(tmp_path, config)


def test_an_import_of_a_module_the_merge_did_not_read_is_left_to_it(tmp_path: Path) -> None:
    modules = {"mod": MOD, "unread": "class Thing:\n    x: int = 0\n"}
    assert "pkg.unread" in _refused(tmp_path, modules, "from pkg.unread import Thing\n").modules


def test_a_class_based_on_a_class_the_facts_lack_is_left_to_the_merge(
    tmp_path: Path,
) -> None:
    # (The closure would read its module; rating it would find it installed, or not.)
    modules = {"mod": MOD, "unread": LATER}
    added = "from pkg.unread import Later as _Base\n\n\nclass Child(_Base):\n    n: int = 0\n\n\n"
    facts = _refused(tmp_path, modules, added)
    assert facts.classes["pkg.mod.Child"].evidence is Evidence.ARRAYS  # (its base's array)


def test_a_class_replacing_a_function_is_left_to_the_merge(tmp_path: Path) -> None:
    # (The merge drops the function's name: a module defining both is the class's.)
    modules = {"mod": MOD + "\n\ndef Later():\n    pass\n"}  # (nothing spells its name)
    facts = _refused(tmp_path, modules, "", "\n\nclass Later:\n    x: int = 0\n")
    assert "pkg.mod.Later" in facts.classes and "pkg.mod.Later" not in facts.functions


def test_a_class_based_on_an_installed_class_not_rated_yet_is_left_to_the_merge(
    tmp_path: Path, installed_outputs: Callable[[str], None]
) -> None:
    # (The merge rates the installed class into the facts, and notes the files it read.)
    installed_outputs("import numpy as np\n\n\nclass Out:\n    x: np.ndarray\n")
    project = tmp_path / "project"  # (not the installed package's directory)
    project.mkdir()
    added = "from extpkg.outputs import Out\n"
    facts = _refused(project, {"mod": MOD}, added, "\n\nclass New(Out):\n    n: int = 0\n")
    assert "extpkg.outputs.Out" in facts.classes
    assert facts.classes["pkg.mod.New"].evidence is Evidence.ARRAYS


def test_a_method_reaching_a_module_the_merge_did_not_read_is_left_to_it(
    tmp_path: Path,
) -> None:
    modules = {"mod": "import pkg\n" + MOD, "other": "def thing(x):\n    return x\n"}
    appended = "\n\nclass Later:\n    def get(self, x):\n        return pkg.other.thing(x)\n"
    assert "pkg.other" in _refused(tmp_path, modules, "", appended).modules


def test_an_actor_class_or_a_nested_class_is_no_declaration() -> None:
    old = ModuleSummary("pkg.mod", "pkg/mod.py", False, (), (), ())
    plain = ClassInfo("pkg.mod.C", 1, (), False, ())
    assert declared(old, dataclasses.replace(old, classes=(plain,)), [], []) is not None
    actor = dataclasses.replace(plain, actor=True)
    assert declared(old, dataclasses.replace(old, classes=(actor,)), [], []) is None
    nested = dataclasses.replace(plain, name="pkg.mod.f.C")
    assert declared(old, dataclasses.replace(old, classes=(nested,)), [], []) is None
    imported = dataclasses.replace(old, imports=(("x", "os.path"),))
    assert declared(old, imported, [], []) is not None
    assert declared(imported, old, [], []) is None  # (an import removed)
    assert declared(old, imported, ["x:pkg.gone"], []) is None  # (a question gone)


def test_classes_added_to_two_modules_one_naming_the_other(tmp_path: Path) -> None:
    # One run, two files: a class in each, the first file's naming the second's through the
    # import the same edit added (rated as the merge rates them: one resolver for both).
    mod = _tree(tmp_path, {"mod": MOD, "other": MOD})
    other = mod.parent / "other.py"
    config = Config(root=tmp_path)
    before = merged_facts(tmp_path, config)
    olds = [_item(path, config) for path in (mod, other)]
    mod.write_text("from pkg.other import Later\n" + MOD + "\n\nclass Holder:\n    later: Later\n")
    other.write_text(MOD + LATER)
    items = []
    for old, path in zip(olds, (mod, other), strict=True):
        new = _item(path, config)
        assert old is not None and new is not None and old.summary and new.summary
        questions = ([q for q, _ in old.questions], [q for q, _ in new.questions])
        item = declared(old.summary, new.summary, *questions)
        assert item is not None
        items.append(item)
    tables = TypeTables.for_options(Options())
    growth = declare(before, items, _runs(tmp_path), tables, external=True)
    assert growth is not None
    facts = growth.applied(before, before.index)  # (no line the facts carry moved)
    merged = merged_facts(tmp_path, config)
    assert facts.canonical_json() == merged.canonical_json()
    assert merged.classes["pkg.mod.Holder"].evidence is Evidence.ARRAYS


def test_classes_added_are_names_a_name_stops_at(tmp_path: Path) -> None:
    # `pkg/__init__.py` binds `pkg.mod` to `json`: `R`'s `pkg.mod.X`, rated before `X`, is
    # no `json.X` (a name stops at a class being rated, as in the merge: found by a review).
    module = (
        "import dataclasses\n\nimport numpy as np\nimport ray\n\nimport pkg\n\n\n"
        "def other(ref):\n    return ray.get(ref)\n"
    )
    added = (
        "\n\n@dataclasses.dataclass\nclass R:\n    x: 'pkg.mod.X'\n\n\n"
        "@dataclasses.dataclass\nclass X:\n    v: np.ndarray\n"
    )
    files = {"pkg/__init__.py": "import json as mod\n", "pkg/mod.py": module}
    before, derived, config = reading(tmp_path, files, module + added, declared)
    assert derived is not None
    assert_merged(derived, tmp_path, config, added)
