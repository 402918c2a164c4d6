"""Mutation check: small, deliberate bugs in a copy of the project; the non-slow tests must
fail on every one (a mutant that survives is a hole in the suite).

    python scripts/mutate.py                 # every mutant (a few minutes each at worst)
    python scripts/mutate.py cache-read      # the named ones
    python scripts/mutate.py --list

Each mutant is a text edit that must match exactly once in its file, so a mutant cannot go
stale silently after a refactor: the script stops and says which one no longer applies.
The copy is imported instead of the installed package (it is the working directory of the
test run); the copy's cache directory is its own.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclasses.dataclass(frozen=True)
class Mutant:
    name: str
    path: str  # relative to the repository root
    old: str
    new: str
    what: str


MUTANTS = (
    Mutant(
        "sanitizer-to-view",
        "shmlint/basics/catalog.py",
        '        "asfortranarray",\n',
        '        "asfortranarray",\n        "copy",\n',
        "np.copy becomes a view (a wrong sanitizer table)",
    ),
    Mutant(
        "drop-sink",
        "shmlint/basics/catalog.py",
        '{"put", "put_nowait", "set_result", "send", "send_nowait"}',
        '{"put_nowait", "set_result", "send", "send_nowait"}',
        "queue.put is no longer a sink (SHM103)",
    ),
    Mutant(
        "drop-source",
        "shmlint/basics/catalog.py",
        'RAY_GET = frozenset({"ray.get", "ray.worker.get", "ray._private.worker.get"})',
        'RAY_GET = frozenset({"ray.worker.get", "ray._private.worker.get"})',
        "ray.get is no longer a source",
    ),
    Mutant(
        "cache-read",
        "shmlint/run/cache.py",
        '        """The JSON body stored under ``key`` (None: missing, unreadable or not this '
        'key\'s)."""\n',
        '        """The JSON body stored under ``key`` (None: missing, unreadable or not this '
        'key\'s)."""\n        return None\n',
        "the cache is never read",
    ),
    Mutant(
        "cache-key-version",
        "shmlint/run/cache.py",
        "    return package_digest(PACKAGE_DIRECTORY)\n",
        "    return __version__\n",
        "the cache key forgets the code (the version string again)",
    ),
    Mutant(
        "runtime-skip-field",
        "shmlint/runtime/_detach.py",
        "copied = [a if wa else a.copy(), b if wb else b.copy(), c if wc else c.copy(), cu]",
        "copied = [a if wa else a.copy(), b, c if wc else c.copy(), cu]",
        "the helper leaves `logprobs.logprobs` read-only",
    ),
    Mutant(
        "disable-shm104",
        "shmlint/analysis/dataflow/statements.py",
        '            self.ctx.report(back, alone, "SHM104", site)\n',
        "            pass\n",
        "SHM104 (held across the next read) never reports",
    ),
    Mutant(
        "disable-shm301",
        "shmlint/analysis/checks.py",
        "        for miss in misses\n",
        "        for miss in misses[:0]\n",
        "SHM301 (incomplete detach helper) never reports",
    ),
    Mutant(
        "prefilter-word",
        "shmlint/analysis/engine.py",
        'r"\\bray\\b|experimental_compile|CompiledDAG|\\.remote\\(|ObjectRef"',
        'r"\\bray\\b|CompiledDAG|\\.remote\\(|ObjectRef"',
        "the prefilter skips files that only compile graphs",
    ),
    Mutant(
        "torch-as-arrays",
        "shmlint/facts/evidence.py",
        "    if zero_copy_torch:\n",
        "    if True:\n",
        "torch tensors count as zero-copy arrays again",
    ),
    Mutant(
        "payload-ignored",
        "shmlint/analysis/dataflow/context.py",
        "    if label.payload.known:\n        return label.payload\n",
        "",
        "what a read returns (its producer's return type) is never consulted",
    ),
    Mutant(
        "remote-returns-reported",
        "shmlint/analysis/dataflow/function.py",
        "        if self.serialized:\n",
        "        if False:\n",
        "returns of @ray.remote functions and actor methods are SHM101 again",
    ),
    Mutant(
        "await-ref-not-a-read",
        "shmlint/analysis/dataflow/expressions.py",
        "        if AWAITS_READ in inner.kinds or (payloads and not inner.kinds & {DAG, REF}):\n",
        "        if False:\n",
        "`await ref` (and gathers, futures, threads) are not reads",
    ),
    Mutant(
        "helper-not-by-payload",
        "shmlint/analysis/engine.py",
        '    if not config.helper_by_payload or config.helper_style != "wrap":\n',
        "    if True:\n",
        "the fix always calls the configured helper",
    ),
    Mutant(
        "noqa-ignored",
        "shmlint/analysis/suppress.py",
        '    if "noqa" not in line.lower():\n        return None\n',
        "    return None\n",
        "`# noqa` suppresses nothing",
    ),
)


def _copy(destination: Path) -> None:
    """The project's files as git sees them (tracked, and new files not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)


def _apply(mutant: Mutant, tree: Path) -> None:
    path = tree / mutant.path
    text = path.read_text(encoding="utf-8")
    count = text.count(mutant.old)
    if count != 1:
        raise SystemExit(f"mutant {mutant.name}: its text occurs {count} times in {mutant.path}")
    path.write_text(text.replace(mutant.old, mutant.new), encoding="utf-8")


def _run(mutant: Mutant) -> tuple[str, float, str]:
    """(verdict, seconds, the first failing test): killed, survived, or error (the suite
    could not run: a collection error is the harness's fault, not a kill)."""
    with tempfile.TemporaryDirectory(prefix=f"shmlint-mutant-{mutant.name}-") as directory:
        tree = Path(directory)
        _copy(tree)
        if mutant.path:
            _apply(mutant, tree)
        environment = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
        command = [sys.executable, "-m", "pytest", "-q", "-x", "-m", "not slow"]
        started = time.monotonic()
        completed = subprocess.run(
            [*command, "-p", "no:cacheprovider"],
            cwd=tree,
            env=environment,
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.monotonic() - started
    lines = completed.stdout.splitlines()
    failed = [line for line in lines if line.startswith("FAILED ")]
    errors = [line for line in lines if line.startswith("ERROR ")]
    if completed.returncode == 0:
        return "**SURVIVED**", seconds, ""
    if completed.returncode == 1 and failed and not errors:
        return "killed", seconds, failed[0].removeprefix("FAILED ").split(" - ")[0]
    detail = (errors or failed or [f"pytest exit {completed.returncode}"])[0]
    return "error", seconds, detail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="mutants to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutants")
    args = parser.parse_args(argv)
    known = {m.name: m for m in MUTANTS}
    unknown = [name for name in args.names if name not in known]
    if unknown:
        parser.error(f"unknown mutant(s): {', '.join(unknown)}")
    chosen = [known[name] for name in args.names] or list(MUTANTS)
    if args.list:
        for mutant in chosen:
            print(f"{mutant.name:20} {mutant.path:32} {mutant.what}")
        return 0
    for mutant in chosen:  # every mutant applies before any runs
        with tempfile.TemporaryDirectory() as directory:
            shutil.copytree(ROOT / "shmlint", Path(directory) / "shmlint")
            _apply(mutant, Path(directory))
    # The unmutated copy first: a kill counts only if the same suite passes without it.
    verdict, seconds, first = _run(Mutant("none", "", "", "", "no mutation"))
    if verdict != "**SURVIVED**":
        print(f"the unmutated suite does not pass ({verdict}: {first}); fix that first")
        return 2
    print(f"unmutated suite: passes in {seconds:.0f} s\n")
    print(f"| mutant | what | verdict | seconds | first failing test |\n|{'---|' * 5}")
    verdicts = []
    for mutant in chosen:
        verdict, seconds, first = _run(mutant)
        verdicts.append(verdict)
        print(f"| {mutant.name} | {mutant.what} | {verdict} | {seconds:.0f} | {first} |")
        sys.stdout.flush()
    if "error" in verdicts:
        return 2
    return 0 if all(v == "killed" for v in verdicts) else 1


if __name__ == "__main__":
    raise SystemExit(main())
