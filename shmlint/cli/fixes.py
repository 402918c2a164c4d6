"""``--fix`` / ``--diff`` per input: the fixes applied, the fixed bytes written (or diffed) and
checked again, in a process pool when several files have fixes (libcst's parse and transforms
cost ~0.2 s a file: 87 files of the ray wheel took 19 s in one process).

A worker writes the files it fixes (shmlint/fixer/write.py: through symbolic links, atomically
unless that would change the file's links or owner); what it would print — the diff, the fixed
source of stdin, why a file was not fixed — comes back to the caller, printed in input order.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator, Sequence
from pathlib import Path

from shmlint.basics.config import Config
from shmlint.basics.types import Finding
from shmlint.cli.inputs import Checked


@dataclasses.dataclass(frozen=True, slots=True)
class Fixed:
    """What fixing one input did."""

    remaining: list[Finding]  # the findings left in it
    diff: str = ""  # `--diff`: the unified diff of its fixes
    errors: tuple[str, ...] = ()  # why it was not (wholly) fixed, one line each
    source: bytes | None = None  # `--fix -`: the fixed source, for stdout


def fix_one(item: Checked, diff: bool, unsafe: bool, config: Config) -> Fixed:
    """Fix one input (write it, unless ``diff`` or it came from stdin)."""
    from shmlint.fixer import apply_fixes, fixable_findings  # libcst only when fixing
    from shmlint.fixer.write import write_fixed

    result = item.result
    to_fix = fixable_findings(result.findings, unsafe)
    data = item.data
    remaining = list(result.findings)
    errors: list[str] = []
    shown = ""
    try:
        if data is None and item.path is not None and to_fix:
            data = Path(item.path).read_bytes()
        new_data = data
        if to_fix and data is not None:
            outcome = apply_fixes(data, to_fix, config)
            if outcome.error:
                errors.append(f"shmlint: {result.path}: not fixed: {outcome.error}")
            if outcome.changed:
                new_data = outcome.source
                if diff:
                    shown = unified_diff(result.path, data, new_data)
                elif item.path is not None:
                    write_fixed(Path(item.path), new_data)
                from shmlint.analysis.engine import check_bytes

                remaining = list(check_bytes(new_data, result.path, config).findings)
    except OSError as error:  # the file vanished or cannot be written: report, go on
        errors.append(f"shmlint: {result.path}: not fixed: {error.strerror or error}")
        return Fixed(remaining, shown, tuple(errors))
    source = new_data or b"" if item.path is None and not diff else None
    return Fixed(remaining, shown, tuple(errors), source)


def fix_all(
    items: Sequence[Checked], diff: bool, unsafe: bool, config: Config, jobs: int
) -> Iterator[Fixed]:
    """:func:`fix_one` for each input, in order: in a pool of ``jobs`` processes when more than
    one input has fixes to apply."""
    from shmlint.fixer import fixable_findings

    fixing = [i for i, item in enumerate(items) if fixable_findings(item.result.findings, unsafe)]
    if jobs <= 1 or len(fixing) <= 1:
        for item in items:
            yield fix_one(item, diff, unsafe, config)
        return
    import concurrent.futures

    work = functools.partial(fix_one, diff=diff, unsafe=unsafe, config=config)
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(jobs, len(fixing))) as pool:
        done = pool.map(work, [items[i] for i in fixing])  # (in order: diffs print as they come)
        wanted = set(fixing)
        for index, item in enumerate(items):
            yield next(done) if index in wanted else Fixed(list(item.result.findings))


def unified_diff(path: str, old: bytes, new: bytes) -> str:
    """The unified diff of a file's fix, as ``--diff`` prints it."""
    import difflib

    from shmlint.analysis.engine import decode_source
    from shmlint.cli.report import shown

    return "".join(
        difflib.unified_diff(
            decode_source(old).splitlines(keepends=True),
            decode_source(new).splitlines(keepends=True),
            fromfile=shown(path),
            tofile=shown(path),
        )
    )
