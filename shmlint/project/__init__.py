"""Project-wide analysis: per-module summaries, their merge, and the two-phase run
(docs/project-analysis.md)."""

from __future__ import annotations

from shmlint.project.facts import ProjectFacts, merge
from shmlint.project.summary import ModuleSummary

__all__ = ["ModuleSummary", "ProjectFacts", "merge"]
