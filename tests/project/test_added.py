"""An edit that adds functions nothing looked up: the last facts knowing their names (and what
their annotations say they return) are the facts a merge of the edited tree gives, and a
function another file already called or asked about is left to the merge
(shmlint/facts/added.py, shmlint/run/derived.py)."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from shmlint.basics.config import Config, find_pyproject, load_config
from shmlint.basics.options import Options
from shmlint.facts.added import (
    Growth,
    Runs,
    added_functions,
    grow,
    rated_returns,
    stands,
)
from shmlint.facts.evidence import Evidence, TypeTables
from shmlint.facts.index import FactsIndex
from shmlint.facts.model import ProjectFacts
from shmlint.facts.moved import moved_lines, relined
from shmlint.facts.records import ReturnFact
from shmlint.facts.summary import CallFlow, ClassInfo, FieldInfo, FunctionInfo, ModuleSummary
from shmlint.run.passes import FirstPass, first_pass
from tests.project.merged import (
    PROJECT_TREES,
    assert_merged,
    findings,
    merged_facts,
    runs_of,
    write_tree,
)


def _item(path: Path, config: Config) -> FirstPass | None:
    item = first_pass(path.read_bytes(), str(path), config, lazy=True)
    return None if item.deferred or item.summary is None else item


def _edits(text: str) -> list[str]:
    """Functions added: at the end, on top, above the first top-level function, as a method
    of the first class; with no body to speak of, with parameters passed on, with results
    taken from elsewhere (a builtin's, the module's first function's: a reader's, maybe),
    with a return annotation naming the module's first class."""
    classes = re.findall(r"^class (\w+)", text, re.M)
    helpers = re.findall(r"^def (\w+)\(", text, re.M)
    bodies = ["def _added():\n    return None\n", "def _added(a, b=1) -> int:\n    return 1\n"]
    bodies.append("def _added(x):\n    return int(str(x))\n")
    if helpers:
        bodies.append(f"def _added(x):\n    return {helpers[0]}(x)\n")
        bodies.append(f"def _added(x):\n    return {helpers[0]}(len(x))\n")
    if classes:
        bodies.append(f"def _added(x) -> {classes[0]}:\n    return x\n")
    edits = [f"{text}\n\n{body}" for body in bodies] + [f"{bodies[0]}\n\n{text}"]
    first = re.search(r"^def ", text, re.M)
    if first:
        edits.append(f"{text[: first.start()]}{bodies[-1]}\n\n{text[first.start() :]}")
    method = re.search(r"^class \w+.*:\n(    )(?![\"'])", text, re.M)
    if method:
        where = method.start(1)
        for body in ("return x", "return str(x)"):
            edits.append(
                f"{text[:where]}    def _added(self, x):\n        {body}\n\n{text[where:]}"
            )
    return edits


def _derived(
    before: ProjectFacts, old: FirstPass, new: FirstPass, tree: Path
) -> ProjectFacts | None:
    """What the incremental run derives from ``before`` for the edit ``old`` → ``new``."""
    assert old.summary is not None and new.summary is not None
    questions = ([q for q, _ in old.questions], [q for q, _ in new.questions])
    added = added_functions(old.summary, new.summary, *questions)
    if added is None:
        return None
    lines = moved_lines(old.summary, added.summary)
    if lines is None:
        return None
    growth = grow(before, [added], _runs(tree), TypeTables.for_options(Options()), external=True)
    facts = relined(before, {new.summary.path: lines})
    return None if growth is None or facts is None else growth.applied(facts, before.index)


def _runs(tree: Path) -> Runs:
    """The modules phase 1 defers, and those several files claim (as derived._runs)."""
    return runs_of(tree, load_config(find_pyproject(tree)))


@pytest.mark.parametrize("case", PROJECT_TREES, ids=lambda path: path.name)
def test_facts_knowing_functions_added_are_the_merged_facts(case: Path, tmp_path: Path) -> None:
    tree = tmp_path / case.name
    shutil.copytree(case, tree)
    config = load_config(find_pyproject(tree))
    before = merged_facts(tree, config)
    assert before.index is not None
    derived = 0
    for path in sorted(tree.rglob("*.py")):
        old = _item(path, config)
        if old is None:
            continue
        original = path.read_text(encoding="utf-8")
        for edited in _edits(original):
            path.write_text(edited, encoding="utf-8")
            new = _item(path, config)
            assert new is not None
            facts = _derived(before, old, new, tree)
            if facts is not None:
                assert_merged(facts, tree, config, edited)
                derived += 1
            path.write_text(original, encoding="utf-8")
    assert derived >= 2  # (edits were taken, and the test saw them)
    print(f"DERIVED {case.name} {derived}")


def test_the_index_survives_the_cache(tmp_path: Path) -> None:
    index = FactsIndex(frozenset({"pkg.a.f"}), frozenset({"pkg.b.g", "pkg.c.h"}))
    assert FactsIndex.from_json(json.loads(json.dumps(index.to_json()))) == index
    growth = Growth(("pkg.a.new",), {}, frozenset({"pkg.x"}), frozenset())
    assert Growth.from_json(json.loads(json.dumps(growth.to_json()))) == growth


# Trees where another file reached the name before the function was added: the facts or the
# plan would change elsewhere, so the merge runs (each check, undone, fails its case).
CALLED = {
    # Its callee lands nowhere yet (FactsIndex.unresolved): the compiled graph's ref flows
    # through the new function into `ref`, whose `.get()` becomes a channel read.
    "called with a handle": (
        "import ray\n\n\ndef existing(actor):\n    return actor.run.remote()\n",
        "from pkg import mod\n\n\nclass Runner:\n    def step(self, dag):\n"
        "        compiled = dag.experimental_compile()\n"
        "        ref = mod.later(compiled.execute(1))\n        self.out = ref.get()\n",
        "\n\ndef later(v):\n    return v\n",
    ),
    # Asked whether it is a project function and what it returns (FactsIndex.asked): its
    # annotation says an int, where an unknown callee passes the read along.
    "asked about": (
        "import numpy as np\n\n\ndef existing(x):\n    return x\n",
        "import ray\n\nfrom pkg.mod import later\n\n\nclass Keeper:\n    def keep(self, ref):\n"
        "        value = later(ray.get(ref))\n        self.kept = value\n",
        "\n\ndef later(v) -> int:\n    return len(v)\n",
    ),
}


@pytest.mark.parametrize("name", CALLED)
def test_a_function_another_file_reached_is_left_to_the_merge(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module, user, added = CALLED[name]
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": module, "pkg/user.py": user})
    cache = ("--cache-dir", str(tmp_path / ".cache"))
    before = findings(tmp_path, capsys, *cache)
    (tmp_path / "pkg" / "mod.py").write_text(module + added)
    after = findings(tmp_path, capsys, "--no-cache")
    assert after != before  # (the function added changes another file's findings)
    assert findings(tmp_path, capsys, *cache) == after


def test_a_function_reaching_a_module_the_merge_did_not_read(tmp_path: Path) -> None:
    # `pkg.other` was never merged (nothing named it): a body calling into it would have the
    # merge read it, so the facts would gain its module.
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "other.py").write_text("def thing(x):\n    return x\n")
    mod = package / "mod.py"
    mod.write_text("import pkg\nimport ray\n\n\ndef start(actor):\n    return actor.run.remote()\n")
    config = Config(root=tmp_path)
    before = merged_facts(tmp_path, config)
    assert "pkg.other" not in before.modules
    old = _item(mod, config)
    mod.write_text(mod.read_text() + "\n\ndef _added(x):\n    pkg.other.thing(x)\n")
    new = _item(mod, config)
    assert old is not None and new is not None
    assert _derived(before, old, new, tmp_path) is None
    assert "pkg.other" in merged_facts(tmp_path, config).modules


def _tree(tmp_path: Path, modules: dict[str, str]) -> Path:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, text in modules.items():
        (package / f"{name}.py").write_text(text)
    return package / "mod.py"


def _refused(tmp_path: Path, mod: Path, added: str) -> None:
    """The function ``added`` to ``mod`` is left to the merge, whose facts differ from the last
    ones merely knowing its name (what taking it would give)."""
    config = Config(root=tmp_path)
    before = merged_facts(tmp_path, config)
    old = _item(mod, config)
    mod.write_text(mod.read_text() + added)
    new = _item(mod, config)
    assert old is not None and new is not None and old.summary and new.summary
    assert _derived(before, old, new, tmp_path) is None
    names = tuple({f.name for f in new.summary.functions} - {f.name for f in old.summary.functions})
    naive = Growth(names, {}, frozenset(), frozenset()).applied(before, before.index)
    assert naive.canonical_json() != merged_facts(tmp_path, config).canonical_json()


ACTOR = "import ray\n\n\ndef start(actor):\n    return actor.run.remote()\n"


def test_a_function_shadowing_an_import_is_left_to_the_merge(tmp_path: Path) -> None:
    # Calls of `pkg.mod.later` landed in `pkg.other.later`'s parameters (through the import):
    # defined in `pkg.mod`, it is the callee now.
    modules = {
        "other": "def later(v):\n    return v\n",
        "mod": ACTOR + "\n\nfrom pkg.other import later\n",
        "user": ACTOR + "\n\nfrom pkg import mod\n\n\ndef go(actor):\n"
        "    return mod.later(actor.run.remote())\n",
    }
    _refused(tmp_path, _tree(tmp_path, modules), "\n\ndef later(v):\n    return None\n")


# Modules making `pkg.mod`'s class an actor's: `handle.extra.remote()` runs the method added to
# it, which the merge indexes among the actor's methods.
ACTORS = {
    "inherited": (
        "Base",
        "import ray\n\nfrom pkg.mod import Base\n\n\nclass Worker(Base):\n    pass\n\n\n"
        "Actor = ray.remote(num_cpus=1)(Worker)\n",
    ),
    "made an actor elsewhere": (
        "Plain",
        "import ray\n\nfrom pkg.mod import Plain\n\n\ndef make():\n"
        "    return ray.remote(num_gpus=1)(Plain).remote()\n",
    ),
}


@pytest.mark.parametrize("how", sorted(ACTORS))
def test_a_method_of_an_actor_s_class_is_left_to_the_merge(tmp_path: Path, how: str) -> None:
    name, other = ACTORS[how]
    modules = {"mod": f"{ACTOR}\n\nclass {name}:\n    def run(self):\n        return 1\n"}
    modules["other"] = other
    added = "\n    def extra(self):\n        return None\n"
    _refused(tmp_path, _tree(tmp_path, modules), added)


def test_a_function_whose_body_makes_a_handle_is_left_to_the_merge(tmp_path: Path) -> None:
    mod = _tree(tmp_path, {"mod": ACTOR})
    _refused(tmp_path, mod, "\n\ndef _added(actor):\n    return actor.step.remote()\n")


def _rated_installed(
    tmp_path: Path, installed_outputs: Callable[[str], None], outputs: str, name: str
) -> tuple[dict[str, ReturnFact] | None, dict[str, ReturnFact] | None]:
    """A function ``-> name`` added, ``name`` imported from an installed module holding
    ``outputs``: left to the merge; and its rated returns with external types on, and off."""
    installed_outputs(outputs)
    project = tmp_path / "project"
    project.mkdir()
    mod = _tree(project, {"mod": ACTOR + f"\n\nfrom extpkg.outputs import {name}\n"})
    config = Config(root=project)
    before = merged_facts(project, config)
    old = _item(mod, config)
    _refused(project, mod, f"\n\ndef _added(x) -> {name}:\n    return x\n")
    new = _item(mod, config)
    assert old is not None and new is not None and old.summary and new.summary
    # (Its question about the name, set aside: rating its annotation refuses it too.)
    added = added_functions(old.summary, new.summary, [], [])
    assert added is not None
    tables = TypeTables.for_options(Options())
    on = rated_returns(added, before, tables, external=True)
    return on, rated_returns(added, before, tables, external=False)


def test_a_function_rating_a_class_the_facts_lack_is_left_to_the_merge(
    tmp_path: Path, installed_outputs: Callable[[str], None]
) -> None:
    # Its annotation names an installed class nothing rated yet: the merge rates it into the
    # facts' classes.
    outputs = "import numpy as np\n\n\nclass Out:\n    x: np.ndarray\n"
    on, off = _rated_installed(tmp_path, installed_outputs, outputs, "Out")
    assert on is None
    assert off == {"pkg.mod._added": ReturnFact(Evidence.UNKNOWN, "Out", False, ())}


def test_a_function_whose_annotation_reads_an_installed_module_is_left_to_the_merge(
    tmp_path: Path, installed_outputs: Callable[[str], None]
) -> None:
    # Its annotation names an installed alias (no class): the merge notes the file it read
    # among the facts' installed files (as a review found for removals).
    on, off = _rated_installed(tmp_path, installed_outputs, "Alias = dict\n", "Alias")
    assert on is None
    assert off is not None


def _stands(facts: ProjectFacts, index: FactsIndex) -> bool:
    summary = ModuleSummary("pkg.mod", "pkg/mod.py", False, (), (), ())
    info = FunctionInfo("pkg.mod.later", 1, ("v",), False)
    new = dataclasses.replace(summary, functions=(info,))
    added = added_functions(summary, new, [], [])
    assert added is not None
    return stands(added, facts, index, set(), set())


def test_what_the_facts_knew_of_the_name_refuses_it() -> None:
    nothing = FactsIndex(frozenset(), frozenset())
    assert _stands(ProjectFacts(), nothing)
    assert not _stands(ProjectFacts(), FactsIndex(frozenset({"pkg.mod.later"}), frozenset()))
    assert not _stands(ProjectFacts(), FactsIndex(frozenset(), frozenset({"pkg.mod.later"})))
    assert not _stands(ProjectFacts(functions={"pkg.mod.later"}), nothing)
    assert not _stands(ProjectFacts(aliases={"pkg.mod.later": "pkg.other.later"}), nothing)
    assert not _stands(ProjectFacts(aliases={"pkg.mod": "pkg.impl"}), nothing)  # forwarded


def test_what_the_module_says_of_the_name_refuses_it() -> None:
    info = FunctionInfo("pkg.mod.later", 3, ("v",), False)
    field = FieldInfo("x", "list[later]", 2)
    record = ClassInfo("pkg.mod.A", 1, (), True, (field,))
    old = ModuleSummary("pkg.mod", "pkg/mod.py", False, (), (record,), ())
    new = dataclasses.replace(old, functions=(info,))
    assert added_functions(old, new, [], []) is None  # an annotation spells it
    plain = dataclasses.replace(old, classes=())
    added = dataclasses.replace(new, classes=())
    assert added_functions(plain, added, [], ["k:param:pkg.mod.later.v"]) is not None
    assert added_functions(plain, added, ["x:pkg.gone"], []) is None  # a question went
    assert added_functions(plain, added, [], ["c:pkg.mod.A"]) is None  # a class question
    dunder = dataclasses.replace(
        plain, functions=(dataclasses.replace(info, name="pkg.mod.A.__init__"),)
    )
    assert added_functions(plain, dunder, [], []) is None


KEEPS = (
    "import ray\n\nimport pkg\n\nCACHE = []\n\n\ndef other(ref):\n    CACHE.append(ray.get(ref))\n"
)
# A review's cases (each gave other findings warm than without cache before its mend): the
# files, then the versions of one file in turn, the last one adding a function.
REVIEWED = {
    # Undone: the facts of these keys are stored (the first version's), yet another file
    # asked about the function (c's plan was decided against facts without it).
    "an addition undone and redone": (
        {
            "pkg/__init__.py": "",
            "pkg/c.py": "import ray\n\nfrom pkg.a import helper\n\n\nclass Holder:\n"
            "    def keep(self, ref):\n        self.value = helper(ray.get(ref))\n",
        },
        "pkg/a.py",
        [
            "import ray\n\n\ndef other():\n    return 0\n\n\ndef helper(x) -> int:\n    return 1\n",
            "import ray\n\n\ndef other():\n    return 0\n",
            "import ray\n\n\ndef other():\n    return 0\n\n\ndef helper(x) -> int:\n    return 1\n",
        ],
    ),
    # The body names `pkg.helper`: the closure follows the package's re-export into
    # `pkg.impl`, a module the last merge never read.
    "a re-export into a module never read": (
        {
            "pkg/__init__.py": "from pkg.impl import helper\n",
            "pkg/impl.py": "def helper() -> int:\n    return 1\n",
        },
        "pkg/a.py",
        [
            KEEPS,
            KEEPS + "\n\ndef keep():\n    CACHE.append(ray.get(pkg.helper.remote()))\n",
        ],
    ),
    # A method named as the top package: the merge resolves the class's base
    # (`model.records.Base`) through the module's own names, methods' among them.
    "a method named as a base's package": (
        {
            "model/__init__.py": "",
            "model/records.py": "from dataclasses import dataclass\n\nimport numpy as np\n\n\n"
            "@dataclass\nclass Base:\n    arr: np.ndarray\n",
            "model/c.py": "import ray\n\nfrom model.a import Out\n\n\nclass Keeper:\n"
            "    def keep(self, ref):\n        value: Out = ray.get(ref)\n"
            "        self.value = value\n",
        },
        "model/a.py",
        [
            "import ray\n\nfrom model.records import Base\n\n\nclass Out(Base):\n    pass\n\n\n"
            "class Runner:\n    def fetch(self, ref):\n        out: Out = ray.get(ref)\n"
            "        self.out = out\n",
            "import ray\n\nfrom model.records import Base\n\n\nclass Out(Base):\n    pass\n\n\n"
            "class Runner:\n    def fetch(self, ref):\n        out: Out = ray.get(ref)\n"
            "        self.out = out\n\n    def model(self):\n        return None\n",
        ],
    ),
}


@pytest.mark.parametrize("name", REVIEWED)
def test_a_reviewed_case_gives_the_findings_of_a_run_without_cache(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files, edited, versions = REVIEWED[name]
    write_tree(tmp_path, files)
    cache = ("--cache-dir", str(tmp_path / ".cache"))
    for version in versions:
        (tmp_path / edited).write_text(version)
        warm = findings(tmp_path, capsys, *cache)
        assert warm == findings(tmp_path, capsys, "--no-cache"), version


def test_a_module_name_several_files_claim_refuses_it() -> None:
    summary = ModuleSummary("utils", "a/utils.py", False, (), (), ())
    new = dataclasses.replace(summary, functions=(FunctionInfo("utils.later", 1, (), False),))
    added = added_functions(summary, new, [], [])
    assert added is not None
    index = FactsIndex(frozenset(), frozenset())
    assert stands(added, ProjectFacts(), index, set(), set())
    assert not stands(added, ProjectFacts(), index, set(), {"utils"})


def test_a_function_reaching_a_class_of_a_module_phase_1_deferred(tmp_path: Path) -> None:
    # `pkg.shapes` was merged (mod.py imports it) but its class never followed:
    # naming the class, the closure would follow its field's type into `pkg.extra`.
    mod = _tree(
        tmp_path,
        {
            "extra": "class Extra:\n    pass\n",
            "shapes": "from pkg.extra import Extra\n\n\ndef make():\n    return 1\n\n\n"
            "class Shape:\n    part: Extra\n",
            "mod": ACTOR + "\n\nfrom pkg import shapes\n",
        },
    )
    config = Config(root=tmp_path)
    assert "pkg.shapes" in merged_facts(tmp_path, config).modules
    assert "pkg.extra" not in merged_facts(tmp_path, config).modules
    _refused(tmp_path, mod, "\n\ndef _added(x):\n    shapes.Shape(x)\n")


def test_following_a_package_importing_its_submodule_s_class_ends() -> None:
    # As the closure (test_closure.py): `from pkg.kernel import kernel` in pkg/__init__.py
    # makes `pkg.kernel.x` run through the package again, one part longer each time.
    import signal

    facts = ProjectFacts(
        modules={"pkg": ("pkg/__init__.py", True), "pkg.kernel": ("pkg/kernel.py", False)},
        aliases={"pkg.kernel": "pkg.kernel.kernel"},
    )
    summary = ModuleSummary("pkg.mod", "pkg/mod.py", False, (), (), ())
    info = FunctionInfo("pkg.mod.later", 1, ("v",), False)
    call = CallFlow("pkg.kernel.run", "0", (), ("param:pkg.mod.later.v",), False)
    new = dataclasses.replace(summary, functions=(info,), calls=(call,))
    added = added_functions(summary, new, [], [])
    assert added is not None and added.calls == (call,)

    def stop(*_: object) -> None:
        raise TimeoutError("following the names did not end")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    try:
        index = FactsIndex(frozenset(), frozenset(), reached=frozenset({"pkg", "pkg.kernel"}))
        facts.index = index
        assert stands(added, facts, index, {"pkg", "pkg.kernel"}, set())
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
