"""Which modules the project facts need: the analysed ones, and those they reach by name.

A module no read mentions and no per-file check parsed contributes to the facts only through
names: an alias it re-exports, a class whose fields rate an annotation, a base class. Phase 1
therefore parses such a module only when a name the analysed modules use (an import, a base
class, a field annotation, a callee, a question their analysis asked) runs through it, and
then follows the names that module defines for it — so most of a large tree is never parsed
twice, or at all. The lazy-parsing tests (``tests/project/test_passes.py``) check that the
facts answer every question as the facts of every module would; ``test_closure.py``, that
following the names in waves loads what following them one by one loads.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Container, Iterable, Iterator
from typing import TYPE_CHECKING

from shmlint.basics.names import dotted_name
from shmlint.facts.summary import ModuleSummary

if TYPE_CHECKING:
    from shmlint.facts.model import ProjectFacts


@functools.lru_cache(maxsize=8192)
def leaf_names(annotation: str) -> tuple[str, ...]:
    """The dotted names an annotation's text spells (strings in it parsed too). Cached: the
    same few spellings come back for thousands of fields."""
    try:
        node = ast.parse(annotation, mode="eval").body
    except SyntaxError:
        return ()
    names: list[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Name, ast.Attribute)):
            dotted = dotted_name(sub)
            if dotted is not None:
                names.append(dotted)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            names += leaf_names(sub.value)
    return tuple(names)


def _qualify(summary: ModuleSummary, imports: dict[str, str], dotted: str) -> str:
    head, _, rest = dotted.partition(".")
    target = imports.get(head)
    if target is not None:
        return f"{target}.{rest}" if rest else target
    return f"{summary.module}.{dotted}"


def class_names(summary: ModuleSummary, short: str) -> list[str]:
    """The names class ``short`` of ``summary`` uses: its bases and its fields' annotation
    names, qualified as the closure follows them."""
    return list(_class_names(summary, dict(summary.imports), short))


def _class_names(summary: ModuleSummary, imports: dict[str, str], short: str) -> Iterator[str]:
    """The names a class of ``summary`` uses: its bases and its fields' annotation names."""
    for info in summary.classes:
        if info.name != f"{summary.module}.{short}":
            continue
        yield from info.bases
        for field in info.fields:
            for dotted in leaf_names(field.annotation):
                yield _qualify(summary, imports, dotted)


def used_names(summary: ModuleSummary, questions: Iterable[str] = ()) -> set[str]:
    """Every name an analysed module may look up in the facts."""
    imports = dict(summary.imports)
    names = set(imports.values()) | set(summary.actors)
    for info in summary.classes:
        names |= set(_class_names(summary, imports, info.name.rpartition(".")[2]))
    for flow in summary.flows:
        names |= {slot.partition(":")[2] for slot in (flow.target, *flow.origins)}
    for call in summary.calls:
        names.add(call.callee)
        names |= {slot.partition(":")[2] for slot in call.origins}
    for read in summary.reads:
        names |= {slot.partition(":")[2] for slot in read.origins}
    return names | question_names(questions)


def question_names(questions: Iterable[str]) -> set[str]:
    """The names phase 1's questions look up."""
    names: set[str] = set()
    for question in questions:
        kind, _, key = question.partition(":")
        if kind == "k":  # a slot: "param:M.f.p", "attr:M.C.a", "ret:M.f"
            key = key.partition(":")[2]
        names.add(key.partition("|")[0])  # "a:M.C|attr" names the class
    return names


# A name followed through an import never gets longer than this. A package importing a class
# named as its own submodule (`from pkg.sub import sub` in pkg/__init__.py, vLLM's
# `mixed_precision.MPLinearKernel`) rewrites `pkg.sub.x` to `pkg.sub.sub.x`, which runs
# through the package again: without a bound, a name longer each time until memory ran out.
MOST_PARTS = 32

# The questions that name a class (ProjectFacts.answer): an installed package's class they
# name is rated into the facts by the merge. ``n:`` names one too (ProjectView.names_only).
_CLASS_QUESTIONS = ("c:", "F:", "n:")


def asked_classes(questions: Iterable[str]) -> set[str]:
    """The class names phase 1's questions name."""
    return {q[2:] for q in questions if q[:2] in _CLASS_QUESTIONS}


def _deferred_prefixes(
    parts: list[str], deferred: Container[str], above: Container[str]
) -> list[tuple[int, str]]:
    """The deferred modules a dotted name runs through: (how many parts, module name).
    ``above``: every deferred module's name and the names of the packages above it (a name
    past none of them runs through no deferred module: most names stop at their first
    part or two)."""
    found = []
    module = ""
    for cut, part in enumerate(parts, 1):
        module = f"{module}.{part}" if module else part
        if module not in above:
            break
        if module in deferred:
            found.append((cut, module))
    return found


def _above(modules: Iterable[str]) -> set[str]:
    """The names ``module`` and every package above it, of each of ``modules``."""
    found: set[str] = set()
    for module in modules:
        while module and module not in found:
            found.add(module)
            module = module.rpartition(".")[0]
    return found


def close(
    names: Iterable[str],
    deferred: dict[str, Callable[[], list[ModuleSummary]]],
    prefetch: Callable[[set[str]], None] | None = None,
) -> list[ModuleSummary]:
    """Load every deferred module the names run through, following what each defines for
    them (re-exported aliases, classes' bases and field types); returns the loaded ones.

    ``prefetch``: loads a set of modules at once (the runner parses them in its worker pool).
    Given it, the names are followed in waves: a name that runs through a module not loaded
    yet waits, and the modules the waiting names need are prefetched together — the same
    names followed, so the same modules loaded, as one by one."""
    defined: dict[str, list[_Defined]] = {}  # the modules loaded, each file's definitions
    above = _above(deferred)
    todo = list(names)
    seen: set[str] = set()
    waiting: list[str] = []
    wanted: set[str] = set()
    fetched: set[str] = set()
    while todo or waiting:
        if not todo:
            assert prefetch is not None
            prefetch(wanted)
            fetched |= wanted
            wanted = set()
            todo, waiting = waiting, []
        name = todo.pop()
        if name in seen:
            continue
        parts = name.split(".")
        through = _deferred_prefixes(parts, deferred, above)
        if prefetch is not None and through:
            missing = {
                module for _, module in through if module not in defined and module not in fetched
            }
            if missing:
                wanted |= missing
                waiting.append(name)
                continue
        seen.add(name)
        for cut, module in through:
            if module not in defined:
                defined[module] = [_Defined(summary) for summary in deferred[module]()]
            if cut == len(parts):
                continue
            head, tail = parts[cut], parts[cut + 1 :]
            for definitions in defined[module]:  # several files may claim one module name
                target = definitions.imports.get(head)
                if target is not None:
                    followed = ".".join([target, *tail])
                    if followed.count(".") < MOST_PARTS:
                        todo.append(followed)
                todo.extend(definitions.class_names(head))
    return [definitions.summary for files in defined.values() for definitions in files]


class _Defined:
    """What a loaded module defines for the names run through it: its imports by local name,
    and the names each of its classes uses (found once per class name asked)."""

    __slots__ = ("summary", "imports", "_used")

    def __init__(self, summary: ModuleSummary) -> None:
        self.summary = summary
        self.imports = dict(summary.imports)
        self._used: dict[str, tuple[str, ...]] = {}

    def class_names(self, short: str) -> tuple[str, ...]:
        """The names class ``short`` of the module uses (:func:`_class_names`)."""
        used = self._used.get(short)
        if used is None:
            used = self._used[short] = tuple(_class_names(self.summary, self.imports, short))
        return used


def reaches_unread(
    names: Iterable[str], facts: ProjectFacts, deferred: set[str], shared: set[str]
) -> bool:
    """Whether following ``names`` as the merge's closure does (:func:`close`: through the
    deferred modules, by what each imports for the next part) reaches a deferred module the
    closure did not read (``FactsIndex.reached``: the facts may hold it, read for a module
    spelling a caller's name, but a closure reading it too finds the callers' names in more
    aliases), or a class of a deferred module (whose bases and fields it would follow:
    refused without reading them), or a module several files claim (``shared``)."""
    return deferred_through(names, facts, deferred, shared) is None


def deferred_through(
    names: Iterable[str],
    facts: ProjectFacts,
    deferred: set[str],
    shared: set[str],
    own: ModuleSummary | None = None,
) -> set[str] | None:
    """The deferred modules following ``names`` as the merge's closure does runs through (as
    :func:`reaches_unread` follows them), a name ending at one included; None when that
    reaches a module the closure did not read, a class of a deferred module, or a module
    several files claim (``shared``: the closure follows each deferred file's imports, the
    facts keep one file's aliases). ``own``: a module whose imports and classes are followed
    as it has them (its classes' bases and fields too), left out of the result, and, when it
    is a deferred module the closure read, the packages on the way to it too (a name reached
    it through them; an analysed module is merged whatever the closure reads)."""
    read = facts.index.reached if facts.index is not None else None
    imports = dict(own.imports) if own is not None else {}
    # (A deferred module the closure read: the packages on the way to it are its.)
    way = own.module.split(".") if own is not None and read and own.module in read else None
    found: set[str] = set()
    todo = list(names)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        for cut in range(1, len(parts) + 1):
            module = ".".join(parts[:cut])
            if module not in deferred:
                continue
            if read is None or module not in read or module in shared:
                return None  # (the closure would read it, or follow what the facts lack)
            if cut == len(parts):
                if way is None or way[:cut] != parts:
                    found.add(module)  # (the closure reads the module a name ends at)
                continue
            head, tail = parts[cut], parts[cut + 1 :]
            if own is not None and module == own.module:
                target = imports.get(head)
                if target is not None:
                    todo.append(".".join([target, *tail]))
                todo += class_names(own, head)
                continue
            if way is None or way[: cut + 1] != parts[: cut + 1]:
                found.add(module)  # (else a package above it, which a name reached it through)
            if f"{module}.{head}" in facts.classes:
                return None
            target = facts.aliases.get(f"{module}.{head}")
            if target is not None:
                followed = ".".join([target, *tail])
                if followed.count(".") < MOST_PARTS:  # (as the closure bounds it)
                    todo.append(followed)
    return found


def still_reached(
    dropped: Iterable[str],
    kept: Iterable[str],
    facts: ProjectFacts,
    deferred: set[str],
    shared: set[str],
    versions: tuple[ModuleSummary, ModuleSummary] | None = None,
) -> bool:
    """Whether the merge's closure, following ``kept`` (names an edited module still uses),
    runs through every deferred module it ran ``dropped`` (names only its last version used)
    through: then it reads each of them without those names (a package above the module,
    which its own names run through). False when that cannot be told (a name reaching a
    module the closure did not read, a class of a deferred module, a module several files
    claim). ``versions``: the edited module's last and new summaries, followed as ``own``
    (``deferred_through``) for the dropped and the kept names."""
    last, now = versions if versions is not None else (None, None)
    gone = deferred_through(dropped, facts, deferred, shared, last)
    if gone is None:
        return False
    if not gone:
        return True
    stay = deferred_through(kept, facts, deferred, shared, now)
    return stay is not None and gone <= stay
