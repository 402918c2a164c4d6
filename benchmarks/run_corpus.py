"""Run the engine over every ``.py`` file of a real corpus: crashes, findings, timing.

    python benchmarks/run_corpus.py [ray==2.60.0 | PATH] [--min-confidence medium] [--show N]

A crash is any exception escaping the engine for one file (the engine must turn every bad
file into an SHM001 finding instead). Prints counts per code and confidence, files parsed vs
skipped by the prefilter, and the first N findings for review. Exit 1 if anything crashed.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.corpus import corpus  # noqa: E402
from shmlint.analysis.engine import check_path  # noqa: E402
from shmlint.basics.config import Config  # noqa: E402
from shmlint.basics.options import Options  # noqa: E402
from shmlint.basics.types import Confidence  # noqa: E402
from shmlint.cli.report import text_line  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", default="ray==2.60.0")
    parser.add_argument("--min-confidence", default="medium", choices=["high", "medium"])
    parser.add_argument("--show", type=int, default=40)
    args = parser.parse_args()
    root = Path(args.target) if Path(args.target).exists() else corpus(args.target)
    config = Config(options=Options(min_confidence=Confidence(args.min_confidence)))
    files = sorted(root.rglob("*.py"))
    lines = crashes = parsed = skipped = 0
    findings = []
    started = time.perf_counter()
    for path in files:
        try:
            result = check_path(path, str(path.relative_to(root)), config)
        except Exception:  # noqa: BLE001 - counting crashes is the point of this script
            crashes += 1
            traceback.print_exc()
            continue
        parsed += result.parsed
        skipped += result.skipped
        findings.extend(result.findings)
    elapsed = time.perf_counter() - started
    for path in files:
        lines += path.read_bytes().count(b"\n")
    counts = collections.Counter((f.code, f.confidence.value) for f in findings)
    print(
        f"{root}: {len(files)} files, {lines} lines in {elapsed:.2f}s "
        f"({lines / elapsed:,.0f} lines/s); parsed {parsed}, skipped by prefilter {skipped}"
    )
    print(f"crashes: {crashes}; findings: {len(findings)}")
    for (code, confidence), count in sorted(counts.items()):
        print(f"  {code} {confidence:<6} {count}")
    for finding in findings[: args.show]:
        print(text_line(finding))
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
