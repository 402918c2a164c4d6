"""The record of the last run over a set of files: a warm run reads one entry.

A run over the same files with the same configuration and code, where no file's ``stat``
(size, modification and change times, inode) differs from the run that wrote the record, and
no installed file its facts read changed, has the same results: they are served from the
record without reading, hashing or decoding any file's entry (as ruff's cache trusts
modification times). When a few files changed, a project run starts from the record
(shmlint/run/incremental.py); anything else falls back to the cache keyed by content.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from shmlint.basics.stamps import stale
from shmlint.basics.types import FileResult
from shmlint.run.cache import Cache
from shmlint.run.encoding import Calls, Stat, decode_calls, decode_result, encode_result

if TYPE_CHECKING:
    from shmlint.run.runner import RunTrace

T = TypeVar("T")


def stat_of(path: str | Path) -> Stat | None:
    """What the record compares of a file (None: it cannot be read now)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_size, found.st_mtime_ns, found.st_ctime_ns, found.st_ino)


def record_key(files: Sequence[tuple[str | Path, str]], cache: Cache, mode: str) -> str:
    """The record's key: the configuration and code (the cache's salt), the run's mode, and
    the files in order as reported."""
    digest = hashlib.sha256(cache.salt + b"\0record\0" + mode.encode())
    for _, display in files:
        digest.update(display.encode("utf-8", "surrogateescape") + b"\0")
    return "w" + digest.hexdigest()


@dataclasses.dataclass(frozen=True, slots=True)
class Record:
    """A finished run: each file's stat and result, the installed files its facts read (with
    their mtimes), and, for a project run, what the next run needs to start from it."""

    stats: list[Stat]
    results: list[FileResult]
    external: dict[str, int]
    keys: list[str | None]
    gives: list[str]
    facts_key: str
    facts_digest: str
    reader_words: list[str]
    second: list[bool]
    calls: list[Calls | None]
    callers: list[bool] = dataclasses.field(default_factory=list)
    caller_words: list[str] = dataclasses.field(default_factory=list)
    spellers: list[bool] = dataclasses.field(default_factory=list)
    # An answer phase 1 got from a file's own facts named another file of the run (not known:
    # True). See ``runner.cites_others``.
    foreign: bool = True
    # The cache key of the last full run's askers (shmlint/run/replan.py; "": none).
    askers: str = ""

    def changed(self, files: Sequence[tuple[str | Path, str]]) -> list[int] | None:
        """The indices of the files whose stat differs now (None: an installed file the
        facts or a file's analysis read changed, or the record is not of these files)."""
        if len(self.stats) != len(files):
            return None
        if stale(self.external.items()):
            return None
        noted = dict.fromkeys(item for result in self.results for item in result.installed)
        if stale(noted):  # (each place once: many files note the same)
            return None  # (a file's own analysis read an installed file)
        return [
            i for i, ((path, _), old) in enumerate(zip(files, self.stats)) if stat_of(path) != old
        ]

    # What a full run after this one (a change of the facts) takes from it as it is: the
    # same phase-1 key means the same bytes and configuration, so the same phase-1 entry.

    def _same_key(self, index: int, key: str | None) -> bool:
        return key is not None and index < len(self.keys) and self.keys[index] == key

    def _kept(self, values: list[T], index: int, key: str | None) -> T | None:
        """``values[index]`` when file ``index``'s phase-1 key was ``key`` too, else None."""
        return values[index] if self._same_key(index, key) and index < len(values) else None

    def gave(self, index: int, key: str | None) -> str | None:
        """What analysed file ``index`` gave the merge (``runner.gives``) when its phase-1
        key was ``key`` too; None otherwise (a deferred module's depends on the merge)."""
        given = self._kept(self.gives, index, key)
        return given if given is not None and given.startswith("a") else None

    def stood(self, index: int, stat: Stat | None) -> str | None:
        """File ``index``'s phase-1 key in the last run when its ``stat`` is the one recorded
        (its bytes taken as unchanged, as a warm run takes them), else None."""
        if stat is None or index >= len(self.stats) or index >= len(self.keys):
            return None
        return self.keys[index] if self.stats[index] == stat else None

    def called(self, index: int, key: str | None) -> bool | None:
        """Whether deferred file ``index`` spelled one of :attr:`reader_words` (it calls a
        reader, maybe: ``runner._Deferred.callers``) when its phase-1 key was ``key`` too;
        None when not known."""
        return self._kept(self.callers, index, key)

    def spelled_caller(self, index: int, key: str | None) -> bool | None:
        """Whether deferred file ``index`` spelled one of :attr:`caller_words` (the merge
        resolved its imports: ``runner._Deferred.spelling``) when its phase-1 key was ``key``
        too; None when not known."""
        return self._kept(self.spellers, index, key)

    def deferred(self, index: int, key: str | None) -> str | None:
        """The module name of file ``index`` when it was a deferred module (nothing to check
        per file: its phase 1 a text check, ``passes.deferred_pass``) under the phase-1 key
        ``key`` too; None otherwise."""
        given = self._kept(self.gives, index, key)
        if given is None or not given.startswith("d"):
            return None
        return given[1:].partition("\0")[0] or None  # (gives: f"d{module}\0{syntax}")

    def spelled(self, index: int, key: str | None) -> frozenset[bytes] | None:
        """The readers' names analysed file ``index`` spelled (``ProjectFacts.call_evidence``,
        for the names in :attr:`reader_words`) when its phase-1 key was ``key`` too; None
        when not known (another key, or phase 2 re-checked the file)."""
        calls = self._kept(self.calls, index, key)
        if calls is None:
            return None
        try:
            return frozenset(word.encode("utf-8", "surrogateescape") for word in calls[0])
        except UnicodeEncodeError:  # not what a run writes: a garbled record
            return None


def load(files: Sequence[tuple[str | Path, str]], cache: Cache, mode: str) -> Record | None:
    """The record of the last run over ``files`` in ``mode``, if any."""
    body = cache.get_record(record_key(files, cache, mode))
    if not isinstance(body, dict):
        return None
    try:
        results = []
        for (_, display), item in zip(files, body["results"], strict=True):
            if isinstance(item, dict):
                results.append(decode_result(item))
            else:
                parsed, skipped = item
                results.append(FileResult(display, (), bool(parsed), bool(skipped)))
        return Record(
            [(int(a), int(b), int(c), int(d)) for a, b, c, d in body["stats"]],
            results,
            {str(path): int(mtime) for path, mtime in body["external"].items()},
            [None if key is None else str(key) for key in body["keys"]],
            [str(given) for given in body["gives"]],
            str(body["facts_key"]),
            str(body["facts_digest"]),
            [str(word) for word in body["reader_words"]],
            [bool(flag) for flag in body["second"]],
            decode_calls(body["calls"]),
            [bool(flag) for flag in body.get("callers", ())],
            [str(word) for word in body.get("caller_words", ())],
            [bool(flag) for flag in body.get("spellers", ())],
            bool(body.get("foreign", True)),
            str(body.get("askers", "")),
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def served(
    files: Sequence[tuple[str | Path, str]], cache: Cache, mode: str
) -> list[FileResult] | None:
    """The results of the last run over ``files`` when nothing changed since, else None."""
    found = load(files, cache, mode)
    return found.results if found is not None and found.changed(files) == [] else None


def write(
    files: Sequence[tuple[str | Path, str]],
    stats: Sequence[Stat | None],
    results: Sequence[FileResult],
    external: dict[str, int],
    cache: Cache,
    mode: str,
    trace: RunTrace | None = None,
) -> None:
    """Record a finished run (``stats`` taken before its files were read: a file changed
    during the run differs next time). Not written when a file could not be read."""
    if any(stat is None for stat in stats):
        return
    encoded: list[Any] = [
        encode_result(result)
        if result.findings or result.path != display or result.installed
        else [result.parsed, result.skipped]
        for (_, display), result in zip(files, results, strict=True)
    ]
    body = {
        "stats": [list(stat) for stat in stats if stat is not None],
        "external": external,
        "results": encoded,
        "keys": trace.keys if trace is not None else [None] * len(files),
        "gives": trace.gives if trace is not None else ["-"] * len(files),
        "facts_key": trace.facts_key if trace is not None else "",
        "facts_digest": trace.facts_digest if trace is not None else "",
        "reader_words": trace.reader_words if trace is not None else [],
        "second": trace.second if trace is not None else [],
        "calls": trace.calls if trace is not None else [],
        "callers": trace.callers if trace is not None else [],
        "caller_words": trace.caller_words if trace is not None else [],
        "spellers": trace.spellers if trace is not None else [],
        "foreign": trace.foreign if trace is not None else True,
        "askers": trace.askers if trace is not None else "",
    }
    cache.put_record(record_key(files, cache, mode), body)
