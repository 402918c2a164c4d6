"""The checks the engine runs on a parsed module: each is one rule family's detector, and
all of them take the same input and return :class:`RawFinding`s in ast coordinates.

They are registered with their codes in :data:`shmlint.analysis.rules.CHECKS`; the engine runs
every registered check the same way, then filters (select, confidence, ``# noqa``).
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable

from shmlint.analysis.dataflow import RawFinding, analyze_module
from shmlint.analysis.dataflow.values import Label, Site
from shmlint.analysis.helpers import incomplete_helpers
from shmlint.analysis.inplace import used_in_place_helpers
from shmlint.basics.names import Scope
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence, SourceKind
from shmlint.facts.view import ProjectView


@dataclasses.dataclass(frozen=True, slots=True)
class ModuleInput:
    """What every check is handed: the tree, its scope, the project seen from the module, the
    options, and the source text (None: no text gates, every body analysed)."""

    tree: ast.Module
    scope: Scope
    view: ProjectView
    options: Options
    text: str | None
    # Whether the filters drop a finding of this code on this line (see analyze_module).
    dropped: Callable[[str, int], bool] | None = None


Check = Callable[[ModuleInput], list[RawFinding]]


def find_retentions(module: ModuleInput) -> list[RawFinding]:
    """SHM101–SHM107: values read from Ray that reach a sink undetached (the dataflow)."""
    return analyze_module(
        module.tree, module.options, module.text, module.view, module.scope, module.dropped
    )


def _about_code(code: str, found: list[tuple[Site, str]]) -> list[RawFinding]:
    """Findings about code rather than a read (a call, a helper's ``def``): certain, each at
    its site with its message."""
    return [
        RawFinding(code, site, Label(site, SourceKind.NONE, 0, "none"), Confidence.HIGH, message)
        for site, message in found
    ]


def find_in_place_results(module: ModuleInput) -> list[RawFinding]:
    """SHM201: the None of an in-place detach helper used as its result."""
    used = used_in_place_helpers(
        module.tree, module.scope, module.view, module.options, module.text
    )
    return _about_code("SHM201", [(call.site, call.message) for call in used])


def find_incomplete_helpers(module: ModuleInput) -> list[RawFinding]:
    """SHM301: detach helpers that miss an array-bearing field of the class they detach."""
    misses = incomplete_helpers(module.tree, module.scope, module.view, module.options, module.text)
    return _about_code("SHM301", [(miss.site, miss.message) for miss in misses])


__all__ = [
    "Check",
    "ModuleInput",
    "find_in_place_results",
    "find_incomplete_helpers",
    "find_retentions",
]
