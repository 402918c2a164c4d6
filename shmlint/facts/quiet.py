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
- no read, nor a name that may return one in the sense of ``flow.caller_words``, which
  picked the deferred modules the last full run merged (those spelling such a name): a step
  of its name (the last facts' alias chain, as ``caller_words`` and ``propagate_reads``
  follow it) that is a module-level function of the project must not have its last name
  among the words the last full run looked for (``callers``), else these functions would
  join those names and a full run would merge other modules. A method or a nested function
  of the project is refused: the words leave out methods of the project's classes. (Every
  function the merge finds returning a read is among those ``caller_words`` found: only
  analysed modules have reads and flows.) A name outside the project's modules is spelled by
  no summary, and is none of them. The steps are the full run's: a name the bodies use is
  followed by its closure, which then reads every file of each module it runs through.
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
    callers: frozenset[str],
) -> bool:
    """Whether the origins of ``flows`` and ``calls`` that are no slot of the functions
    ``names`` (their parameters, their results) give the merge nothing (the module
    docstring); ``callers``: the words the last full run's merge looked for."""
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


def _may_return_read(name: str, facts: ProjectFacts, callers: frozenset[str]) -> bool:
    """Whether a step of ``name`` returns a read, or may in ``flow.caller_words``' sense."""
    points = {*facts.steps(name), facts.canonical(name)}
    step = name
    for _ in range(ALIAS_DEPTH):
        following = realias(facts.aliases, step)
        if following is None:
            break
        step = following
        points.add(step)
    for point in points:
        module = _module_of(point, facts)
        if module is None:
            continue  # (no summary spells a name outside the project's modules)
        owner, _, last = point.rpartition(".")
        if owner != module or last in callers:
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
