"""The project run: phase 1 over every file, the merge, phase 2 only where it can differ.

Phase 1 analyses each file exactly as a per-file run would (its own classes as the only
project), and on the way records its summary and every question its analysis asked of the
project facts, with the answers its own facts gave. After the merge, a file is analysed again
(phase 2) only when the project's facts answer one of its questions differently, or when it
may call a function that returns a read (a body the per-file gate skipped): every other
file's phase-1 result is already its project result. A test checks this on the ray tree.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from shmlint.analysis.engine import (
    TOO_DEEP,
    analyze_with_view,
    error_result,
    may_contain_read,
    may_contain_source,
    own_view,
    parse_source,
    source_text,
    split_lines,
)
from shmlint.basics.config import Config
from shmlint.basics.names import Scope, walrus_lines
from shmlint.basics.types import FileResult
from shmlint.facts import external as installed
from shmlint.facts.collect import Recorder, summarize_syntax
from shmlint.facts.layout import module_name
from shmlint.facts.model import ProjectFacts
from shmlint.facts.summary import ModuleSummary
from shmlint.run.encoding import Calls, decode_result, encode_result


@dataclasses.dataclass(frozen=True, slots=True)
class FirstPass:
    """One file after phase 1: its summary (None: undecodable or unparseable), its per-file
    result, and the questions its analysis asked with the answers its own facts gave."""

    summary: ModuleSummary | None
    result: FileResult
    questions: tuple[tuple[str, str], ...] = ()
    # The module name of a file phase 1 did not parse (no read, no helper: nothing to check
    # per file); its summary is built only if the project needs it (closure.py).
    deferred: str = ""

    def needs_second_pass(self, facts: ProjectFacts, data: bytes) -> bool:
        """True when the project's facts may change this file's findings."""
        return self.second_pass(facts, data)[0]

    def second_pass(
        self, facts: ProjectFacts, data: bytes, spelled: frozenset[bytes] | None = None
    ) -> tuple[bool, Calls | None]:
        """:meth:`needs_second_pass`, and when it is false for an analysed file, the evidence
        it was decided on without a call of a reader (``ProjectFacts.call_evidence``, as
        text: the readers' names the file spells, and the dotted names that would make it
        call one), which a warm run decides an edit of the file by. ``spelled``: the
        readers' names the file spells, when already known (the text is not scanned)."""
        if self.summary is None:
            return False, None
        if facts.defines_readers(self.summary.module):
            # Its calls of its own readers are reads project-wide; phase 1 never asks whether
            # a callee returns a read (only what its slot holds), so no answer would tell
            # (fixtures/project/own_reader).
            return True, None
        if any(facts.answer(question) != answer for question, answer in self.questions):
            return True, None
        spelled, needles = facts.call_evidence(self.summary.imports, data, spelled)
        if needles is None or any(needle in data for needle in needles):
            return True, None
        if self.deferred:
            return False, None
        text = functools.partial(bytes.decode, encoding="utf-8", errors="surrogateescape")
        return False, (sorted(map(text, spelled)), sorted(map(text, needles)))


def syntax_summary(data: bytes, path: str, config: Config) -> ModuleSummary | None:
    """The syntactic summary of a deferred module (None: undecodable or unparseable)."""
    try:
        text = source_text(data)
    except (UnicodeDecodeError, SyntaxError, LookupError):
        return None
    tree = parse_source(text, path)
    if isinstance(tree, tuple):
        return None
    module, is_package = module_name(path, config.root)
    try:
        scope = Scope(tree, None, walrus=walrus_lines(text))
        return summarize_syntax(tree, module, path, is_package, scope)
    except RecursionError:
        return None


def _decoded(data: bytes, path: str, config: Config) -> str | FirstPass:
    """The file's text, or the phase 1 of a file that cannot be decoded."""
    try:
        return source_text(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as error:
        return FirstPass(None, error_result(path, config, 1, 0, f"cannot decode the file: {error}"))


def deferred_of(path: str, module: str) -> FirstPass:
    """The phase 1 of a lazy run's file with nothing to check per file (module ``module``):
    its summary waits."""
    return FirstPass(None, FileResult(path, (), parsed=False, skipped=True), deferred=module)


def _deferred(path: str, config: Config) -> FirstPass:
    """:func:`deferred_of`, the module named from the file's path."""
    return deferred_of(path, module_name(path, config.root)[0])


def deferred_pass(data: bytes, path: str, config: Config) -> FirstPass | None:
    """Phase 1 of a lazy run for a file that needs no parsing — one with nothing to check
    per file (its summary is deferred), or that cannot be decoded — as :func:`first_pass`
    gives it; None for a file to analyse. Cheap: the runner answers these itself, and sends
    only the others (and their bytes) to the worker pool."""
    text = _decoded(data, path, config)
    if isinstance(text, FirstPass):
        return text
    return None if may_contain_source(text, config.options) else _deferred(path, config)


def first_pass(
    data: bytes, path: str, config: Config, *, prefilter: bool = True, lazy: bool = False
) -> FirstPass:
    """Phase 1 for one file (never raises for a bad file, as ``check_bytes``). ``lazy``: a
    file with nothing to check per file is not parsed (its summary is deferred)."""
    text = _decoded(data, path, config)
    if isinstance(text, FirstPass):
        return text
    checked = not prefilter or may_contain_source(text, config.options)
    if lazy and not checked:
        return _deferred(path, config)
    skipped = FileResult(path, (), parsed=False, skipped=True)
    tree = parse_source(text, path)
    if isinstance(tree, tuple):
        return FirstPass(None, error_result(path, config, *tree) if checked else skipped)
    recorder = Recorder() if checked and may_contain_read(text, config.options) else None
    questions: set[str] = set()
    try:
        scope = Scope(tree, None, walrus=walrus_lines(text))
        if not checked:  # eager: the summary only
            module, is_package = module_name(path, config.root)
            return FirstPass(summarize_syntax(tree, module, path, is_package, scope), skipped)
        with installed.tracked() as read:
            own, view = own_view(tree, scope, path, config, recorder, questions)
            findings = analyze_with_view(tree, split_lines(text), path, config, text, view, scope)
            answers = tuple(sorted((q, view.facts.answer(q)) for q in questions))
    except RecursionError:
        return FirstPass(None, error_result(path, config, 1, 0, TOO_DEEP))
    summary = own if recorder is None else recorder.fill(own)
    result = FileResult(path, tuple(findings), parsed=True, installed=tuple(sorted(read.items())))
    return FirstPass(summary, result, answers)


def encode(item: FirstPass) -> dict[str, Any]:
    """JSON-able form (the cache's)."""
    return {
        "summary": None if item.summary is None else item.summary.to_json(),
        "result": encode_result(item.result),
        "questions": [list(q) for q in item.questions],
        "deferred": item.deferred,
    }


def decode(data: dict[str, Any]) -> FirstPass:
    """The inverse of :func:`encode`; raises ``KeyError``/``TypeError``/``ValueError``."""
    summary = data["summary"]
    return FirstPass(
        None if summary is None else ModuleSummary.from_json(summary),
        decode_result(data["result"]),
        tuple((str(q), str(a)) for q, a in data["questions"]),
        str(data["deferred"]),
    )
