"""Payload classes from installed packages: read from source on the interpreter's path, never
imported (the package below raises if it is), switched off by --no-external-types or config."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from shmlint.basics.options import Options

OUTPUTS = """\
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


class LogprobsLists(NamedTuple):
    logprobs: np.ndarray
    cu_num_generated_tokens: list[int] | None


@dataclass
class ModelRunnerOutput:
    req_ids: list[str]
    logprobs: LogprobsLists | None


@dataclass
class Stats:
    count: int
"""

PLUGIN = """\
import ray
from extpkg import ModelRunnerOutput
from extpkg.outputs import Stats


class Plugin:
    def step(self, ref) -> ModelRunnerOutput:
        return ray.get(ref)

    def stats(self, ref) -> Stats:
        return ray.get(ref)
"""


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    package = tmp_path / "site" / "extpkg"
    package.mkdir(parents=True)
    # A re-export in the package's __init__, which must never run.
    (package / "__init__.py").write_text(
        "from extpkg.outputs import ModelRunnerOutput\n"
        "raise RuntimeError('shmlint imported an installed package')\n"
    )
    (package / "outputs.py").write_text(OUTPUTS)
    project = tmp_path / "project"
    project.mkdir()
    (project / "plugin.py").write_text(PLUGIN)
    return project


def _run(
    project: Path, *args: str, site: bool = True, path: list[Path] | None = None
) -> list[dict[str, object]]:
    """``shmlint check`` of plugin.py in a new process, the package's site on its path (or
    ``path``)."""
    entries = path if path is not None else [project.parent / "site"] if site else []
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, entries))}
    command = [sys.executable, "-m", "shmlint", "check", "--output-format", "json"]
    completed = subprocess.run(
        [*command, "--min-confidence", "medium", *args, "plugin.py"],
        cwd=project,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode in (0, 1), completed.stderr
    return json.loads(completed.stdout)  # type: ignore[no-any-return]


def _check(project: Path, *args: str) -> list[dict[str, object]]:
    return _run(project, "--no-cache", *args)


@pytest.mark.parametrize("mode", [[], ["--per-file"]], ids=["project", "per-file"])
def test_an_installed_payload_class_is_rated_by_its_fields(plugin: Path, mode: list[str]) -> None:
    (found,) = _check(plugin, *mode)  # `Stats` holds no arrays: its read is not reported
    assert (found["line"], found["confidence"]) == (8, "high")
    assert found["evidence"] == (
        "the declared return type `ModelRunnerOutput` holds arrays (`logprobs`)"
    )


def test_external_types_can_be_switched_off(plugin: Path) -> None:
    unknown = {(8, "medium"), (11, "medium")}
    found = _check(plugin, "--no-external-types")
    assert {(f["line"], f["confidence"]) for f in found} == unknown
    (plugin / "pyproject.toml").write_text("[tool.shmlint]\nexternal-types = false\n")
    assert {(f["line"], f["confidence"]) for f in _check(plugin)} == unknown


def test_a_missing_package_leaves_the_payload_unknown(plugin: Path) -> None:
    (plugin.parent / "site" / "extpkg" / "outputs.py").unlink()
    found = _check(plugin)
    assert {(f["line"], f["confidence"]) for f in found} == {(8, "medium"), (11, "medium")}


def _warm(project: Path, *args: str, path: list[Path] | None = None) -> list[tuple[object, object]]:
    """A run with the project's cache: each finding's line and rule."""
    found = _run(project, *args, "--cache-dir", str(project / "cache"), path=path)
    return [(f["line"], f["code"]) for f in found]


def _touched(path: Path, text: str) -> None:
    """``path`` rewritten with a later modification time (as a package upgrade leaves it)."""
    stat = path.stat()
    path.write_text(text)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


KEPT = """
    def keep(self, ref):
        out: ModelRunnerOutput = ray.get(ref)
        self.kept = out
"""


@pytest.mark.parametrize("mode", [[], ["--per-file"]], ids=["project", "per-file"])
def test_a_warm_run_notices_the_installed_package_changing(plugin: Path, mode: list[str]) -> None:
    # The return annotation is a question of the project's facts; the local variable's is
    # rated by the file's own analysis (per file, and in phase 1): both read the package.
    (plugin / "plugin.py").write_text(PLUGIN + KEPT)
    assert _warm(plugin, *mode) == [(8, "SHM101"), (15, "SHM102")]
    assert _warm(plugin, *mode) == [(8, "SHM101"), (15, "SHM102")]  # warm
    outputs = plugin.parent / "site" / "extpkg" / "outputs.py"
    _touched(outputs, OUTPUTS.replace("logprobs: np.ndarray", "logprobs: list[float]"))
    assert _warm(plugin, *mode) == []  # ModelRunnerOutput holds no arrays any more
    _touched(outputs, OUTPUTS)
    assert _warm(plugin, *mode) == [(8, "SHM101"), (15, "SHM102")]


@pytest.mark.parametrize("mode", [[], ["--per-file"]], ids=["project", "per-file"])
def test_an_installed_class_only_a_file_s_own_analysis_read(plugin: Path, mode: list[str]) -> None:
    # No question of the project's facts names the class (their installed files are none):
    # the file's result depends on it all the same.
    (plugin / "plugin.py").write_text(PLUGIN.split("\n\n\n")[0] + "\n\n\nclass Keeper:" + KEPT)
    assert _warm(plugin, *mode) == [(9, "SHM102")]
    outputs = plugin.parent / "site" / "extpkg" / "outputs.py"
    _touched(outputs, OUTPUTS.replace("logprobs: np.ndarray", "logprobs: list[float]"))
    assert _warm(plugin, *mode) == []


def test_a_class_looked_up_once_is_noted_for_every_file(plugin: Path) -> None:
    # In one process, a class of an installed package is read once (cached by name): the
    # second file that looks it up depends on its files all the same.
    environment = {**os.environ, "PYTHONPATH": str(plugin.parent / "site")}
    command = [sys.executable, "-m", "shmlint", "check", "--per-file", "-j", "1"]
    command += ["--cache-dir", "cache", "--min-confidence", "medium", "--output-format", "json"]
    text = PLUGIN.split("\n\n\n")[0] + "\n\n\nclass Keeper:" + KEPT
    names = ["a.py", "b.py"]
    for name in names:
        (plugin / name).write_text(text)

    def run() -> list[str]:
        completed = subprocess.run(
            [*command, *names], cwd=plugin, env=environment, capture_output=True, check=False
        )
        return sorted(f["path"] for f in json.loads(completed.stdout))

    assert run() == names
    outputs = plugin.parent / "site" / "extpkg" / "outputs.py"
    _touched(outputs, OUTPUTS.replace("logprobs: np.ndarray", "logprobs: list[float]"))
    assert run() == []


@pytest.mark.parametrize("mode", [[], ["--per-file"]], ids=["project", "per-file"])
def test_a_warm_run_notices_a_re_export_changing(plugin: Path, mode: list[str]) -> None:
    # `from extpkg import ModelRunnerOutput` is followed through the package's __init__: a
    # new __init__ re-exporting another class of that name changes the rating.
    (plugin / "plugin.py").write_text(PLUGIN + KEPT)
    site = plugin.parent / "site" / "extpkg"
    (site / "light.py").write_text(OUTPUTS.replace("np.ndarray", "list[float]"))
    assert _warm(plugin, *mode) == [(8, "SHM101"), (15, "SHM102")]
    init = (site / "__init__.py").read_text()
    _touched(site / "__init__.py", init.replace("extpkg.outputs", "extpkg.light"))
    assert _warm(plugin, *mode) == []


def test_a_project_record_with_a_field_of_an_installed_class(plugin: Path) -> None:
    (plugin / "records.py").write_text(
        "import dataclasses\n\nimport ray\nfrom extpkg.outputs import ModelRunnerOutput\n\n\n"
        "@dataclasses.dataclass\nclass Step:\n    output: ModelRunnerOutput\n\n\n"
        "def fetch(ref) -> Step:\n    return ray.get(ref)\n"
    )
    environment = {**os.environ, "PYTHONPATH": str(plugin.parent / "site")}
    completed = subprocess.run(
        [sys.executable, "-m", "shmlint", "check", "--no-cache", "records.py"],
        cwd=plugin,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr
    assert "(the declared return type `Step` holds arrays (`output`))" in completed.stdout


def test_installed_summaries_are_kept_in_the_cache(
    plugin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A warm run that re-checks an edit parses no installed module its last run read: their
    # summaries are in the cache (by file, modification time and size), read by a new process.
    from shmlint.basics.config import Config
    from shmlint.facts import external
    from shmlint.run.cache import Cache

    monkeypatch.syspath_prepend(str(plugin.parent / "site"))
    parsed: list[Path] = []
    parse = external._parsed_summary

    def counted(path: Path, *rest: object) -> object:
        parsed.append(path)
        return parse(path, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(external, "_parsed_summary", counted)
    cache = Cache(tmp_path / "cache", Config(root=plugin))

    def summary() -> object:
        external.module_file.cache_clear()  # each call as a new process
        external._summary.cache_clear()
        with external.stored_in(cache):
            return external.module_summary("extpkg.outputs")

    first = summary()
    assert first is not None and len(parsed) == 1
    assert summary() == first and len(parsed) == 1  # read from the cache
    assert summary() == first and len(parsed) == 1
    outputs = plugin.parent / "site" / "extpkg" / "outputs.py"
    outputs.write_text(OUTPUTS.replace("class Stats", "class Counters"))
    stat = outputs.stat()
    os.utime(outputs, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    changed = summary()
    assert len(parsed) == 2 and changed != first  # the file changed: parsed again
    external.module_file.cache_clear()
    external._summary.cache_clear()
    assert external.module_summary("extpkg.outputs") == changed and len(parsed) == 3


def test_two_environments_sharing_a_cache_keep_apart(plugin: Path) -> None:
    # Another interpreter path (another environment) does not find the package: its run over
    # the same cache is its own, not the one that found it.
    assert _warm(plugin) == [(8, "SHM101")]
    found = _run(plugin, "--cache-dir", str(plugin / "cache"), site=False)
    assert {(f["line"], f["confidence"]) for f in found} == {(8, "medium"), (11, "medium")}
    assert _warm(plugin) == [(8, "SHM101")]


def test_a_long_lived_process_reads_a_changed_class_again(
    plugin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The language server looks classes up for hours: a package upgraded meanwhile is read
    # again, not served from the process's memory.
    from shmlint.facts.classes import ExternalClasses
    from shmlint.facts.evidence import Evidence, TypeTables

    monkeypatch.syspath_prepend(str(plugin.parent / "site"))
    lookup = ExternalClasses(TypeTables.for_options(Options())).lookup
    before = lookup("extpkg.outputs.ModelRunnerOutput")
    assert before is not None and before.evidence is Evidence.ARRAYS
    outputs = plugin.parent / "site" / "extpkg" / "outputs.py"
    _touched(outputs, OUTPUTS.replace("logprobs: np.ndarray", "logprobs: list[float]"))
    after = lookup("extpkg.outputs.ModelRunnerOutput")
    assert after is not None and after.evidence is not Evidence.ARRAYS


@pytest.mark.parametrize("mode", [[], ["--per-file"]], ids=["project", "per-file"])
@pytest.mark.parametrize("missing", ["module", "package"])
def test_a_warm_run_notices_a_missing_package_installed(
    plugin: Path, mode: list[str], missing: str
) -> None:
    # Not found, the lookup notes where it looked (the package's directory, or the path's
    # installed-packages directories): installing the module there is seen by the next run.
    (plugin / "plugin.py").write_text(PLUGIN + KEPT)
    site = plugin.parent / "site"
    moved = {"module": site / "extpkg" / "outputs.py", "package": site / "extpkg"}[missing]
    aside = plugin.parent / "aside"
    moved.rename(aside)
    unknown = [(8, "SHM101"), (11, "SHM101"), (15, "SHM102")]
    assert _warm(plugin, *mode) == unknown  # (medium: the payload's type is unknown)
    assert _warm(plugin, *mode) == unknown  # warm
    aside.rename(moved)  # installed
    assert _warm(plugin, *mode) == [(8, "SHM101"), (15, "SHM102")]


@pytest.mark.parametrize("missing", ["module", "package"])
def test_a_long_lived_process_finds_a_package_installed_meanwhile(
    plugin: Path, monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    from shmlint.facts import external
    from shmlint.facts.classes import ExternalClasses
    from shmlint.facts.evidence import Evidence, TypeTables

    site = plugin.parent / "site"
    moved = {"module": site / "extpkg" / "outputs.py", "package": site / "extpkg"}[missing]
    aside = plugin.parent / "aside"
    moved.rename(aside)
    monkeypatch.syspath_prepend(str(site))
    lookup = ExternalClasses(TypeTables.for_options(Options())).lookup
    with external.tracked() as read:
        assert lookup("extpkg.outputs.ModelRunnerOutput") is None
    searched = str(site / "extpkg") if missing == "module" else str(site)
    assert searched in read  # where it was looked for, stamped
    assert lookup("extpkg.outputs.ModelRunnerOutput") is None  # (served from memory)
    aside.rename(moved)
    found = lookup("extpkg.outputs.ModelRunnerOutput")
    assert found is not None and found.evidence is Evidence.ARRAYS


def test_a_missing_package_is_not_watched_for_where_the_program_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The path's first entry as the program started (the script's directory, or the project
    # under `python -m`) is not where packages are installed: files created there (the cache)
    # would make every run's lookups stale.
    from shmlint.facts import external

    start, site = tmp_path / "project", tmp_path / "site"
    start.mkdir()
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(start))
    monkeypatch.setattr(external, "_START", str(start))
    found = external.module_file("not_installed_anywhere.outputs")
    assert found.path is None
    searched = dict(found.searched)
    assert str(site) in searched and str(start) not in searched


def test_a_thread_s_lookups_are_noted_in_its_own_blocks_only() -> None:
    # The editor's server analyses in a second thread: what one thread's lookups read is no
    # dependency of a file another thread analyses meanwhile.
    import threading

    from shmlint.facts import external

    opened, noted = threading.Event(), threading.Event()
    seen: dict[str, int] = {}

    def other() -> None:
        with external.tracked() as read:
            opened.set()
            noted.wait(10)
            seen.update(read)

    thread = threading.Thread(target=other)
    thread.start()
    assert opened.wait(10)
    with external.tracked() as mine:
        external.note({"/site/pkg/outputs.py": 1})
    noted.set()
    thread.join(10)
    assert mine == {"/site/pkg/outputs.py": 1} and seen == {}


def test_nothing_is_looked_up_where_the_program_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under `python -m shmlint` the project itself is first on the path: its modules are not
    # installed classes (the executable, started elsewhere, would not find them).
    from shmlint.facts import external

    start = tmp_path / "project"
    (start / "localpkg").mkdir(parents=True)
    (start / "localpkg" / "__init__.py").write_text("class Local:\n    x: int\n")
    monkeypatch.syspath_prepend(str(start))
    assert external.module_file("localpkg").path is not None  # on the path: found
    monkeypatch.setattr(external, "_START", str(start))
    external.module_file.cache_clear()
    assert external.module_file("localpkg").path is None  # where the program started


def _noticed(
    monkeypatch: pytest.MonkeyPatch,
    path: list[Path],
    module: str,
    install: typing.Callable[[], Path | None],
    *,
    found: bool,
) -> None:
    """``module`` is looked up on ``path`` (``found`` there, or not); after ``install``, a
    place the lookup noted changed, and the module is found again: the file ``install``
    returns (where it is now found first), or any when it returns None."""
    from shmlint.basics.stamps import stale
    from shmlint.facts import external

    for entry in reversed(path):
        monkeypatch.syspath_prepend(str(entry))
    with external.tracked() as read:
        first = external.module_summary(module)
    assert (first is not None) is found
    assert read and not stale(read.items())
    installed = install()
    assert stale(read.items())
    again = external.module_summary(module)  # (looked for again)
    assert again is not None and (installed is None or again.path == str(installed))


def _missing_then(
    monkeypatch: pytest.MonkeyPatch,
    path: list[Path],
    module: str,
    install: typing.Callable[[], object],
) -> None:
    """:func:`_noticed` of a module not found before ``install``."""

    def installed() -> None:
        install()

    _noticed(monkeypatch, path, module, installed, found=False)


def test_a_namespace_package_becoming_a_regular_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    (site / "nspkg").mkdir(parents=True)
    (site / "nspkg" / "py.typed").write_text("")
    _missing_then(
        monkeypatch, [site], "nspkg", lambda: (site / "nspkg" / "__init__.py").write_text("")
    )


def test_a_namespace_package_gaining_a_portion_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    (one / "nspkg" / "a").mkdir(parents=True)
    (one / "nspkg" / "a" / "__init__.py").write_text("")
    two.mkdir()

    def install() -> None:
        (two / "nspkg").mkdir()
        (two / "nspkg" / "b.py").write_text("class B:\n    x: int\n")

    _missing_then(monkeypatch, [one, two], "nspkg.b", install)


def test_a_directory_becoming_a_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    (site / "pkg" / "sub" / "outputs").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_text("")
    (site / "pkg" / "sub" / "__init__.py").write_text("")
    outputs = site / "pkg" / "sub" / "outputs" / "__init__.py"
    _missing_then(monkeypatch, [site], "pkg.sub.outputs", lambda: outputs.write_text(""))


def test_a_path_entry_created_later(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    later = tmp_path / "later"

    def install() -> None:
        (later / "laterpkg").mkdir(parents=True)
        (later / "laterpkg" / "__init__.py").write_text("")

    _missing_then(monkeypatch, [later], "laterpkg", install)


def test_a_found_module_moved_by_an_upgrade(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found once (in a long-lived process), then the upgrade makes the module a package: it
    # is looked for again, not taken as gone (a miss noting nothing).
    from shmlint.facts import external

    site = tmp_path / "site"
    (site / "mvpkg").mkdir(parents=True)
    (site / "mvpkg" / "__init__.py").write_text("")
    module = site / "mvpkg" / "outputs.py"
    module.write_text("class Out:\n    x: int\n")
    monkeypatch.syspath_prepend(str(site))
    assert external.module_summary("mvpkg.outputs") is not None
    module.unlink()
    (site / "mvpkg" / "outputs").mkdir()
    (site / "mvpkg" / "outputs" / "__init__.py").write_text("class Out:\n    x: int\n")
    moved = external.module_summary("mvpkg.outputs")
    assert moved is not None and moved.path.endswith("__init__.py")
    (site / "mvpkg" / "outputs" / "__init__.py").unlink()  # uninstalled: a miss, noted
    with external.tracked() as read:
        assert external.module_summary("mvpkg.outputs") is None
    assert str(site / "mvpkg" / "outputs") in read


def test_a_python_path_entry_naming_the_start_directory_stays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from shmlint.facts import external

    monkeypatch.setattr(external, "_START", "/start")
    monkeypatch.setattr(sys, "path", ["/start", "/site", "/start"])
    assert external.search_path() == ["/site", "/start"]


def test_a_path_entry_not_there_is_not_watched_by_its_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The entry is noted as absent: files coming and going in the directory above it (the
    # project, /tmp) leave the answer standing; the entry appearing does not.
    from shmlint.basics.stamps import stale
    from shmlint.facts import external

    monkeypatch.syspath_prepend(str(tmp_path / "absent" / "lib"))
    with external.tracked() as read:
        assert external.module_summary("nowhere_installed_pkg") is None
    (tmp_path / "unrelated.txt").write_text("")
    assert str(tmp_path / "absent" / "lib") in read and not stale(read.items())
    (tmp_path / "absent" / "lib").mkdir(parents=True)
    assert stale(read.items())


def test_a_package_wins_over_a_module_of_the_same_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As Python imports it: `mod/__init__.py` before `mod.py` (a leftover of an upgrade).
    from shmlint.facts import external

    site = tmp_path / "site"
    (site / "twopkg" / "mod").mkdir(parents=True)
    (site / "twopkg" / "__init__.py").write_text("")
    (site / "twopkg" / "mod.py").write_text("")
    (site / "twopkg" / "mod" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(site))
    found = external.module_file("twopkg.mod")
    assert found.path == site / "twopkg" / "mod" / "__init__.py" and found.package


def test_a_module_in_a_zip_archive_is_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its origin names a file no stat finds: not a file found and gone (looked for again and
    # again, every cached lookup dropped each time), a miss.
    import zipfile

    from shmlint.facts import external

    archive = tmp_path / "site.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zpkg/__init__.py", "class Z:\n    x: int\n")
    monkeypatch.syspath_prepend(str(archive))
    assert external.module_file("zpkg").path is None
    external.module_file("another_missing_pkg")
    assert external.module_summary("zpkg") is None
    assert external.module_summary("zpkg") is None
    assert external.module_file.cache_info().currsize == 2  # nothing dropped


SHADOW = """\
from dataclasses import dataclass


@dataclass
class ModelRunnerOutput:
    req_ids: list[str]


@dataclass
class Stats:
    count: int
"""


@pytest.mark.parametrize("mode", [[], ["--per-file"]], ids=["project", "per-file"])
def test_a_warm_run_notices_a_package_installed_ahead_of_the_one_found(
    plugin: Path, mode: list[str]
) -> None:
    # Found in `site`; the same package installed later in an entry before it (a user site, a
    # PYTHONPATH directory) is the one Python imports: the next run reads that one.
    (plugin / "plugin.py").write_text(PLUGIN + KEPT)
    early = plugin.parent / "early"
    early.mkdir()
    path = [early, plugin.parent / "site"]
    arrays = [(8, "SHM101"), (15, "SHM102")]
    assert _warm(plugin, *mode, path=path) == arrays
    assert _warm(plugin, *mode, path=path) == arrays  # warm
    (early / "extpkg").mkdir()
    (early / "extpkg" / "__init__.py").write_text("from extpkg.outputs import ModelRunnerOutput\n")
    (early / "extpkg" / "outputs.py").write_text(SHADOW)
    assert _warm(plugin, *mode, path=path) == []  # (its ModelRunnerOutput holds no arrays)


A = "class A:\n    x: int\n"
B = "class B:\n    y: int\n"
# Where a module is found, where its name is then installed ahead of it (every file named by
# its path below the test's directory), and the file found after: what the lookup noted
# changes. (name, entries of the path, files, module looked up, files installed, found then)
SHADOWS = [
    (
        "a package in an earlier entry",
        ["early", "site"],
        {"site/shpkg/__init__.py": A},
        "shpkg",
        {"early/shpkg/__init__.py": B},
        "early/shpkg/__init__.py",
    ),
    (
        "its submodule looked up alone",
        ["early", "site"],
        {"site/shpkg/__init__.py": "", "site/shpkg/out.py": A},
        "shpkg.out",
        {"early/shpkg/__init__.py": "", "early/shpkg/out.py": B},
        "early/shpkg/out.py",
    ),
    (
        "a package beside a top-level module file",
        ["site"],
        {"site/onefile.py": A},
        "onefile",
        {"site/onefile/__init__.py": B},
        "site/onefile/__init__.py",
    ),
    (
        "a package beside a submodule file",
        ["site"],
        {"site/subpkg/__init__.py": "", "site/subpkg/out.py": A},
        "subpkg.out",
        {"site/subpkg/out/__init__.py": B},
        "site/subpkg/out/__init__.py",
    ),
    (
        "an earlier directory of the name gaining __init__.py",
        ["early", "site"],
        {"early/shq/data.txt": "", "site/shq/__init__.py": A},
        "shq",
        {"early/shq/__init__.py": B},
        "early/shq/__init__.py",
    ),
    (
        "an earlier portion of a namespace package gaining the module",
        ["one", "two"],
        {"one/nsx/a.py": "", "two/nsx/b.py": A},
        "nsx.b",
        {"one/nsx/b.py": B},
        "one/nsx/b.py",
    ),
    (
        "a new portion of a namespace package in an earlier entry",
        ["early", "one"],
        {"one/nsy/b.py": A},
        "nsy.b",
        {"early/nsy/b.py": B},
        "early/nsy/b.py",
    ),
    (
        "a namespace package becoming a regular one in a later entry",
        ["one", "late"],
        {"one/nsz/b.py": A},
        "nsz.b",
        {"late/nsz/__init__.py": "", "late/nsz/b.py": B},
        "late/nsz/b.py",
    ),
]


@pytest.mark.parametrize(
    ("entries", "files", "module", "installed", "found"),
    [case[1:] for case in SHADOWS],
    ids=[case[0] for case in SHADOWS],
)
def test_a_module_installed_where_it_would_be_found_first(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    entries: list[str],
    files: dict[str, str],
    module: str,
    installed: dict[str, str],
    found: str,
) -> None:
    def write(written: dict[str, str]) -> None:
        for relative, text in written.items():
            (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / relative).write_text(text)

    for entry in entries:
        (tmp_path / entry).mkdir(exist_ok=True)
    write(files)

    def install() -> Path:
        write(installed)
        return tmp_path / found

    _noticed(monkeypatch, [tmp_path / entry for entry in entries], module, install, found=True)


def test_a_module_found_after_the_path_notes_every_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An editable install's finder comes after the path's: the path was searched in vain
    # first, and a package of the name installed in any of its entries would be found.
    import importlib.machinery
    import importlib.util

    source, site = tmp_path / "source", tmp_path / "site"
    (source / "edpkg").mkdir(parents=True)
    (source / "edpkg" / "__init__.py").write_text("class A:\n    x: int\n")
    site.mkdir()

    class Editable:
        @staticmethod
        def find_spec(name: str, path: object = None, target: object = None) -> object:
            if name != "edpkg":
                return None
            init = str(source / "edpkg" / "__init__.py")
            return importlib.util.spec_from_file_location(
                name, init, submodule_search_locations=[str(source / "edpkg")]
            )

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Editable()])
    assert importlib.machinery.PathFinder in sys.meta_path

    def install() -> Path:
        (site / "edpkg").mkdir()
        (site / "edpkg" / "__init__.py").write_text("class B:\n    y: int\n")
        return site / "edpkg" / "__init__.py"

    _noticed(monkeypatch, [site], "edpkg", install, found=True)


@pytest.mark.parametrize("mode", [[], ["--per-file"]], ids=["project", "per-file"])
def test_a_warm_run_notices_a_package_ahead_of_a_submodule_imported(
    plugin: Path, mode: list[str]
) -> None:
    text = (PLUGIN + KEPT).replace("from extpkg import", "from extpkg.outputs import")
    (plugin / "plugin.py").write_text(text)
    early = plugin.parent / "early"
    early.mkdir()
    path = [early, plugin.parent / "site"]
    assert _warm(plugin, *mode, path=path) == [(8, "SHM101"), (15, "SHM102")]
    (early / "extpkg").mkdir()
    (early / "extpkg" / "__init__.py").write_text("")
    (early / "extpkg" / "outputs.py").write_text(SHADOW)
    assert _warm(plugin, *mode, path=path) == []


def test_other_files_beside_a_module_found_change_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An editor's temporary file in the package (the project's own, installed editable) or in
    # an earlier entry shadows nothing: the lookup stands.
    from shmlint.basics.stamps import stale
    from shmlint.facts import external

    early, site = tmp_path / "early", tmp_path / "site"
    early.mkdir()
    (site / "quiet").mkdir(parents=True)
    (site / "quiet" / "__init__.py").write_text("")
    (site / "quiet" / "out.py").write_text("class A:\n    x: int\n")
    (site / "alone.py").write_text("class B:\n    y: int\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(early))
    with external.tracked() as read:
        assert external.module_summary("quiet.out") is not None
        assert external.module_summary("alone") is not None
        assert external.module_summary("alone.sub") is None  # (a module has no submodule)
    (site / "quiet" / ".out.py.swp").write_text("")
    (site / ".alone.py.swp").write_text("")
    (early / "notes.txt").write_text("")
    assert not stale(read.items())


def test_a_module_file_becoming_a_package_with_the_submodule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "onefile.py").write_text("")

    def install() -> None:
        (site / "onefile").mkdir()
        (site / "onefile" / "__init__.py").write_text("")
        (site / "onefile" / "sub.py").write_text("class B:\n    y: int\n")

    _missing_then(monkeypatch, [site], "onefile.sub", install)
