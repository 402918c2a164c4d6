"""The merge's deferred modules are parsed in the worker pool before the closure asks for them
(``_Deferred.prefetch``): the same modules parsed, the same facts and findings as loading
each one when the closure reaches it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shmlint.basics.config import Config
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence, FileResult
from shmlint.facts.merge import merge
from shmlint.facts.model import ProjectFacts
from shmlint.facts.summary import ModuleSummary
from shmlint.run import merging, runner
from shmlint.run.cache import Cache
from shmlint.run.discovery import iter_python_files

WIDE = 60  # above the pool's threshold (48 files)


def _project(root: Path) -> Path:
    """One module that reads, naming classes of 60 modules no read mentions; each of those
    names a class of another (the closure's second step), and 30 modules nothing reaches."""
    root.mkdir()
    imports = "".join(f"from m{i} import Out{i}\n" for i in range(WIDE))
    union = " | ".join(f"Out{i}" for i in range(WIDE))
    (root / "main.py").write_text(
        f"import ray\n{imports}\n\ndef fetch(ref) -> {union}:\n    return ray.get(ref)\n"
    )
    for i in range(WIDE):
        (root / f"m{i}.py").write_text(
            f"import dataclasses\nfrom n{i} import Thing{i}\n\n\n"
            f"@dataclasses.dataclass\nclass Out{i}:\n    thing: Thing{i}\n"
        )
        array = "np.ndarray" if i == WIDE - 1 else "int"
        (root / f"n{i}.py").write_text(
            f"import dataclasses\nimport numpy as np\n\n\n"
            f"@dataclasses.dataclass\nclass Thing{i}:\n    value: {array}\n"
        )
    for i in range(WIDE // 2):
        (root / f"unused{i}.py").write_text(f"class Unused{i}:\n    pass\n")
    return root


def _run(root: Path, cache_dir: Path, jobs: int) -> tuple[ProjectFacts, list[FileResult], set[str]]:
    config = Config(root=root)
    files = list(iter_python_files([str(root)], config))
    facts, results = runner.check_project(files, config, jobs=jobs, cache=Cache(cache_dir, config))
    # The deferred modules parsed: their summaries, stored in packs (none in a file alone).
    assert not list(cache_dir.rglob("y*.json"))
    summaries = {key for key in Cache(cache_dir, config).pack_index() if key.startswith("y")}
    return facts, results, summaries


@pytest.mark.parametrize("jobs", [1, 2])
def test_prefetching_parses_what_the_closure_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    root = _project(tmp_path / "project")
    facts, results, parsed = _run(root, tmp_path / "prefetched", jobs)
    assert len(parsed) == 2 * WIDE  # m*, then n* (reached through m*), never unused*
    (finding,) = [f for r in results for f in r.findings]
    # Rated through the second step: `Out59.thing` is a `Thing59`, which holds an array.
    assert finding.line == 65 and "holds arrays (`thing`)" in finding.message

    with monkeypatch.context() as patch:
        patch.setattr(merging.Deferred, "prefetch", lambda self, indices: None)
        expected_facts, expected, parsed_one_by_one = _run(root, tmp_path / "one-by-one", jobs)
    assert parsed == parsed_one_by_one
    assert facts.canonical_json() == expected_facts.canonical_json()
    assert results == expected


@pytest.mark.parametrize("unreached_caller", [False, True])
def test_one_merge_takes_the_modules_that_may_call_a_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unreached_caller: bool
) -> None:
    """A deferred module spelling the name of a function that may return a read joins the
    facts (facts.flow.caller_words: found without a first merge), in the one merge; the facts
    as merging every module."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "reader.py").write_text("import ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n")
    (root / "boxes.py").write_text(
        "from reader import fetch\n\n\nclass Box:\n    pass\n\n\n"
        "def unbox(ref):\n    return fetch(ref)\n"
    )
    (root / "main.py").write_text(
        "import ray\nfrom boxes import Box\n\n\ndef load(ref) -> Box:\n    return ray.get(ref)\n"
    )
    if unreached_caller:
        (root / "later.py").write_text(
            "from reader import fetch\n\n\nclass Kept:\n    def __init__(self, ref):\n"
            "        self.value = fetch(ref)\n"
        )
    merges: list[int] = []

    def counted(summaries: list[ModuleSummary], *args: Any, **kwargs: Any) -> ProjectFacts:
        merges.append(len(summaries))
        return merge(summaries, *args, **kwargs)

    config = Config(root=root, options=Options(min_confidence=Confidence.MEDIUM))
    files = list(iter_python_files([str(root)], config))
    with monkeypatch.context() as patch:
        patch.setattr(merging, "merge", counted)
        facts, results = runner.check_project(files, config, jobs=1, cache=None)
    assert merges == [4 if unreached_caller else 3]  # (+ later.py: it may call `fetch`)
    eager_facts, eager = runner.check_project(files, config, jobs=1, cache=None, lazy=False)
    assert facts.returned_reads == eager_facts.returned_reads
    assert results == eager
    if unreached_caller:
        assert [f.code for r in results for f in r.findings if "later" in r.path] == ["SHM102"]
