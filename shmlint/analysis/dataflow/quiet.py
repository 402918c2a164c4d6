"""Which bodies a round of the facts pre-pass may skip: those no Ray handle can reach.

A round exists to learn which attributes, functions and module variables hold Ray handles
(compiled graphs, refs, futures, queues). A handle enters a body only through a name the body
spells: a call that makes one (``.remote(``, ``.bind(``, ``.options(``, ``experimental_compile``,
a Ray queue, ``asyncio.to_thread``, ``run_in_executor``), an annotation naming one (``ObjectRef``,
``CompiledDAG``), a fact of the module known to hold one (``self.<attr>``, a function's or
method's result, a module variable), or a variable of the enclosing scope holding one. A
body that spells none of these, and no read (the gate, shmlint.analysis.dataflow.gate),
analyses to nothing in a round: no handle, no fact, no read, no finding. So a round skips
it, and checks it again against the facts the round ends with: if the body now spells a name
that got a handle after its turn, the round is repeated, as a round that read a fact before
it grew is — the rounds compute exactly what analysing every body computes. Substrings count
(``remote`` in ``remote_path``): a body kept needlessly costs time, never a finding.

Only a module analysed on its own (a per-file run: the flake8 plugin, ``--per-file``) skips.
Phase 1 records every body's flows of parameters, which the merge needs whether or not a
handle reached the body yet; in phase 2 the project's facts may hand a body a handle through
a parameter, an attribute or a call, which its text need not spell (measured on the ray
wheel, skipping there saved almost nothing: the modules phase 2 re-checks are those full of
handles).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from shmlint.analysis.dataflow.gate import lines_spelling, spans_any
from shmlint.basics import catalog


def _last(names: Iterable[str]) -> frozenset[str]:
    return frozenset(name.rpartition(".")[2] for name in names)


def _shortest(words: frozenset[str]) -> frozenset[str]:
    """The words no other one is part of (`ObjectRef` finds `ObjectRefGenerator` too)."""
    return frozenset(w for w in words if not any(o != w and o in w for o in words))


# The spellings of what makes a handle (catalog tables, by their last component).
HANDLE_WORDS = _shortest(
    catalog.REMOTE_METHODS
    | catalog.OPTIONS_METHODS
    | catalog.BIND_METHODS
    | catalog.COMPILE_METHODS
    | catalog.COMPILED_DAG_TYPES
    | catalog.COMPILED_REF_TYPES
    | catalog.PLAIN_REF_TYPES
    | catalog.EXECUTOR_METHODS
    | _last(catalog.RAY_QUEUES)
    | _last(catalog.TO_THREAD_CALLS)
)
# Handle makers matched by qualified name: an import may rename them (`import Queue as Q`).
_RENAMEABLE = _last(catalog.RAY_QUEUES) | _last(catalog.TO_THREAD_CALLS)


def _entry_words(imports: dict[str, str]) -> set[str]:
    """The handle words, and the names the module's imports give the renameable ones."""
    words = set(HANDLE_WORDS)
    words |= {local for local, target in imports.items() if _last([target]) & _RENAMEABLE}
    return words


# How a handle maker is spelled where it makes one: a call of a maker, or a type's name.
_CALLED = frozenset(HANDLE_WORDS - catalog.COMPILED_DAG_TYPES - catalog.PLAIN_REF_TYPES)
# What else a module must spell for a maker's call to make a handle from its own facts (a
# per-file run, phase 1): `.bind()` binds a remote function or actor method, and `.options()`
# configures one (a remote callable held as a value), only if the module defines one
# (`ray.remote`); a queue is Ray's when it comes from `ray.util.queue`; a threaded read
# passes `ray.get` itself as an argument.
_GET_PASSED = re.compile(r"get\s*[,)]")
_ALSO: dict[str, tuple[str | re.Pattern[str], ...]] = {
    "bind": ("remote",),
    "options": ("remote",),
    "Queue": ("util", "queue"),
    "to_thread": (_GET_PASSED,),
    "run_in_executor": (_GET_PASSED,),
}


def _called(text: str, word: str) -> bool:
    """``word(`` (or ``word (``...) as a name of its own, not the end of a longer one. A
    pattern starting with its literal is searched fast; the character before is checked by
    hand (a leading ``\\b`` makes the engine try every position)."""
    for match in re.finditer(rf"{re.escape(word)}\s*\(", text):
        start = match.start()
        if start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_"):
            return True
    return False


def makes_handles(text: str, imports: dict[str, str]) -> bool:
    """The module may make a handle from its own facts: it names a handle type, or calls a
    handle maker (or an import's name for one) and spells what that call needs. A call may
    break before its parenthesis: `f.remote (` counts."""
    for local in _entry_words(imports):
        if local not in text:
            continue
        word = local if local in HANDLE_WORDS else next(iter(_RENAMEABLE & _last([imports[local]])))
        if word not in _CALLED:
            return True  # a type's name: any spelling
        if not _called(text, local):
            continue
        also = _ALSO.get(word, ())
        if all(p in text if isinstance(p, str) else p.search(text) for p in also):
            return True
    return False


class Quiet:
    """Answers "may a handle reach this body?" from the lines that spell a way in."""

    def __init__(self, text: str, imports: dict[str, str]) -> None:
        self._text = text
        self._fixed = lines_spelling(text, _entry_words(imports))
        self._by_word: dict[str, list[int]] = {}

    def _word(self, word: str) -> list[int]:
        lines = self._by_word.get(word)
        if lines is None:
            lines = self._by_word[word] = lines_spelling(self._text, [word])
        return lines

    def reachable(self, body: ast.AST, names: Iterable[str]) -> bool:
        """True when a line of ``body`` spells a way in: a handle word, or one of ``names``
        (the module's facts and the enclosing scope's variables that hold a handle now)."""
        if spans_any(self._fixed, body):
            return True
        return any(spans_any(self._word(name), body) for name in names)
