"""Parallel jobs, the result cache and the prefilter: same answers, whatever the path taken.

(Speed itself is measured by benchmarks/bench_tree.py, never asserted here.)
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from shmlint.analysis.engine import check_path
from shmlint.basics.config import Config
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence
from shmlint.cli import main
from shmlint.run.cache import DIRECTORY_VARIABLE
from shmlint.run.pool import POOL_BYTES, POOL_THRESHOLD
from tests.fixture_markers import FIXTURES, fixture_files

MEDIUM = Config(options=Options(min_confidence=Confidence.MEDIUM))


def _json(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    main(["check", "--output-format", "json", "--min-confidence", "medium", *args])
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """More files than the pool threshold: copies of every fixture in nested packages (the
    cache in its default place, ``.shmlint_cache`` of the current directory)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(DIRECTORY_VARIABLE)
    count = 0
    while count < POOL_THRESHOLD + 10:
        package = tmp_path / "src" / f"pkg{count // 7}"
        package.mkdir(parents=True, exist_ok=True)
        for fixture in fixture_files():
            shutil.copyfile(fixture, package / fixture.name)
            count += 1
    return tmp_path


def test_jobs_do_not_change_results_or_order(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = _json(["--no-cache", "-j", "1", "src"], capsys)
    two = _json(["--no-cache", "-j", "2", "src"], capsys)
    assert one == two and len(one) > 100


def test_warm_cache_gives_the_same_results(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cold = _json(["--no-cache", "src"], capsys)
    assert not (tree / ".shmlint_cache").exists()  # --no-cache writes nothing
    first = _json(["src"], capsys)
    assert (tree / ".shmlint_cache").is_dir()
    warm = _json(["src"], capsys)
    assert cold == first == warm


def test_cache_misses_on_changes(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _json(["src"], capsys)
    target = tree / "src" / "pkg0" / "SHM101.py"
    target.write_text(
        target.read_text() + "\n\ndef extra(ref) -> 'np.ndarray':\n    return ray.get(ref)\n"
    )
    after_edit = _json(["src/pkg0/SHM101.py"], capsys)
    assert any(f["code"] == "SHM101" and f["line"] > 240 for f in after_edit)
    # A configuration change misses too.
    (tree / "pyproject.toml").write_text('[tool.shmlint]\nignore = ["SHM101"]\n')
    assert not any(f["code"] == "SHM101" for f in _json(["src"], capsys))


def test_corrupt_or_foreign_entries_are_ignored(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = _json(["src"], capsys)
    entries = list((tree / ".shmlint_cache").rglob("*.json"))
    assert entries
    for index, entry in enumerate(entries):
        if index % 3 == 0:
            entry.write_text("{truncated")
        elif index % 3 == 1:
            entry.write_text(json.dumps({"key": "someone else", "findings": []}))
        else:
            data = json.loads(entry.read_text())
            data["findings"] = [{"bogus": 1}]
            entry.write_text(json.dumps(data))
    assert _json(["src"], capsys) == expected


def test_clean_removes_the_cache(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _json(["src"], capsys)
    assert main(["clean"]) == 0
    assert "removed" in capsys.readouterr().out
    assert not (tree / ".shmlint_cache").exists()
    assert main(["clean"]) == 0


def test_clean_refuses_a_directory_that_is_not_a_cache(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _json(["src", "--cache-dir", "elsewhere"], capsys)
    assert (tree / "elsewhere" / "CACHEDIR.TAG").is_file()
    (tree / "elsewhere.txt").symlink_to("elsewhere")  # (a link to a cache is not one)
    for directory, why in (
        ("src", "it does not look like shmlint's"),
        ("elsewhere.txt", "it is a symbolic link"),
    ):
        assert main(["clean", "--cache-dir", directory]) == 2
        err = capsys.readouterr().err
        assert f"shmlint: error: {directory}: not removed: {why}" in err
    (tree / "src" / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    assert main(["clean", "--cache-dir", "src"]) == 2  # (another tool's cache: not ours)
    assert (tree / "src").is_dir() and (tree / "elsewhere").is_dir()
    assert main(["clean", "--cache-dir", "elsewhere"]) == 0
    assert not (tree / "elsewhere").exists()


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_prefilter_loses_nothing_on_fixtures(path: Path) -> None:
    on = check_path(path, str(path), MEDIUM, prefilter=True).findings
    off = check_path(path, str(path), MEDIUM, prefilter=False).findings
    assert on == off


# Every word a file must spell to be parsed on its own (shmlint.analysis.engine's prefilter).
_PREFILTER_WORDS = (
    "detach_zero_copy_from_model_runner_output",
    "detach_zero_copy",
    "ray",
    "remote",
    "ObjectRef",
    "experimental_compile",
    "CompiledDAG",
    "writeable",
    "WRITEABLE",
    "is_zero_copy",
)


def _without(text: str, words: tuple[str, ...]) -> str:
    for word in words:  # the longest first: a helper's name holds the other's
        text = text.replace(word, f"{word[:-1]}_")
    return text


def test_prefilter_loses_nothing_when_it_skips(tmp_path: Path) -> None:
    """Variants of every fixture with prefilter words spelled otherwise: the
    prefilter skips many of them, and never one the unfiltered analysis reports."""
    skipped = 0
    for fixture in fixture_files():
        text = fixture.read_text(encoding="utf-8")
        present = [word for word in _PREFILTER_WORDS if word in text]
        # Each word removed alone, each word left alone, and none left.
        variants = [(word,) for word in present]
        variants += [tuple(w for w in _PREFILTER_WORDS if w != word) for word in present]
        variants.append(_PREFILTER_WORDS)
        for number, words in enumerate(variants):
            path = tmp_path / f"{fixture.stem}_{number}.py"
            path.write_text(_without(text, words), encoding="utf-8")
            on = check_path(path, str(path), MEDIUM, prefilter=True)
            off = check_path(path, str(path), MEDIUM, prefilter=False)
            assert on.findings == off.findings, (fixture.name, words)
            skipped += on.skipped
    assert skipped >= len(fixture_files())  # the skip path really ran


def test_prefilter_skips_files_without_sources(tmp_path: Path) -> None:
    plain = tmp_path / "plain.py"
    plain.write_text("import numpy as np\narray = np.zeros(3)\nvalue = {}.get('k')\n")
    result = check_path(plain, "plain.py", MEDIUM)
    assert result.skipped and not result.parsed


@pytest.mark.slow
def test_prefilter_and_gate_lose_nothing_on_the_ray_tree() -> None:
    from benchmarks.corpus import corpus
    from shmlint.analysis.dataflow import analyze_module
    from shmlint.analysis.engine import project_view
    from shmlint.basics.names import Scope

    root = corpus("ray==2.60.0")
    differences = []
    for path in sorted(root.rglob("*.py")):
        with_filters = check_path(path, str(path), MEDIUM, prefilter=True).findings
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            import ast

            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        # text=None: no prefilter, no per-body gate, every facts pass; the same per-file view
        # of the module's own classes as check_path uses.
        scope = Scope(tree, None)
        view = project_view(tree, scope, str(path), MEDIUM, None)
        raw = analyze_module(tree, MEDIUM.options, None, view, scope)
        unfiltered = {(r.code, r.site.line) for r in raw}
        filtered = {(f.code, f.line) for f in with_filters}
        if filtered != unfiltered:
            differences.append((path, filtered ^ unfiltered))
    assert not differences, differences[:5]


@pytest.mark.slow
def test_prefilter_and_gate_lose_nothing_in_a_project_run() -> None:
    """Project mode: the prefilter (with the facts' own words) and the per-body gate (with the
    names of functions that return reads) keep every finding of an unfiltered analysis."""
    import ast

    from benchmarks.corpus import corpus
    from shmlint.analysis.engine import analyze_tree
    from shmlint.run.runner import check_project

    root = corpus("ray==2.60.0")
    paths = sorted(root.rglob("*.py"))
    facts, _ = check_project([(p, str(p)) for p in paths], MEDIUM, jobs=2, cache=None)
    differences = []
    for path in paths:
        with_filters = check_path(path, str(path), MEDIUM, prefilter=True, facts=facts).findings
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        lines = text.splitlines()
        unfiltered = {
            (f.code, f.line) for f in analyze_tree(tree, lines, str(path), MEDIUM, None, facts)
        }
        filtered = {(f.code, f.line) for f in with_filters}
        if filtered != unfiltered:
            differences.append((path, filtered ^ unfiltered))
    assert not differences, differences[:5]


def test_a_small_project_never_starts_a_pool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Worker processes cost more than 20 files' analysis: `-j 2` runs them in this process,
    so it is never slower than `-j 1` (both phases)."""
    import concurrent.futures

    # (The smaller fixtures: 20 files well under POOL_BYTES, however the big ones grow.)
    files = sorted(fixture_files(), key=lambda path: path.stat().st_size)[:4]
    package = tmp_path / "pkg"
    package.mkdir()
    for index in range(20):
        fixture = files[index % len(files)]
        shutil.copyfile(fixture, package / f"m{index}_{fixture.name}")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a pool was started for 20 files")

    expected = _json(["-j", "1", "--no-cache", str(package)], capsys)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", refuse)
    assert _json(["-j", "2", "--no-cache", str(package)], capsys) == expected
    assert POOL_THRESHOLD > 20
    assert POOL_BYTES > sum(path.stat().st_size for path in package.iterdir())


def test_a_few_heavy_files_get_a_pool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three files of more source than ``POOL_BYTES`` together are split over the workers
    (one chunk each), with the results of one job."""
    import concurrent.futures

    text = (FIXTURES / "SHM101.py").read_text(encoding="utf-8")
    package = tmp_path / "heavy"
    package.mkdir()
    for index in range(3):
        copies = -(-POOL_BYTES // (3 * len(text.encode()))) + 1
        (package / f"heavy{index}.py").write_text(text * copies, encoding="utf-8")
    expected = _json(["-j", "1", "--no-cache", str(package)], capsys)
    started: list[int] = []
    original = concurrent.futures.ProcessPoolExecutor

    class Counted(original):  # type: ignore[valid-type,misc]
        def submit(self, *args: Any, **kwargs: Any) -> Any:
            started.append(len(args[1]))  # the chunk's files
            return super().submit(*args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Counted)
    assert _json(["-j", "2", "--no-cache", str(package)], capsys) == expected
    assert started[:3] == [1, 1, 1]


def test_a_warm_run_checks_deferred_modules_without_a_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deferred module keeps no phase-1 entry (its phase 1 is a text check): a warm project
    run over many of them and one edited file does those checks in this process, rather than
    start a pool and send it every deferred module's bytes; the same results either way."""
    import concurrent.futures

    from shmlint.run.cache import Cache
    from shmlint.run.runner import check_project

    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for index in range(POOL_THRESHOLD + 12):
        (package / f"plain{index}.py").write_text(f"def f{index}(d):\n    return d.get('k')\n")
    reader = package / "reader.py"
    reader.write_text("import ray\n\n\ndef read(ref):\n    return ray.get(ref)\n")
    files = [(path, str(path)) for path in sorted(package.iterdir())]
    cache = Cache(tmp_path / "cache", MEDIUM)
    check_project(files, MEDIUM, jobs=2, cache=cache)  # fills the cache (a pool: many files)
    reader.write_text(reader.read_text() + "\n\ndef again(ref):\n    return ray.get(ref)\n")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a pool was started for the deferred modules' text checks")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", refuse)
    _, warm = check_project(files, MEDIUM, jobs=2, cache=cache)
    _, cold = check_project(files, MEDIUM, jobs=1, cache=None)
    assert [r.findings for r in warm] == [r.findings for r in cold]
    assert sum(len(r.findings) for r in warm) == 2
