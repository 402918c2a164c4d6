"""shmlint against its peers on one real tree, in one run: wall times (min of N), peak memory
of all processes, ratios, and the warm cases a pre-commit hook and an editor meet.

    python benchmarks/bench_tree.py [ray==2.60.0 | vllm==0.19.1 | PATH] [--jobs 2] [--repeat 3]
        [--scan-jobs 1,2,4] [--plugin] [--fixes] [--leaf FILE] [--payload FILE]

Fetches the wheel once (``pip download --no-deps``) and unpacks its ``.py`` files into the
ignored ``.corpus/`` (for ``vllm==…`` the run is on its ``vllm/`` directory). Then, on that tree:
``shmlint check`` project-wide and ``--per-file``, cold (``--no-cache``); the project run with an
empty cache (cold, filling it: what CI and a first pre-commit run pay); warm with nothing
changed; warm after a one-line edit of a file nothing else depends on (``--leaf``) and of the
module defining the payload class (``--payload``), both a comment appended (what the module
gives the project's facts is unchanged) and a new function (the facts are the last run's
knowing it), and of both a comment inserted on top (every line moves: the facts are the last
run's relined); a function removed from the payload module (one of several appended first;
the facts are the last run's forgetting it); an import inserted on top of the leaf file, or its
first ``import name`` removed (the facts are the last run's without the alias:
shmlint/facts/unimported.py), and a class appended to the payload module (the facts are the
last run's knowing the alias, the class: shmlint/facts/declared.py; these two merged the tree
before); a parameter added to a
function of the payload module (``--function``; the facts are the last run's with its return
fact rated anew: shmlint/facts/resigned.py; it merged the tree before); a field inserted in the
payload class (``--payload-class``; the facts are the last run's with the class and what was
rated from it rated anew, and the files asking of them planned again: shmlint/facts/refielded.py,
shmlint/run/replan.py; it merged the tree before); a helper extracted from the leaf file's first
one-line return (a function changed in place and one added beside it: it merged the tree
before); a comment inserted on top of a module defining a function that returns a read
(``--reader``: only the files citing the read's line are re-checked; all of phase 2 was
before). Each appended edit is
measured from the original file (undone, and a warm run, between repetitions); plain
flake8 (``-j``), ``ruff check --no-cache``; with ``--plugin`` also flake8 with the SHM plugin;
with ``--fixes`` also ``--diff --unsafe-fixes --min-confidence medium`` (every fix libcst makes,
written nowhere) at ``-j 1`` and ``-j``.
Each edit is undone afterwards. Speed is reported here, never asserted in a test.
"""

from __future__ import annotations

import argparse
import ast
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.corpus import corpus  # noqa: E402

BIN = Path(sys.executable).parent
PLAIN = Path(__file__).resolve().parent / "flake8_plain.py"  # flake8 without the SHM plugin
PAGE = os.sysconf("SC_PAGE_SIZE")
# Files to edit, per tree (relative to the tree's root): one nothing depends on, and the
# module defining the payload class the tree's reads return; a function of the latter that
# gains a parameter, and the payload class, which gains a field.
EDITED = {
    "ray": (
        "ray/_private/ray_perf.py",
        "ray/air/result.py",
        "_repr",
        "Result",
        "ray/util/check_open_ports.py",
    ),
    "vllm": (
        "vllm/v1/executor/ray_executor.py",
        "vllm/v1/outputs.py",
        "_combine_non_none",
        "ModelRunnerOutput",
        "vllm/v1/executor/ray_executor.py",
    ),
}


def _tool(name: str) -> str:
    found = BIN / name
    return str(found) if found.exists() else (shutil.which(name) or name)


def _tree_rss(root: int) -> int:
    """The resident memory of a process and all its descendants, in bytes."""
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/statm") as handle:
                total += int(handle.read().split()[1]) * PAGE
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    todo.extend(int(child) for child in handle.read().split())
        except (OSError, ValueError):
            continue
    return total


def _timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB of the process and all its children, sampled)."""
    peak = 0
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss(proc.pid))
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, error = proc.communicate()
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    if proc.returncode not in (0, 1):
        sys.stderr.write(f"{command[0]} failed ({proc.returncode}): {error[-2000:]!r}\n")
    return wall, peak / 2**20


class Edit:
    """Appends a line to a file for each measured run (``top``: one more line above the first
    each run, so that every line moves from where the last run saw it); ``undo`` puts the
    bytes back."""

    def __init__(self, path: Path, line: Callable[[int], str], top: bool = False) -> None:
        self.path, self.line, self.original, self.count = path, line, path.read_bytes(), 0
        self.top = top

    def __call__(self) -> None:
        self.count += 1
        if self.top:
            lines = "".join(f"{self.line(n)}\n" for n in range(1, self.count + 1))
            self.path.write_bytes(lines.encode() + self.original)
        else:
            self.path.write_bytes(self.original + f"\n{self.line(self.count)}\n".encode())

    def undo(self) -> None:
        self.path.write_bytes(self.original)


class Parameter(Edit):
    """A parameter added after the last one of function ``name`` (another name each run)."""

    def __init__(self, path: Path, name: str) -> None:
        super().__init__(path, str)
        self.name = name

    def __call__(self) -> None:
        self.count += 1
        text = self.original.decode()
        start = text.index(f"def {self.name}(") + len(f"def {self.name}(")
        depth, close = 1, start
        while depth:
            depth += {"(": 1, ")": -1}.get(text[close], 0)
            close += 1
        listed = text[start : close - 1].rstrip()
        comma = ", " if listed and not listed.endswith(",") else ""
        added = f"{listed}{comma}_bench_{self.count}=None"
        self.path.write_bytes(f"{text[:start]}{added}{text[close - 1 :]}".encode())


class Unimport(Edit):
    """The file's first top-level ``import name`` line removed (the same each run)."""

    def __call__(self) -> None:
        self.count += 1
        lines = self.original.decode().splitlines(keepends=True)
        first = next(i for i, line in enumerate(lines) if re.match(r"import \w+\n", line))
        self.path.write_bytes("".join(lines[:first] + lines[first + 1 :]).encode())


class Field(Edit):
    """A field inserted on top of the body of class ``name`` (another name each run)."""

    def __init__(self, path: Path, name: str) -> None:
        super().__init__(path, str)
        self.name = name

    def __call__(self) -> None:
        self.count += 1
        text = self.original.decode()
        header = text.index(f"class {self.name}")
        end = text.index("\n", header) + 1
        field = f"    _bench_field_{self.count}: int = 0\n"
        self.path.write_bytes(f"{text[:end]}{field}{text[end:]}".encode())


class Extract(Edit):
    """A helper extracted, as a refactoring does: the first one-line ``return <expression>``
    of an undecorated module-level function (else of a method of an undecorated class)
    passed through a new module-level function (another name each run). (A remote function
    or an actor's method changed in place is left to the merge.)"""

    def __call__(self) -> None:
        self.count += 1
        text = self.original.decode()
        tree = ast.parse(text)
        functions = [
            node
            for node in tree.body
            if isinstance(node, ast.FunctionDef) and not node.decorator_list
        ]
        functions += [
            node
            for cls in tree.body
            if isinstance(cls, ast.ClassDef) and not cls.decorator_list
            for node in cls.body
            if isinstance(node, ast.FunctionDef) and not node.decorator_list
        ]
        found = next(
            statement
            for function in functions
            for statement in function.body
            if isinstance(statement, ast.Return)
            and statement.value is not None
            and statement.lineno == statement.end_lineno
        )
        assert found.value is not None
        lines = text.splitlines(keepends=True)
        line = lines[found.lineno - 1].encode()  # (ast's columns count UTF-8 bytes)
        start, end = found.value.col_offset, found.value.end_col_offset or 0
        name = f"_bench_extracted_{self.count}"
        wrapped = line[:start] + f"{name}(".encode() + line[start:end] + b")" + line[end:]
        lines[found.lineno - 1] = wrapped.decode()
        helper = f"\n\ndef {name}(value):\n    return value\n"
        self.path.write_bytes(("".join(lines) + helper).encode())


class Removal(Edit):
    """Functions appended to a file and recorded by a warm run (``record``), before the first
    measured run; then one fewer before each."""

    def __init__(self, path: Path, count: int, record: Callable[[], object]) -> None:
        super().__init__(path, str)
        self.record, self.left = record, list(range(1, count + 1))

    def _with(self, numbers: list[int]) -> bytes:
        added = "".join(f"\n\ndef _bench_removed_{n}():\n    return None\n" for n in numbers)
        return self.original + added.encode()

    def __call__(self) -> None:
        if self.count == 0:
            self.path.write_bytes(self._with(self.left))
            self.record()
        self.count += 1
        self.left.pop(0)
        self.path.write_bytes(self._with(self.left))


def _compile_shmlint() -> None:
    """Byte-compile the shmlint the runs import, as an install does: with
    ``PYTHONDONTWRITEBYTECODE`` set (or a fresh checkout on ``PYTHONPATH``) every run would
    compile its modules from source, ~0.05-0.1 s that no installed copy pays."""
    found = subprocess.run(
        [sys.executable, "-c", "import shmlint, os; print(os.path.dirname(shmlint.__file__))"],
        capture_output=True,
        text=True,
        check=True,
    )
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    package = found.stdout.strip()
    subprocess.run([sys.executable, "-m", "compileall", "-q", package], env=environment, check=True)
    print(f"shmlint: {package} (byte-compiled)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", default="ray==2.60.0")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the min is shown")
    parser.add_argument("--scan-jobs", default="", help="also the cold project run at these -j")
    parser.add_argument("--plugin", action="store_true", help="also flake8 with the SHM plugin")
    parser.add_argument("--fixes", action="store_true", help="also the fixes as a diff")
    parser.add_argument("--leaf", help="a file nothing else depends on (relative to the tree)")
    parser.add_argument("--payload", help="the module of the payload class (relative)")
    parser.add_argument("--function", help="a function of the payload module to edit")
    parser.add_argument("--payload-class", help="the payload class (gains a field)")
    parser.add_argument("--reader", help="a module defining a function that returns a read")
    args = parser.parse_args()
    if Path(args.target).exists():
        root = Path(args.target)
    else:
        root = corpus(args.target)
        name = args.target.partition("==")[0]
        if (root / name).is_dir() and name == "vllm":
            root = root / name
    kind = "vllm" if (root / "v1").is_dir() or (root / "vllm").is_dir() else "ray"
    leaf_name, payload_name, function, payload_class_name, reader_name = EDITED[kind]
    if kind == "vllm" and root.name == "vllm":
        leaf_name, payload_name, reader_name = (
            p.partition("/")[2] for p in (leaf_name, payload_name, reader_name)
        )
    leaf = root / (args.leaf or leaf_name)
    payload = root / (args.payload or payload_name)
    reader = root / (args.reader or reader_name)
    files = list(root.rglob("*.py"))
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    jobs = str(args.jobs)
    shmlint = [_tool("shmlint"), "check", "--exit-zero", "--isolated"]
    # The caches lie beside the tree, as a project's .shmlint_cache does (this VM's /tmp
    # writes files ~4x slower than its work disk).
    beside = str(root.parent) if os.access(root.parent, os.W_OK) else None
    cache = Path(tempfile.mkdtemp(prefix=".shmlint-bench-", dir=beside))
    per_file_cache = Path(tempfile.mkdtemp(prefix=".shmlint-bench-per-file-", dir=beside))
    empty_cache = Path(tempfile.mkdtemp(prefix=".shmlint-bench-empty-", dir=beside))
    warm = [*shmlint, "-j", jobs, "--cache-dir", str(cache), "."]
    leaf_comment = Edit(leaf, lambda n: f"# edited {n}")
    payload_comment = Edit(payload, lambda n: f"# edited {n}")
    payload_function = Edit(payload, lambda n: f"def _bench_added_{n}():\n    return None")
    # The commonest edit inserts a line, which moves every line below it: what a file gives
    # the facts changes (its classes' and reads' lines), unlike a comment appended.
    leaf_moved = Edit(leaf, lambda n: f"# edited {n}", top=True)
    payload_moved = Edit(payload, lambda n: f"# edited {n}", top=True)
    # Edits of what a module offers others (its imports, its classes): the merge runs again.
    leaf_import = Edit(leaf, lambda n: f"import os.path as _bench_{n}", top=True)
    # (An unused import deleted, as `ruff --fix` does: shmlint/facts/unimported.py.)
    leaf_unimport = Unimport(leaf, str)
    # A helper extracted from a function of the leaf (changed in place, one added beside it).
    leaf_extract = Extract(leaf, str)
    # Lines moved above a read other files' findings cite (their phase 2 re-checked alone).
    reader_moved = Edit(reader, lambda n: f"# edited {n}", top=True)
    payload_class = Edit(payload, lambda n: f"class _BenchAdded{n}:\n    x: int = 0")
    # A function changed in place (shmlint/facts/resigned.py; it merged the tree before).
    payload_parameter = Parameter(payload, args.function or function)
    # The payload class edited: what every phase-2 question depends on (its fact rated anew).
    payload_field = Field(payload, args.payload_class or payload_class_name)
    record = functools.partial(subprocess.run, warm, cwd=root, stdout=subprocess.DEVNULL)
    payload_removal = Removal(payload, args.repeat, record)
    flake8 = [_tool("flake8"), "--isolated", "-j", jobs, "--exit-zero"]
    # (name, command, before each run, fill the cache first)
    runs: list[tuple[str, list[str], Callable[[], None] | None]] = [
        ("shmlint per-file cold", [*shmlint, "-j", jobs, "--per-file", "--no-cache", "."], None),
        ("shmlint project cold", [*shmlint, "-j", jobs, "--no-cache", "."], None),
        (
            # What CI and a first pre-commit run pay: the cache is filled on the way.
            "shmlint project, empty cache",
            [*shmlint, "-j", jobs, "--cache-dir", str(empty_cache), "."],
            functools.partial(shutil.rmtree, empty_cache, ignore_errors=True),
        ),
        (
            "shmlint per-file warm",
            [*shmlint, "-j", jobs, "--per-file", "--cache-dir", str(per_file_cache), "."],
            None,
        ),
        ("shmlint project warm", warm, None),
        ("warm, leaf edited", warm, leaf_comment),
        ("warm, payload comment", warm, payload_comment),
        ("warm, payload new def", warm, payload_function),
        ("warm, leaf line moved", warm, leaf_moved),
        ("warm, payload line moved", warm, payload_moved),
        ("warm, payload def removed", warm, payload_removal),
        ("warm, leaf import added", warm, leaf_import),
        ("warm, leaf import removed", warm, leaf_unimport),
        ("warm, leaf helper extracted", warm, leaf_extract),
        ("warm, reader line moved", warm, reader_moved),
        ("warm, payload class added", warm, payload_class),
        ("warm, payload param added", warm, payload_parameter),
        ("warm, payload field added", warm, payload_field),
        (
            "ruff check --no-cache",
            [_tool("ruff"), "check", "--no-cache", "--isolated", "--exit-zero", "."],
            None,
        ),
        ("flake8 (default plugins)", [sys.executable, str(PLAIN), *flake8[1:], "."], None),
    ]
    if args.plugin:
        runs.append(("flake8 --select SHM", [*flake8, "--select", "SHM", "."], None))
    if args.fixes:
        fixes = ["--no-cache", "--diff", "--unsafe-fixes", "--min-confidence", "medium", "."]
        for count in sorted({"1", jobs}):
            runs.append((f"shmlint --diff -j {count}", [*shmlint, "-j", count, *fixes], None))
    for count in filter(None, args.scan_jobs.split(",")):
        runs.append(
            (f"shmlint project cold -j {count}", [*shmlint, "-j", count, "--no-cache", "."], None)
        )
    _compile_shmlint()
    print(f"tree: {root} — {len(files)} files, {lines:,} lines; jobs={jobs}, min of {args.repeat}")
    print(f"edited: leaf {leaf.relative_to(root)}, payload {payload.relative_to(root)}")
    print(f"{'run':<30} {'wall s':>8} {'lines/s':>12} {'peak MB':>8}")
    times: dict[str, float] = {}
    try:
        subprocess.run(warm, cwd=root, stdout=subprocess.DEVNULL, check=False)  # fill
        subprocess.run(warm, cwd=root, stdout=subprocess.DEVNULL, check=False)  # the record
        per_file_fill = next(
            command for name, command, _ in runs if name == "shmlint per-file warm"
        )
        subprocess.run(per_file_fill, cwd=root, stdout=subprocess.DEVNULL, check=False)
        for name, command, before in runs:
            measured = []
            for repeat in range(args.repeat):
                if (
                    repeat
                    and isinstance(before, Edit)
                    and not (before.top or isinstance(before, Removal))
                ):
                    # Each appended edit measured from the original (else the next run's edit
                    # would replace the last one's line: a rename, not the edit named).
                    before.undo()
                    subprocess.run(warm, cwd=root, stdout=subprocess.DEVNULL, check=False)
                if before is not None:
                    before()
                measured.append(_timed(command, root))
            if isinstance(before, Edit):
                before.undo()
                subprocess.run(warm, cwd=root, stdout=subprocess.DEVNULL, check=False)
            wall = min(w for w, _ in measured)
            peak = max(p for _, p in measured)
            times[name] = wall
            print(f"{name:<30} {wall:8.2f} {lines / wall:12,.0f} {peak:8.0f}", flush=True)
    finally:
        made = (
            leaf_comment,
            payload_comment,
            payload_function,
            leaf_moved,
            payload_moved,
            leaf_import,
            leaf_unimport,
            payload_class,
            payload_parameter,
            payload_field,
            leaf_extract,
            reader_moved,
        )
        for edit in (*made, payload_removal):
            edit.undo()
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(per_file_cache, ignore_errors=True)
        shutil.rmtree(empty_cache, ignore_errors=True)
    project, per_file = times["shmlint project cold"], times["shmlint per-file cold"]
    flake8_time, ruff = times["flake8 (default plugins)"], times["ruff check --no-cache"]
    print()
    print(f"project cold / flake8     = {project / flake8_time:.3f}  (goal <= 0.1)")
    print(f"project cold / ruff       = {project / ruff:.2f}   (goal <= 2)")
    print(f"project cold / per-file   = {project / per_file:.2f}   (goal <= 1.2)")
    empty = times["shmlint project, empty cache"]
    print(f"empty cache / ruff        = {empty / ruff:.2f}   (cold, filling the cache)")
    print(f"per-file cold / ruff      = {per_file / ruff:.2f}")
    print(f"warm, unchanged           = {times['shmlint project warm']:.3f} s (goal <= 0.15)")
    edits = ("leaf edited", "payload comment", "payload new def", "leaf line moved")
    for name in (*(f"warm, {edit}" for edit in edits), "warm, payload line moved"):
        print(f"{name:<25} = {times[name]:.3f} s (goal <= 0.3)")
    print(f"{'warm, payload def removed':<25} = {times['warm, payload def removed']:.3f} s")
    for name in (
        "warm, leaf import added",
        "warm, leaf import removed",
        "warm, payload class added",
        "warm, payload param added",
        "warm, payload field added",
    ):
        print(f"{name:<25} = {times[name]:.3f} s (goal <= 0.3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
