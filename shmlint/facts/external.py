"""Payload classes from installed packages: a class named in an annotation but defined outside
the checked tree (``from vllm.v1.outputs import ModelRunnerOutput`` in a vLLM plugin) is rated
by its fields when its module's source is on the running interpreter's path.

The source is found without importing anything (the top-level package's spec, then the path of
each submodule), read and summarised like a project module, never executed. Summaries are
cached per process by file path and modification time, and in the run's cache when one is
given (:func:`stored_in`: an edit re-checked on a warm run parses no installed module again);
the standard library and the array libraries themselves (whose types the catalog already
rates) are never read.

What an analysis read here is what its cached result depends on besides its own bytes: inside
:func:`tracked`, every installed file a lookup read (or whose earlier reading a cached lookup
reused, :func:`note`) is noted with its modification time, so a result is not served once one
of them changed (a package upgraded). A module that was not found is not noted: installing
it later goes unnoticed until the file or the configuration changes.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.util
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from shmlint.basics.names import Scope, walrus_lines
from shmlint.facts.collect import summarize_syntax
from shmlint.facts.summary import ModuleSummary

# Never read: the catalog rates their types by name, and they are large.
_SKIPPED_ROOTS = frozenset(
    {"numpy", "torch", "pandas", "pyarrow", "ray", "jax", "typing_extensions", "__future__"}
) | frozenset(sys.stdlib_module_names)
_MAX_BYTES = 2_000_000  # a generated or vendored giant is not a payload class's home


@functools.lru_cache(maxsize=4096)
def module_file(module: str) -> tuple[Path, bool] | None:
    """The source file of ``module`` on the interpreter's path (and whether it is a package's
    ``__init__``), found without importing: the top-level package's spec, then the files."""
    root, *rest = module.split(".")
    if root in _SKIPPED_ROOTS or not root.isidentifier():
        return None
    try:
        spec = importlib.util.find_spec(root)  # a top-level name: nothing is imported
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if not rest:
        origin = spec.origin
        if origin and origin.endswith(".py"):
            return Path(origin), origin.endswith("__init__.py")
        return None
    for location in spec.submodule_search_locations or ():
        base = Path(location, *rest)
        if base.with_suffix(".py").is_file():
            return base.with_suffix(".py"), False
        if (base / "__init__.py").is_file():
            return base / "__init__.py", True
    return None


class SummaryStore(Protocol):
    """Where summaries of installed modules persist between runs (the run's cache)."""

    def external_key(self, path: str, stamp: tuple[int, int], module: str, package: bool) -> str:
        """The entry of one installed file at one (modification time, size)."""

    def get_syntax_summary(self, key: str) -> ModuleSummary | None | bool:
        """The stored summary (None: the file has none); False when not stored."""

    def put_syntax_summary(self, key: str, summary: ModuleSummary | None) -> None:
        """Store a summary (or that the file has none)."""


_store: SummaryStore | None = None
# The files noted by the open ``tracked`` blocks (innermost last).
_tracking: list[dict[str, int]] = []


@contextlib.contextmanager
def tracked() -> Iterator[dict[str, int]]:
    """Within the block, the installed files read (path: modification time) are noted in the
    dict yielded (and in any enclosing block's)."""
    files: dict[str, int] = {}
    _tracking.append(files)
    try:
        yield files
    finally:
        _tracking.pop()


def note(files: dict[str, int]) -> None:
    """Note installed files read before (a cached lookup's) in the open ``tracked`` blocks."""
    for tracking in _tracking:
        tracking.update(files)


def keep_in(store: SummaryStore | None) -> None:
    """From now on (a worker process, for its life), installed modules' summaries are read
    from and kept in ``store``."""
    global _store
    _store = store


@contextlib.contextmanager
def stored_in(store: SummaryStore | None) -> Iterator[None]:
    """Within the block, installed modules' summaries are read from and kept in ``store``."""
    before = _store
    keep_in(store)
    try:
        yield
    finally:
        keep_in(before)


@functools.lru_cache(maxsize=1024)
def _summary(path: Path, mtime_ns: int, module: str, is_package: bool) -> ModuleSummary | None:
    try:
        size = path.stat().st_size
    except OSError:
        return None
    store, key = _store, ""
    if store is not None:
        key = store.external_key(str(path), (mtime_ns, size), module, is_package)
        kept = store.get_syntax_summary(key)
        if kept is not False:
            assert not isinstance(kept, bool)
            return kept
    summary = _parsed_summary(path, size, module, is_package)
    if store is not None:
        store.put_syntax_summary(key, summary)
    return summary


def _parsed_summary(path: Path, size: int, module: str, is_package: bool) -> ModuleSummary | None:
    try:
        if size > _MAX_BYTES:
            return None
        text = path.read_text(encoding="utf-8")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
        scope = Scope(tree, None, walrus=walrus_lines(text))
        return summarize_syntax(tree, module, str(path), is_package, scope)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return None


def module_summary(module: str) -> ModuleSummary | None:
    """The summary of an installed module (None: not found, unreadable, or skipped)."""
    found = module_file(module)
    if found is None:
        return None
    path, is_package = found
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        return None
    for tracking in _tracking:
        tracking[str(path)] = mtime
    return _summary(path, mtime, module, is_package)


def defining_module(name: str, depth: int = 4) -> tuple[ModuleSummary, str] | None:
    """The installed module that defines class ``name`` (``pkg.mod.Class``) and the class's
    own qualified name there (re-exports followed a few steps), if any."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        summary = module_summary(".".join(parts[:cut]))
        if summary is None:
            continue
        if any(c.name == name for c in summary.classes):
            return summary, name
        target = dict(summary.imports).get(parts[cut]) if cut == len(parts) - 1 else None
        if target is not None and depth > 0 and target != name:
            return defining_module(target, depth - 1)  # `from .outputs import X` re-exported
        return None
    return None
