"""What the merge and the plan looked up that the facts do not hold: kept beside the facts (not
in their digest), so that an edit adding functions, imports or classes can tell whether anything
reached their names before (shmlint/facts/added.py, shmlint/facts/declared.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable


@dataclasses.dataclass(frozen=True, slots=True)
class FactsIndex:
    """What the merge and the plan looked up that the facts do not hold."""

    # The canonical names phase-1 questions asked whether they are project functions and
    # what they return (``x:``, ``p:``), of every file.
    asked: frozenset[str]
    # The canonical callees of calls whose arguments the merge placed in no parameter.
    unresolved: frozenset[str]
    # The names the merged modules and the questions spell, each step of their resolution, as
    # far as one part past a project module (shmlint/facts/spelled.py).
    spelled: frozenset[str] = frozenset()
    # The classes whose facts depend on the order the merge rated them in (a reference cycle
    # among them or what they read: ``ClassResolver.cyclic``).
    cyclic: frozenset[str] = frozenset()
    # The project functions and classes a call passed a handle in no parameter of theirs (a
    # keyword they lack, one positional argument too many): another signature may place it
    # (shmlint/facts/resigned.py).
    unplaced: frozenset[str] = frozenset()

    def to_json(self) -> dict[str, list[str]]:
        """JSON-able form (the facts' cache entry)."""
        return {
            "asked": sorted(self.asked),
            "unresolved": sorted(self.unresolved),
            "spelled": sorted(self.spelled),
            "cyclic": sorted(self.cyclic),
            "unplaced": sorted(self.unplaced),
        }

    @classmethod
    def from_json(cls, data: dict[str, list[str]]) -> FactsIndex:
        """The inverse of :meth:`to_json`; raises ``KeyError``/``TypeError``."""
        return cls(
            frozenset(map(str, data["asked"])),
            frozenset(map(str, data["unresolved"])),
            frozenset(map(str, data["spelled"])),
            frozenset(map(str, data["cyclic"])),
            frozenset(map(str, data["unplaced"])),
        )

    def grown(
        self, asked: Iterable[str], unresolved: Iterable[str], spelled: Iterable[str] = ()
    ) -> FactsIndex:
        """This index with more names (a file's new questions, its new calls, the names its
        additions spell)."""
        return FactsIndex(
            self.asked | frozenset(asked),
            self.unresolved | frozenset(unresolved),
            self.spelled | frozenset(spelled),
            self.cyclic,
            self.unplaced,
        )
