"""Where a ``shmlint check`` run spends its time, phase by phase, on one real tree.

    python benchmarks/phases.py [ray==2.60.0 | vllm==0.19.1 | PATH]

Runs the command in this process with one job (so every second is attributed), cold
(``--no-cache``), cold filling a cache, warm with nothing changed, and warm after a one-line
edit of one file; each phase's time is exclusive (a phase called inside another counts once,
in the inner one). Process start (interpreter and imports) is measured apart, in a new process.
To measure another commit, put its checkout first on ``PYTHONPATH``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import io
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.corpus import corpus  # noqa: E402

# (module, attribute, phase). Where a name is imported into another module, both are wrapped.
TARGETS = [
    ("shmlint.run.discovery", "iter_python_files", "discovery"),
    ("shmlint.cli.inputs", "iter_python_files", "discovery"),
    ("shmlint.run.runner", "_read_all", "reading"),  # (before shmlint.run.files)
    ("shmlint.run.files", "_read_all", "reading"),
    ("shmlint.analysis.engine", "decode_source", "reading"),
    ("shmlint.run.passes", "decode_source", "reading"),
    ("shmlint.analysis.engine", "may_contain_source", "prefilter"),
    ("shmlint.run.passes", "may_contain_source", "prefilter"),
    ("shmlint.analysis.engine", "parse_source", "parse"),
    ("shmlint.run.passes", "parse_source", "parse"),
    ("shmlint.run.passes", "first_pass", "phase-1 analysis"),
    ("shmlint.run.runner", "first_pass", "phase-1 analysis"),
    ("shmlint.run.runner", "_merged", "merge"),  # (before shmlint.run.merging)
    ("shmlint.run.runner", "project_facts", "merge"),
    ("shmlint.run.passes.FirstPass", "needs_second_pass", "phase-2 plan"),
    ("shmlint.run.runner", "check_files", "phase-2 analysis"),
    ("shmlint.run.incremental", "check_changed", "incremental (edited files)"),
    ("shmlint.run.cache.Cache", "_entry", "cache I/O"),
    ("shmlint.run.cache.Cache", "_write", "cache I/O"),
    ("shmlint.run.cache.Cache", "key", "cache I/O"),
    ("shmlint.run.cache.Cache", "first_pass_key", "cache I/O"),
    ("shmlint.run.passes", "decode", "cache decode"),
    ("shmlint.run.passes", "encode", "cache decode"),
    ("shmlint.facts.model.ProjectFacts", "from_json", "cache decode"),
    ("shmlint.facts.model.ProjectFacts", "to_json", "cache decode"),
    ("shmlint.run.record", "load", "run record"),
    ("shmlint.run.record.Record", "changed", "run record"),
    ("shmlint.run.record", "write", "run record"),
    ("shmlint.cli.command", "_report", "report"),
]


class Clock:
    """Exclusive time per phase: a call inside another phase is taken out of the outer one."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}
        self._stack: list[float] = []  # time spent in inner phases, per open phase

    def wrap(self, function: Callable[..., Any], phase: str) -> Callable[..., Any]:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self._stack.append(0.0)
            started = time.perf_counter()
            try:
                result = function(*args, **kwargs)
                if inspect.isgenerator(result):  # discovery: the walk happens as it is read
                    result = iter(list(result))
                return result
            finally:
                elapsed = time.perf_counter() - started
                inner = self._stack.pop()
                self.totals[phase] = self.totals.get(phase, 0.0) + elapsed - inner
                if self._stack:
                    self._stack[-1] += elapsed

        return timed


def _owner(dotted: str) -> Any:
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            owner: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for name in parts[split:]:
            owner = getattr(owner, name)
        return owner
    raise ImportError(dotted)


@contextlib.contextmanager
def instrumented(clock: Clock) -> Iterator[None]:
    undo = []
    for dotted, attribute, phase in TARGETS:
        try:
            owner = _owner(dotted)
        except (ImportError, AttributeError):
            continue  # not in this version of the code
        original = owner.__dict__.get(attribute) if isinstance(owner, type) else None
        current = getattr(owner, attribute, None)
        if current is None:
            continue
        if isinstance(original, classmethod):
            setattr(owner, attribute, classmethod(clock.wrap(original.__func__, phase)))
            undo.append((owner, attribute, original))
            continue
        setattr(owner, attribute, clock.wrap(current, phase))
        undo.append((owner, attribute, original if original is not None else current))
    try:
        yield
    finally:
        for owner, attribute, kept in reversed(undo):
            setattr(owner, attribute, kept)


def _run(root: Path, *options: str) -> tuple[float, dict[str, float]]:
    from shmlint.cli import main

    clock = Clock()
    command = ["check", "--exit-zero", "--isolated", "-j", "1", *options, str(root)]
    with instrumented(clock), contextlib.redirect_stdout(io.StringIO()):
        started = time.perf_counter()
        main(command)
        wall = time.perf_counter() - started
    clock.totals["other"] = wall - sum(clock.totals.values())
    return wall, clock.totals


def _start(*command: str) -> float:
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run([sys.executable, *command], stdout=subprocess.DEVNULL, check=False)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> int:
    target = sys.argv[1] if len(sys.argv) > 1 else "ray==2.60.0"
    root = Path(target) if Path(target).exists() else corpus(target)
    if (root / "vllm").is_dir() and target.startswith("vllm"):
        root = root / "vllm"
    cache = Path(tempfile.mkdtemp(prefix="shmlint-phases-"))
    edited = sorted(root.rglob("*.py"))[len(list(root.rglob("*.py"))) // 2]
    original = edited.read_bytes()
    columns: dict[str, tuple[float, dict[str, float]]] = {}
    try:
        columns["cold"] = _run(root, "--no-cache")
        columns["cold, filling"] = _run(root, "--cache-dir", str(cache))
        _run(root, "--cache-dir", str(cache))  # leaves the run record
        columns["warm"] = _run(root, "--cache-dir", str(cache))
        edited.write_bytes(original + b"\n# edited\n")
        columns["warm, 1 edited"] = _run(root, "--cache-dir", str(cache))
    finally:
        edited.write_bytes(original)
        shutil.rmtree(cache, ignore_errors=True)
    interpreter = _start("-c", "pass")
    imports = _start("-c", "import shmlint.cli.command") - interpreter
    phases = sorted({p for _, totals in columns.values() for p in totals}, key=_order)
    print(f"tree: {root} (one job, in process; edited: {edited.relative_to(root)})")
    print("| phase | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for phase in phases:
        cells = [f"{totals.get(phase, 0.0):.3f}" for _, totals in columns.values()]
        print(f"| {phase} | " + " | ".join(cells) + " |")
    print(
        "| **total (in process)** | "
        + " | ".join(f"**{w:.3f}**" for w, _ in columns.values())
        + " |"
    )
    print(f"| process start: interpreter | {interpreter:.3f} (each run) |")
    print(f"| process start: imports of `shmlint check` | {imports:.3f} (each run) |")
    return 0


def _order(phase: str) -> int:
    names = [p for _, _, p in TARGETS]
    return names.index(phase) if phase in names else len(names)


if __name__ == "__main__":
    sys.exit(main())
