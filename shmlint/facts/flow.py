"""Propagation over the recorded flows: handle kinds into every slot (a fixpoint), and the
functions that return reads (with the chain of calls)."""

from __future__ import annotations

from shmlint.basics.types import SourceKind
from shmlint.facts.kinds import REF
from shmlint.facts.model import ALIAS_DEPTH, ProjectFacts, realias
from shmlint.facts.records import ReadChain
from shmlint.facts.summary import ModuleSummary

_MAX_ROUNDS = 50


def _parameter_slot(
    facts: ProjectFacts,
    params_of: dict[str, tuple[str, ...]],
    callee: str,
    arg: str,
    bound: bool,
) -> str | None:
    """The slot an argument of a call to ``callee`` lands in (None when unknown)."""
    callee = facts.canonical(callee)
    fact = facts.classes.get(callee)
    if fact is not None:
        init = f"{callee}.__init__"
        if init in facts.functions:
            callee, bound = init, True
        else:
            names = [f.name for f in fact.fields]
            name = names[int(arg)] if arg.isdigit() and int(arg) < len(names) else arg
            return f"attr:{fact.name}.{name}" if name in names else None
    params = params_of.get(callee)
    if params is None:
        return None
    if arg.isdigit():
        index = int(arg) + (1 if bound else 0)
        return f"param:{callee}.{params[index]}" if index < len(params) else None
    return f"param:{callee}.{arg}" if arg in params else None


def propagate_kinds(
    summaries: list[ModuleSummary], facts: ProjectFacts
) -> tuple[frozenset[str], frozenset[str]]:
    """Kinds into every slot; returns the canonical callees of calls that land nowhere: those
    of no project function or class of that name, and the project functions and classes
    passed a handle (a kind, or an origin holding one) in no parameter of theirs
    (``shmlint.facts.index.FactsIndex``: ``unresolved``, ``unplaced``)."""
    params_of = {f.name: f.params for s in summaries for f in s.functions}
    edges: list[tuple[str, frozenset[str], tuple[str, ...]]] = []
    unresolved: set[str] = set()
    misplaced: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []
    for summary in summaries:
        for flow in summary.flows:
            edges.append((flow.target, frozenset(flow.kinds), flow.origins))
        for call in summary.calls:
            slot = _parameter_slot(facts, params_of, call.callee, call.arg, call.bound)
            if slot is not None:
                edges.append((slot, frozenset(call.kinds), call.origins))
                continue
            callee = facts.canonical(call.callee)
            if callee not in params_of and callee not in facts.classes:
                unresolved.add(callee)
            else:
                misplaced.append((callee, call.kinds, call.origins))
    # The least fixpoint, by a worklist: an edge is evaluated again only when one of its
    # origins grew (most edges carry only origins that never get a kind). What an origin
    # holds is looked up by its canonical slot, as ``facts.kinds`` does.
    kinds = facts.slot_kinds
    readers: dict[str, list[int]] = {}
    sources: list[tuple[str, ...]] = []
    for index, (_, _, origins) in enumerate(edges):
        canonical = tuple(_canonical_slot(facts, origin) for origin in origins)
        sources.append(canonical)
        for origin in canonical:
            readers.setdefault(origin, []).append(index)
    todo = [index for index, (_, own, _) in enumerate(edges) if own]
    todo.reverse()
    while todo:
        index = todo.pop()
        target, own, _ = edges[index]
        new = set(own)
        for origin in sources[index]:
            new |= kinds.get(origin, frozenset())
        old = kinds.get(target, frozenset())
        if not new <= old:
            kinds[target] = old | new
            todo.extend(reversed(readers.get(target, ())))  # the edges that read this key
    unplaced = {
        callee
        for callee, own, origins in misplaced
        if own or any(kinds.get(_canonical_slot(facts, origin)) for origin in origins)
    }
    return frozenset(unresolved), frozenset(unplaced)


def _canonical_slot(facts: ProjectFacts, slot: str) -> str:
    """The key ``facts.kinds`` looks a slot up by (``ret:`` names canonicalised)."""
    return "ret:" + facts.canonical(slot[4:]) if slot.startswith("ret:") else slot


def propagate_reads(summaries: list[ModuleSummary], facts: ProjectFacts) -> None:
    reads = facts.returned_reads
    for summary in summaries:
        for read in summary.reads:
            ref = any(REF in facts.kinds(origin) for origin in read.origins)
            if read.needs_ref and not ref:
                continue
            kind = SourceKind.CHANNEL if ref else SourceKind(read.kind)
            old = reads.get(read.function)
            if old is None or (kind is SourceKind.CHANNEL and old.kind is not kind):
                reads[read.function] = ReadChain(kind, summary.path, read.line, ())
    returns = [
        (flow.target[4:], flow.origins)
        for summary in summaries
        for flow in summary.flows
        if flow.target.startswith("ret:")
    ]
    for _ in range(_MAX_ROUNDS):
        changed = False
        for function, origins in returns:
            if function in reads:
                continue
            for origin in origins:
                if not origin.startswith("ret:"):
                    continue
                inner = reads.get(facts.canonical(origin[4:]))
                if inner is not None:
                    via = (facts.canonical(origin[4:]), *inner.via)
                    reads[function] = ReadChain(inner.kind, inner.path, inner.line, via)
                    changed = True
                    break
        if not changed:
            break


def caller_words(summaries: list[ModuleSummary]) -> frozenset[bytes]:
    """The last names of the module-level functions that may return a read in the merge of
    ``summaries``: a superset of its readers' names (``ProjectFacts.reader_words``), found
    without merging. Every read counts (whether its argument must be a ref or not), and a
    returned call counts when any name on its callee's chain of re-exports (each step
    ``ProjectFacts.canonical`` may take through these summaries' imports) returns a read; a
    method counts unless its owner is a class of these summaries. So the deferred modules
    spelling one include every module a first merge would find calling a reader."""
    aliases: dict[str, str] = {}
    classes: set[str] = set()
    for summary in summaries:
        for local, target in summary.imports:
            aliases.setdefault(f"{summary.module}.{local}", target)
        classes.update(c.name for c in summary.classes)

    def chain(name: str) -> list[str]:
        points = [name]
        for _ in range(ALIAS_DEPTH):
            step = realias(aliases, name)
            if step is None:
                break
            name = step
            points.append(name)
        return points

    found = {read.function for summary in summaries for read in summary.reads}
    returns = [
        (
            flow.target[4:],
            [point for o in flow.origins if o[:4] == "ret:" for point in chain(o[4:])],
        )
        for summary in summaries
        for flow in summary.flows
        if flow.target[:4] == "ret:"
    ]
    grew = True
    while grew:
        grew = False
        for function, points in returns:
            if function not in found and any(point in found for point in points):
                found.add(function)
                grew = True
    names = (name.rpartition(".") for name in found)
    return frozenset(last.encode() for owner, _, last in names if last and owner not in classes)
