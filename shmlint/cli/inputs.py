"""What ``shmlint check`` checks: the inputs the command line names, read, checked (as a
project unless ``--per-file``), with stdin handled in place."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from shmlint.basics.config import Config
from shmlint.basics.types import FileResult
from shmlint.run import record
from shmlint.run.cache import Cache, default_directory
from shmlint.run.discovery import is_excluded, iter_file_names
from shmlint.run.prune import maybe_prune

if TYPE_CHECKING:
    from shmlint.facts.model import ProjectFacts


class UsageError(Exception):
    """A bad command line; reported with exit code 2."""


@dataclasses.dataclass(slots=True)
class Checked:
    """One checked input: where it came from, its bytes when read from stdin, its result."""

    path: str | None  # None for stdin
    data: bytes | None
    result: FileResult


def collect(args: argparse.Namespace, config: Config) -> list[Checked]:
    """Check every input the command line names (a project run unless ``--per-file``)."""
    started = time.time()  # (what the run reads or writes of the cache is kept from then)
    prefilter = not args.no_prefilter
    checked: list[Checked | None] = []
    files: list[tuple[str, str]] = []  # strings: a warm run builds no Path per file
    seen: set[tuple[int, int]] = set()  # the files found so far, by device and inode
    for given in args.paths:
        if given == "-":
            from shmlint.analysis.engine import check_bytes

            name = args.stdin_filename or "-"
            data = sys.stdin.buffer.read()
            if args.stdin_filename and args.force_exclude and is_excluded(name, config):
                # As ruff: an excluded name is not checked (and `--fix` gives stdin back).
                skipped = FileResult(name, (), parsed=False, skipped=True)
                checked.append(Checked(None, data, skipped))
                continue
            checked.append(
                Checked(None, data, check_bytes(data, name, config, prefilter=prefilter))
            )
            continue
        try:
            named = iter_file_names([given], config, force_exclude=args.force_exclude)
            found = _unseen(named, seen)
        except FileNotFoundError:
            raise UsageError(f"{given}: no such file or directory") from None
        files.extend(found)
        checked.extend([None] * len(found))
    if not files and len(checked) == 0 and not args.quiet:
        sys.stderr.write("shmlint: warning: No Python files found under the given path(s)\n")
    cache = None
    if not args.no_cache:
        cache = Cache(args.cache_dir or default_directory(config), config)
    outcomes = None
    last = None
    if cache is not None and files and args.write_summary is None:
        last = record.load(files, cache, _mode(args))
        outcomes = _recorded(files, config, args, cache, last)
    if outcomes is None:
        outcomes, facts = _run(files, config, args, cache, prefilter, last)
        if args.write_summary is not None:
            write_summary(args.write_summary, facts)
    if cache is not None:
        # Content-keyed entries pile up: the least recently used go past the size limit.
        maybe_prune(cache.directory, config.cache_max_size, cache.grown, started)
    results = iter(outcomes)
    paths = iter(files)
    return [
        item if item is not None else Checked(next(paths)[0], None, next(results))
        for item in checked
    ]


def _unseen(found: Iterable[tuple[str, str]], seen: set[tuple[int, int]]) -> list[tuple[str, str]]:
    """The files of ``found`` not seen before, as ruff: a file named twice, by any spelling
    (``a.py ./a.py /abs/a.py``, a symbolic or hard link, a directory and a file in it), is
    checked once, under the first name it was found by. Checked twice, it was reported twice,
    and ``--fix`` fixed it twice: the second fix met the first's text ("no read found")."""
    unseen = []
    for path, display in found:
        try:
            info = os.stat(path)
        except OSError:  # (reported when it is read)
            unseen.append((path, display))
            continue
        key = (info.st_dev, info.st_ino)
        if key not in seen:
            seen.add(key)
            unseen.append((path, display))
    return unseen


def _mode(args: argparse.Namespace) -> str:
    return ("per-file" if args.per_file else "project") + ("" if not args.no_prefilter else ":all")


def _recorded(
    files: list[tuple[str, str]],
    config: Config,
    args: argparse.Namespace,
    cache: Cache,
    last: record.Record | None,
) -> list[FileResult] | None:
    """The results from the last run's record (``last``): all of them when nothing changed
    (one entry read, nothing analysed), or with the few changed files of a project run
    analysed against the last run's facts when those cannot differ
    (shmlint/run/incremental.py)."""
    prefilter = not args.no_prefilter
    changed = last.changed(files) if last is not None else None
    if last is None or changed is None:
        return None
    if not changed:
        return last.results
    if args.per_file:
        return None
    from shmlint.facts.external import stored_in
    from shmlint.run.incremental import check_changed  # the analysis: only now
    from shmlint.run.pool import default_jobs

    jobs = args.jobs or default_jobs()
    with stored_in(cache):  # installed modules' summaries: parsed once, then read from here
        outcome = check_changed(files, config, cache, last, changed, prefilter=prefilter, jobs=jobs)
    if outcome is None:
        return None
    results, stats, trace = outcome
    record.write(files, stats, results, last.external, cache, _mode(args), trace)
    return results


def _run(
    names: list[tuple[str, str]],
    config: Config,
    args: argparse.Namespace,
    cache: Cache | None,
    prefilter: bool,
    last: record.Record | None = None,
) -> tuple[list[FileResult], ProjectFacts | None]:
    """The full run (the analysis is imported only here: a warm run never loads it); with a
    cache, it leaves a record for the next run (``last``: the record of the last run over
    these files, if any: a project run takes what stands of it)."""
    from shmlint.run.files import check_files
    from shmlint.run.pool import default_jobs
    from shmlint.run.runner import RunTrace, check_project

    jobs = args.jobs or default_jobs()
    stats = [record.stat_of(path) for path, _ in names]  # before the files are read
    files = [(Path(path), display) for path, display in names]
    trace = RunTrace()
    facts: ProjectFacts | None = None
    if files and not args.per_file:
        facts, outcomes = check_project(
            files,
            config,
            jobs=jobs,
            cache=cache,
            prefilter=prefilter,
            trace=trace,
            last=last,
            stats=stats,
            indexed=False,  # (only later runs read the index: a run keeping a cache has one)
        )
    else:
        outcomes = check_files(files, config, jobs=jobs, cache=cache, prefilter=prefilter)
    if cache is not None and files and args.write_summary is None:
        external = facts.external_files if facts is not None else {}
        record.write(files, stats, outcomes, external, cache, _mode(args), trace)
    return outcomes, facts


def write_summary(path: Path, facts: ProjectFacts | None) -> None:
    """``--write-summary``: the merged facts as JSON (for flake8's ``--shm-summary``)."""
    if facts is None:
        raise UsageError("--write-summary needs a project-wide run (paths, not --per-file)")
    try:
        text = json.dumps(facts.to_json(), separators=(",", ":"))
        path.write_text(text + "\n", encoding="utf-8")
    except OSError as error:
        raise UsageError(f"{path}: cannot write: {error.strerror}") from None
