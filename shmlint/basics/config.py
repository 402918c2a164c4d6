"""``[tool.shmlint]`` in ``pyproject.toml``: found by walking up, validated key by key."""

from __future__ import annotations

import dataclasses
import fnmatch
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shmlint.basics.options import Options
from shmlint.basics.types import Confidence

# Every rule code (the rule registry, shmlint.analysis.rules.RULES, has the same: a test says so).
ALL_CODES = (
    "SHM001",
    "SHM101",
    "SHM102",
    "SHM103",
    "SHM104",
    "SHM105",
    "SHM106",
    "SHM107",
    "SHM201",
    "SHM301",
)
DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".env",
    "env",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".shmlint_cache",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "*.egg-info",
    ".eggs",
)
DEFAULT_HELPER = "shmlint.runtime:detach_zero_copy_from_model_runner_output"
DEEP_HELPER = "shmlint.runtime:detach_zero_copy"
# The cache's size limit in megabytes (shmlint/run/prune.py); 0: never pruned.
DEFAULT_CACHE_MAX_SIZE = 512


class ConfigError(Exception):
    """A configuration problem; the message names the file and the key."""


@dataclasses.dataclass(frozen=True, slots=True)
class Config:
    """The effective configuration of one run."""

    select: tuple[str, ...] = ("SHM",)
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    helper: str = DEFAULT_HELPER
    helper_style: str = "wrap"
    # No `helper` configured: the wrap fix picks the helper by the read's payload.
    helper_by_payload: bool = True
    options: Options = Options()
    root: Path | None = None  # the directory of the pyproject.toml it came from
    cache_max_size: int = DEFAULT_CACHE_MAX_SIZE  # megabytes; no result depends on it

    def is_enabled(self, code: str, path: str | None = None) -> bool:
        """True when ``code`` is selected, not ignored, and not ignored for ``path``. Between
        ``select`` and ``ignore`` the more specific prefix wins, ``ignore`` on a tie (as ruff
        and flake8 decide: ``select = ["SHM101"]`` with ``ignore = ["SHM1"]`` keeps SHM101)."""
        selected = max((len(p) for p in self.select if code.startswith(p)), default=-1)
        if selected < 0:
            return False
        if any(code.startswith(p) and len(p) >= selected for p in self.ignore):
            return False
        if path is not None and self.per_file_ignores:
            for pattern, codes in self.per_file_ignores:
                if path_matches(path, pattern, self.root) and any(
                    code.startswith(c) for c in codes
                ):
                    return False
        return True


def path_matches(path: str, pattern: str, root: Path | None) -> bool:
    """Glob ``pattern`` against ``path`` relative to ``root``, its name, or a parent directory."""
    candidate = Path(path)
    if root is not None:
        try:
            candidate = candidate.resolve().relative_to(root.resolve())
        except ValueError:
            pass
    text = candidate.as_posix()
    if fnmatch.fnmatchcase(text, pattern) or fnmatch.fnmatchcase(candidate.name, pattern):
        return True
    prefix = pattern.rstrip("/")
    return text.startswith(prefix + "/") or any(
        fnmatch.fnmatchcase(part, prefix) for part in candidate.parts[:-1]
    )


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` with a ``[tool.shmlint]`` table, walking up from ``start``."""
    directory = start.resolve()
    if directory.is_file():
        directory = directory.parent
    for candidate in (directory, *directory.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            try:
                text = pyproject.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise ConfigError(f"{pyproject}: cannot read: {error}") from error
            if "[tool.shmlint" in text:
                return pyproject
    return None


def load_config(pyproject: Path | None) -> Config:
    """Parse and validate ``[tool.shmlint]`` of ``pyproject`` (defaults when None)."""
    if pyproject is None:
        return Config()
    # Imported here: a run without a configuration file (or ``--isolated``) never loads it.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{pyproject}: cannot parse: {error}") from error
    table = data.get("tool", {}).get("shmlint", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.shmlint] must be a table")
    return config_from_table(table, str(pyproject), pyproject.parent)


def _strings(table: Mapping[str, Any], key: str, where: str) -> tuple[str, ...] | None:
    if key not in table:
        return None
    value = table[key]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: tool.shmlint.{key} must be a list of strings")
    return tuple(value)


def is_rule_selector(code: str) -> bool:
    """``code`` is a rule code or the prefix of one (``SHM``, ``SHM1``, ``SHM101``), as
    ``select`` / ``ignore`` take them."""
    return bool(code) and any(known.startswith(code) for known in ALL_CODES)


def unknown_code_message(code: str) -> str:
    """What is said of a code no rule has (the command line and the configuration alike)."""
    return f"unknown rule code {code!r} (`shmlint rules` lists them)"


def _codes(table: Mapping[str, Any], key: str, where: str) -> tuple[str, ...] | None:
    codes = _strings(table, key, where)
    for code in codes or ():
        if not is_rule_selector(code):
            raise ConfigError(f"{where}: tool.shmlint.{key}: {unknown_code_message(code)}")
    return codes


_KEYS = frozenset(
    {
        "select",
        "extend-select",
        "ignore",
        "extend-ignore",
        "per-file-ignores",
        "exclude",
        "extend-exclude",
        "min-confidence",
        "extend-sources",
        "extend-sanitizers",
        "array-types",
        "zero-copy-torch",
        "external-types",
        "ref-name-pattern",
        "helper",
        "helper-style",
        "cache-max-size",
    }
)


def config_from_table(table: Mapping[str, Any], where: str, root: Path | None) -> Config:
    """Validate a ``[tool.shmlint]`` table; every error names the key."""
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key tool.shmlint.{unknown[0]}")
    config = Config(root=root)
    changes: dict[str, Any] = {}
    for key, field in (("select", "select"), ("ignore", "ignore")):
        codes = _codes(table, key, where)
        if codes is not None:
            changes[field] = codes
        # `extend-select` / `extend-ignore` add to the list (as ruff's): to `select` when
        # given, else to the default; a `--select` on the command line replaces both.
        more = _codes(table, f"extend-{key}", where)
        if more:
            changes[field] = (*changes.get(field, getattr(config, field)), *more)
    for key, field in (("exclude", "exclude"), ("extend-exclude", "extend_exclude")):
        patterns = _strings(table, key, where)
        if patterns is not None:
            changes[field] = patterns
    if "per-file-ignores" in table:
        changes["per_file_ignores"] = _per_file_ignores(table["per-file-ignores"], where)
    for key in ("helper", "helper-style", "ref-name-pattern", "min-confidence"):
        if key in table and not isinstance(table[key], str):
            raise ConfigError(f"{where}: tool.shmlint.{key} must be a string")
    if "helper" in table:
        if not re.fullmatch(r"[\w.]+:\w+", table["helper"]):
            raise ConfigError(f"{where}: tool.shmlint.helper must look like 'pkg.module:function'")
        changes["helper"] = table["helper"]
        changes["helper_by_payload"] = False
    if "helper-style" in table:
        if table["helper-style"] not in ("wrap", "in-place"):
            raise ConfigError(f"{where}: tool.shmlint.helper-style must be 'wrap' or 'in-place'")
        changes["helper_style"] = table["helper-style"]
    if "cache-max-size" in table:
        size = table["cache-max-size"]
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ConfigError(
                f"{where}: tool.shmlint.cache-max-size must be a whole number of megabytes "
                "(0: no limit)"
            )
        changes["cache_max_size"] = size
    options = _options(table, where)
    helper = changes.get("helper", config.helper)
    # The helper --fix inserts detaches by definition: the analysis must accept it.
    sanitizers = options.extend_sanitizers | {helper.replace(":", ".")}
    changes["options"] = dataclasses.replace(options, extend_sanitizers=sanitizers)
    return dataclasses.replace(config, **changes)


def _per_file_ignores(value: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: tool.shmlint.per-file-ignores must be a table")
    result = []
    for pattern, codes in value.items():
        parsed = _codes({"per-file-ignores": codes}, "per-file-ignores", where)
        result.append((pattern, parsed or ()))
    return tuple(result)


def _options(table: Mapping[str, Any], where: str) -> Options:
    min_confidence = Confidence.HIGH
    if "min-confidence" in table:
        try:
            min_confidence = Confidence(table["min-confidence"])
        except ValueError:
            raise ConfigError(
                f"{where}: tool.shmlint.min-confidence must be 'high' or 'medium'"
            ) from None
    pattern = table.get("ref-name-pattern", "")
    if pattern:
        try:
            re.compile(pattern)
        except re.error as error:
            raise ConfigError(f"{where}: tool.shmlint.ref-name-pattern: {error}") from None
    switches: dict[str, bool] = {}
    for key, default in (("zero-copy-torch", False), ("external-types", True)):
        value = table.get(key, default)
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: tool.shmlint.{key} must be true or false")
        switches[key] = value
    return Options(
        zero_copy_torch=switches["zero-copy-torch"],
        external_types=switches["external-types"],
        extend_sources=frozenset(_strings(table, "extend-sources", where) or ()),
        extend_sanitizers=frozenset(_strings(table, "extend-sanitizers", where) or ()),
        array_types=frozenset(_strings(table, "array-types", where) or ()),
        ref_name_pattern=pattern,
        min_confidence=min_confidence,
    )
