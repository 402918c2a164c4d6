"""Two checkouts of shmlint on the warm cases of one tree, run by run in turn (this VM's speed
drifts through the day: only runs interleaved in one window compare).

    python benchmarks/ab_warm.py TREE LEAF PAYLOAD --before CHECKOUT --after CHECKOUT [--repeat 5]

``TREE`` is checked with ``-j 2`` by each checkout (put first on ``PYTHONPATH``, each with its own
cache): nothing changed, a new comment line appended to ``LEAF`` and to ``PAYLOAD`` (relative to
``TREE``) before each run; min and median per case, and ``python -c pass`` as the floor. Every
edit is undone afterwards. Both checkouts are byte-compiled first, as an install is.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("leaf")
    parser.add_argument("payload")
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    checkouts = {"before": args.before.resolve(), "after": args.after.resolve()}
    compile_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for checkout in checkouts.values():
        package = str(checkout / "shmlint")
        subprocess.run([sys.executable, "-m", "compileall", "-q", package], env=compile_env)
    caches = {name: tempfile.mkdtemp(prefix=f"shmlint-ab-{name}-") for name in checkouts}

    def run(name: str) -> float:
        env = dict(os.environ, PYTHONPATH=str(checkouts[name]))
        command = [sys.executable, "-m", "shmlint", "check", "--exit-zero", "--isolated"]
        command += ["-j", "2", "--cache-dir", caches[name], "."]
        started = time.perf_counter()
        subprocess.run(command, cwd=args.tree, env=env, stdout=subprocess.DEVNULL, check=True)
        return time.perf_counter() - started

    edited = [args.tree / args.leaf, args.tree / args.payload]
    originals = {path: path.read_bytes() for path in edited}
    times: dict[tuple[str, str], list[float]] = {}
    count = 0
    try:
        for name in checkouts:  # fill each cache, then leave the run record
            run(name)
            run(name)
        for case, path in (
            ("nothing changed", None),
            ("leaf edited", edited[0]),
            ("payload edited", edited[1]),
        ):
            for _ in range(args.repeat):
                for name in checkouts:
                    if path is not None:
                        count += 1
                        path.write_bytes(originals[path] + f"\n# edited {count}\n".encode())
                    times.setdefault((case, name), []).append(run(name))
            for path, data in originals.items():
                path.write_bytes(data)
            for name in checkouts:
                run(name)
        for _ in range(args.repeat):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            times.setdefault(("python -c pass", "-"), []).append(time.perf_counter() - started)
    finally:
        for path, data in originals.items():
            path.write_bytes(data)
        for cache in caches.values():
            shutil.rmtree(cache, ignore_errors=True)
    print(f"tree: {args.tree}; before {checkouts['before']}, after {checkouts['after']}")
    for (case, name), measured in times.items():
        median = sorted(measured)[len(measured) // 2]
        print(f"{case:16} {name:7} min {min(measured):.3f} s  median {median:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
