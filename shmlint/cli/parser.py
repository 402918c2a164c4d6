"""The ``shmlint`` argument parser: its commands and options (kept apart from running them so
that docs and tests can inspect it)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from shmlint._version import __version__
from shmlint.basics.types import Confidence

COMMANDS = ("check", "rules", "explain", "baseline", "clean", "server")


def codes(text: str) -> tuple[str, ...]:
    """A comma-separated list of codes or prefixes, upper-cased (none is an error, as ruff's)."""
    found = tuple(code.strip().upper() for code in text.split(",") if code.strip())
    if not found:
        raise argparse.ArgumentTypeError("expected a code or prefix")
    return found


class _Accumulate(argparse.Action):
    """An option that may be repeated: each occurrence's comma-separated list adds to the
    others' (``--extend-ignore SHM101 --extend-ignore SHM103``, as ruff accumulates)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, (*(getattr(namespace, self.dest, None) or ()), *values))


def _patterns(text: str) -> tuple[str, ...]:
    """A comma-separated list of globs (as ruff's ``--exclude``)."""
    return tuple(pattern.strip() for pattern in text.split(",") if pattern.strip())


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (kept separate so docs and tests can inspect it)."""
    parser = argparse.ArgumentParser(
        prog="shmlint",
        description="Find and fix code that keeps Ray zero-copy shared-memory values alive.",
    )
    parser.add_argument("--version", action="version", version=f"shmlint {__version__}")
    commands = parser.add_subparsers(dest="command")
    check = commands.add_parser("check", help="lint files (the default command)")
    check.add_argument(
        "paths", nargs="*", default=[], help="files or directories (default: .); - for stdin"
    )
    check.add_argument(
        "--select",
        type=codes,
        action=_Accumulate,
        help="comma-separated codes or prefixes to enable",
    )
    check.add_argument(
        "--extend-select",
        type=codes,
        action=_Accumulate,
        help="codes or prefixes to enable on top of the selection",
    )
    check.add_argument(
        "--ignore", type=codes, action=_Accumulate, help="comma-separated codes or prefixes to skip"
    )
    check.add_argument(
        "--extend-ignore",
        type=codes,
        action=_Accumulate,
        help="codes or prefixes to skip, on top of the ignored",
    )
    check.add_argument(
        "--min-confidence",
        choices=[c.value for c in Confidence],
        help="lowest confidence to report (default: high)",
    )
    check.add_argument(
        "--zero-copy-torch",
        action="store_true",
        default=None,
        help="torch tensors come back zero-copy (RAY_ENABLE_ZERO_COPY_TORCH_TENSORS is set)",
    )
    check.add_argument(
        "--no-external-types",
        action="store_true",
        help="do not read payload classes of installed packages (rate them unknown)",
    )
    check.add_argument(
        "--output-format", choices=["text", "json", "sarif", "github"], default="text"
    )
    check.add_argument("--output-file", type=Path, help="write the report to this file")
    check.add_argument("--baseline", type=Path, help="report only findings not in this baseline")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    check.add_argument("--statistics", action="store_true", help="print counts per code")
    check.add_argument("--config", type=Path, help="the pyproject.toml to read settings from")
    check.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    check.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    check.add_argument("--cache-dir", type=Path, help="where the cache lives (.shmlint_cache)")
    check.add_argument(
        "--jobs", "-j", type=_positive, default=None, help="worker processes (default: CPUs)"
    )
    check.add_argument(
        "--stdin-filename",
        help="read the source from stdin (as -), reporting it under this name",
    )
    check.add_argument("--fix", action="store_true", help="apply the safe fixes in place")
    check.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="also apply fixes that may change behaviour (with --fix / --diff)",
    )
    check.add_argument(
        "--diff", action="store_true", help="print the fixes as a unified diff; write nothing"
    )
    check.add_argument(
        "--per-file",
        action="store_true",
        help="check each file on its own (no project-wide phase, as the flake8 plugin does)",
    )
    check.add_argument(
        "--write-summary",
        type=Path,
        metavar="FILE",
        help="write the project-wide facts as JSON (for flake8's --shm-summary)",
    )
    check.add_argument(
        "--exclude",
        type=_patterns,
        action=_Accumulate,
        metavar="PATTERNS",
        help="comma-separated globs to skip, replacing the exclude list",
    )
    check.add_argument(
        "--extend-exclude",
        type=_patterns,
        action=_Accumulate,
        metavar="PATTERNS",
        help="comma-separated globs to skip, on top of the exclude list",
    )
    check.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print the findings (or the diff) only: no summary line, no warning",
    )
    check.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply exclude / extend-exclude to paths named on the command line too "
        "(for pre-commit, which names every file)",
    )
    check.add_argument("--no-prefilter", action="store_true", help=argparse.SUPPRESS)
    base = commands.add_parser("baseline", help="record today's findings to ignore them later")
    base.add_argument("paths", nargs="*", default=["."], help="files or directories")
    base.add_argument("--write", type=Path, required=True, help="the baseline file")
    base.add_argument(
        "--add-new", action="store_true", help="also record findings not in the existing file"
    )
    for name in (
        "--config",
        "--select",
        "--extend-select",
        "--ignore",
        "--extend-ignore",
        "--min-confidence",
        "--zero-copy-torch",
        "--no-external-types",
        "--isolated",
        "--no-cache",
        "--cache-dir",
        "--jobs",
        "--per-file",
        "--force-exclude",
        "--exclude",
        "--extend-exclude",
    ):
        for action in check._actions:
            if name in action.option_strings:
                base._add_action(action)
    base.set_defaults(
        stdin_filename=None, no_prefilter=False, baseline=None, write_summary=None, quiet=False
    )
    clean_cmd = commands.add_parser("clean", help="remove the result cache")
    clean_cmd.add_argument("--cache-dir", type=Path, help="the cache to remove")
    commands.add_parser("rules", help="list the rules")
    explain = commands.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("code")
    commands.add_parser(
        "server",
        help="run the language server (LSP over stdio; needs the server extra)",
        description="Findings, quick fixes and rule docs in the editor: docs/editors.md.",
    )
    return parser


def command_parser(parser: argparse.ArgumentParser, command: str | None) -> Any:
    """The parser of ``command`` (``parser`` itself when there is none)."""
    for action in parser._actions:  # (argparse has no public way to the subparsers)
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            return action.choices[command]
    return parser
