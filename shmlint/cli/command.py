"""The ``shmlint`` command line: ``check`` (the default), ``rules``, ``explain``, ``baseline``,
``clean`` and ``server`` (the language server).

Exit codes: 0 no findings (after filters), 1 findings, 2 usage / configuration / internal error.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from shmlint._version import __version__
from shmlint.basics.config import (
    Config,
    ConfigError,
    find_pyproject,
    is_rule_selector,
    load_config,
    unknown_code_message,
)
from shmlint.basics.types import Confidence, Finding
from shmlint.cli import baseline, report
from shmlint.cli.inputs import Checked, UsageError, collect
from shmlint.cli.parser import COMMANDS, build_parser, command_parser
from shmlint.run import collector
from shmlint.run.cache import NotACacheError, clean, default_directory

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _known_codes(option: str, codes: tuple[str, ...]) -> tuple[str, ...]:
    """``codes`` when every one is a rule code or a prefix of one (as ruff, a typo in a
    selection is an error, not a selection of nothing)."""
    for code in codes:
        if not is_rule_selector(code):
            raise UsageError(f"{option}: {unknown_code_message(code)}")
    return codes


def _load(args: argparse.Namespace) -> Config:
    if args.isolated:
        config = Config()
    elif args.config is not None:
        if not args.config.is_file():
            raise ConfigError(f"{args.config}: no such configuration file")
        config = load_config(args.config)
    else:
        real = [Path(p) for p in args.paths if p != "-"]
        # The name given to stdin need not exist yet (a new file in an editor): its directory
        # is where the configuration is looked for, as ruff does, not the current one.
        start = Path(args.stdin_filename) if args.stdin_filename else _common_start(real)
        config = load_config(find_pyproject(start))
    changes: dict[str, Any] = {}
    if args.exclude is not None:
        changes["exclude"] = args.exclude
    if args.extend_exclude:
        changes["extend_exclude"] = (*config.extend_exclude, *args.extend_exclude)
    if args.select is not None:
        changes["select"] = _known_codes("--select", args.select)
        # As ruff's: a `--select` starts the rule set anew; the configuration's `ignore`
        # no longer applies (`--ignore` / `--extend-ignore` given with it do).
        changes["ignore"] = ()
    if args.ignore is not None:
        changes["ignore"] = _known_codes("--ignore", args.ignore)
    for name in ("select", "ignore"):  # after --select / --ignore, as ruff's
        more = getattr(args, f"extend_{name}")
        if more:
            known = _known_codes(f"--extend-{name}", more)
            changes[name] = (*changes.get(name, getattr(config, name)), *known)
    options = config.options
    if args.min_confidence is not None:
        options = dataclasses.replace(options, min_confidence=Confidence(args.min_confidence))
    if args.zero_copy_torch:
        options = dataclasses.replace(options, zero_copy_torch=True)
    if args.no_external_types:
        options = dataclasses.replace(options, external_types=False)
    if options is not config.options:
        changes["options"] = options
    return dataclasses.replace(config, **changes) if changes else config


def _common_start(paths: list[Path]) -> Path:
    """Where a run's configuration is looked for: the deepest directory holding every path
    given (so the order they are given in does not matter), the path itself when it is one,
    the current directory when none exists."""
    found = [path.resolve() for path in paths if path.exists()]
    if not found:
        return Path.cwd()
    return Path(os.path.commonpath(found)) if len(found) > 1 else found[0]


def _plural(count: int) -> str:
    return f"{count} finding{'s' if count != 1 else ''}"


def _inputs(args: argparse.Namespace) -> list[str]:
    """What ``check`` reads: the paths given (``.`` when none is), or stdin whenever
    ``--stdin-filename`` is given (as ruff: other paths are then ignored, with a warning)."""
    if args.stdin_filename is None or "-" in args.paths:
        return list(args.paths) or ["."]
    if args.paths and not args.quiet:
        ignored = " ".join(report.shown(p) for p in args.paths)
        sys.stderr.write(
            f"shmlint: warning: ignoring {ignored}: --stdin-filename reads standard input\n"
        )
    return ["-"]


def run_check(args: argparse.Namespace, out: TextIO) -> int:
    """``shmlint check``: lint (and fix), report, and return the exit code."""
    args.paths = _inputs(args)
    config = _load(args)
    known = baseline.load(args.baseline) if args.baseline is not None else None
    checked = collect(args, config)
    if known is not None:
        checked = _not_in_baseline(checked, known)
    if args.fix or args.diff:
        return run_fix(args, config, checked, out, known)
    findings = sorted((f for c in checked for f in c.result.findings), key=Finding.sort_key)
    with _destination(args, out) as sink:
        _report(args, findings, sink, _fix_for(checked, config, args))
        if args.output_format == "text" and not args.quiet:
            count = len(findings)
            sink.write(f"Found {_plural(count)}.\n" if count else "All checks passed!\n")
            hidden = sum(f.fixable and f.unsafe_fix for f in findings)
            if hidden:
                sink.write(f"{hidden} more fixable with --fix --unsafe-fixes.\n")
    return EXIT_FINDINGS if findings and not args.exit_zero else EXIT_CLEAN


def _not_in_baseline(checked: list[Checked], known: collections.Counter[str]) -> list[Checked]:
    """``checked`` with only the findings the baseline does not account for: those are the
    ones reported, fixed by ``--fix`` and shown by ``--diff`` (a baselined finding is left
    as it is, as ruff leaves a ``# noqa``-ed one)."""
    every = sorted((f for c in checked for f in c.result.findings), key=Finding.sort_key)
    fresh = {id(f) for f in baseline.new_findings(every, known)}
    return [
        dataclasses.replace(
            c,
            result=dataclasses.replace(
                c.result, findings=tuple(f for f in c.result.findings if id(f) in fresh)
            ),
        )
        for c in checked
    ]


@contextlib.contextmanager
def _destination(args: argparse.Namespace, out: TextIO) -> Iterator[TextIO]:
    """Where the report goes: ``--output-file``, else ``out``."""
    if args.output_file is None:
        yield out
        return
    try:
        handle = open(args.output_file, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as error:
        raise UsageError(f"{args.output_file}: cannot write: {error.strerror}") from None
    with handle:
        yield handle


def _fix_for(
    checked: list[Checked], config: Config, args: argparse.Namespace
) -> Callable[[Finding], tuple[bytes, bytes] | None] | None:
    """For SARIF: the change ``--fix`` would make for one finding on its own."""
    if args.output_format != "sarif":
        return None
    inputs = {c.result.path: c for c in checked}

    def fix_for(finding: Finding) -> tuple[bytes, bytes] | None:
        from shmlint.fixer import apply_fixes  # libcst only when a fix is described

        item = inputs.get(finding.path)
        if item is None or (finding.unsafe_fix and not args.unsafe_fixes):
            return None
        try:
            data = item.data
            if data is None:
                assert item.path is not None  # an input without bytes is a file
                data = Path(item.path).read_bytes()
        except OSError:
            return None
        outcome = apply_fixes(data, [finding], config)
        return (data, outcome.source) if outcome.changed else None

    return fix_for


def _report(
    args: argparse.Namespace,
    findings: list[Finding],
    out: TextIO,
    fix_for: Callable[[Finding], tuple[bytes, bytes] | None] | None = None,
) -> None:
    if args.output_format == "json":
        report.write_json(findings, out)
    elif args.output_format == "sarif":
        from shmlint.cli.sarif import repository_root, write_sarif

        write_sarif(findings, out, repository_root(Path.cwd()), fix_for)
    elif args.output_format == "github":
        report.write_github(findings, out)
    else:
        report.write_text(findings, out)
    if args.statistics and findings:
        # After the text report; beside a machine-readable one, on stderr (its stdout stays
        # one document).
        report.write_statistics(findings, out if args.output_format == "text" else sys.stderr)


def run_fix(
    args: argparse.Namespace,
    config: Config,
    checked: list[Checked],
    out: TextIO,
    known: collections.Counter[str] | None = None,
) -> int:
    """``--fix`` / ``--diff``: apply fixes per file, then report what remains (``known``: the
    baseline; ``checked`` holds only the findings it does not account for)."""
    with _destination(args, out) as sink:
        return _run_fix(args, config, checked, sink, known)


def _run_fix(
    args: argparse.Namespace,
    config: Config,
    checked: list[Checked],
    out: TextIO,
    known: collections.Counter[str] | None,
) -> int:
    from shmlint.cli.fixes import fix_all
    from shmlint.run.pool import default_jobs

    from_stdin = any(c.path is None for c in checked)
    # The diff (or the fixed stdin source) owns stdout; findings and the summary go to stderr.
    # --output-file takes the place of stdout for the report: the diff, or the findings left
    # and the summary (the fixed stdin source still goes to stdout, a diff's summary to stderr).
    to_file = args.output_file is not None
    log = sys.stderr if args.diff or (from_stdin and not to_file) else out
    before = sum(len(c.result.findings) for c in checked)
    remaining: list[Finding] = []
    jobs = args.jobs or default_jobs()
    for outcome in fix_all(checked, args.diff, args.unsafe_fixes, config, jobs):
        for error in outcome.errors:
            sys.stderr.write(error + "\n")
        out.write(outcome.diff)
        if outcome.source is not None:
            sys.stdout.buffer.write(outcome.source)  # `--fix -`: the fixed source on stdout
            sys.stdout.flush()
        remaining.extend(outcome.remaining)
    written = not args.diff and any(c.path is not None for c in checked)
    if written and not args.per_file and before != len(remaining):
        # A fix in one module can end findings in others (a function no longer returns a
        # read): what remains is what a fresh project run finds (cached where unchanged).
        fresh = collect(args, config)
        remaining = [f for c in fresh if c.path is not None for f in c.result.findings]
        remaining += [f for c in checked if c.path is None for f in c.result.findings]
    remaining.sort(key=Finding.sort_key)
    if known is not None:  # (a fixed file is checked again: its baselined findings are back)
        remaining = baseline.new_findings(remaining, known)
    if not args.diff:
        _report(args, remaining, log)
    fixed = max(before - len(remaining), 0)
    if (args.output_format == "text" or args.diff or from_stdin) and not args.quiet:
        verb = "would be fixed" if args.diff else "fixed"
        log.write(f"Found {_plural(before)} ({fixed} {verb}, {len(remaining)} remaining).\n")
    if args.exit_zero:
        return EXIT_CLEAN
    if args.diff:
        return EXIT_FINDINGS if fixed else EXIT_CLEAN
    return EXIT_FINDINGS if remaining else EXIT_CLEAN


def run_baseline(args: argparse.Namespace, out: TextIO) -> int:
    """``shmlint baseline PATHS --write FILE``: record the current findings."""
    config = _load(args)
    findings = sorted(
        (f for c in collect(args, config) for f in c.result.findings), key=Finding.sort_key
    )
    kept, dropped, not_added = baseline.write(args.write, findings, add_new=args.add_new)
    written = report.shown(str(args.write))
    out.write(f"{written}: {_plural(kept)} recorded, {dropped} dropped (fixed or gone).\n")
    if not_added:
        out.write(f"{_plural(not_added)} not in the baseline were not added (see --add-new).\n")
    return EXIT_CLEAN


def run_rules(out: TextIO) -> int:
    """``shmlint rules``: one line per rule."""
    from shmlint.analysis.rules import RULES

    for code, rule in RULES.items():
        out.write(f"{code}  {rule.name:<22} {rule.summary}\n")
    return EXIT_CLEAN


def run_explain(code: str, out: TextIO) -> int:
    """``shmlint explain CODE``: the rule's documentation."""
    from shmlint.analysis.rules import RULES, confidence, rule_doc

    if code.lower() == confidence.TOPIC:
        out.write(f"# Confidence: payload evidence\n\n{confidence.CONFIDENCE_DOC}")
        return EXIT_CLEAN
    code = code.upper()
    if code not in RULES:
        raise UsageError(
            f"unknown rule {code!r}; see `shmlint rules` (or `shmlint explain {confidence.TOPIC}`)"
        )
    rule = RULES[code]
    out.write(f"# {rule.name} ({code})\n\n{rule_doc(code)}\n")
    return EXIT_CLEAN


def run_server() -> int:
    """``shmlint server``: the language server on stdin/stdout (pygls, imported only here)."""
    try:
        from shmlint.server import serve
    except ImportError as error:
        raise UsageError(
            f"`shmlint server` needs the server extra ({(error.name or '?').split('.')[0]} "
            "is missing): "
            "pip install 'shmlint[server]'"
        ) from None
    return serve()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 clean, 1 findings, 2 error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "check")  # `shmlint PATHS` means `shmlint check PATHS`
    parser = build_parser()
    try:
        args, unknown = parser.parse_known_args(argv)
        if unknown:
            # Reported by the command's own parser: with its usage (`shmlint check [-h] ...`),
            # not the top level's (which argparse gives arguments no subparser took).
            command_parser(parser, args.command).error(
                f"unrecognized arguments: {' '.join(unknown)}"
            )
    except SystemExit as exit_:
        return EXIT_CLEAN if exit_.code in (0, None) else EXIT_ERROR
    out = sys.stdout
    try:
        if args.command == "rules":
            return run_rules(out)
        if args.command == "explain":
            return run_explain(args.code, out)
        if args.command == "baseline":
            return run_baseline(args, out)
        if args.command == "server":
            return run_server()
        if args.command == "clean":
            directory = args.cache_dir or default_directory(load_config(find_pyproject(Path.cwd())))
            removed = clean(directory)
            shown = report.shown(str(directory))
            out.write(f"{'removed' if removed else 'no cache at'} {shown}\n")
            return EXIT_CLEAN
        return run_check(args, out)
    except (ConfigError, UsageError, baseline.BaselineError, NotACacheError) as error:
        sys.stderr.write(f"shmlint: error: {error}\n")
        return EXIT_ERROR
    except BrokenPipeError:  # `shmlint ... | head`: the reader went away
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keep interpreter shutdown quiet
        return EXIT_ERROR
    except Exception:  # a bug: the traceback for the report, and exit 2 (never 1: "findings")
        import traceback

        traceback.print_exc()
        sys.stderr.write(
            f"shmlint: error: internal error (shmlint {__version__}); please report the "
            "traceback above\n"
        )
        return EXIT_ERROR


def console() -> NoReturn:
    """The ``shmlint`` executable (and ``python -m shmlint``): :func:`main`, its output flushed,
    then the process ends without tearing the interpreter down (mypy's ``--fast-exit``): a
    project run's objects would otherwise be freed one by one — ~0.25 s of a warm run after an
    edit of the ray wheel's facts, for a process about to end. Every file this process writes
    is closed before :func:`main` returns; a pool's workers are shut down, a speculation's
    child killed. No cycle collection either (shmlint.run.collector.off)."""
    collector.off()
    code = main()
    for stream in (sys.stdout, sys.stderr):
        if stream.closed:  # (the language server's transport closes its stdout)
            continue
        try:
            stream.flush()
        except OSError:  # `shmlint ... | head`: the reader went away after the last write
            code = EXIT_ERROR
    os._exit(code)
