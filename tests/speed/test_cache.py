"""The result cache is keyed on the analysis code, and a warm run really answers from it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import shmlint.analysis.engine
import shmlint.run.passes
from shmlint.cli import main
from shmlint.run.cache import PACKAGE_DIRECTORY, code_digest, package_digest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SHM104_ESCAPE = "is still bound when the next read in this loop runs"


def _copy_package(destination: Path) -> Path:
    """A copy of the installed package (sources only) under ``destination``."""
    copy = destination / "shmlint"
    shutil.copytree(PACKAGE_DIRECTORY, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_code_digest_changes_with_any_source_of_the_package(tmp_path: Path) -> None:
    copy = _copy_package(tmp_path)
    assert package_digest(copy) == package_digest(PACKAGE_DIRECTORY)
    catalog = copy / "basics" / "catalog.py"
    catalog.write_text(catalog.read_text().replace('"numpy.copy",', ""))
    edited = package_digest(copy)
    assert edited != package_digest(PACKAGE_DIRECTORY)
    (copy / "analysis" / "rules" / "extra.py").write_text("")
    assert package_digest(copy) != edited
    assert code_digest() == code_digest()  # once per process


def _run_copy(site: Path, cache: Path, *paths: str) -> list[dict[str, object]]:
    """``shmlint check`` from the package copy under ``site`` (a subprocess)."""
    environment = {**os.environ, "PYTHONPATH": str(site)}
    command = [sys.executable, "-m", "shmlint", "check", "--output-format", "json"]
    completed = subprocess.run(
        [*command, "--cache-dir", str(cache), "-j", "1", *paths],
        capture_output=True,
        text=True,
        env=environment,
        cwd=site,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr
    return json.loads(completed.stdout)  # type: ignore[no-any-return]


def test_a_warm_run_after_a_code_change_analyses_again(tmp_path: Path) -> None:
    """The stale-cache bug: an edited analysis must not be answered by the old one's results."""
    site = tmp_path / "site"
    copy = _copy_package(site)
    probe = subprocess.run(
        [sys.executable, "-c", "import shmlint; print(shmlint.__file__)"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(site)},
        cwd=site,
        check=True,
    )
    assert Path(probe.stdout.strip()).parent == copy  # the copy, not the installed package
    cache = tmp_path / "cache"
    example = str(EXAMPLES / "compiled_loop.py")
    before = _run_copy(site, cache, example)
    assert any(SHM104_ESCAPE in str(f["message"]) for f in before)
    rules = copy / "analysis" / "rules" / "retention.py"
    rules.write_text(rules.read_text().replace(SHM104_ESCAPE, "outlives the next read (edited)"))
    after = _run_copy(site, cache, example)
    assert [f["code"] for f in after] == [f["code"] for f in before]
    assert not any(SHM104_ESCAPE in str(f["message"]) for f in after)
    assert any("(edited)" in str(f["message"]) for f in after)


def _refuse_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: str, path: str) -> None:
        raise AssertionError(f"a warm run parsed {path}")

    monkeypatch.setattr(shmlint.analysis.engine, "parse_source", refuse)
    monkeypatch.setattr(shmlint.run.passes, "parse_source", refuse)


@pytest.mark.parametrize("mode", [[], ["--per-file"]], ids=["project", "per-file"])
def test_a_warm_run_answers_from_the_cache_without_parsing(
    mode: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    command = ["check", "--output-format", "json", "-j", "1", "--cache-dir", str(tmp_path), *mode]
    assert main([*command, str(EXAMPLES)]) == 1
    cold = json.loads(capsys.readouterr().out)
    assert len(cold) == 5
    _refuse_parsing(monkeypatch)
    assert main([*command, str(EXAMPLES)]) == 1
    assert json.loads(capsys.readouterr().out) == cold
    # The refusal is real: without the cache the same run must parse.
    with pytest.raises(AssertionError, match="a warm run parsed"):
        main([*command, "--no-cache", str(EXAMPLES)])


def test_a_summary_encodes_as_asdict_would_on_every_fixture() -> None:
    """``ModuleSummary.to_json`` is written out (asdict deep-copies every leaf): the same
    data, so a field added to a summary class and not to ``to_json`` fails here."""
    import dataclasses

    from shmlint.basics.config import Config
    from shmlint.facts.summary import ModuleSummary
    from shmlint.run.passes import first_pass, syntax_summary
    from tests.fixture_markers import fixture_sources

    summaries = []
    for path in fixture_sources():
        data = path.read_bytes()
        item = first_pass(data, str(path), Config())
        summaries += [item.summary, syntax_summary(data, str(path), Config())]
    encoded = 0
    for summary in summaries:
        if summary is None:
            continue
        text = json.dumps(summary.to_json())
        assert text == json.dumps(dataclasses.asdict(summary))
        assert ModuleSummary.from_json(json.loads(text)) == summary
        encoded += 1
    assert encoded > 50


def test_phase_one_entries_are_stored_by_the_workers(tmp_path: Path) -> None:
    """A cold project run with a cache stores each analysed file's phase-1 entry where the
    phase 1 ran (in the pool), and each one reads back as what phase 1 computed."""
    from shmlint.basics.config import Config
    from shmlint.run.cache import Cache
    from shmlint.run.passes import first_pass
    from shmlint.run.runner import POOL_THRESHOLD, check_project, first_pass_key
    from tests.fixture_markers import fixture_files

    sources = fixture_files()
    files = []
    for index in range(POOL_THRESHOLD + 4):  # enough for a pool
        path = tmp_path / "src" / f"m{index}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(sources[index % len(sources)].read_bytes())
        files.append((path, str(path)))
    config = Config()
    cache = Cache(tmp_path / "cache", config)
    writers: list[int] = []
    original = Cache.put_first_pass

    def put(self: Cache, key: str, item: object) -> None:  # (this process's writes only)
        writers.append(os.getpid())
        original(self, key, item)  # type: ignore[arg-type]

    Cache.put_first_pass = put  # type: ignore[method-assign]
    try:
        check_project(files, config, jobs=2, cache=cache)
    finally:
        Cache.put_first_pass = original  # type: ignore[method-assign]
    assert writers == []  # nothing stored by the runner itself
    stored = 0
    for path, display in files:
        data = path.read_bytes()
        expected = first_pass(data, display, config, lazy=True)
        if expected.deferred:
            continue
        assert cache.get_first_pass(first_pass_key(cache, display, data, True)) == expected
        stored += 1
    assert stored > POOL_THRESHOLD // 2
