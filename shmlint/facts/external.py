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
of them changed (a package upgraded). A module that was not found is noted by the directories
it was looked for in (the installed packages' directories of the path, or the package's own),
with their modification times: installing it changes one of them, so the answer is not served
once it may be found. A module found is noted by the source files that would be found first
(its name's in the path's earlier entries, a package beside a module file), stamped absent, so
a package installed ahead of it is noticed too, and nothing else appearing there counts.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import importlib.machinery
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple, Protocol

from shmlint.basics.names import Scope, walrus_lines
from shmlint.basics.stamps import ABSENT, stale
from shmlint.facts.collect import summarize_syntax
from shmlint.facts.summary import ModuleSummary

# Never read: the catalog rates their types by name, and they are large.
_SKIPPED_ROOTS = frozenset(
    {"numpy", "torch", "pandas", "pyarrow", "ray", "jax", "typing_extensions", "__future__"}
) | frozenset(sys.stdlib_module_names)
_MAX_BYTES = 2_000_000  # a generated or vendored giant is not a payload class's home


# The path's first entry as the program started: the script's directory, or the working
# directory (`python -m`, `-c`). Not where packages are installed: a file created there (the
# project's own, the cache's) does not make a missing module installed.
_START = sys.path[0] if sys.path and not getattr(sys.flags, "safe_path", False) else None


def search_path() -> list[str]:
    """Where installed modules are looked for: the interpreter's path but the entry the
    program started from (its first occurrence: a ``PYTHONPATH`` entry naming the same
    directory stays), so ``shmlint`` and ``python -m shmlint`` find the same modules (and
    share a cache: shmlint/run/salts.py)."""
    entries = list(sys.path)
    if _START is not None and _START in entries:
        entries.remove(_START)
    return [entry for entry in entries if entry]


def _find_top(root: str) -> tuple[importlib.machinery.ModuleSpec | None, bool]:
    """The spec of top-level module ``root`` as the import system finds it (its meta path:
    editable installs' finders too), on :func:`search_path`; nothing is imported. True when
    the path's entries were searched first, in vain (a finder after the path's found it)."""
    path = search_path()
    searched = False
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        on_path = finder is importlib.machinery.PathFinder
        try:
            spec = find(root, path if on_path else None)
        except (ImportError, ValueError, AttributeError, TypeError):
            continue
        if spec is not None:
            return spec, searched
        searched = searched or on_path
    return None, searched


def _homes(directory: str, name: str) -> list[str]:
    """The source files that would make ``name`` a package or a module in ``directory``
    (stamped absent: they shadow the one found once they appear, and nothing else there, as
    an editor's temporary file in a project's own package, makes it stale)."""
    base = os.path.join(directory, name)
    return [os.path.join(base, "__init__.py"), f"{base}.py"]


def _ahead(root: str, spec: importlib.machinery.ModuleSpec, searched: bool) -> list[str]:
    """Where top-level module ``root`` (found as ``spec``) would be found first: its homes in
    the path's entries before its own (all of them when a finder after the path's found it,
    ``searched``), and beside it in its own (a package wins over a module file). A namespace
    package: the path's entries and its portions (a regular package of the name anywhere
    wins, a portion gains the module)."""
    origin = spec.origin
    if origin is None or origin == "namespace" or not origin.endswith(".py"):
        return [*search_path(), *(spec.submodule_search_locations or ())]
    package = origin.endswith("__init__.py")
    entry = os.path.dirname(os.path.dirname(origin) if package else origin)
    entries = [os.path.abspath(place) for place in search_path()]
    if searched:
        earlier = entries
    elif entry in entries:
        earlier = entries[: entries.index(entry)]
    else:
        return []  # (found by another finder than the path's: where, it does not say)
    places = [home for place in earlier for home in _homes(place, root)]
    return [*places, *(home for home in _homes(entry, root) if home != origin)]


class Located(NamedTuple):
    """Where a module's source is: its file (None: not found) and whether it is a package's
    ``__init__``; with the directories it was looked for in before (all of them, for a module
    not found), with their modification times: installing it there changes one of them."""

    path: Path | None
    package: bool = False
    searched: tuple[tuple[str, int], ...] = ()


def _stamped(places: list[str]) -> tuple[tuple[str, int], ...]:
    """Each place with its modification time (:data:`ABSENT`: it does not exist yet)."""
    stamps: dict[str, int] = {}
    for place in map(os.path.abspath, places):
        try:
            stamps.setdefault(place, os.stat(place).st_mtime_ns)
        except OSError:
            stamps.setdefault(place, ABSENT)
    return tuple(stamps.items())


def _along(location: str, rest: list[str]) -> list[str]:
    """The directories a module ``rest`` below ``location`` would be found through, as far
    as they exist: ``location/a/b`` for ``a.b.c`` holds ``c.py`` or ``c/``, and ``c/``, if it
    is there, its ``__init__.py``."""
    found = [location]
    for part in rest:
        deeper = os.path.join(found[-1], part)
        if not os.path.isdir(deeper):
            break
        found.append(deeper)
    return found


def _miss(origin: str | None, locations: list[str], rest: list[str], ahead: list[str]) -> Located:
    """A module not found below a package found (``locations``: its directories; ``origin``:
    its file; ``ahead``: where the package would be found first): noted by where it would
    appear. A namespace package (no file) gains a portion, or becomes a regular package,
    anywhere on the path."""
    places = [place for location in locations for place in _along(location, rest)]
    if origin is None or origin == "namespace":
        places += search_path()
    elif not locations:  # a module, not a package: a package of its name beside it wins
        places.append(os.path.join(os.path.splitext(origin)[0], "__init__.py"))
    return Located(None, searched=_stamped([*places, *ahead]))


@functools.lru_cache(maxsize=4096)
def module_file(module: str) -> Located:
    """The source file of ``module`` on the interpreter's path (and whether it is a package's
    ``__init__``), found without importing: the top-level package's spec, then the files."""
    root, *rest = module.split(".")
    if root in _SKIPPED_ROOTS or not root.isidentifier():
        return Located(None)  # (never looked for: nothing to watch)
    spec, searched = _find_top(root)
    if spec is None:
        return Located(None, searched=_stamped(search_path()))
    ahead = _ahead(root, spec, searched)
    origin = spec.origin
    locations = list(spec.submodule_search_locations or ())
    if not rest:
        # (A source file: not one in a zip archive, which no stat finds.)
        if origin and origin.endswith(".py") and os.path.isfile(origin):
            return Located(Path(origin), origin.endswith("__init__.py"), _stamped(ahead))
        return _miss(origin, locations, [], ahead)
    for number, location in enumerate(locations):
        base = Path(location, *rest)
        for found, package in ((base / "__init__.py", True), (base.with_suffix(".py"), False)):
            if found.is_file():  # (a package wins over a module, as in Python)
                # Where it would be found first: the package's, the namespace package's
                # earlier portions, a package of its name beside a module file.
                places = [
                    place for earlier in locations[:number] for place in _along(earlier, rest)
                ]
                places += [
                    home for home in _homes(str(base.parent), base.name) if home != str(found)
                ]
                return Located(found, package, _stamped([*ahead, *places]))
    return _miss(origin, locations, rest, ahead)


def _located(module: str, again: bool = False) -> Located:
    """:func:`module_file`, looked for again (``again``, or when a directory a miss was found
    in changed) in a long-lived process: the editor's server."""
    found = module_file(module)
    if again or (found.searched and stale(found.searched)):
        importlib.invalidate_caches()
        module_file.cache_clear()
        found = module_file(module)
    return found


class SummaryStore(Protocol):
    """Where summaries of installed modules persist between runs (the run's cache)."""

    def external_key(self, path: str, stamp: tuple[int, int], module: str, package: bool) -> str:
        """The entry of one installed file at one (modification time, size)."""

    def get_syntax_summary(self, key: str) -> ModuleSummary | None | bool:
        """The stored summary (None: the file has none); False when not stored."""

    def put_syntax_summary(self, key: str, summary: ModuleSummary | None) -> None:
        """Store a summary (or that the file has none)."""


_store: SummaryStore | None = None


class _Tracking(threading.local):
    """The files noted by the open ``tracked`` blocks of a thread (innermost last): the
    editor's server analyses in a second thread, whose lookups are not another's."""

    def __init__(self) -> None:
        self.blocks: list[dict[str, int]] = []


_tracking = _Tracking()


@contextlib.contextmanager
def tracked() -> Iterator[dict[str, int]]:
    """Within the block, the installed files read (path: modification time) are noted in the
    dict yielded (and in any enclosing block's)."""
    files: dict[str, int] = {}
    _tracking.blocks.append(files)
    try:
        yield files
    finally:
        _tracking.blocks.pop()


def note(files: dict[str, int]) -> None:
    """Note installed files read before (a cached lookup's) in the open ``tracked`` blocks."""
    for tracking in _tracking.blocks:
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
    found = _located(module)
    stamp = _stamp(found.path)
    if found.path is not None and stamp is None:  # gone since (uninstalled, or moved)
        found = _located(module, again=True)
        stamp = _stamp(found.path)
    path, is_package, searched = found
    if path is None or stamp is None:
        if path is not None:  # (found, and gone again at once: noted by its directory)
            searched = _stamped([os.path.dirname(path)])
        for tracking in _tracking.blocks:
            tracking.update(searched)
        return None
    for tracking in _tracking.blocks:
        tracking.update(searched)  # (where a module of the name would be found first)
        tracking[str(path)] = stamp
    return _summary(path, stamp, module, is_package)


def _stamp(path: Path | None) -> int | None:
    """The modification time of a file found (None: none, or gone)."""
    try:
        return None if path is None else path.stat().st_mtime_ns
    except OSError:
        return None


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
