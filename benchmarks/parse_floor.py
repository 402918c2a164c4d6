"""The floor under any check built on CPython's parser, against ruff, on one real tree.

    python benchmarks/parse_floor.py [ray==2.60.0 | vllm==0.19.1 | PATH] [--jobs 2] [--repeat 3]

In one run (min of N, wall seconds, a new process each, as ``bench_tree.py`` measures):
``ast.parse`` of every file a per-file check must parse (those the lossless text prefilter keeps:
they mention a read, Ray or a detach helper) in a pool of ``--jobs`` processes, and nothing
else (no analysis, no output); the same files parsed and every node of each visited once by
``ast.walk`` (doing nothing at a node: less than any analysis does); the same parse for every
file; ``ruff check --no-cache``. A project run parses at least the first set and looks at every
node at least once. So ``parse / ruff`` and ``parse and walk / ruff`` bound from below the ratio
such a check can reach against ruff, whatever its analysis costs. Speed is reported here, never
asserted.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_tree import _timed, _tool  # noqa: E402
from benchmarks.corpus import corpus  # noqa: E402


def _parse(paths: list[str], prefilter: bool, walk: bool = False) -> int:
    """Parse these files (those the prefilter keeps, with ``prefilter``; with ``walk``, each
    tree's every node visited once); how many."""
    from shmlint.analysis.engine import may_contain_source
    from shmlint.basics.options import Options

    options, parsed = Options(), 0
    for path in paths:
        data = Path(path).read_bytes()
        if prefilter:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if not may_contain_source(text, options):
                continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            pass
        else:
            if walk:
                for _ in ast.walk(tree):
                    pass
        parsed += 1
    return parsed


def _worker(root: Path, jobs: int, prefilter: bool, walk: bool) -> None:
    """The measured process: parse (and walk) the tree's files in a pool of ``jobs``."""
    paths = sorted(str(path) for path in root.rglob("*.py"))
    chunks = [paths[i::jobs] for i in range(jobs)]
    with concurrent.futures.ProcessPoolExecutor(jobs) as pool:
        parsed = sum(pool.map(_parse, chunks, [prefilter] * jobs, [walk] * jobs))
    print(f"{parsed} of {len(paths)} files parsed")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", nargs="?", default="ray==2.60.0")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--worker", choices=("all", "checked", "walked"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    root = Path(args.target)
    if args.worker:
        _worker(root, args.jobs, args.worker != "all", args.worker == "walked")
        return 0
    if not root.exists():
        root = corpus(args.target)
        if args.target.startswith("vllm"):
            root = root / "vllm"
    root = root.resolve()  # (the measured processes run in the tree: a relative path is lost)
    me = [sys.executable, str(Path(__file__).resolve()), str(root), "--jobs", str(args.jobs)]
    cases = {
        "ast.parse, files a check parses": [*me, "--worker", "checked"],
        "ast.parse and ast.walk, those files": [*me, "--worker", "walked"],
        "ast.parse, every file": [*me, "--worker", "all"],
        "ruff check --no-cache": [_tool("ruff"), "check", "--no-cache", "--exit-zero", "-q", "."],
    }
    best = {
        name: min(_timed(command, root)[0] for _ in range(args.repeat))
        for name, command in cases.items()
    }
    print(f"tree: {root}; jobs={args.jobs}, min of {args.repeat}")
    for name, wall in best.items():
        print(f"{name:36s} {wall:6.2f} s")
    ruff = best["ruff check --no-cache"]
    print(f"parse (checked) / ruff = {best['ast.parse, files a check parses'] / ruff:.2f}")
    walked = best["ast.parse and ast.walk, those files"]
    print(f"parse and walk / ruff  = {walked / ruff:.2f}")
    print(f"parse (all) / ruff     = {best['ast.parse, every file'] / ruff:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
