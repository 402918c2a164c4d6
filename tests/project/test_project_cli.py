"""The two phases from the command line: summaries cached, --per-file, --write-summary, bad
files in a project run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from shmlint.cli import main
from shmlint.facts.model import ProjectFacts
from tests.fixture_markers import FIXTURES


@pytest.fixture
def wrapper(tmp_path: Path) -> Path:
    case = tmp_path / "wrapper"
    shutil.copytree(FIXTURES / "project" / "wrapper", case)
    return case


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, object]]:
    main(["check", "--output-format", "json", *argv])
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_project_run_finds_cross_module_reads(
    wrapper: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = _json(capsys, "--no-cache", str(wrapper))
    chained = [f for f in found if f["path"].endswith("executor.py")]  # type: ignore[union-attr]
    assert [f["code"] for f in chained] == ["SHM102"]
    message = str(chained[0]["message"])
    assert "pkg.futures.read_first()" in message and "futures.py:30" in message
    assert chained[0]["fixable"] is False  # fixed where the read is made


def test_per_file_run_does_not_see_them(wrapper: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = _json(capsys, "--no-cache", "--per-file", str(wrapper))
    assert not [f for f in found if str(f["path"]).endswith("executor.py")]


def test_summaries_are_cached_and_the_second_run_agrees(
    wrapper: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = wrapper / "cache"
    first = _json(capsys, "--cache-dir", str(cache), str(wrapper / "pkg"))
    # One phase-1 entry per analysed module (a deferred module's phase 1 is a text check),
    # stored in packs (a pack per chunk of files; Cache.put_first_pass_pack).
    # (Deferred modules' summaries are packed too, under "y" keys.)
    packs = [json.loads(path.read_text())["body"] for path in cache.rglob("k*.json")]
    assert len([key for body in packs for key in body if not key.startswith("y")]) == 3
    assert not list(cache.rglob("s*.json"))
    second = _json(capsys, "--cache-dir", str(cache), str(wrapper / "pkg"))
    assert first == second
    # A change in one module changes the facts: the other files are re-checked against them.
    futures = wrapper / "pkg" / "futures.py"
    futures.write_text(
        futures.read_text().replace("return refs[0].get()", "return refs[0].get().copy()")
    )
    third = _json(capsys, "--cache-dir", str(cache), str(wrapper / "pkg"))
    assert not [f for f in third if str(f["path"]).endswith("executor.py")]


def test_write_summary(wrapper: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "summary.json"
    assert main(["check", "--no-cache", "--write-summary", str(out), str(wrapper)]) == 1
    facts = ProjectFacts.from_json(json.loads(out.read_text()))
    assert "pkg.futures.read_first" in facts.returned_reads
    # A compiled-graph ref (executor.py) or a plain ref of unknown payload (plain.py).
    assert facts.attr_kinds("pkg.futures.FutureWrapper", "ref_or_refs") == {
        "ref",
        "payload:unknown",
    }
    capsys.readouterr()
    assert main(["check", "--per-file", "--write-summary", str(out), str(wrapper)]) == 2
    assert "--write-summary needs a project-wide run" in capsys.readouterr().err


def test_a_broken_module_does_not_stop_the_project(
    wrapper: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (wrapper / "pkg" / "broken.py").write_text("import ray\ndef f(:\n", encoding="utf-8")
    (wrapper / "pkg" / "latin.py").write_bytes(b"import ray\nx = '\xe9'\n")
    found = _json(capsys, "--no-cache", str(wrapper))
    codes = {(Path(str(f["path"])).name, f["code"]) for f in found}
    assert ("broken.py", "SHM001") in codes and ("latin.py", "SHM001") in codes
    assert ("executor.py", "SHM102") in codes


def test_fix_at_the_read_ends_the_callers_findings_too(
    wrapper: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--fix` wraps the reads; the call-site findings (not fixable themselves) go with them,
    and what the run reports as remaining is what a fresh project run finds."""
    assert main(["check", "--no-cache", "--fix", "--min-confidence", "medium", str(wrapper)]) == 0
    out = capsys.readouterr().out
    assert "0 remaining" in out
    futures = (wrapper / "pkg" / "futures.py").read_text()
    assert "detach_zero_copy_from_model_runner_output(refs[0].get())" in futures
    assert main(["check", "--no-cache", "--min-confidence", "medium", str(wrapper)]) == 0


def test_facts_survive_their_json_form() -> None:
    """The summary file and the facts cache hold exactly the merged facts."""
    from shmlint.basics.config import Config
    from shmlint.run.discovery import iter_python_files
    from shmlint.run.runner import check_project

    config = Config()
    files = list(iter_python_files([str(FIXTURES)], config))
    facts, _ = check_project(files, config, jobs=1, cache=None)
    assert facts.classes and facts.returned_reads and facts.slot_kinds
    again = ProjectFacts.from_json(json.loads(json.dumps(facts.to_json())))
    assert again.to_json() == facts.to_json()
    assert again.digest() == facts.digest()


def test_a_run_keeping_no_cache_gives_its_facts_no_index(
    wrapper: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a later run's derivations read the facts' index (shmlint/facts/index.py): a run
    without a cache skips it, and finds what a run filling a cache finds."""
    from shmlint.run import merging

    indexed: list[bool] = []
    merge = merging.merge

    def spy(*args: object, **kwargs: object) -> ProjectFacts:
        facts = merge(*args, **kwargs)  # type: ignore[arg-type]
        indexed.append(facts.index is not None)
        return facts

    monkeypatch.setattr(merging, "merge", spy)
    cold = _json(capsys, "--no-cache", str(wrapper))
    filled = _json(capsys, "--cache-dir", str(wrapper / "cache"), str(wrapper))
    assert indexed == [False, True]
    assert cold == filled and cold


def test_facts_kept_in_a_cache_carry_their_index(wrapper: Path) -> None:
    """The index is left out only where no later run can read it: with a cache, never."""
    from shmlint.basics.config import Config
    from shmlint.run.cache import Cache
    from shmlint.run.discovery import iter_python_files
    from shmlint.run.runner import check_project

    config = Config()
    files = list(iter_python_files([str(wrapper)], config))
    cache = Cache(wrapper / "cache", config)
    assert check_project(files, config, jobs=1, cache=cache, indexed=False)[0].index is not None
    assert check_project(files, config, jobs=1, cache=None, indexed=False)[0].index is None
