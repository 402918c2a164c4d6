"""flake8 entry point ``SHM``: a thin adapter over the engine.

It reuses flake8's own ``tree`` (no second parse) and reads ``[tool.shmlint]`` from the nearest
``pyproject.toml``, so ``flake8 --select SHM`` reports what ``shmlint check --per-file``
reports. flake8 checks files independently, so the project-wide phase cannot run inside it;
``--shm-summary FILE`` (or ``shm-summary`` in flake8's config) reads the facts a
``shmlint check --write-summary FILE`` run wrote, and then the plugin reports what
``shmlint check`` reports project-wide (docs/project-analysis.md). A bad ``[tool.shmlint]``
is reported as one ``SHM001`` on the first line of each file it applies to (naming the file
and the key), never raised: flake8's other checks still run.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from shmlint._version import __version__
from shmlint.analysis.engine import analyze_tree, may_contain_source
from shmlint.analysis.rules import RULES
from shmlint.basics.config import Config, ConfigError, find_pyproject, load_config
from shmlint.facts.classes import ExternalClasses
from shmlint.facts.evidence import TypeTables
from shmlint.facts.model import ProjectFacts


@functools.lru_cache(maxsize=256)
def _config_for(directory: Path) -> Config | ConfigError:
    # One lookup per directory: flake8 calls the plugin once per file. A bad configuration
    # is returned, not raised: raised, it ended every flake8 run (in each worker process
    # with -j) in a traceback, other plugins' checks included.
    try:
        return load_config(find_pyproject(directory))
    except ConfigError as error:
        return error


@functools.lru_cache(maxsize=4)
def _load_summary(path: str) -> ProjectFacts:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return ProjectFacts.from_json(data)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as error:
        message = f"shmlint: --shm-summary {path}: cannot read the summary: {error}"
        raise SystemExit(message) from None


def _ignored_by(options: Any) -> tuple[str, ...]:
    """The rule codes flake8's selection ignores (its own decision engine, asked per code);
    none when it cannot be asked (another flake8, options without its fields)."""
    try:
        from flake8.style_guide import Decision, DecisionEngine

        engine = DecisionEngine(options)
        return tuple(code for code in RULES if engine.decision_for(code) is Decision.Ignored)
    except Exception:  # noqa: BLE001 - flake8's internals: without them, as before
        return ()


@functools.lru_cache(maxsize=256)
def _with_ignored(config: Config, ignored: tuple[str, ...]) -> Config:
    # (A whole code in `ignore` is at least as specific as any `select` prefix: ignored.)
    return dataclasses.replace(config, ignore=(*config.ignore, *ignored))


class Plugin:
    """flake8 plugin reporting shmlint's ``SHM`` codes."""

    name = "shmlint"
    version = __version__
    summary: str | None = None  # --shm-summary
    # The codes flake8's own selection ignores (--select, --ignore, --extend-*): the analysis
    # is told, so that a read whose first sink flake8 drops is reported at its next one.
    flake8_ignored: tuple[str, ...] = ()
    noqa = True  # False with flake8's --disable-noqa: flake8 shows what `# noqa` would hide

    @classmethod
    def add_options(cls, parser: Any) -> None:
        """flake8 hook: the ``--shm-summary`` option."""
        parser.add_option(
            "--shm-summary",
            default=None,
            parse_from_config=True,
            help="project-wide facts written by `shmlint check --write-summary FILE`",
        )

    @classmethod
    def parse_options(cls, options: Any) -> None:
        """flake8 hook: remember the summary file, and which codes flake8 ignores."""
        cls.summary = getattr(options, "shm_summary", None)
        cls.flake8_ignored = _ignored_by(options)
        cls.noqa = not getattr(options, "disable_noqa", False)

    def __init__(self, tree: ast.AST, filename: str = "stdin", lines: Sequence[str] = ()) -> None:
        self._tree = tree
        self._filename = filename
        self._lines = [line.rstrip("\r\n") for line in lines]

    def run(self) -> Iterator[tuple[int, int, str, type[Any]]]:
        """Yield flake8 results: (line, column, "SHMxxx message", type)."""
        if not isinstance(self._tree, ast.Module):
            return
        path = Path(self._filename)
        directory = path.parent if self._filename not in ("stdin", "-") else Path.cwd()
        config = _config_for(directory.resolve())
        if isinstance(config, ConfigError):
            # One SHM001 at the top of each file: flake8 exits 1, its other checks still run.
            yield 1, 0, f"SHM001 {config} (shmlint did not check the file)", type(self)
            return
        if self.flake8_ignored:
            config = _with_ignored(config, self.flake8_ignored)
        text = "\n".join(self._lines)
        facts = _load_summary(self.summary) if self.summary else None
        if facts is not None and config.options.external_types:
            facts.external = ExternalClasses(TypeTables.for_options(config.options))
        if not may_contain_source(text, config.options):
            if facts is None or not facts.may_matter(text):
                return
        found = analyze_tree(
            self._tree, self._lines, self._filename, config, text, facts, noqa=self.noqa
        )
        for finding in found:
            yield finding.line, finding.col, f"{finding.code} {finding.message}", type(self)
