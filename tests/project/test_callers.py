"""The modules that may call a reader are found without a first merge: the names of the
functions that may return a read (``facts.flow.caller_words``) hold every reader's name the
merge of the same summaries gives, so the one merge takes every module the two merges of
before took (and the findings are those of merging every module: tests/project/
test_passes.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shmlint.basics.config import Config, find_pyproject, load_config
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence
from shmlint.facts.evidence import TypeTables
from shmlint.facts.flow import caller_words
from shmlint.facts.merge import merge
from shmlint.facts.summary import ModuleSummary
from shmlint.run import merging, runner
from tests.fixture_markers import FIXTURES

MEDIUM = Config(options=Options(min_confidence=Confidence.MEDIUM))


def _captured(
    files: list[tuple[Path, str]], config: Config, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[list[ModuleSummary]], list[Any]]:
    """The summaries each project run's merge looked for callers in, and the results."""
    seen: list[list[ModuleSummary]] = []

    def spy(summaries: list[ModuleSummary]) -> frozenset[bytes]:
        seen.append(list(summaries))
        return caller_words(summaries)

    with monkeypatch.context() as patch:
        patch.setattr(merging, "caller_words", spy)
        _, results = runner.check_project(files, config, jobs=1, cache=None)
    return seen, list(results)


def _superset_misses(summaries: list[ModuleSummary], config: Config) -> set[bytes]:
    options = config.options
    facts = merge(summaries, TypeTables.for_options(options), options.external_types)
    return set(facts.reader_words() - caller_words(summaries))


def _project(root: Path) -> list[tuple[Path, str]]:
    files = {
        # A re-export: `pkg.fetched` is `pkg.reads.fetch` (this module mentions no read).
        "pkg/__init__.py": "from pkg.reads import fetch as fetched\n",
        "pkg/reads.py": (
            "import ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n\n\n"
            "def peek(box):\n    return box.get()  # a read only if given a compiled-graph ref\n"
            "\n\n"
            "class Box:\n    def value(self, ref):\n        return ray.get(ref)\n"
        ),
        # Returns a read through the re-export only (its body spells a read's `get(`: phase 1
        # analyses it, and records the return).
        "pkg/wrap.py": (
            "import ray\nfrom pkg import fetched\n\n\ndef wrapped(ref, options):\n"
            "    options.get('timeout')\n    return fetched(ref)\n"
        ),
        # Mentions no read: a deferred module, which keeps what `wrapped` reads.
        "pkg/user.py": (
            "from pkg.wrap import wrapped\n\n\nclass Keeper:\n"
            "    def keep(self, ref):\n        self.kept = wrapped(ref, {})\n"
        ),
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return [(path, str(path)) for path in sorted(root.rglob("*.py"))]


def test_the_names_of_functions_that_may_return_a_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _project(tmp_path)
    config = Config(root=tmp_path, options=MEDIUM.options)
    (summaries,), results = _captured(files, config, monkeypatch)
    words = caller_words(summaries)
    # A read, one through a re-export, one that needs a ref: module-level; never a method.
    assert {b"fetch", b"wrapped", b"peek"} <= words
    assert b"value" not in words
    assert not _superset_misses(summaries, config)
    # The deferred module calling `wrapped` joined the merge, and keeps the read.
    codes = [(Path(r.path).name, f.code) for r in results for f in r.findings]
    assert ("user.py", "SHM102") in codes


def _trees() -> list[tuple[Path, Config]]:
    trees = [(FIXTURES, MEDIUM)]
    for case in sorted((FIXTURES / "project").iterdir()):
        trees.append((case, load_config(find_pyproject(case))))
    return trees


@pytest.mark.parametrize("tree,config", _trees(), ids=lambda v: getattr(v, "name", ""))
def test_every_readers_name_is_looked_for_on_fixtures(
    tree: Path, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [(p, str(p)) for p in sorted(tree.rglob("*.py"))]
    (summaries,), _ = _captured(files, config, monkeypatch)
    assert not _superset_misses(summaries, config)


@pytest.mark.slow
def test_every_readers_name_is_looked_for_on_the_ray_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks.corpus import corpus

    root = corpus("ray==2.60.0")
    files = [(p, str(p)) for p in sorted(root.rglob("*.py"))]
    (summaries,), _ = _captured(files, MEDIUM, monkeypatch)
    assert not _superset_misses(summaries, MEDIUM)
