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
from tests.project.merged import assert_merged, merged_facts, read_and_run, reading

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
