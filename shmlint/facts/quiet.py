"""Whether what functions' bodies take from elsewhere gives the merge nothing to pass on: asked
by every derivation that adds, removes or changes functions (shmlint/facts/added.py,
removed.py, resigned.py, declared.py).

A helper's body takes values from other slots: ``return helper(os.environ.get(name))`` passes
``ret:os.environ.get`` to ``helper``'s first parameter and flows ``ret:mod.helper`` into
``ret:mod.added``. The merge gives a flow's target (a call's parameter) what its origins hold,
and nothing else (these functions' own slots are read by no other flow: nothing looked their
names up). So the last facts, knowing
the names, are the merge's when every origin that is not one of the functions' own slots
holds

- no handle kind (``ProjectFacts.kinds``, at the last fixpoint: the functions' slots get
  none, and a call of theirs places none in its callee's parameters);
- no read: no step of its name (the last facts' alias chain, as ``flow.propagate_reads``
  follows it) is a function returning one (``returned_reads``);
- no name that may return one in the sense of ``flow.caller_words``, which picked the
  deferred modules the last full run merged (those spelling such a name): a step that is a
  module-level function of the project must not have its last name among the words that
  merge looked for (``FactsIndex.callers``), else these functions would join those names and
  a full run would merge other modules. A method or a nested function of the project is
  refused (the words leave out methods of the project's classes), as is a step whose owner
  is a class, whatever module shares its name. A name outside the project's modules is
  spelled by no summary, and is none of them. The words are computed with fewer aliases than
  the facts hold (not those of the modules read for spelling one), so a step the facts
  resolve further is checked as a step of the facts' chain: every step of ``caller_words``'
  chain is one of it. What the bodies' names make the closure read is another's to check
  (``closure.deferred_through``: only modules it read already, so the words stay).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from shmlint.facts.model import ALIAS_DEPTH, ProjectFacts, realias
from shmlint.facts.summary import CallFlow, Flow


def takes_nothing(
    names: Iterable[str],
    flows: Iterable[Flow],
    calls: Iterable[CallFlow],
    facts: ProjectFacts,
) -> bool:
    """Whether the origins of ``flows`` and ``calls`` that are no slot of the functions
    ``names`` (their parameters, their results) give the merge nothing (the module
    docstring)."""
    # (Not known: every step that is a project name may return a read.)
    callers = facts.index.callers if facts.index is not None else None
    own = owns(names)
    origins = {origin for flow in flows for origin in flow.origins}
    origins.update(origin for call in calls for origin in call.origins)
    for origin in sorted(origins):
        if own(origin):
            continue
        if facts.kinds(origin):
            return False
        if origin.startswith("ret:") and _may_return_read(origin[4:], facts, callers):
            return False
    return True


def owns(names: Iterable[str]) -> Callable[[str], bool]:
    """Whether a slot is one of the functions ``names``' own: a parameter, the result."""
    results = {f"ret:{name}" for name in names}
    params = tuple(f"param:{name}." for name in names)
    return lambda slot: slot in results or slot.startswith(params)


def _may_return_read(name: str, facts: ProjectFacts, callers: frozenset[str] | None) -> bool:
    """Whether a step of ``name`` returns a read, or may in ``flow.caller_words``' sense."""
    # (Every step ``canonical`` takes, and the chain past a function or a class it stops at.)
    points = {name}
    step = name
    for _ in range(ALIAS_DEPTH):
        following = realias(facts.aliases, step)
        if following is None:
            break
        step = following
        points.add(step)
    for point in points:
        if point in facts.returned_reads:
            return True
        module = _module_of(point, facts)
        if module is None:
            continue  # (no summary spells a name outside the project's modules)
        owner, _, last = point.rpartition(".")
        if owner != module or owner in facts.classes or callers is None or last in callers:
            return True
    return False


def _module_of(name: str, facts: ProjectFacts) -> str | None:
    """The longest module of the facts that ``name`` lies in, or None."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        head = ".".join(parts[:cut])
        if head in facts.modules:
            return head
    return None
