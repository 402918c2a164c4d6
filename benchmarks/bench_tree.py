"""shmlint against its peers on one real tree, in one run: wall times, lines/s, ratios.

    python benchmarks/bench_tree.py [ray==2.60.0 | PATH] [--jobs 2]

Fetches the ray wheel once (``pip download --no-deps``), unpacks its ``.py`` files into the
ignored ``.corpus/``, then times on that tree: ``shmlint check --per-file --no-cache``
(cold), the same twice with a cache (warm), the project-wide ``shmlint check`` (cold, warm),
plain flake8 (default plugins, ``-j``), ``flake8 --select SHM`` (the plugin), and ``ruff check
--no-cache``. Prints wall time, lines/s, peak memory, ratios, and how many files the
prefilter skipped. Speed is reported here, never asserted in a test.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.corpus import corpus  # noqa: E402

BIN = Path(sys.executable).parent
PLAIN = Path(__file__).resolve().parent / "flake8_plain.py"  # flake8 without the SHM plugin


def _tool(name: str) -> str:
    found = BIN / name
    return str(found) if found.exists() else (shutil.which(name) or name)


def _timed(command: list[str], cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, peak RSS of the children in MB, exit code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode not in (0, 1):
        sys.stderr.write(f"{command[0]} failed ({proc.returncode}): {proc.stderr[-2000:]!r}\n")
    return wall, max(peak, before) / 1024, proc.returncode


def _prefilter_counts(root: Path) -> tuple[int, int]:
    from shmlint.analysis.engine import may_contain_source
    from shmlint.basics.options import Options

    files = list(root.rglob("*.py"))
    kept = sum(
        may_contain_source(p.read_text(encoding="utf-8", errors="replace"), Options())
        for p in files
    )
    return kept, len(files) - kept


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", default="ray==2.60.0")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    root = Path(args.target) if Path(args.target).exists() else corpus(args.target)
    files = list(root.rglob("*.py"))
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    jobs = str(args.jobs)
    cache = Path(tempfile.mkdtemp(prefix="shmlint-bench-cache-"))
    shmlint = [_tool("shmlint"), "check", "--exit-zero", "--isolated", "-j", jobs, "."]
    project_cache = Path(tempfile.mkdtemp(prefix="shmlint-bench-project-"))
    runs = [
        ("shmlint cold (--no-cache)", [*shmlint, "--per-file", "--no-cache"]),
        ("shmlint warm #1", [*shmlint, "--per-file", "--cache-dir", str(cache)]),
        ("shmlint warm #2", [*shmlint, "--per-file", "--cache-dir", str(cache)]),
        ("shmlint project cold", [*shmlint, "--no-cache"]),
        ("shmlint project warm #1", [*shmlint, "--cache-dir", str(project_cache)]),
        ("shmlint project warm #2", [*shmlint, "--cache-dir", str(project_cache)]),
        (
            "flake8 (default plugins)",
            [
                _tool("flake8"),
                "--isolated",
                "-j",
                jobs,
                "--exit-zero",
                "--extend-ignore",
                "SHM",
                ".",
            ],
        ),
        (
            "flake8 --select SHM",
            [_tool("flake8"), "--isolated", "-j", jobs, "--exit-zero", "--select", "SHM", "."],
        ),
        (
            "flake8 default + SHM",
            [
                _tool("flake8"),
                "--isolated",
                "-j",
                jobs,
                "--exit-zero",
                "--extend-select",
                "SHM",
                ".",
            ],
        ),
        (
            "ruff check --no-cache",
            [_tool("ruff"), "check", "--no-cache", "--isolated", "--exit-zero", "."],
        ),
    ]
    # The first warm run fills the cache; it is the "cold with cache writes" figure.
    times: dict[str, float] = {}
    print(f"tree: {root} — {len(files)} files, {lines:,} lines; jobs={jobs}")
    kept, skipped = _prefilter_counts(root)
    print(f"prefilter: {kept} files parsed, {skipped} skipped")
    print(f"{'run':<28} {'wall s':>8} {'lines/s':>12} {'peak MB':>8}")
    for name, command in runs:
        wall, peak, _ = _timed(command, root)
        times[name] = wall
        print(f"{name:<28} {wall:8.2f} {lines / wall:12,.0f} {peak:8.0f}")
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(project_cache, ignore_errors=True)
    cold, warm = times["shmlint cold (--no-cache)"], times["shmlint warm #2"]
    flake8, ruff = times["flake8 (default plugins)"], times["ruff check --no-cache"]
    plugin_cost = times["flake8 default + SHM"] / flake8 - 1
    print()
    print(f"shmlint cold / flake8   = {cold / flake8:.3f}   (goal <= 0.1)")
    print(f"shmlint cold / ruff     = {cold / ruff:.2f}    (goal <= 2)")
    print(f"shmlint warm / ruff     = {warm / ruff:.2f}    (goal <= 1)")
    print(f"flake8 plugin overhead  = {plugin_cost:+.1%}  (goal <= +5%)")
    project = times["shmlint project cold"]
    print(f"project cold / per-file = {project / cold:.2f}    (the cost of the project phase)")
    print(f"project cold / flake8   = {project / flake8:.3f}")
    print(f"project warm / ruff     = {times['shmlint project warm #2'] / ruff:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
