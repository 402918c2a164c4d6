"""The merge: module summaries in, project facts out (phase 1's last step)."""

from __future__ import annotations

from collections.abc import Iterable

from shmlint.facts.classes import ClassResolver
from shmlint.facts.evidence import TypeTables
from shmlint.facts.flow import propagate_kinds, propagate_reads
from shmlint.facts.model import ProjectFacts
from shmlint.facts.summary import ModuleSummary


def merge(summaries: Iterable[ModuleSummary], tables: TypeTables) -> ProjectFacts:
    """Merge module summaries into project facts (phase 1's last step)."""
    summaries = list(summaries)
    facts = ProjectFacts()
    for summary in summaries:
        facts.modules[summary.module] = (summary.path, summary.is_package)
        for local, target in summary.imports:
            facts.aliases.setdefault(f"{summary.module}.{local}", target)
        facts.functions.update(f.name for f in summary.functions)
        for c in summary.classes:
            facts.functions.discard(c.name)
    ClassResolver(summaries, facts, tables).resolve_all()
    facts._canonical.clear()  # names looked up while classes were still being added
    propagate_kinds(summaries, facts)
    propagate_reads(summaries, facts)
    return facts
