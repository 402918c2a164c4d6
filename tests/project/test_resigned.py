"""An edit that changes functions in place (a parameter added, a return annotation written or
changed): the last facts with the functions' return facts rated anew are the facts a merge of
the edited tree gives, and a function whose signature a handle or an answer depends on is left
to the merge (shmlint/facts/resigned.py, shmlint/run/derived.py)."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from shmlint.basics.config import Config
from shmlint.facts.model import ProjectFacts
from shmlint.facts.resigned import resigned_functions
from shmlint.facts.summary import ModuleSummary
from shmlint.run.passes import first_pass
from tests.project.merged import (
    PROJECT_TREES,
    analysed,
    assert_changes_findings,
    assert_merged,
    copied,
    derived_facts,
    findings,
    merged_facts,
    parses,
    questions_of,
    read_and_run,
    reading,
    warm_after,
    write_tree,
)
from tests.speed.test_incremental import _full_runs


def _offset(lines: list[str], line: int, column: int) -> int:
    """The offset in the text of ``lines`` of (1-based) ``line`` and ``column``."""
    return sum(map(len, lines[: line - 1])) + column


def _header_colon(text: str, start: int) -> int | None:
    """The offset of the colon ending a ``def`` header whose parameters open at or after
    ``start`` (parentheses counted; None when strings make it unclear)."""
    depth = 0
    for offset in range(text.index("(", start), len(text)):
        char = text[offset]
        if char in "\"'#":
            return None
        depth += (char in "([{") - (char in ")]}")
        if depth == 0 and char == ":":
            return offset
    return None


def signature_edits(text: str) -> list[str]:
    """The text with each function's signature changed, one at a time: a parameter added
    after its last one, its return annotation replaced by (or written as) ``int``, its return
    annotation removed."""
    lines = text.splitlines(keepends=True)
    edits = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        start = _offset(lines, node.lineno, node.col_offset)
        parts = [
            *node.args.posonlyargs,
            *node.args.args,
            *node.args.defaults,
            *([node.args.vararg] if node.args.vararg else []),
            *node.args.kwonlyargs,
            *(d for d in node.args.kw_defaults if d is not None),
        ]
        if node.args.kwarg is None:
            if parts:
                last = max(parts, key=lambda n: (n.end_lineno or 0, n.end_col_offset or 0))
                assert last.end_lineno is not None and last.end_col_offset is not None
                at = _offset(lines, last.end_lineno, last.end_col_offset)
                edits.append(f"{text[:at]}, _extra=None{text[at:]}")
            else:
                at = text.index("(", start) + 1
                edits.append(f"{text[:at]}_extra=None{text[at:]}")
        if node.returns is not None:
            returns = node.returns
            assert returns.end_lineno is not None and returns.end_col_offset is not None
            begin = _offset(lines, returns.lineno, returns.col_offset)
            end = _offset(lines, returns.end_lineno, returns.end_col_offset)
            edits.append(f"{text[:begin]}int{text[end:]}")
            arrow = text.rindex("->", start, begin)
            edits.append(f"{text[:arrow].rstrip()}{text[end:]}")
        else:
            colon = _header_colon(text, start)
            if colon is not None:
                edits.append(f"{text[:colon]} -> int{text[colon:]}")
    return [edit for edit in edits if parses(edit)]


def _summary(text: str) -> ModuleSummary:
    """The summary phase 1 gives of ``text`` as ``pkg/mod.py``."""
    item = first_pass(text.encode(), "pkg/mod.py", Config(), lazy=True)
    assert item.summary is not None
    return item.summary


def test_facts_after_functions_changed_in_place_are_the_merged_facts(tmp_path: Path) -> None:
    """Every signature edit of every project fixture read as a change in place and derived
    gives the facts of a merge; and most of those read so are derived."""
    counts = Counter[str]()
    for case in PROJECT_TREES:
        tree, config, before = copied(case, tmp_path / "trees")
        for path in sorted(tree.rglob("*.py")):
            old = analysed(path, config)
            if old is None or old.summary is None:
                continue
            original = path.read_text(encoding="utf-8")
            for edited in signature_edits(original):
                counts["tried"] += 1
                path.write_text(edited, encoding="utf-8")
                new = analysed(path, config)
                if new is None or new.summary is None:
                    continue
                questions = questions_of(old, new)
                if resigned_functions(old.summary, new.summary, *questions) is None:
                    continue  # (another reading, or one added_functions refuses)
                counts["read"] += 1
                facts = derived_facts(before, old.summary, new.summary, questions, tree, config)
                if facts is not None:
                    assert_merged(facts, tree, config, f"{path}:\n{edited}")
                    counts["derived"] += 1
            path.write_text(original, encoding="utf-8")
    assert counts["derived"] * 2 >= counts["read"] > 0, counts


HELPER = (
    "import ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n\n\n"
    "def helper(x) -> int:\n    return len(x)\n"
)
USER = (
    "from pkg.mod import fetch, helper\n\n\nclass Keeper:\n    def keep(self, ref):\n"
    "        self.kept = fetch(ref)\n        self.size = helper(ref)\n"
)


def test_a_parameter_added_to_a_helper_another_file_calls_is_derived(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": HELPER, "pkg/user.py": USER})
    cache = ("--cache-dir", str(tmp_path / ".cache"))
    before = findings(tmp_path, capsys, *cache)
    assert before  # (the kept read)
    mod = tmp_path / "pkg" / "mod.py"
    mod.write_text("# moved\n" + HELPER.replace("def helper(x)", "def helper(x, scale=1)"))
    full = _full_runs(monkeypatch)
    warm = findings(tmp_path, capsys, *cache)
    assert not full  # (derived: no merge of the tree)
    assert warm != before  # (the read's line moved, and the finding citing it)
    assert findings(tmp_path, capsys, "--no-cache") == warm


def _reading(
    root: Path, files: dict[str, str], edited: str
) -> tuple[ProjectFacts, ProjectFacts | None, Config]:
    return reading(root, files, edited, resigned_functions)


def test_a_parameter_a_handle_reached_is_left_to_the_merge(tmp_path: Path) -> None:
    user = (
        "from pkg.mod import helper\n\n\ndef use(a):\n    h = a.remote()\n    return helper(1, h)\n"
    )
    module = "import ray\n\n\ndef helper(x, y):\n    return x\n"
    files = {"pkg/__init__.py": "", "pkg/mod.py": module, "pkg/user.py": user}
    edited = module.replace("(x, y)", "(w, x, y)")
    before, derived, config = _reading(tmp_path, files, edited)
    assert derived is None
    assert merged_facts(tmp_path, config).slot_kinds != before.slot_kinds


def test_a_handle_passed_in_no_parameter_yet_is_left_to_the_merge(tmp_path: Path) -> None:
    # `helper(h=...)` lands nowhere while `helper` has no `h` (FactsIndex.unplaced); the new
    # parameter takes the handle.
    user = "from pkg.mod import helper\n\n\ndef use(a):\n    return helper(1, h=a.remote())\n"
    module = "import ray\n\n\ndef helper(x, **rest):\n    return x\n"
    files = {"pkg/__init__.py": "", "pkg/mod.py": module, "pkg/user.py": user}
    before, derived, config = _reading(tmp_path, files, module.replace("(x,", "(x, h=None,"))
    assert derived is None
    assert "pkg.mod.helper" in before.index.unplaced
    merged = merged_facts(tmp_path, config)
    assert "param:pkg.mod.helper.h" in merged.slot_kinds


def test_a_return_fact_another_file_asked_for_is_derived_and_that_file_replanned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The user asked what `later` returns: an int, where an unknown callee passes the read on.
    # Its answer changes, and its findings with it (shmlint/run/replan.py).
    module = "import ray\n\n\ndef later(v) -> int:\n    return v\n"
    user = (
        "import ray\n\nfrom pkg.mod import later\n\n\nclass Keeper:\n    def keep(self, ref):\n"
        "        value = later(ray.get(ref))\n        self.kept = value\n"
    )
    files = {"pkg/__init__.py": "", "pkg/mod.py": module, "pkg/user.py": user}
    edited = module.replace(" -> int", "")
    _, derived, quiet, warm, full = read_and_run(
        tmp_path, capsys, monkeypatch, files, edited, resigned_functions
    )
    assert derived is not None and not full and warm != quiet


def test_a_return_fact_nobody_asked_for_is_derived(tmp_path: Path) -> None:
    module = "import numpy as np\nimport ray\n\n\ndef make(n) -> int:\n    return n\n"
    files = {"pkg/__init__.py": "", "pkg/mod.py": module}
    edited = module.replace("-> int", "-> np.ndarray")
    before, derived, config = _reading(tmp_path, files, edited)
    assert derived is not None
    assert_merged(derived, tmp_path, config, edited)
    assert derived.returns != before.returns


def test_a_body_that_stops_naming_a_deferred_module_is_left_to_the_merge(
    tmp_path: Path,
) -> None:
    # `pkg.other` is read by the merge for `helper`'s call of it alone (phase 1 deferred it):
    # a body no longer calling it leaves it out of the facts' modules.
    module = (
        "import pkg\nimport ray\n\n\ndef start(actor):\n    return actor.run.remote()\n\n\n"
        "def helper(x):\n    pkg.other.thing(x)\n"
    )
    files = {
        "pkg/__init__.py": "",
        "pkg/other.py": "def thing(x):\n    return x\n",
        "pkg/mod.py": module,
    }
    edited = module.replace("pkg.other.thing(x)", "return x")
    before, derived, config = _reading(tmp_path, files, edited)
    assert derived is None
    assert "pkg.other" in before.modules
    assert "pkg.other" not in merged_facts(tmp_path, config).modules


INSTALLED = "import numpy as np\n\n\nclass Out:\n    x: np.ndarray\n\n\nAlias = dict\n"


@pytest.mark.parametrize("named", ["Out", "Alias"])
@pytest.mark.parametrize("direction", ["old", "new"])
def test_an_annotation_rating_an_installed_name_is_left_to_the_merge(
    tmp_path: Path, installed_outputs: Callable[[str], None], named: str, direction: str
) -> None:
    # Rating the old annotation rated an installed class into the facts, or noted the file it
    # read, maybe for this function alone; rating the new one would (``rated_returns``).
    installed_outputs(INSTALLED)
    project = tmp_path / "project"
    rated = f"import ray\nfrom extpkg.outputs import {named}\n\n\ndef make(x) -> {named}:\n"
    plain = rated.replace(f"-> {named}", "-> int")
    module, edited = (rated, plain) if direction == "old" else (plain, rated)
    files = {"pkg/__init__.py": "", "pkg/mod.py": module + "    return x\n"}
    before, derived, config = _reading(project, files, edited + "    return x\n")
    assert derived is None
    merged = merged_facts(project, config)
    assert (merged.classes, merged.external_files) != (
        before.classes,
        before.external_files,
    )


BASE = (
    "import numpy as np\nimport ray\n\n\nclass Base:\n    def run(self, x) -> int:\n"
    "        return 1\n"
)
WORKER = (
    "import ray\n\nfrom pkg.mod import Base\n\n\n@ray.remote\nclass Worker(Base):\n"
    "    def other(self):\n        return None\n\n\nclass Keeper:\n"
    "    def keep(self, worker):\n        self.kept = ray.get(worker.run.remote(1))\n"
)


def test_a_parameter_added_to_a_method_an_actor_inherits_is_derived(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", "pkg/mod.py": BASE, "pkg/worker.py": WORKER}
    edited = BASE.replace("run(self, x)", "run(self, x, y=None)")
    before, derived, config = _reading(tmp_path, files, edited)
    assert derived is not None
    assert "pkg.mod.Base.run" in before.actor_methods["run"]
    assert_merged(derived, tmp_path, config, edited)


def test_a_return_fact_of_a_method_an_actor_inherits_is_derived(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `worker.run.remote()` asks what an actor's `run` returns by its last name (``m:``).
    files = {"pkg/__init__.py": "", "pkg/mod.py": BASE, "pkg/worker.py": WORKER}
    edited = BASE.replace("-> int", "-> np.ndarray")
    _, derived, quiet, warm, full = read_and_run(
        tmp_path, capsys, monkeypatch, files, edited, resigned_functions
    )
    assert derived is not None and not full and warm != quiet


GUARDED = (
    "import sys\n\nimport ray\n\nif sys.version_info >= (3, 8):\n\n    def scale(x) -> int:\n"
    "        return x\n\nelse:\n\n    def scale(x):\n        return x[1:]\n"
)
SCALED = (
    "import ray\n\nfrom pkg.mod import scale\n\n\ndef keep(ref, out):\n"
    "    out.append(scale(ray.get(ref)))\n"
)


def test_a_name_defined_twice_is_left_to_the_merge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The merge rates the last definition with an annotation; a change of either may change
    # which one that is (found by a review: the derivation kept `-> int`).
    edited = (
        "import sys\n\nimport ray\n\nif sys.version_info >= (3, 8):\n\n    def scale(x):\n"
        "        return x[1:]\n\nelse:\n\n    def scale(x, y=None):\n        return x[1:]\n"
    )
    assert resigned_functions(_summary(GUARDED), _summary(edited), [], []) is None
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": GUARDED, "pkg/user.py": SCALED})
    before = merged_facts(tmp_path, Config(root=tmp_path))
    assert_changes_findings(tmp_path, capsys, tmp_path / "pkg" / "mod.py", GUARDED, edited)
    assert merged_facts(tmp_path, Config(root=tmp_path)).returns != before.returns


def test_a_constructor_passed_a_handle_in_no_parameter_yet_is_left_to_the_merge(
    tmp_path: Path,
) -> None:
    # `Box(h=...)` lands nowhere while `Box.__init__` has no `h` (its class is unplaced).
    user = "from pkg.mod import Box\n\n\ndef use(a):\n    return Box(1, h=a.remote())\n"
    module = "import ray\n\n\nclass Box:\n    def __init__(self, x, **rest):\n        self.x = 1\n"
    files = {"pkg/__init__.py": "", "pkg/mod.py": module, "pkg/user.py": user}
    before, derived, config = _reading(
        tmp_path, files, module.replace("(self, x,", "(self, x, h=None,")
    )
    assert derived is None
    assert "pkg.mod.Box" in before.index.unplaced
    assert "param:pkg.mod.Box.__init__.h" in merged_facts(tmp_path, config).slot_kinds


def test_a_parameter_added_to_a_constructor_is_derived(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = HELPER + "\n\nclass Box:\n    def __init__(self, x):\n        self.x = 1\n"
    user = USER + "\n\ndef make():\n    return Box(1)\n"
    user = user.replace("import fetch, helper", "import Box, fetch, helper")
    write_tree(tmp_path, {"pkg/__init__.py": "", "pkg/mod.py": module, "pkg/user.py": user})
    cache = ("--cache-dir", str(tmp_path / ".cache"))
    before = findings(tmp_path, capsys, *cache)
    mod = tmp_path / "pkg" / "mod.py"
    mod.write_text("# moved\n" + module.replace("(self, x)", "(self, x, y=0)"))
    full = _full_runs(monkeypatch)
    warm = findings(tmp_path, capsys, *cache)
    assert not full
    assert warm != before
    assert findings(tmp_path, capsys, "--no-cache") == warm


def test_other_dunder_methods_are_left_to_the_merge() -> None:
    module = "import ray\n\n\nclass Box:\n    def __call__(self, x):\n        return None\n"
    old, new = _summary(module), _summary(module.replace("(self, x)", "(self, x, y=0)"))
    assert resigned_functions(old, new, [], []) is None
    init = module.replace("__call__", "__init__")
    old, new = _summary(init), _summary(init.replace("(self, x)", "(self, x, y=0)"))
    assert resigned_functions(old, new, [], []) is not None


ZBASE = (
    "import numpy as np\nimport ray\n\n\nclass Base:\n    def run(self, x) -> int:\n"
    "        return 1\n"
)
OWN = (
    "import ray\n\nfrom pkg.zbase import Base\n\n\n@ray.remote\nclass Worker(Base):\n"
    "    def other(self):\n        return None\n\n\n@ray.remote\nclass Own:\n"
    "    def run(self, x) -> int:\n        return 1\n\n\nclass Keeper:\n"
    "    def keep(self, own):\n        self.kept = ray.get(own.run.remote(1))\n"
)


def test_an_actor_method_answer_that_stops_agreeing_replans_the_asking_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `own.run.remote()` asks what an actor's `run` returns (``m:``): the worker's own facts
    # and the project's answer alike (its `Own.run` first), so phase 2 leaves it alone; once
    # the inherited `Base.run` returns arrays, the actors disagree and it is checked again.
    files = {"pkg/__init__.py": "", "pkg/zbase.py": ZBASE, "pkg/worker.py": OWN}
    write_tree(tmp_path, files)
    edited = ZBASE.replace("-> int", "-> np.ndarray")
    mod = tmp_path / "pkg" / "zbase.py"
    quiet, warm, full = warm_after(tmp_path, capsys, monkeypatch, [(mod, edited)])
    assert not full and warm and not quiet
