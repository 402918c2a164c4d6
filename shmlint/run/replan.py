"""Which unchanged files' phase-2 plan changes when facts derived after an edit answer their
questions otherwise (shmlint/run/derived.py): classes' fields changed in place
(shmlint/facts/refielded.py) rate the class, what was rated from it and the return facts
naming it anew, functions changed in place (shmlint/facts/resigned.py) their return facts,
and a file that asked about one of them (``c:``, ``F:``, ``p:``, ``m:``) may now need phase
2, or no longer.

A full run keeps, beside its plan, which files asked each such question (:class:`Askers`,
under a key of the run's phase-1 keys, which the run record names). A run deriving its facts
compares the last facts' answers to those questions with the new facts' (only where the
question names a class or function rated anew), and decides again, from their phase-1 entries,
the files asking one answered otherwise — and every file edited since that full run (its
questions are not the ones kept), but those the run decides anyway (the changed files).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (the cache reads askers on a warm run's path: no analysis imported)
    from shmlint.facts.added import Growth
    from shmlint.facts.model import ProjectFacts
    from shmlint.run.passes import FirstPass

# The questions whose answers read class and return facts (ProjectFacts.answer).
ASKED = ("c:", "F:", "p:", "m:")


@dataclasses.dataclass(frozen=True, slots=True)
class Askers:
    """Which files of a full run asked each question of :data:`ASKED`: by question, the
    files' indices; with each file's phase-1 key in that run."""

    keys: list[str | None]
    asked: dict[str, list[int]]

    def to_json(self) -> dict[str, Any]:
        """JSON-able form (the cache entry)."""
        return {"keys": self.keys, "asked": self.asked}

    @classmethod
    def from_json(cls, data: Any) -> Askers | None:
        """The inverse of :meth:`to_json`; None for anything else."""
        try:
            keys = [None if key is None else str(key) for key in data["keys"]]
            asked = {str(q): [int(i) for i in found] for q, found in data["asked"].items()}
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        return cls(keys, asked)


def askers_of(firsts: Sequence[FirstPass | None], keys: Sequence[str | None]) -> Askers:
    """The askers of a full run's analysed files (``firsts``, their phase-1 ``keys``)."""
    asked: dict[str, list[int]] = {}
    for index, item in enumerate(firsts):
        if item is None or item.summary is None or item.deferred:
            continue
        for question, _ in item.questions:
            if question[:2] in ASKED:
                asked.setdefault(question, []).append(index)
    return Askers(list(keys), asked)


def answered_otherwise(
    old: ProjectFacts, new: ProjectFacts, growth: Growth, questions: Iterable[str]
) -> Iterator[str]:
    """Of ``questions``, those ``new`` (``old`` with ``growth``: classes and return facts
    rated anew, functions changed in place) answers otherwise than ``old``."""
    classes = growth.classes.keys()
    functions = {*growth.returns, *growth.names, *growth.removed}
    for question in questions:
        kind, key = question[:2], question[2:]
        if kind in ("c:", "F:"):
            named = new.canonical(key) in classes
        elif kind == "p:":
            named = new.canonical(key) in functions
        elif kind == "m:":  # (by a method's last name, among the actors' methods)
            named = any(name in functions for name in new.actor_methods.get(key, ()))
        else:
            raise ValueError(f"not a question of ASKED: {question!r}")
        if named and old.answer(question) != new.answer(question):
            yield question


def replanned(
    askers: Askers, changed: Iterable[str], keys: Sequence[str | None], analysed: Sequence[bool]
) -> set[int]:
    """The files whose plan to decide again: those that asked a question in ``changed`` in
    the full run, and every analysed file (``analysed``) whose phase-1 key (``keys``, the
    last run's) is not the one it had then."""
    stale = {
        index
        for index, key in enumerate(keys)
        if analysed[index]
        and key is not None
        and (index >= len(askers.keys) or askers.keys[index] != key)
    }
    asking = {index for question in changed for index in askers.asked.get(question, ())}
    return stale | {index for index in asking if analysed[index]}  # (a deferred one asks none)
