"""The facts after an edit that removed imports nothing looked up: the inverse of an import added
(:mod:`shmlint.facts.declared`; shmlint/run/derived.py).

An unused import deleted (by hand, or by ``ruff --fix`` earlier in the same pre-commit run)
made the merge of the whole tree run again (1.4 s on the ray wheel). What the merge does with
an import is one alias, ``module.local`` → its target; when adding the import back would be an
edit ``declare`` takes by the alias alone, the facts of the tree with it are the facts without
it plus the alias, so the facts without it are the last ones minus the alias. That holds only
if the facts without it are what ``declare`` would check against, so removal asks, of the last
facts and their index:

- nothing spelled ``module.local``, at any step of its resolution (:attr:`FactsIndex.spelled`:
  no lookup ran through the alias), and the local name is no reader's (another file's
  ``mod.<reader>`` is a call of the reader through a re-export: ``call_evidence`` builds that
  name, nothing spells it);
- no other file claims the module's name (the merge keeps the first file's binding of it);
- its target runs through no module phase 1 deferred (the merge may have read such a module
  for this import alone), but those the other names of an analysed module run through (a
  package above it, whose ``__init__.py`` defines nothing: the merge reads it whatever the
  edit), where the facts hold nothing by the target's next part (no import, no class the
  merge's closure would follow on from there). Of a deferred module the merge read, it
  follows some names only (a caller's imports, say: found by a review): none counts.

The index keeps what it held: a superset of the index of a merge, which is all it must be.
``tests/project/test_unimported.py`` compares such facts with a merge of the edited tree on
every project fixture.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from shmlint.facts.added import Growth, Runs
from shmlint.facts.closure import used_names
from shmlint.facts.model import ProjectFacts
from shmlint.facts.summary import ModuleSummary


@dataclasses.dataclass(frozen=True, slots=True)
class Unimported:
    """The imports an edit removed from a module."""

    summary: ModuleSummary  # the last summary without them (compared with the new one)
    module: str
    imports: tuple[tuple[str, str], ...]
    questions: tuple[str, ...]  # the module's (the same before and after)

    @property
    def names(self) -> tuple[str, ...]:
        """The aliases the facts lose: ``module.local`` of each import."""
        return tuple(f"{self.module}.{local}" for local, _ in self.imports)


def unimported(
    old: ModuleSummary, new: ModuleSummary, old_questions: list[str], new_questions: list[str]
) -> Unimported | None:
    """The imports ``new`` drops from ``old`` when that is all it changes of what the merge
    reads but lines (the questions the same); None otherwise (``summary`` still to be
    compared with ``new`` for lines)."""
    if old_questions != new_questions:
        return None
    removed = Counter(old.imports)
    removed.subtract(new.imports)
    if not removed or any(count < 0 for count in removed.values()):
        return None  # (nothing removed, or an import added, or a name bound otherwise)
    imports = tuple(sorted(item for item, count in removed.items() if count))
    if not imports:
        return None
    summary = dataclasses.replace(old, imports=new.imports)
    return Unimported(summary, old.module, imports, tuple(new_questions))


def unimport(facts: ProjectFacts, removals: list[Unimported], modules: Runs) -> Growth | None:
    """What ``facts`` lose when the imports of ``removals`` are gone: their aliases; None when
    the facts without them may be other than the last ones minus those."""
    index = facts.index
    if index is None:
        return None
    words = facts.reader_words()
    deferred = modules.deferred
    gone: list[str] = []
    for item in removals:
        if item.module in modules.shared:
            return None
        # (A deferred module's names: the merge follows only some of them, maybe none.)
        used = used_names(item.summary, item.questions) if item.module not in deferred else ()
        anyway = {module for name in used for module in _through(name, deferred)}
        for (local, target), name in zip(item.imports, item.names, strict=True):
            if local.encode() in words or name in index.spelled:
                return None
            parts = target.split(".")
            for module in _through(target, deferred):
                if module not in anyway:
                    return None  # (the merge may have read it for this import alone)
                cut = module.count(".") + 1
                after = ".".join(parts[: cut + 1])
                if cut < len(parts) and (after in facts.aliases or after in facts.classes):
                    return None  # (the merge's closure went on from there)
            gone.append(name)
    return Growth((), {}, frozenset(), frozenset(), unaliased=tuple(sorted(gone)))


def _through(name: str, deferred: set[str]) -> list[str]:
    """The modules phase 1 deferred that ``name``, or a module above it, is."""
    parts = name.split(".")
    found = (".".join(parts[:cut]) for cut in range(1, len(parts) + 1))
    return [module for module in found if module in deferred]
