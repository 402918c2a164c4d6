"""Taint analysis from Ray reads (sources) to places that keep values (sinks).

``analyze_module`` is the one entry point: it returns :class:`RawFinding`s in ast coordinates;
the engine turns them into :class:`shmlint.basics.types.Finding`s.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from shmlint.analysis.dataflow.context import ModuleContext, RawFinding
from shmlint.analysis.dataflow.facts import collect_annotations
from shmlint.analysis.dataflow.function import FunctionAnalysis
from shmlint.analysis.dataflow.gate import DirectGate, Gate, recording_gate
from shmlint.analysis.dataflow.quiet import Quiet, makes_handles
from shmlint.basics.names import Scope, walrus_lines
from shmlint.basics.options import Options

if TYPE_CHECKING:
    from shmlint.facts.view import ProjectView

__all__ = ["RawFinding", "analyze_module"]

# A module needs the facts pre-pass (handles stored on attributes or returned by functions)
# only if it can make a handle itself (quiet.HANDLE_WORDS: compiled graphs, refs, queues,
# threaded reads, and their renamed imports), or runs a compiled graph asynchronously.
_ASYNC_WORDS = ("execute_async",)
_FACT_ROUNDS = 3
# The last round of the pre-pass, with findings kept, stands for the reporting pass (tests turn
# it off to compare with a pass of its own).
_FUSE_LAST_ROUND = True
# Rounds skip the bodies no handle can reach (quiet.py; tests turn it off to compare).
_SKIP_QUIET = True


def analyze_module(
    tree: ast.Module,
    options: Options,
    text: str | None = None,
    project: ProjectView | None = None,
    module_scope: Scope | None = None,
    dropped: Callable[[str, int], bool] | None = None,
) -> list[RawFinding]:
    """All findings of one module (before noqa, select and confidence filters; ``dropped``
    tells the analysis which code on which line they drop, so that such a sink hides no
    other of the same read).

    With ``project``, the analysis reads project-wide facts (phase 2), or, when the view has a
    recorder, records this module's flows into it (phase 1: every body is analysed).
    """
    ctx = ModuleContext(options, project)
    ctx.dropped = dropped
    if module_scope is None:
        module_scope = Scope(tree, None, walrus=walrus_lines(text))
    collect_annotations(tree, ctx.facts)
    needs_facts = (
        ctx.ref_regex is not None
        or text is None
        or any(word in text for word in _ASYNC_WORDS)
        or makes_handles(text, module_scope.imports)
    )
    # A module on its own (a per-file run) that makes no handle holds none anywhere: only
    # `ray.get` itself and configured sources read there (gate.DirectGate).
    alone = project is None or project.alone
    gate: Gate | None = None
    if text is not None and not needs_facts and alone and not ctx.recording and _SKIP_QUIET:
        gate = DirectGate(text, options, tree)
    elif text is not None:
        extra = project.facts.gate_words(project.module) if project is not None else frozenset()
        if ctx.recording:  # (its own facts know no reader: phase 1 finds the wrappers of one)
            gate = recording_gate(text, options, tree, extra)
        else:
            gate = Gate(text, options, extra)
    if needs_facts:
        ctx.reporting = _FUSE_LAST_ROUND
        ctx.pre_pass = True
        ctx.gate = gate
        # Only a module on its own skips: phase 1 records every body's flows, and in phase 2
        # the project's facts may hand any body a handle through a parameter.
        if text is not None and _SKIP_QUIET and ctx.ref_regex is None and not ctx.recording:
            if alone:
                ctx.quiet = Quiet(text, module_scope.imports)
        for _ in range(_FACT_ROUNDS):
            # Another round only if this one read a fact that grew later in it (or skipped a
            # body that may now see a handle): else the next would read what this one read,
            # and do (and record) just what it did.
            ctx.facts.begin_round()
            ctx.begin_pass()
            ctx.skipped.clear()
            FunctionAnalysis(ctx, tree, module_scope).run()
            if not ctx.facts.stale and ctx.quiet is not None and ctx.skipped_reachable():
                ctx.facts.stale = True
            if not ctx.facts.stale:
                if _FUSE_LAST_ROUND:
                    # Every read of this round saw the facts as they end it: the reporting
                    # pass would analyse the bodies it keeps (a subset) just as this round
                    # did, so this round's findings are that pass's.
                    return _sorted(ctx)
                break
        ctx.begin_pass()
        ctx.reporting = True
        ctx.pre_pass = False
    ctx.gate = gate
    FunctionAnalysis(ctx, tree, module_scope).run()
    return _sorted(ctx)


def _sorted(ctx: ModuleContext) -> list[RawFinding]:
    return sorted(
        ctx.findings.values(),
        key=lambda f: (f.site.line, f.site.col, f.code, f.label.site.line, f.message),
    )
