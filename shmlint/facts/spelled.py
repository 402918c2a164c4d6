"""The names the merge and phase 1's questions look up, as far as they run through the
project's modules: kept in the facts' index, so that an edit adding a name to a module (an
import, a class: shmlint/facts/declared.py) can tell whether anything could have reached it.

Every lookup of a name in the facts starts from a name some module spells: its imports, its
classes' bases and fields, its functions' return annotations, its flows, calls and reads (what
the merge resolves), and the questions phase 1 asked (what the plan and phase 2 compare).
``ProjectFacts.canonical`` follows each through the aliases, one step at a time. A name
``module.x`` added to the facts changes a lookup only if one of these steps is ``module.x`` or
runs through it (``module.x.y``), so the index keeps, of every step of every spelled name,
each prefix one part past a project module: a few pairs per name, a set the new name is
looked up in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from shmlint.facts.closure import leaf_names, used_names
from shmlint.facts.evidence import fresh_returns
from shmlint.facts.model import ProjectFacts
from shmlint.facts.summary import ModuleSummary


def spelled_names(summary: ModuleSummary) -> Iterator[str]:
    """The names a module spells that the merge looks up: what the closure follows
    (:func:`shmlint.facts.closure.used_names`), its classes' field annotations and bases and its
    functions' return annotations (:func:`annotation_names`)."""
    yield from used_names(summary)
    written = [f.annotation for c in summary.classes for f in c.fields]
    written += [base for c in summary.classes for base in c.bases]  # (resolved there too)
    yield from annotation_names(summary, [*written, *(f.returns for f in summary.functions)])


def annotation_names(summary: ModuleSummary, annotations: Iterable[str]) -> Iterator[str]:
    """The dotted names ``annotations`` of ``summary``'s module spell, as they are written (the
    class resolver tries them so when the module neither imports nor defines them), qualified
    as the closure qualifies fields, and in the module whether it imports their first part or
    not (its import of it removed, they would be: shmlint/facts/unimported.py)."""
    imports = dict(summary.imports)
    for spelled in set(annotations):  # (a module's fifty `-> None`, spelled once)
        _, annotation = fresh_returns(spelled)
        if not annotation or annotation[0] == "$":  # ("": none; "$input": passes one on)
            continue
        for dotted in leaf_names(annotation):
            yield dotted
            yield f"{summary.module}.{dotted}"
            head, _, rest = dotted.partition(".")
            target = imports.get(head)
            if target is not None:
                yield f"{target}.{rest}" if rest else target


def spelled(names: Iterable[str], facts: ProjectFacts) -> frozenset[str]:
    """Of every step ``facts.canonical`` takes from each of ``names``, each prefix that is
    one part past a module of ``facts`` (``pkg.mod.x`` of ``pkg.mod.x.y``)."""
    pairs = _Pairs(facts)
    for name in set(names):
        if pairs.aliased(name):  # (a prefix is an alias: the next steps are spelled too)
            for step in facts.steps(name)[1:]:
                pairs.aliased(step)
    return frozenset(pairs.found)


class _Pairs:
    """The pairs of names, each name's found through its parent's (names share parents:
    ``M.f.a``, ``M.f.b``), memoised."""

    def __init__(self, facts: ProjectFacts) -> None:
        self.modules, self.aliases = facts.modules, facts.aliases
        self.found: set[str] = set()
        self.known: dict[str, bool] = {}

    def aliased(self, name: str) -> bool:
        """Add ``name``'s pairs; whether it or a prefix of it is an alias."""
        known = self.known.get(name)
        if known is not None:
            return known
        parent, dot, _ = name.rpartition(".")
        aliased = name in self.aliases
        if dot:
            aliased = self.aliased(parent) or aliased
            if parent in self.modules:
                self.found.add(name)
        self.known[name] = aliased
        return aliased
