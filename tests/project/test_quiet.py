"""A function added whose body takes from elsewhere (shmlint/facts/quiet.py): derived when
what it takes gives the merge nothing to pass on, left to the merge when the merge would pass
on a handle kind or a read, or would look for its name among the callers of readers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shmlint.facts.added import added_functions
from shmlint.facts.declared import declared
from shmlint.facts.resigned import resigned_functions
from shmlint.facts.summary import ModuleSummary
from tests.project.merged import (
    assert_merged,
    merged_facts,
    read_and_run,
    reading,
    warm_after_edits,
)

READS = "import ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n"
MAKES = "def make(dag):\n    return dag.experimental_compile()\n"
LOADER = "import ray\n\n\nclass Loader:\n    def load(self, ref):\n        return ray.get(ref)\n"
# (A module making a handle: phase 1 analyses all its bodies, for the flows they record.)
HEAD = (
    "import os\n\nimport ray\n\nfrom pkg.reads import Loader, fetch, make\n\n\n"
    "def kept(x):\n    return x\n\n\ndef compiled(dag):\n    return dag.experimental_compile()\n"
)
# (A package analysed: a name running through a deferred one refuses removals on its own.)
FILES = {"pkg/__init__.py": "import ray\n", "pkg/reads.py": f"{READS}\n\n{MAKES}\n\n{LOADER}"}


def _files(tmp: Path) -> dict[str, str]:
    return {**FILES, "pkg/mod.py": HEAD}


@pytest.mark.parametrize(
    "body",
    [
        "return int(os.environ.get(x))",  # builtins and an installed module's function
        "return kept(len(x))",  # a project function's result, a call passing a builtin's
        "return kept(x) or str(x)",
    ],
)
def test_a_body_taking_nothing_the_merge_passes_on_is_derived(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, body: str
) -> None:
    edited = f"{HEAD}\n\ndef added(x):\n    {body}\n"
    _, derived, quiet, warm, full = read_and_run(
        tmp_path, capsys, monkeypatch, _files(tmp_path), edited, added_functions
    )
    assert derived is not None  # (and a merge's: read_and_run holds it to one)
    assert warm == quiet and not full


def _refused(tmp_path: Path, body: str) -> tuple[object, object]:
    """The facts of a merge after ``added`` with ``body`` is appended to ``pkg/mod.py``
    (which the run must not derive), and the words that merge looked for."""
    edited = f"{HEAD}\n\ndef added(x):\n    {body}\n"
    before, derived, config = reading(tmp_path, _files(tmp_path), edited, added_functions)
    assert derived is None
    return before, merged_facts(tmp_path, config)


def test_a_body_taking_a_handle_is_left_to_the_merge(tmp_path: Path) -> None:
    _, merged = _refused(tmp_path, "return make(x)")
    assert merged.slot_kinds["ret:pkg.mod.added"]  # type: ignore[attr-defined]


def test_a_body_returning_a_readers_result_is_left_to_the_merge(tmp_path: Path) -> None:
    _, merged = _refused(tmp_path, "return fetch(x)")
    assert "pkg.mod.added" in merged.returned_reads  # type: ignore[attr-defined]


def test_a_body_returning_a_reading_methods_result_is_left_to_the_merge(tmp_path: Path) -> None:
    # (The words the run looked for leave out methods: `load` is none of them.)
    _, merged = _refused(tmp_path, "return Loader.load(None, x)")
    assert "pkg.mod.added" in merged.returned_reads  # type: ignore[attr-defined]


def _removed(old: ModuleSummary, new: ModuleSummary, *questions: list[str]) -> object:
    """The reading of functions removed (``added_functions`` backwards)."""
    return added_functions(new, old, questions[1], questions[0])


def _derived(tmp_path: Path, before: str, after: str, read: Callable[..., Any]) -> object:
    """What the run derives when ``pkg/mod.py`` goes from ``before`` to ``after`` (an edit
    ``read`` takes), held to a merge's facts when derived."""
    files = {**FILES, "pkg/mod.py": before}
    _, derived, config = reading(tmp_path, files, after, read)
    if derived is not None:
        assert_merged(derived, tmp_path, config, after)
    return derived


@pytest.mark.parametrize(
    ("body", "derived"),
    [("kept(int(x))", True), ("kept(make(x))", False), ("print(fetch(x))", False)],
)
def test_a_removed_body_that_passed_on_a_handle_or_a_read_is_left_to_the_merge(
    tmp_path: Path, body: str, derived: bool
) -> None:
    # (Its call of `kept` placed a graph in `kept`'s parameter: gone with it.)
    before = f"{HEAD}\n\ndef gone(x):\n    {body}\n"
    assert (_derived(tmp_path, before, HEAD, _removed) is not None) is derived


@pytest.mark.parametrize(
    ("old", "new", "derived"),
    [
        ("kept(x)", "kept(str(x))", True),
        ("kept(x)", "fetch(x)", False),  # (it becomes a reader)
        ("fetch(x)", "kept(x)", False),  # (it was one)
        ("kept(make(x))", "kept(x)", False),  # (a graph passed on)
    ],
)
def test_a_body_changed_in_place_takes_nothing_the_merge_passes_on(
    tmp_path: Path, old: str, new: str, derived: bool
) -> None:
    text = f"{HEAD}\n\ndef changed(x) -> int:\n    return {{}}\n"
    before, after = text.format(old), text.format(new)
    assert (_derived(tmp_path, before, after, resigned_functions) is not None) is derived


@pytest.mark.parametrize(("body", "derived"), [("str(x)", True), ("make(x)", False)])
def test_a_new_class_s_methods_take_nothing_the_merge_passes_on(
    tmp_path: Path, body: str, derived: bool
) -> None:
    after = f"{HEAD}\n\nclass Added:\n    def get(self, x):\n        return {body}\n"
    assert (_derived(tmp_path, HEAD, after, declared) is not None) is derived


# --- Found by a review (each failed before its mend) ------------------------------------------

# A deferred module keeping what `pkg.mod.added` returns: a full run that knows `added`
# returns a read re-checks it (SHM102); a run that does not, does not.
KEEPS_ADDED = (
    "import numpy as np\n\nfrom pkg.mod import added\n\n\nclass Keeper:\n"
    "    def keep(self, ref) -> None:\n        self.kept: np.ndarray = added(ref)\n"
)
REVIEW_FETCH = "import ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n"


# --- 1. A run whose facts were served from the cache records no caller words -------------------

SERVED_HEAD = (
    "import ray\n\nfrom pkg.reads import fetch\n\n\n"
    "def kept(x):\n    return x\n\n\ndef compiled(dag):\n    return dag.experimental_compile()\n"
)


def test_a_reader_added_after_an_undone_edit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        "pkg/__init__.py": "import ray\n",
        "pkg/reads.py": REVIEW_FETCH,
        "pkg/mod.py": SERVED_HEAD,
        "pkg/use.py": KEEPS_ADDED,
    }
    edits = [
        f"{SERVED_HEAD}\n\ndef other(ref):\n    return ray.get(ref)\n",  # (merged)
        SERVED_HEAD,  # (undone: the facts of these keys are served from the cache)
        f"{SERVED_HEAD}\n\ndef added(x):\n    return fetch(x)\n",
    ]
    warm = warm_after_edits(tmp_path, capsys, monkeypatch, files, edits)
    assert any("use.py" in str(f) for f in warm)  # (and a run without cache finds the same)


# --- 2. A reader the merge finds through an alias caller_words' own map lacks ------------------

CHAIN_HEAD = (
    "import ray\n\nfrom pkg.other import g\n\n\n"
    "def kept(x):\n    return x\n\n\ndef compiled(dag):\n    return dag.experimental_compile()\n"
)
CHAIN = {
    "pkg/__init__.py": "import ray\n",
    "pkg/reads.py": REVIEW_FETCH,
    # (Deferred; pkg/sub/m.py is merged only as a module spelling `fetch`, a caller word.)
    "pkg/sub/__init__.py": "",
    "pkg/sub/m.py": "from pkg.reads import fetch as f\n",
    "pkg/a.py": "import ray\n\nfrom pkg import sub as s\n",
    # `g` returns a read in the merge (a.s.m.f → pkg.sub.m.f → pkg.reads.fetch), but
    # caller_words, without pkg.sub.m's aliases, does not find it: "g" is no caller word.
    "pkg/other.py": (
        "import ray\n\nfrom pkg import a\n\n\ndef g(x):\n    return a.s.m.f(x)\n\n\n"
        "def compiled(dag):\n    return dag.experimental_compile()\n"
    ),
    "pkg/mod.py": CHAIN_HEAD,
}
CHANGED = f"{CHAIN_HEAD}\n\ndef changed(x) -> int:\n    return {{}}\n"


@pytest.mark.parametrize(
    ("before", "after", "read"),
    [
        (CHAIN_HEAD, f"{CHAIN_HEAD}\n\ndef added(x):\n    return g(x)\n", added_functions),
        (CHANGED.format("kept(x)"), CHANGED.format("g(x)"), resigned_functions),
        (CHANGED.format("g(x)"), CHANGED.format("kept(x)"), resigned_functions),
        (
            CHAIN_HEAD,
            f"{CHAIN_HEAD}\n\nclass Added:\n    def get(self, x):\n        return g(x)\n",
            declared,
        ),
    ],
    ids=["added", "resigned-to", "resigned-from", "declared"],
)
def test_a_reader_caller_words_miss(tmp_path: Path, before: str, after: str, read: Any) -> None:
    files = {**CHAIN, "pkg/mod.py": before}
    last, derived, config = reading(tmp_path, files, after, read)
    assert "pkg.other.g" in last.returned_reads
    if derived is not None:
        assert_merged(derived, tmp_path, config, after)


# --- 3. A class named as a module: its reading method passes as a module-level function ---------

FOO_HEAD = (
    "import ray\n\nfrom pkg import Foo\n\n\n"
    "def kept(x):\n    return x\n\n\ndef compiled(dag):\n    return dag.experimental_compile()\n"
)
FOO = {
    # A class `pkg.Foo` whose method reads, and a module `pkg.Foo` beside it: quiet.py takes
    # `pkg.Foo.load` for a module-level function (its owner is a module), and "load" is no
    # caller word (flow.caller_words leaves out methods of the project's classes).
    "pkg/__init__.py": (
        "import ray\n\n\nclass Foo:\n    def load(self, ref):\n        return ray.get(ref)\n"
    ),
    "pkg/Foo.py": "import ray\n\n\ndef compiled(dag):\n    return dag.experimental_compile()\n",
    "pkg/mod.py": FOO_HEAD,
}


def test_a_method_of_a_class_named_as_a_module(tmp_path: Path) -> None:
    edited = f"{FOO_HEAD}\n\ndef added(x):\n    return Foo.load(None, x)\n"
    last, derived, config = reading(tmp_path, FOO, edited, added_functions)
    assert "pkg.Foo.load" in last.returned_reads
    if derived is not None:
        assert_merged(derived, tmp_path, config, edited)


@pytest.mark.parametrize(
    ("files", "edited"),
    [
        (CHAIN, f"{CHAIN_HEAD}\n\ndef added(x):\n    return g(x)\n"),
        (FOO, f"{FOO_HEAD}\n\ndef added(x):\n    return Foo.load(None, x)\n"),
    ],
    ids=["a-reader-caller-words-miss", "a-method-of-a-class-named-as-a-module"],
)
def test_a_caller_of_such_a_reader_finds_what_a_run_without_cache_finds(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],
    edited: str,
) -> None:
    keeps = {**files, "pkg/use.py": KEEPS_ADDED}
    warm = warm_after_edits(tmp_path, capsys, monkeypatch, keeps, [edited])
    assert any("use.py" in str(f) for f in warm)  # (and a run without cache finds the same)


def test_a_body_making_the_closure_read_a_module_read_only_for_a_caller_s_name(
    tmp_path: Path,
) -> None:
    # `pkg/sub/m.py` was merged only as a module spelling `fetch`; a body naming
    # `sub.m.helper` makes the closure read it, and its alias then makes `pkg.other.g` a
    # function that may return a read: a full run looks for "g" too.
    head = CHAIN_HEAD.replace("from pkg.other import g\n", "from pkg import sub\n")
    files = {**CHAIN, "pkg/mod.py": head}
    edited = f"{head}\n\ndef added(x):\n    return sub.m.helper(x)\n"
    last, derived, config = reading(tmp_path, files, edited, added_functions)
    assert last.index is not None and last.index.callers is not None
    assert "g" not in last.index.callers
    assert derived is None
    merged = merged_facts(tmp_path, config).index
    assert merged is not None and merged.callers is not None
    assert "g" in merged.callers  # (what a derivation would have missed)


def test_a_method_of_a_class_named_as_a_module_that_may_return_a_read(tmp_path: Path) -> None:
    # `load` reads a ref no one passes it (not a read the merge keeps, but one
    # `flow.caller_words` counts), in a class `pkg.Foo` beside a module `pkg.Foo`: a function
    # returning its result joins the callers' names of a full run.
    files = {
        **FOO,
        "pkg/__init__.py": (
            "import ray\n\n\nclass Foo:\n    def load(self, ref):\n        return ref.get()\n"
        ),
    }
    edited = f"{FOO_HEAD}\n\ndef added(x):\n    return Foo.load(None, x)\n"
    last, derived, config = reading(tmp_path, files, edited, added_functions)
    assert "pkg.Foo.load" not in last.returned_reads
    assert derived is None
    merged = merged_facts(tmp_path, config).index
    assert merged is not None and merged.callers is not None
    assert "added" in merged.callers
