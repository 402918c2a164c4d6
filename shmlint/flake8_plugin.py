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
import functools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from shmlint._version import __version__
from shmlint.analysis.engine import analyze_tree, may_contain_source
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


class Plugin:
    """flake8 plugin reporting shmlint's ``SHM`` codes."""

    name = "shmlint"
    version = __version__
    summary: str | None = None  # --shm-summary

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
        """flake8 hook: remember the summary file."""
        cls.summary = getattr(options, "shm_summary", None)

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
        text = "\n".join(self._lines)
        facts = _load_summary(self.summary) if self.summary else None
        if facts is not None and config.options.external_types:
            facts.external = ExternalClasses(TypeTables.for_options(config.options))
        if not may_contain_source(text, config.options):
            if facts is None or not facts.may_matter(text):
                return
        found = analyze_tree(self._tree, self._lines, self._filename, config, text, facts)
        for finding in found:
            yield finding.line, finding.col, f"{finding.code} {finding.message}", type(self)
