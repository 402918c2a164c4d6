"""The result cache is keyed on the analysis code, and a warm run really answers from it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import shmlint.analysis.engine
import shmlint.run.encoding
import shmlint.run.passes
from shmlint.cli import main
from shmlint.run.salts import PACKAGE_DIRECTORY, code_digest, package_digest

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


def test_another_interpreter_keys_the_cache_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    # Another Python's parser may read a file otherwise (a syntax this one lacks), and its
    # marshal writes the binary entries: with external types off (no import path in the
    # salt) the interpreter still keys every entry.
    from shmlint.basics.config import config_from_table
    from shmlint.run.salts import config_digest

    config = config_from_table({"external-types": False}, "pyproject.toml", None)
    here = config_digest(config)
    monkeypatch.setattr(sys.implementation, "cache_tag", "cpython-399")
    assert config_digest(config) != here


def test_the_executable_and_python_m_share_a_cache(tmp_path: Path) -> None:
    # `python -m shmlint` starts with the working directory first on the path, the executable
    # with its own directory: neither is where packages are installed, so neither is searched
    # for installed classes, and the two runs' entries are the same.
    executable = Path(sys.executable).parent / "shmlint"
    if not executable.exists():
        pytest.skip("no shmlint executable beside this interpreter")
    project = tmp_path / "project"
    shutil.copytree(ROOT / "fixtures" / "project" / "wrapper", project)
    cache = tmp_path / "cache"
    common = ["check", "--exit-zero", "--cache-dir", str(cache), "."]

    def entries() -> list[Path]:
        return sorted(p for p in cache.rglob("*") if p.is_file())

    subprocess.run([sys.executable, "-m", "shmlint", *common], cwd=project, check=True)
    written = entries()
    subprocess.run([str(executable), *common], cwd=project, check=True)
    assert entries() == written  # every entry served, none written anew


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
    # The refusal is real: without the cache the same run must parse (main() reports the
    # refusal as an internal error: its traceback, and exit 2).
    assert main([*command, "--no-cache", str(EXAMPLES)]) == 2
    assert "AssertionError: a warm run parsed" in capsys.readouterr().err


def test_a_summary_encodes_as_its_fields_on_every_fixture() -> None:
    """``ModuleSummary.to_json`` is written out (``dataclasses`` helpers deep-copy every
    leaf): the module's fields by name, every item inside as the tuple of its fields
    (``astuple``'s), so a field added to a summary class and not to ``to_json`` fails here."""
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
        fields = {f.name: getattr(summary, f.name) for f in dataclasses.fields(summary)}
        expected = {
            name: [dataclasses.astuple(x) if dataclasses.is_dataclass(x) else x for x in value]
            if isinstance(value, tuple)
            else value
            for name, value in fields.items()
        }
        assert text == json.dumps(expected)
        assert ModuleSummary.from_json(json.loads(text)) == summary
        encoded += 1
    assert encoded > 50


def _copies(tmp_path: Path, count: int) -> list[tuple[Path, str]]:
    """Copies of the fixtures, and modules spelling no Ray word whose classes they use."""
    from tests.fixture_markers import fixture_files

    sources = fixture_files()
    files = []
    for index in range(count):
        path = tmp_path / "src" / f"m{index}.py"
        path.parent.mkdir(exist_ok=True)
        text = sources[index % len(sources)].read_text(encoding="utf-8")
        if index < 8:  # a class of a deferred module, named by an analysed one
            (tmp_path / "src" / f"lib{index}.py").write_text(f"class Rec{index}:\n    x: int\n")
            files.append(
                (tmp_path / "src" / f"lib{index}.py", str(tmp_path / f"src/lib{index}.py"))
            )
            text += f"\nimport ray\nfrom lib{index} import Rec{index}\n\n\n"
            text += f"def fetch_{index}(ref) -> Rec{index}:\n    return ray.get(ref)\n"
        path.write_text(text, encoding="utf-8")
        files.append((path, str(path)))
    return files


@pytest.fixture
def runner_writes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What this process (the runner, not a forked worker) stores in a cache, by method."""
    from shmlint.run.cache import Cache

    writes: list[str] = []
    for name in ("put", "put_first_pass", "put_syntax_summary", "put_lookups"):
        original = getattr(Cache, name)

        def spy(self: Cache, *args: object, _name: str = name, _original: Any = original) -> None:
            if os.getpid() == runner_pid:
                writes.append(_name)
            _original(self, *args)

        monkeypatch.setattr(Cache, name, spy)
    runner_pid = os.getpid()
    return writes


def test_entries_are_stored_by_the_workers(tmp_path: Path, runner_writes: list[str]) -> None:
    """A cold project run with a cache stores each phase-1 entry and deferred module's summary
    where it was computed (in the pool), and each reads back as computed; so does a per-file
    run each result. (A phase 2 too small for a pool runs, and stores, in the runner.)"""
    from shmlint.basics.config import Config
    from shmlint.run.cache import Cache
    from shmlint.run.files import check_files
    from shmlint.run.merging import first_pass_key, syntax_key
    from shmlint.run.passes import first_pass
    from shmlint.run.pool import POOL_THRESHOLD
    from shmlint.run.runner import check_project

    files = _copies(tmp_path, POOL_THRESHOLD + 4)  # enough for a pool
    config = Config()
    cache = Cache(tmp_path / "cache", config)
    check_project(files, config, jobs=2, cache=cache)
    assert "put_first_pass" not in runner_writes
    assert "put_syntax_summary" not in runner_writes
    stored = 0
    later = Cache(tmp_path / "cache", config)  # another run's: finds them by the pack index
    for path, display in files:
        data = path.read_bytes()
        expected = first_pass(data, display, config, lazy=True)
        if expected.deferred:
            continue
        assert later.get_first_pass(first_pass_key(cache, display, data, True)) == expected
        assert cache.get_first_pass(first_pass_key(cache, display, data, True)) == expected
        stored += 1
    assert stored > POOL_THRESHOLD // 2
    # In a few packs (a file each would cost ~1 ms to create on some disks), none alone.
    packs = list((tmp_path / "cache").rglob("k*.json"))
    assert 1 < len(packs) < stored // 2 and not list((tmp_path / "cache").rglob("s*.json"))
    summaries = [
        cache.get_syntax_summary(syntax_key(first_pass_key(cache, d, p.read_bytes(), True)))
        for p, d in files
        if p.name.startswith("lib")
    ]
    assert len(summaries) == 8 and all(s is not False for s in summaries)  # loaded, stored
    assert not list((tmp_path / "cache").rglob("y*.json"))  # in packs too
    # Per file: every result stored by the workers, and served as computed.
    runner_writes.clear()
    per_file = Cache(tmp_path / "per-file", config)
    cold = check_files(files, config, jobs=2, cache=per_file)
    assert runner_writes == []
    assert all(per_file.get(per_file.key(d, p.read_bytes())) == r for (p, d), r in zip(files, cold))
    assert check_files(files, config, jobs=2, cache=per_file) == cold


def test_a_lost_or_corrupt_pack_is_recomputed(tmp_path: Path) -> None:
    """Entries whose pack is gone or garbled are computed again (and packed again): the same
    results as a run without a cache."""
    from shmlint.basics.config import Config
    from shmlint.run.cache import Cache
    from shmlint.run.pool import POOL_THRESHOLD
    from shmlint.run.runner import check_project

    files = _copies(tmp_path, POOL_THRESHOLD + 4)
    config = Config()
    _, expected = check_project(files, config, jobs=2, cache=None)
    directory = tmp_path / "cache"
    check_project(files, config, jobs=2, cache=Cache(directory, config))
    packs = sorted(directory.rglob("k*.json"))
    packs[0].write_text("{not json")
    packs[1].unlink()
    (directory / "record").mkdir()  # (unrelated litter is ignored)
    _, again = check_project(files, config, jobs=2, cache=Cache(directory, config))
    assert again == expected
    _, warm = check_project(files, config, jobs=2, cache=Cache(directory, config))
    assert warm == expected


def test_a_run_over_a_few_files_keeps_the_whole_tree_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pack index is merged, not replaced: after a run over an edited file alone (as a
    pre-commit hook runs), the next run over the whole tree reads every other entry."""
    import shmlint.run.runner as runner
    from shmlint.basics.config import Config
    from shmlint.run.cache import Cache

    files = _copies(tmp_path, 30)
    config = Config()
    directory = tmp_path / "cache"
    runner.check_project(files, config, jobs=1, cache=Cache(directory, config))
    edited = files[-1][0]
    edited.write_text(edited.read_text() + "\n# edited\n")
    runner.check_project(files[-1:], config, jobs=1, cache=Cache(directory, config))
    analysed: list[str] = []
    original = runner.first_pass

    def counted(data: bytes, display: str, *args: Any, **kwargs: Any) -> Any:
        analysed.append(display)
        return original(data, display, *args, **kwargs)

    monkeypatch.setattr(runner, "first_pass", counted)
    runner.check_project(files, config, jobs=1, cache=Cache(directory, config))
    assert analysed == []  # the edited file's entry too: the small run stored it


def test_the_pack_index_drops_the_least_recently_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shmlint.run.cache as cache_module
    import shmlint.run.store
    from shmlint.basics.config import Config

    monkeypatch.setattr(shmlint.run.store, "PACK_INDEX_KEEP", 4)
    cache = cache_module.Cache(tmp_path, Config())
    cache.index_packs({"a": "p1", "b": "p1", "c": "p1"})
    cache.index_packs({"d": "p2"}, used=["a"])  # a used again: b is the oldest now
    cache.index_packs({"e": "p3"})
    fresh = cache_module.Cache(tmp_path, Config())
    assert fresh.pack_index() == {"c": "p1", "a": "p1", "d": "p2", "e": "p3"}
    cache.index_packs({f"k{i}": "p4" for i in range(6)})  # a run's own entries all stay
    assert len(cache_module.Cache(tmp_path, Config()).pack_index()) == 6
    # ... the ones it used from the index too, given as an iterator (as the runner does).
    cache.index_packs({"n": "p5"}, used=iter([f"k{i}" for i in range(6)]))
    assert list(cache_module.Cache(tmp_path, Config()).pack_index()) == [
        *(f"k{i}" for i in range(6)),
        "n",
    ]


def test_an_index_may_refer_to_another_cache_s_entries(tmp_path: Path) -> None:
    """A pack index may hold where another cache (other facts) keeps an entry — in a pack, or
    in the entry's own file — as the phase-2 results a facts change keeps; references to
    references name the first entry, and one whose entry is gone is a miss."""
    from shmlint.basics.config import Config
    from shmlint.run.cache import Cache

    first = Cache(tmp_path, Config()).with_facts("first")
    first.index_packs(first.put_pack({"packed": {"n": 1}}))
    first.put_lookups("own", {"n": 2})
    second = Cache(tmp_path, Config()).with_facts("second")
    assert second.get_lookups("packed") is None
    second.index_packs({"p": first.where("packed"), "o": first.where("own")})
    second = Cache(tmp_path, Config()).with_facts("second")
    assert second.get_lookups("p") == {"n": 1} and second.get_lookups("o") == {"n": 2}
    third = Cache(tmp_path, Config()).with_facts("third")
    third.index_packs({"p3": second.where("p"), "o3": second.where("o")})
    assert third.pack_index() == {"p3": first.where("packed"), "o3": first.where("own")}
    third = Cache(tmp_path, Config()).with_facts("third")
    assert third.get_lookups("p3") == {"n": 1} and third.get_lookups("o3") == {"n": 2}
    for entry in tmp_path.rglob("*.json"):
        if entry.stem in ("own", first.where("packed").partition(":")[0]):
            entry.unlink()
    third = Cache(tmp_path, Config()).with_facts("third")
    assert third.get_lookups("p3") is None and third.get_lookups("o3") is None


def test_an_entry_read_from_its_own_file_is_referred_to_there(tmp_path: Path) -> None:
    # Indexed in a pack that is gone, an entry read from its own file is where another
    # cache's index must refer to: not to the lost pack (a miss, and the file analysed again).
    from shmlint.basics.config import Config
    from shmlint.run.cache import Cache

    first = Cache(tmp_path, Config()).with_facts("first")
    first.index_packs(first.put_pack({"entry": {"n": 1}}))
    first.put_lookups("entry", {"n": 1})  # (also in a file of its own)
    pack = first.where("entry").partition(":")[0]
    next(tmp_path.rglob(f"{pack}.json")).unlink()
    first = Cache(tmp_path, Config()).with_facts("first")
    assert first.get_lookups("entry") == {"n": 1}
    assert first.where("entry") == ":entry"
    second = Cache(tmp_path, Config()).with_facts("second")
    second.index_packs({"kept": first.where("entry")})
    second = Cache(tmp_path, Config()).with_facts("second")
    assert second.get_lookups("kept") == {"n": 1}


def test_a_run_in_one_process_packs_a_few_entries_each(tmp_path: Path) -> None:
    """Reading an entry reads its whole pack: a run in one process (one chunk of every file)
    stores its entries in packs of at most PACK_ENTRIES, not in one pack of thousands (an
    incremental run after it read ~10 MB to find one entry on the ray wheel)."""
    from shmlint.basics.config import Config
    from shmlint.run.cache import Cache
    from shmlint.run.runner import check_project
    from shmlint.run.store import PACK_ENTRIES

    files = _copies(tmp_path, 3 * PACK_ENTRIES)
    config = Config()
    check_project(files, config, jobs=1, cache=Cache(tmp_path / "cache", config))
    packs = [json.loads(p.read_text())["body"] for p in (tmp_path / "cache").rglob("k*.json")]
    assert len(packs) >= 3 and all(0 < len(body) <= PACK_ENTRIES for body in packs)
    index = Cache(tmp_path / "cache", config).pack_index()
    assert sum(len(body) for body in packs) == len(index)  # every packed entry is indexed


@pytest.mark.parametrize("packed", [False, True], ids=["own-file", "packed"])
def test_an_entry_whose_installed_file_changed_is_not_served(tmp_path: Path, packed: bool) -> None:
    """A result and a phase-1 entry name the installed files their analysis read (with their
    modification times, shmlint/facts/external.py): once one changed or went, neither is
    served, wherever it is stored."""
    from shmlint.basics.config import Config
    from shmlint.basics.types import FileResult
    from shmlint.run.cache import Cache
    from shmlint.run.passes import FirstPass

    installed = tmp_path / "site" / "outputs.py"
    installed.parent.mkdir()
    installed.write_text("class Output: ...\n")
    stamp = ((str(installed), installed.stat().st_mtime_ns),)
    result = FileResult("a.py", (), parsed=True, installed=stamp)
    item = FirstPass(None, result)
    cache = Cache(tmp_path / "cache", Config())
    if packed:
        cache.index_packs(cache.put_pack({"r": shmlint.run.encoding.encode_result(result)}))
        cache.index_packs(cache.put_first_pass_pack([("s", item)]))
    else:
        cache.put("r", result)
        cache.put_first_pass("s", item)

    def served() -> tuple[object, object]:
        fresh = Cache(tmp_path / "cache", Config())
        return fresh.get("r"), fresh.get_first_pass("s")

    assert served() == (result, item)
    os.utime(installed, ns=(0, stamp[0][1] + 1_000_000_000))
    assert served() == (None, None)
    os.utime(installed, ns=(0, stamp[0][1]))
    assert served() == (result, item)
    installed.unlink()
    assert served() == (None, None)
