"""A project kept in memory and updated one file at a time (the language server's).

``check_project`` reads every file, merges and re-checks, then forgets. A long-lived front end
keeps the same pieces instead: each file's phase-1 pass (summary, per-file result, questions),
the deferred modules' syntactic summaries once loaded, and the merged facts. When one file
changes (the editor's unsaved text stands in for the disk), only that file's phase 1 runs
again, and the facts are merged anew only when what the file gives the merge changed (its
summary, the names its questions look up, a deferred module's summary or whether it calls a
reader). A file's result is then its phase-1 result, or phase 2 against the facts when they
may change it — the same rule, and so the same findings, as ``check_project`` on the same
bytes (``tests/server/test_session.py`` compares them).

An edit that will need phase 2 costs two analyses of the file. Given an ``executor`` (the
server's helper process), phase 1 runs there while phase 2 runs here against the facts as
they are; when phase 1 then shows the facts unchanged, that result is the one (the facts it
was checked against are the very same object), else phase 2 runs again.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from pathlib import Path

from shmlint.analysis.engine import check_bytes, check_path
from shmlint.basics.config import Config
from shmlint.basics.types import FileResult
from shmlint.facts.closure import asked_classes, close, used_names
from shmlint.facts.evidence import TypeTables
from shmlint.facts.flow import caller_words
from shmlint.facts.merge import merge
from shmlint.facts.model import ProjectFacts
from shmlint.facts.moved import moved_lines, relined
from shmlint.facts.summary import ModuleSummary
from shmlint.run.cache import Cache
from shmlint.run.discovery import read_file
from shmlint.run.merging import syntax_key, with_external
from shmlint.run.passes import FirstPass, first_pass, syntax_summary

# A deferred module's summary that was never asked for (None means "it has none").
_UNLOADED = object()


@dataclasses.dataclass(slots=True)
class _Entry:
    """One file of the project: its current bytes and what phase 1 made of them."""

    path: Path
    display: str
    data: bytes | None  # None: unreadable
    first: FirstPass | None = None
    syntax: object = _UNLOADED  # ModuleSummary | None once loaded (deferred modules only)
    edited: bool = False  # the editor's text stands in for the file on disk

    def summary(self) -> ModuleSummary | None:
        """Its phase-1 summary (None: deferred, unreadable or unparseable)."""
        return self.first.summary if self.first is not None else None

    def deferred(self) -> str:
        """The module name of a file phase 1 did not parse ("" otherwise)."""
        return self.first.deferred if self.first is not None else ""


def _question_keys(item: FirstPass | None) -> tuple[str, ...]:
    return tuple(question for question, _ in item.questions) if item is not None else ()


class ProjectSession:
    """The files of one project (``(path, display)`` pairs, in discovery order), their phase-1
    passes and the merged facts. Not thread-safe: one caller at a time."""

    def __init__(
        self,
        files: Sequence[tuple[Path, str]],
        config: Config,
        cache: Cache | None = None,
        *,
        prefilter: bool = True,
        executor: Executor | None = None,
    ) -> None:
        self.config = config
        self.cache = cache
        self.prefilter = prefilter
        # Where an edited file's phase 1 may run (another process), while phase 2 against
        # the current facts runs here: with two cores, an edit then costs one analysis.
        self.executor = executor
        self._guess: tuple[str, bytes, ProjectFacts, FileResult] | None = None
        self._entries: dict[str, _Entry] = {}
        self._tables = TypeTables.for_options(config.options)
        self.facts = ProjectFacts()
        # Deferred files whose summaries went into the last merge (None: the facts came from
        # the cache, so not known: a change to any deferred file merges anew).
        self._merged_syntax: set[str] | None = set()
        self._callers: set[str] = set()
        self.merges = 0  # how often the facts were merged (for tests and logs)
        self._set_files(files)

    # --- building ------------------------------------------------------------------------

    def _set_files(self, files: Sequence[tuple[Path, str]]) -> None:
        old = self._entries
        self._entries = {}
        for path, display in files:
            self._entries[display] = old.get(display) or _Entry(path, display, None)

    def build(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Read every file and run phase 1 on it (from the cache where it has the entry),
        then merge. ``progress(done, total)`` is called now and then."""
        total = len(self._entries)
        for done, entry in enumerate(self._entries.values(), 1):
            if entry.first is None:
                if not entry.edited:
                    entry.data = read_file(entry.path)
                entry.first = self._first_pass(entry)
            if progress is not None and (done % 100 == 0 or done == total):
                progress(done, total)
        self._merge(from_cache=True)

    def _first_pass(
        self, entry: _Entry, *, guess: bool = False, previous: bytes | None = None
    ) -> FirstPass | None:
        """Phase 1 of the entry's bytes (from the cache when it has them). ``guess``: run it
        on the executor, and meanwhile phase 2 here against the facts as they are (the
        result, if the facts stay the same)."""
        if entry.data is None:
            return None
        key = self._key(entry)
        if key is not None and self.cache is not None:
            cached = self.cache.get_first_pass(key)
            if cached is not None:
                return cached
        computed = self._elsewhere(entry.data, entry.display, previous) if guess else None
        if computed is None:
            computed = first_pass(
                entry.data, entry.display, self.config, prefilter=self.prefilter, lazy=True
            )
        # Unsaved text is not worth keeping; nor is a deferred module's phase 1 (a text check,
        # as quick as reading its entry: what check_project does too).
        if key is not None and self.cache is not None and not entry.edited:
            if not computed.deferred:
                self.cache.put_first_pass(key, computed)
        return computed

    def _elsewhere(self, data: bytes, display: str, previous: bytes | None) -> FirstPass | None:
        """Phase 1 on the executor while this thread runs phase 2 (None: no executor, or it
        failed, so the caller runs phase 1 itself)."""
        if self.executor is None:
            return None
        try:
            future = self.executor.submit(
                first_pass, data, display, self.config, prefilter=self.prefilter, lazy=True
            )
        except RuntimeError:  # shut down, or broken: phase 1 runs here
            return None
        facts = self._predicted(previous, data, display)
        self._guess = (display, data, facts, self._phase_two(display, data, facts))
        try:
            return future.result()
        except Exception:  # the executor only saves time: whatever failed there runs here
            return None

    def _phase_two(
        self, display: str, data: bytes, facts: ProjectFacts | None = None
    ) -> FileResult:
        facts = self.facts if facts is None else facts
        return check_bytes(data, display, self.config, prefilter=self.prefilter, facts=facts)

    def _predicted(self, old: bytes | None, data: bytes, display: str) -> ProjectFacts:
        """The facts as they will be if the edit from ``old`` only moves lines of the file
        (lines inserted or removed: the facts' lines below them move), for phase 2 to run
        against while phase 1 finds out; else the facts as they are."""
        if old is None or old.count(b"\n") == data.count(b"\n"):
            return self.facts
        moved = relined(self.facts, {display: _text_lines(old, data)})
        # (None: a fact on a line the edit changed: the guess is the facts as they are.)
        return self.facts if moved is None else moved

    def _key(self, entry: _Entry) -> str | None:
        """The phase-1 cache key ``check_project`` uses (a lazy run's), so both share it."""
        if self.cache is None or entry.data is None:
            return None
        return self.cache.first_pass_key(entry.display, entry.data)

    # --- the merge (what check_project's merge does, from the entries in memory) ----------

    def _syntax(self, entry: _Entry) -> ModuleSummary | None:
        """A deferred module's syntactic summary, loaded (and cached) on first use."""
        if entry.syntax is _UNLOADED:
            summary: ModuleSummary | None | bool = False
            key = self._key(entry)
            if key is not None and self.cache is not None:
                summary = self.cache.get_syntax_summary(syntax_key(key))
            if isinstance(summary, bool):
                summary = syntax_summary(entry.data or b"", entry.display, self.config)
                if key is not None and self.cache is not None and not entry.edited:
                    self.cache.put_syntax_summary(syntax_key(key), summary)
            entry.syntax = summary
        assert entry.syntax is None or isinstance(entry.syntax, ModuleSummary)
        return entry.syntax

    def _run_key(self) -> str | None:
        """Cached facts of a session build are keyed by every file's phase-1 key."""
        if self.cache is None:
            return None
        digest = hashlib.sha256(b"session")
        for entry in self._entries.values():
            digest.update((self._key(entry) or "-").encode())
        return "l" + digest.hexdigest()

    def _merge(self, *, from_cache: bool = False) -> None:
        run_key = self._run_key() if not any(e.edited for e in self._entries.values()) else None
        if from_cache and run_key is not None and self.cache is not None:
            cached = self.cache.get_facts(run_key)
            if cached is not None and not cached.external_files_changed():
                self.facts = with_external(cached, self.config)
                self._merged_syntax = None
                self._callers = self._find_callers(self.facts)
                return
        self.facts = self._merged()
        self.merges += 1
        if run_key is not None and self.cache is not None:
            self.cache.put_facts(run_key, self.facts)

    def _merged(self) -> ProjectFacts:
        entries = list(self._entries.values())
        order: dict[int, int] = {}  # id(summary) → file index: merge in file order
        analysed: list[ModuleSummary] = []
        names: set[str] = set()
        types: set[str] = set()
        deferred: dict[str, list[int]] = {}
        for index, entry in enumerate(entries):
            summary = entry.summary()
            if summary is not None:
                analysed.append(summary)
                order[id(summary)] = index
                keys = _question_keys(entry.first)
                names |= used_names(summary, keys)
                types |= asked_classes(keys)
            elif entry.deferred():
                deferred.setdefault(entry.deferred(), []).append(index)
        loaded: set[str] = set()

        def load(index: int) -> ModuleSummary | None:
            entry = entries[index]
            summary = self._syntax(entry)
            loaded.add(entry.display)
            if summary is not None:
                order[id(summary)] = index
            return summary

        def loader(module: str) -> Callable[[], list[ModuleSummary]]:
            return lambda: [s for s in map(load, deferred[module]) if s is not None]

        loaders = {module: loader(module) for module in deferred}

        def in_file_order(summaries: Iterable[ModuleSummary]) -> list[ModuleSummary]:
            unique = {id(s): s for s in summaries}
            return sorted(unique.values(), key=lambda s: order[id(s)])

        options = self.config.options
        external = options.external_types
        merged = in_file_order([*analysed, *close(names, loaders)])
        # The deferred modules that may call a function returning a read: their imports
        # decide whether they do, so the facts resolve them too (as runner._merged).
        spelling = self._spelling(caller_words(merged))
        summaries = [s for s in map(load, spelling) if s is not None]
        if summaries:
            more = {target for s in summaries for _, target in s.imports}
            merged = in_file_order([*merged, *close(more, loaders), *summaries])
        facts = merge(merged, self._tables, external, types)
        self._merged_syntax = loaded
        self._callers = self._find_callers(facts)
        return facts

    def _find_callers(self, facts: ProjectFacts) -> set[str]:
        """Deferred files that spell the name of a module-level function returning a read."""
        entries = list(self._entries.values())
        return {entries[index].display for index in self._spelling(facts.reader_words())}

    def _spelling(self, words: frozenset[bytes]) -> list[int]:
        """The indices of the deferred files that spell one of ``words``."""
        if not words:
            return []
        return [
            index
            for index, entry in enumerate(self._entries.values())
            if entry.deferred() and any(word in (entry.data or b"") for word in words)
        ]

    def _shift_lines(self, entry: _Entry, before: ModuleSummary | None) -> bool:
        """When the file's summary changed only in line numbers (lines were inserted or
        removed above a class, a field or a read), move those lines in the facts instead of
        merging anew (shmlint/facts/moved.py); False when it changed otherwise (or a line in
        the facts has no new place), so the caller merges."""
        after = entry.summary()
        lines = None if before is None or after is None else moved_lines(before, after)
        moved = None if lines is None else relined(self.facts, {entry.display: lines})
        if moved is None:
            return False
        guessed = self._guess[2] if self._guess is not None else None
        if guessed is not None and _same_moves(moved, guessed):
            moved = guessed  # what phase 2 ran against while phase 1 ran: its result holds
        self.facts = moved
        return True

    def _gives(self, entry: _Entry) -> tuple[object, ...]:
        """What the merge takes from ``entry``: equal before and after a change means the
        facts stay the same."""
        summary = entry.summary()
        if summary is not None:
            return ("analysed", summary, _question_keys(entry.first))
        module = entry.deferred()
        if not module:
            return ("nothing",)
        words = self.facts.reader_words()
        caller = any(word in (entry.data or b"") for word in words)
        if self._merged_syntax is None:  # facts from the cache: which summaries it used is
            return ("deferred", module, caller, object())  # not known, so always different
        used = entry.display in self._merged_syntax
        return ("deferred", module, caller, self._syntax(entry) if used else None)

    # --- changes -------------------------------------------------------------------------

    def __contains__(self, display: object) -> bool:
        return display in self._entries

    @property
    def displays(self) -> list[str]:
        """The files of the project, in order."""
        return list(self._entries)

    def set_text(self, display: str, data: bytes | None, *, edited: bool) -> bool:
        """The file's bytes are now ``data`` (``edited``: the editor's, not the disk's; None:
        unreadable). Returns True when the project's facts changed."""
        entry = self._entries[display]
        if entry.data == data and entry.first is not None:
            entry.edited = edited
            return False
        before, summary = self._gives(entry), entry.summary()
        keys = _question_keys(entry.first)
        # An editor's file will be shown, with phase 2 if the old text wanted it: worth running
        # it meanwhile (a file changed on disk is only read, and maybe never shown).
        old = entry.first
        guess = (
            edited
            and data is not None
            and old is not None
            and old.needs_second_pass(self.facts, data)
        )
        self._guess = None
        previous = entry.data
        entry.data, entry.edited = data, edited
        entry.first = self._first_pass(entry, guess=guess, previous=previous)
        entry.syntax = _UNLOADED
        if self._gives(entry) == before:
            return False
        if keys != _question_keys(entry.first) or not self._shift_lines(entry, summary):
            self._merge()
        return True

    def reload(self, display: str) -> bool:
        """The file changed on disk: read it again (unless the editor's text stands in for
        it). Returns True when the facts changed."""
        entry = self._entries[display]
        if entry.edited:
            return False
        return self.set_text(display, read_file(entry.path), edited=False)

    def release(self, display: str) -> bool:
        """The editor no longer holds the file: the disk's bytes stand for it again."""
        entry = self._entries[display]
        entry.edited = False
        return self.reload(display)

    def set_files(self, files: Sequence[tuple[Path, str]]) -> bool:
        """Files were created or deleted: the project is now ``files`` (in discovery order).
        Returns True when the facts changed (they are merged anew when the set changed)."""
        if [display for _, display in files] == list(self._entries):
            return False
        self._set_files(files)
        for entry in self._entries.values():
            if entry.first is None:
                entry.data = read_file(entry.path) if not entry.edited else entry.data
                entry.first = self._first_pass(entry)
        self._merge()
        return True

    # --- results -------------------------------------------------------------------------

    def result(self, display: str) -> FileResult:
        """The project result of one file of the project, for its current bytes."""
        entry = self._entries[display]
        if entry.data is None or entry.first is None:
            return check_path(entry.path, display, self.config, prefilter=self.prefilter)
        item = entry.first
        if item.deferred and display in self._callers:
            item = dataclasses.replace(item, summary=self._syntax(entry))
        if item.needs_second_pass(self.facts, entry.data):
            guessed, self._guess = self._guess, None
            if guessed is not None and guessed[0] == display:
                _, data, facts, result = guessed
                if data is entry.data and facts is self.facts:
                    return result  # checked against these very facts while phase 1 ran
            return self._phase_two(display, entry.data)
        return item.result


def _same_moves(a: ProjectFacts, b: ProjectFacts) -> bool:
    """Two movings of the same facts' lines agree (what was not moved is the same object in
    both, so this compares the moved entries only)."""
    return a.classes == b.classes and a.returned_reads == b.returned_reads


def _text_lines(old: bytes, new: bytes) -> dict[int, int]:
    """Old → new 1-based numbers of the lines an edit kept (a text diff: what the summary's
    lines will say if the edit only moved them)."""
    matcher = difflib.SequenceMatcher(None, old.split(b"\n"), new.split(b"\n"), autojunk=False)
    return {
        a + i + 1: b + i + 1 for a, b, size in matcher.get_matching_blocks() for i in range(size)
    }
