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
from collections.abc import Iterable

from shmlint.basics import catalog
from shmlint.basics.astwalk import statements
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


def recording_gate(
    text: str, options: Options, tree: ast.Module, extra: frozenset[str] = frozenset()
) -> Gate:
    """Phase 1's gate (``extra`` as for :class:`Gate`): also the bodies that call a
    module-level function whose body the gate keeps, to a fixpoint. On its own the module
    knows no reader, so without them a wrapper of the module's reader
    (``def first(refs): return fetch(refs[0])``) records no returned read, and is no reader
    project-wide. (Methods too would cost phase 1 ~17 % on the ray wheel: their names are
    common words; module-level functions ~3 %.)"""
    defined = [
        node
        for node in statements(tree.body, into_scopes=False)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    names = extra
    gate = Gate(text, options, names)
    while True:
        kept = names | {node.name for node in defined if gate.may_read(node)}
        if kept == names:
            return gate
        names = kept
        gate = Gate(text, options, names)


class DirectGate(Gate):
    """The gate of a module where nothing can hold a handle (a per-file run of a module that
    makes none: no `.remote(`, compiled graph, ref annotation, Ray queue or threaded read,
    shmlint.analysis.dataflow.quiet.makes_handles): there only `ray.get` itself and the
    configured sources read, so a body must spell a call of one. ``ray.get`` is spelled
    ``<module>.get(`` with a name the module binds to a module it is reached through (or
    ``ray`` itself, which unbound resolves to Ray), or as a call of a name bound to it."""

    def __init__(self, text: str, options: Options, tree: ast.Module) -> None:
        modules, functions = _ray_names(tree)
        calls = {*functions, *(n.rpartition(".")[2] for n in options.extend_sources)}
        present = [name for name in calls if name in text]
        starts = [m.start() for name in present for m in _call_of(name).finditer(text)]
        self._lines = lines_at(text, starts)  # a read on its own
        self._get_lines = lines_at(text, [m.start() for m in _call_of("get").finditer(text)])
        self._module_lines = lines_spelling(text, modules)

    def may_read(self, node: ast.AST) -> bool:
        if spans_any(self._lines, node):
            return True
        return spans_any(self._get_lines, node) and spans_any(self._module_lines, node)


# The modules through which `ray.get` is reached by attribute (`ray`, `ray.worker`...).
_GET_MODULES = frozenset(
    name.rsplit(".", cut)[0] for name in catalog.RAY_GET for cut in range(1, name.count(".") + 1)
)


def _ray_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names the module's imports bind to a module `ray.get` is reached through (and
    ``ray``, which unbound resolves to Ray), and those bound to `ray.get` itself, as
    shmlint.basics.names resolves imports (in any scope of the module)."""
    modules, functions = {"ray"}, set()
    for node in statements(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.name if alias.asname else alias.name.split(".")[0]
                if bound in _GET_MODULES:
                    modules.add(alias.asname or bound)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "ray":  # names.py: the Ray module, whatever it comes from
                    modules.add(alias.asname or "ray")
                elif node.level == 0:
                    qualified = f"{node.module}.{alias.name}"
                    if qualified in _GET_MODULES:
                        modules.add(alias.asname or alias.name)
                    elif qualified in catalog.RAY_GET:
                        functions.add(alias.asname or alias.name)
    return modules, functions


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


def lines_spelling(text: str, words: Iterable[str]) -> list[int]:
    """The sorted numbers of the lines that spell any of ``words`` (as substrings)."""
    starts: list[int] = []
    for word in words:
        start = text.find(word) if word else -1
        while start != -1:
            starts.append(start)
            start = text.find(word, start + len(word))
    return lines_at(text, starts)


def spans_any(lines: list[int], node: ast.AST) -> bool:
    """True when one of the sorted ``lines`` lies within ``node`` (decorators included)."""
    first = min(
        [getattr(node, "lineno", 1)] + [d.lineno for d in getattr(node, "decorator_list", ())]
    )
    last = getattr(node, "end_lineno", None) or first
    index = bisect.bisect_left(lines, first)
    return index < len(lines) and lines[index] <= last
