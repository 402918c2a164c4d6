"""What the merge and the plan looked up that the facts do not hold: kept beside the facts (not
in their digest), so that an edit adding functions, imports or classes can tell whether anything
reached their names before (shmlint/facts/added.py, shmlint/facts/declared.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Container, Iterable, Mapping
from typing import Any


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
    # What each class's rating was read for: the classes (by name) and the return facts
    # (``ret:`` and the function's name) rated from it, of every class the facts hold
    # (``ClassResolver.read_by``; shmlint/facts/refielded.py rates them anew).
    read_by: dict[str, frozenset[str]] = dataclasses.field(default_factory=dict)
    # The words the merge looked for (``flow.caller_words``: the last names of the functions
    # that may return a read, over the analysed modules and those the closure read), and the
    # deferred modules the closure read (its first one: not those read for the modules
    # spelling a word): what bodies added may take, or reach (shmlint/facts/quiet.py,
    # ``closure.deferred_through``). None: not known (every derivation asking refuses).
    callers: frozenset[str] | None = None
    reached: frozenset[str] | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-able form (the facts' cache entry)."""
        return {
            "asked": sorted(self.asked),
            "unresolved": sorted(self.unresolved),
            "spelled": sorted(self.spelled),
            "cyclic": sorted(self.cyclic),
            "unplaced": sorted(self.unplaced),
            "read_by": encode_read_by(self.read_by),
            "callers": None if self.callers is None else sorted(self.callers),
            "reached": None if self.reached is None else sorted(self.reached),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FactsIndex:
        """The inverse of :meth:`to_json`; raises ``KeyError``/``TypeError``."""
        return cls(
            frozenset(map(str, data["asked"])),
            frozenset(map(str, data["unresolved"])),
            frozenset(map(str, data["spelled"])),
            frozenset(map(str, data["cyclic"])),
            frozenset(map(str, data["unplaced"])),
            decode_read_by(data["read_by"]),
            _names(data.get("callers")),
            _names(data.get("reached")),
        )

    def grown(
        self,
        asked: Iterable[str],
        unresolved: Iterable[str],
        spelled: Iterable[str] = (),
        read_by: Mapping[str, Iterable[str]] | None = None,
    ) -> FactsIndex:
        """This index with more names (a file's new questions, its new calls, the names its
        additions spell, what their ratings read)."""
        return FactsIndex(
            self.asked | frozenset(asked),
            self.unresolved | frozenset(unresolved),
            self.spelled | frozenset(spelled),
            self.cyclic,
            self.unplaced,
            joined(self.read_by, read_by) if read_by else self.read_by,
            self.callers,
            self.reached,
        )


def _names(data: Any) -> frozenset[str] | None:
    return None if data is None else frozenset(map(str, data))


def kept_reads(
    read_by: Mapping[str, Iterable[str]], classes: Container[str]
) -> dict[str, frozenset[str]]:
    """What the index keeps of ``ClassResolver.read_by``: the readers of ``classes`` (those
    the facts hold; a name that is no class is read by many: ``int``, ``Optional``)."""
    return {name: frozenset(readers) for name, readers in read_by.items() if name in classes}


def joined(
    read_by: Mapping[str, frozenset[str]], more: Mapping[str, Iterable[str]]
) -> dict[str, frozenset[str]]:
    """``read_by`` with the readers ``more`` adds to each class."""
    result = dict(read_by)
    for name, readers in more.items():
        result[name] = result.get(name, frozenset()) | frozenset(readers)
    return result


def encode_read_by(read_by: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """``read_by`` as JSON (sorted)."""
    return {name: sorted(readers) for name, readers in sorted(read_by.items())}


def decode_read_by(data: dict[str, list[str]]) -> dict[str, frozenset[str]]:
    """The inverse of :func:`encode_read_by`; raises ``TypeError``/``AttributeError``."""
    return {str(name): frozenset(map(str, readers)) for name, readers in data.items()}
