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


def _returns_value(function: cst.FunctionDef) -> bool:
    """The function returns what it is given back (a ``return`` with a value, and no ``->
    None``): a helper that can wrap a read. One that returns nothing detaches in place (vLLM's
    own ``detach_zero_copy_from_model_runner_output``): wrapping a read with it binds None."""
    returns = function.returns
    if returns is not None and (
        isinstance(returns.annotation, cst.Name) and returns.annotation.value == "None"
    ):
        return False
    found = False

    class Returns(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is function  # (not into nested functions)

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Return(self, node: cst.Return) -> None:
            nonlocal found
            value = node.value
            found = found or not (
                value is None or (isinstance(value, cst.Name) and value.value == "None")
            )

    function.visit(Returns())
    return found


def _binding(module: cst.Module, source: str, name: str) -> str | None:
    """How the module binds ``name`` at top level: None (it does not), ``"helper"`` (the
    helper itself, imported from ``source``, or a function of the module returning what it is
    given), ``"other"`` (anything else: an in-place helper of the same name, vLLM's imported
    from its module, an assignment), which a wrapping fix must not call."""
    found: str | None = None
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
            found = "helper" if _returns_value(statement) else "other"
        elif isinstance(statement, cst.ClassDef) and statement.name.value == name:
            found = "other"
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.ImportFrom) and not isinstance(
                    small.names, cst.ImportStar
                ):
                    origin = _dotted(small.module) if small.module and not small.relative else None
                    for alias in small.names:
                        bound = alias.asname.name if alias.asname else alias.name
                        if isinstance(bound, cst.Name) and bound.value == name:
                            same = origin == source and _dotted(alias.name) == name
                            found = "helper" if same else "other"
                elif isinstance(small, cst.Import):
                    for alias in small.names:
                        bound = alias.asname.name if alias.asname else alias.name
                        if isinstance(bound, cst.Name) and bound.value == name:
                            found = "other"
                elif isinstance(small, (cst.Assign, cst.AnnAssign)):
                    targets = (
                        [t.target for t in small.targets]
                        if isinstance(small, cst.Assign)
                        else [small.target]
                    )
                    if any(isinstance(t, cst.Name) and t.value == name for t in targets):
                        found = "other"
    return found


def _dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


def _top_names(module: cst.Module) -> set[str]:
    """Every name the module's top level spells (a fresh alias avoids them all)."""
    names: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            names.add(node.value)

    module.visit(Names())
    return names


def _callable_helpers(
    module: cst.Module, used: list[tuple[str, str]]
) -> tuple[dict[tuple[str, str], str], list[tuple[str, str, str | None]]]:
    """The name each used helper is called by in the fixed module, and the imports to add
    (source, name, alias). A helper the module binds to something else by its name (vLLM's
    in-place ``detach_zero_copy_from_model_runner_output``, which returns None) is imported
    under a fresh alias (``shmlint_<name>``) instead of being shadowed or misused."""
    calls: dict[tuple[str, str], str] = {}
    imports: list[tuple[str, str, str | None]] = []
    taken: set[str] | None = None
    for source, name in used:
        binding = _binding(module, source, name)
        if binding is None:
            calls[(source, name)] = name
            imports.append((source, name, None))
        elif binding == "helper":
            calls[(source, name)] = name
        else:
            if taken is None:
                taken = _top_names(module)
            alias, number = f"shmlint_{name}", 0
            while alias in taken:
                number += 1
                alias = f"shmlint_{name}_{number}"
            taken.add(alias)
            calls[(source, name)] = alias
            imports.append((source, name, alias))
    return calls, imports


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


def apply_fixes(data: bytes, findings: list[Finding], config: Config) -> FixOutcome:
    """Fix ``findings`` (already filtered to the ones to apply) in the file ``data``."""
    if not findings:
        return FixOutcome(data, False, 0)
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
    if config.helper_style == "wrap":
        calls, imports = _callable_helpers(tree, sorted({helpers[span] for span in reads}))
        wrap = WrapReads({node: calls[helpers[span]] for span, node in reads.items()})
        new_tree = tree.visit(wrap)
        attempted = wrap.wrapped
    else:
        source, helper = _helper(config)
        targets = {node: _returns_list(node, tree) for node in reads.values()}
        in_place = InPlaceReads(targets, helper)
        new_tree = wrapper.visit(in_place)
        attempted = in_place.fixed
        imports = [] if _binding(tree, source, helper) else [(source, helper, None)]
    if attempted and imports:
        new_tree = with_imports(new_tree, imports)
    new_source = new_tree.bytes
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(new_source)
    except SyntaxError as error:  # a bug in a transform: never write such a file
        return FixOutcome(data, False, 0, f"the fixed source would not parse: {error}")
    return FixOutcome(new_source, new_source != data, attempted)
