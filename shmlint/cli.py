"""The ``shmlint`` command line: ``check`` (the default), ``rules``, ``explain``.

Exit codes: 0 no findings (after filters), 1 findings, 2 usage / configuration / internal error.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from shmlint import report
from shmlint._version import __version__
from shmlint.config import Config, ConfigError, find_pyproject, load_config
from shmlint.discovery import iter_python_files
from shmlint.engine import check_bytes, check_path
from shmlint.rules import RULES, rule_doc
from shmlint.types import Confidence, FileResult, Finding

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
_COMMANDS = ("check", "rules", "explain")


class UsageError(Exception):
    """A bad command line; reported with exit code 2."""


def _codes(text: str) -> tuple[str, ...]:
    return tuple(code.strip().upper() for code in text.split(",") if code.strip())


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (kept separate so docs and tests can inspect it)."""
    parser = argparse.ArgumentParser(
        prog="shmlint",
        description="Find and fix code that keeps Ray zero-copy shared-memory values alive.",
    )
    parser.add_argument("--version", action="version", version=f"shmlint {__version__}")
    commands = parser.add_subparsers(dest="command")
    check = commands.add_parser("check", help="lint files (the default command)")
    check.add_argument("paths", nargs="*", default=["."], help="files or directories; - for stdin")
    check.add_argument("--select", type=_codes, help="comma-separated codes or prefixes to enable")
    check.add_argument("--ignore", type=_codes, help="comma-separated codes or prefixes to skip")
    check.add_argument("--min-confidence", choices=[c.value for c in Confidence],
                       help="lowest confidence to report (default: high)")
    check.add_argument("--output-format", choices=["text", "json"], default="text")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    check.add_argument("--statistics", action="store_true", help="print counts per code")
    check.add_argument("--config", type=Path, help="the pyproject.toml to read settings from")
    check.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    check.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    check.add_argument("--jobs", "-j", type=int, default=None, help="worker processes")
    check.add_argument("--stdin-filename", help="the name to report for source read from stdin")
    check.add_argument("--no-prefilter", action="store_true", help=argparse.SUPPRESS)
    commands.add_parser("rules", help="list the rules")
    explain = commands.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("code")
    return parser


def _load(args: argparse.Namespace) -> Config:
    if args.isolated:
        config = Config()
    elif args.config is not None:
        if not args.config.is_file():
            raise ConfigError(f"{args.config}: no such configuration file")
        config = load_config(args.config)
    else:
        real = [p for p in args.paths if p != "-"]
        start = Path(args.stdin_filename or (real[0] if real else "."))
        config = load_config(find_pyproject(start if start.exists() else Path.cwd()))
    changes: dict[str, Any] = {}
    if args.select is not None:
        changes["select"] = args.select
    if args.ignore is not None:
        changes["ignore"] = args.ignore
    if args.min_confidence is not None:
        options = dataclasses.replace(config.options, min_confidence=Confidence(args.min_confidence))
        changes["options"] = options
    return dataclasses.replace(config, **changes) if changes else config


def _collect(args: argparse.Namespace, config: Config) -> list[FileResult]:
    prefilter = not args.no_prefilter
    results = []
    for given in args.paths:
        if given == "-":
            name = args.stdin_filename or "-"
            results.append(check_bytes(sys.stdin.buffer.read(), name, config, prefilter=prefilter))
            continue
        try:
            files = list(iter_python_files([given], config))
        except FileNotFoundError:
            raise UsageError(f"{given}: no such file or directory") from None
        for path, display in files:
            results.append(check_path(path, display, config, prefilter=prefilter))
    return results


def run_check(args: argparse.Namespace, out: TextIO) -> int:
    """``shmlint check``: lint, report, and return the exit code."""
    config = _load(args)
    results = _collect(args, config)
    findings: list[Finding] = sorted(
        (f for result in results for f in result.findings), key=Finding.sort_key
    )
    if args.output_format == "json":
        report.write_json(findings, out)
    else:
        report.write_text(findings, out)
        if args.statistics and findings:
            report.write_statistics(findings, out)
        count = len(findings)
        out.write(f"Found {count} finding{'s' if count != 1 else ''}.\n" if count
                  else "All checks passed!\n")
    if findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def run_rules(out: TextIO) -> int:
    """``shmlint rules``: one line per rule."""
    for code, rule in RULES.items():
        out.write(f"{code}  {rule.name:<22} {rule.summary}\n")
    return EXIT_CLEAN


def run_explain(code: str, out: TextIO) -> int:
    """``shmlint explain CODE``: the rule's documentation."""
    code = code.upper()
    if code not in RULES:
        raise UsageError(f"unknown rule {code!r}; see `shmlint rules`")
    rule = RULES[code]
    out.write(f"# {rule.name} ({code})\n\n{rule_doc(code)}\n")
    return EXIT_CLEAN


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 clean, 1 findings, 2 error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in _COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "check")  # `shmlint PATHS` means `shmlint check PATHS`
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_CLEAN if exit_.code in (0, None) else EXIT_ERROR
    out = sys.stdout
    try:
        if args.command == "rules":
            return run_rules(out)
        if args.command == "explain":
            return run_explain(args.code, out)
        return run_check(args, out)
    except (ConfigError, UsageError) as error:
        sys.stderr.write(f"shmlint: error: {error}\n")
        return EXIT_ERROR
    except BrokenPipeError:  # `shmlint ... | head`: the reader went away
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keep interpreter shutdown quiet
        return EXIT_ERROR
