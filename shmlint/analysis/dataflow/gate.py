"""Which bodies can make a read at all: the others are never analysed (reporting pass).

A finding needs a label, and labels are only made at reads: ``ray.get`` (or an alias of it),
``<ref>.get()``, ``await <future>``, ``<future>.result()``, a Ray queue's ``get*``, configured
sources. A function or class whose lines hold
none of these cannot report anything, so the reporting pass skips it (and its Scope). The check
is textual, on the lines a body spans, so it costs no tree walk; it may keep too much (a
``get(`` in a string), never too little. The facts pre-pass does not use the gate: handles
flow through any code.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re

from shmlint.basics import catalog
from shmlint.basics.options import Options

# No leading \b: a literal first character lets the regex engine scan fast. Matching inside a
# longer word (`budget(`) only keeps a body that did not need keeping.
_ALIAS = re.compile(r"get\s+as\s+(\w+)")
# Other calls that read (a ref's future's `.result()`, a Ray queue's `get_nowait*`).
_READ_METHODS = catalog.FUTURE_RESULT_METHODS | catalog.QUEUE_READ_METHODS


_AWAIT = re.compile(r"await\b")


@functools.lru_cache(maxsize=256)
def _call_of(name: str) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(name)}\s*\(")


class Gate:
    """Answers "may this body make a read?" from the lines that spell one."""

    def __init__(self, text: str, options: Options, extra: frozenset[str] = frozenset()) -> None:
        # `extra`: functions of the project that return a read (their calls are reads too).
        names = {"get", *extra, *(n.rpartition(".")[2] for n in options.extend_sources)}
        names |= _READ_METHODS
        names |= set(_ALIAS.findall(text))
        # One pattern per name, each starting with its literal: the engine scans for a
        # literal fast, where one alternation of all names tries every position (3x slower).
        # A name the text does not hold cannot start a match: a substring test (C memmem)
        # skips its scan (phase 2 passes every reader of the project, hundreds on Ray's tree).
        present = [name for name in names if name in text]
        starts = [
            match.start()
            for pattern in [_AWAIT, *map(_call_of, present)]
            for match in pattern.finditer(text)
        ]
        self._lines = lines_at(text, starts)

    def may_read(self, node: ast.AST) -> bool:
        """True when a line of ``node`` (decorators included) may spell a read."""
        return spans_any(self._lines, node)


def lines_at(text: str, starts: list[int]) -> list[int]:
    """The sorted numbers of the lines holding these offsets of ``text`` (each once)."""
    lines: list[int] = []
    line, position = 1, 0
    for start in sorted(starts):
        line += text.count("\n", position, start)
        position = start
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def spans_any(lines: list[int], node: ast.AST) -> bool:
    """True when one of the sorted ``lines`` lies within ``node`` (decorators included)."""
    first = min(
        [getattr(node, "lineno", 1)] + [d.lineno for d in getattr(node, "decorator_list", ())]
    )
    last = getattr(node, "end_lineno", None) or first
    index = bisect.bisect_left(lines, first)
    return index < len(lines) and lines[index] <= last
