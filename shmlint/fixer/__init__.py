"""``shmlint --fix``: rewrite each fixable finding at its read, with libcst.

Only files with fixable findings are parsed by libcst (and libcst is imported only here).
A fix never raises into the batch: a file that libcst cannot parse, or whose fixed text would
not parse, is left untouched and reported as such.
"""

from __future__ import annotations

import ast
import dataclasses
import warnings
from collections.abc import Iterable

import libcst as cst
from libcst.metadata import MetadataWrapper

from shmlint.basics.config import Config
from shmlint.basics.types import Finding
from shmlint.fixer.bindings import helper_calls
from shmlint.fixer.imports import with_imports
from shmlint.fixer.locate import Span, locate_reads, source_span
from shmlint.fixer.transforms import InPlaceReads, WrapReads

__all__ = ["FixOutcome", "apply_fixes", "fixable_findings"]


@dataclasses.dataclass(frozen=True, slots=True)
class FixOutcome:
    """The result of fixing one file's source."""

    source: bytes  # the new source (the old one when nothing changed or the fix failed)
    changed: bool
    attempted: int  # findings a fix was applied for
    error: str | None = None  # why the file was left untouched


def fixable_findings(findings: Iterable[Finding], unsafe: bool) -> list[Finding]:
    """The findings ``--fix`` applies (``--unsafe-fixes`` adds the unsafe ones)."""
    return [f for f in findings if f.fixable and (unsafe or not f.unsafe_fix)]


def _helper(config: Config, finding: Finding | None = None) -> tuple[str, str]:
    """The (module, function) a fix calls: the finding's own (chosen by its payload), else
    the configured helper."""
    module, _, name = ((finding.helper if finding else "") or config.helper).partition(":")
    return module, name


def _returns_list(read: cst.CSTNode, module: cst.Module) -> bool:
    """``get([...])`` / ``get(name)`` where ``name`` is bound to a list display, a comprehension,
    or a compiled graph's ``execute()`` (a list of refs for multi-output DAGs). Reads of one ref
    (``refs[0].get()``, ``await fut``) return one output."""
    if not (isinstance(read, cst.Call) and read.args):
        return False  # `ref.get()` takes no positional argument; `await` is one output
    argument = read.args[0].value
    if isinstance(argument, (cst.List, cst.ListComp)):
        return True
    if not isinstance(argument, cst.Name):
        return False
    name = argument.value
    found = False

    class Bindings(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            nonlocal found
            value = node.value
            list_like = isinstance(value, (cst.List, cst.ListComp)) or (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "execute"
            )
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    found = found or list_like

    module.visit(Bindings())
    return found


def _parsed(source: bytes) -> ast.Module:
    """``source`` parsed by ``ast``, its warnings (invalid escapes...) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source)


def _keep_final_line_ends(old: bytes, new: bytes) -> bytes:
    r"""``new`` ending in the line ends ``old`` ends in. libcst drops a file's last line end
    when it is a lone ``\r`` (``parse_module(b"x = 1\r").bytes == b"x = 1"``); no fix
    touches the end of a file, so what followed its last code stays as it was."""
    old_end = old[len(old.rstrip(b"\r\n")) :]
    new_end = new[len(new.rstrip(b"\r\n")) :]
    return new if old_end == new_end else new[: len(new) - len(new_end)] + old_end


def apply_fixes(data: bytes, findings: list[Finding], config: Config) -> FixOutcome:
    """Fix ``findings`` (already filtered to the ones to apply) in the file ``data``; a file
    libcst cannot handle is left as it is, with the reason (never a crash of the run)."""
    if not findings:
        return FixOutcome(data, False, 0)
    try:
        return _apply_fixes(data, findings, config)
    except RecursionError:  # libcst recurses per level: `"s" + "s" + ...` of 400 terms
        return FixOutcome(data, False, 0, "the file is too deeply nested for libcst")


def _apply_fixes(data: bytes, findings: list[Finding], config: Config) -> FixOutcome:
    """:func:`apply_fixes` of a non-empty list."""
    try:
        module = cst.parse_module(data)
    except (cst.ParserSyntaxError, UnicodeDecodeError, SyntaxError) as error:
        return FixOutcome(data, False, 0, f"libcst cannot parse the file: {error}")
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)  # (the parse is ours alone)
    spans: dict[Span, Finding] = {source_span(f): f for f in findings}
    reads = locate_reads(wrapper, spans)
    if not reads:
        return FixOutcome(data, False, 0, "no read found at the reported positions")
    tree = wrapper.module
    helpers = {span: _helper(config, finding) for span, finding in spans.items()}
    try:
        names = _parsed(data)
    except (SyntaxError, ValueError) as error:
        return FixOutcome(data, False, 0, f"the file does not parse: {error}")
    if config.helper_style == "wrap":
        used = sorted({helpers[span] for span in reads})
        calls, imports = helper_calls(names, used, in_place=False)
        wrap = WrapReads({node: calls[helpers[span]] for span, node in reads.items()})
        new_tree = tree.visit(wrap)
        attempted = wrap.wrapped
    else:
        helper = _helper(config)
        calls, imports = helper_calls(names, [helper], in_place=True)
        targets = {node: _returns_list(node, tree) for node in reads.values()}
        in_place = InPlaceReads(targets, calls[helper])
        new_tree = wrapper.visit(in_place)
        attempted = in_place.fixed
    if attempted and imports:
        new_tree = with_imports(new_tree, imports)
    new_source = _keep_final_line_ends(data, new_tree.bytes)
    try:
        _parsed(new_source)
    except SyntaxError as error:  # a bug in a transform: never write such a file
        return FixOutcome(data, False, 0, f"the fixed source would not parse: {error}")
    return FixOutcome(new_source, new_source != data, attempted)
