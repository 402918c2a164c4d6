"""The fixer as a LibCST codemod, for LibCST's own runner:

    python -m libcst.tool codemod -x shmlint.codemod.DetachZeroCopy PATHS

(``-x`` tells LibCST the command lives outside its configured codemod modules.) Settings come
from the ``[tool.shmlint]`` table nearest to each file, as for ``shmlint --fix``.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
from libcst.codemod import CodemodCommand, SkipFile

from shmlint.analysis.engine import check_bytes
from shmlint.basics.config import find_pyproject, load_config
from shmlint.fixer import apply_fixes, fixable_findings


class DetachZeroCopy(CodemodCommand):
    """Detach values read from Ray shared memory at the read (safe fixes only)."""

    DESCRIPTION: str = "Detach Ray zero-copy reads that outlive the iteration (shmlint --fix)."

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        """Find the module's findings, apply their fixes, return the new module."""
        filename = self.context.filename or "<codemod>"
        config = load_config(
            find_pyproject(Path(filename).parent if self.context.filename else Path.cwd())
        )
        data = tree.bytes
        findings = fixable_findings(check_bytes(data, filename, config).findings, unsafe=False)
        if not findings:
            raise SkipFile("no fixable shmlint findings")
        outcome = apply_fixes(data, findings, config)
        if outcome.error is not None:
            raise SkipFile(outcome.error)
        return cst.parse_module(outcome.source)
