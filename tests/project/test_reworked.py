"""An edit that changes functions in place and adds or removes others beside them (a helper
extracted, or inlined): the last facts with the old versions forgotten and the new ones known
are the facts a merge of the edited tree gives, and what another file reached or what the
merge passed on is left to the merge (shmlint/facts/resigned.py ``reworked_functions``)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

from shmlint.facts.resigned import reworked_functions
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
)

HELPER = "\n\ndef _extracted(value):\n    return value\n"


def extractions(text: str) -> list[tuple[str, str]]:
    """Per ``return EXPR`` of a module-level function: the module with the expression passed
    through a new helper, and (an inlining) the module with that helper back to the original
    — as (before, after) pairs of texts."""
    pairs = []
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for sub in ast.walk(node):
            if not isinstance(sub, ast.Return) or sub.value is None:
                continue
            value = sub.value
            if value.lineno != value.end_lineno:
                continue
            line = lines[value.lineno - 1]
            start, end = value.col_offset, value.end_col_offset
            if not line.isascii() or end is None:
                continue  # (byte offsets: a non-ASCII line is left alone)
            edited_line = f"{line[:start]}_extracted({line[start:end]}){line[end:]}"
            edited = "".join([*lines[: value.lineno - 1], edited_line, *lines[value.lineno :]])
            edited += HELPER
            if parses(edited):
                pairs += [(text, edited), (edited, text)]
            break  # (one return per function)
    return pairs


def test_facts_after_a_helper_extracted_or_inlined_are_the_merged_facts(tmp_path: Path) -> None:
    """Every extraction (and inlining) of every module-level function's return of every
    project fixture read as a rework and derived gives the facts of a merge."""
    counts = Counter[str]()
    for case in PROJECT_TREES:
        tree, config, _ = copied(case, tmp_path / "trees")
        for path in sorted(tree.rglob("*.py")):
            original = path.read_text(encoding="utf-8")
            for before_text, after_text in extractions(original):
                counts["tried"] += 1
                path.write_text(before_text, encoding="utf-8")
                before = merged_facts(tree, config)
                old = analysed(path, config)
                path.write_text(after_text, encoding="utf-8")
                new = analysed(path, config)
                if old is None or new is None or old.summary is None or new.summary is None:
                    continue
                questions = questions_of(old, new)
                if reworked_functions(old.summary, new.summary, *questions) is None:
                    continue
                counts["read"] += 1
                facts = derived_facts(before, old.summary, new.summary, questions, tree, config)
                if facts is not None:
                    assert_merged(facts, tree, config, f"{path}:\n{after_text}")
                    counts["derived"] += 1
            path.write_text(original, encoding="utf-8")
    # (56 tried, 16 read so, 5 derived: most refusals are an inlining whose old body named
    # `pkg.mod._extracted` through the fixtures' deferred `pkg/__init__.py`.)
    assert counts["derived"] >= 3 and counts["read"] >= 10, counts


MODULE = (
    "import ray\n\nfrom pkg.graphs import compiled as other\n\n\n"
    "def compiled(dag):\n    return dag.experimental_compile()\n\n\n"
    "def ports(found):\n    return sorted(found)\n"
)
GRAPHS = "def compiled(dag):\n    return dag.experimental_compile()\n"
FILES = {"pkg/__init__.py": "import ray\n", "pkg/mod.py": MODULE, "pkg/graphs.py": GRAPHS}


def test_a_helper_extracted_is_derived_and_finds_what_a_run_without_cache_finds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    edited = MODULE.replace("return sorted(found)", "return _ordered(found)")
    edited += "\n\ndef _ordered(found):\n    return sorted(found)\n"
    _, derived, quiet, warm, full = read_and_run(
        tmp_path, capsys, monkeypatch, FILES, edited, reworked_functions
    )
    assert derived is not None and not full and warm == quiet


@pytest.mark.parametrize(
    ("files", "edited"),
    [
        (  # another file calls `pkg.mod._ordered` already: the call lands in it now
            {  # (its bodies analysed: it makes a handle)
                "pkg/user.py": "import ray\nfrom pkg import mod\n\n\ndef use(x):\n"
                "    return mod._ordered(x)\n\n\ndef make(dag):\n"
                "    return dag.experimental_compile()\n"
            },
            "_ordered",
        ),
        ({}, "compiled"),  # the helper returns another module's compiled graph: it holds it
    ],
)
def test_a_helper_another_file_reached_or_taking_a_handle_is_left_to_the_merge(
    tmp_path: Path, files: dict[str, str], edited: str
) -> None:
    if edited == "_ordered":
        text = MODULE.replace("return sorted(found)", "return _ordered(found)")
        text += "\n\ndef _ordered(found):\n    return sorted(found)\n"
    else:
        text = MODULE.replace("return sorted(found)", "return _ordered(found)")
        text += "\n\ndef _ordered(found):\n    return other(found)\n"
    _, derived, _ = reading(tmp_path, {**FILES, **files}, text, reworked_functions)
    assert derived is None
