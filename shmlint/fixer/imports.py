"""The helper's import added at the top of a fixed module: libcst's ``AddImportsVisitor``, run on
the module's top statements only.

The visitor reads and changes nothing below the first statement after the top import block:
it gathers the imports of that block (after a docstring), merges a new name into one of them
or inserts new import lines after it, and gives the next statement an empty line before it.
Run on the whole module it deep-copies and walks every node twice — ~40 % of a fix's time on
the ray wheel — for that. So it runs on the top statements, with a one-line stand-in for a
compound statement that ends them, and the rest of the body is put back unchanged:
``tests/fixer/test_imports.py`` holds the result to the whole-module run's on every fixture.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor


def _is_import_line(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], (cst.Import, cst.ImportFrom))
    )


def with_imports(module: cst.Module, imports: list[tuple[str, str, str | None]]) -> cst.Module:
    """``module`` with ``from source import name`` (``as alias``, when one is given) for each
    (source, name, alias) of ``imports`` where it is missing, placed as libcst's
    ``AddImportsVisitor`` places it."""
    body = module.body
    # A first simple line (a docstring, maybe), the import block, the statement after it.
    end = 1 if body and isinstance(body[0], cst.SimpleStatementLine) else 0
    while end < len(body) and _is_import_line(body[end]):
        end += 1
    last = min(end, len(body) - 1)
    top = list(body[: last + 1])
    standing = bool(top) and isinstance(top[-1], cst.BaseCompoundStatement)
    if standing:  # never walked: a line with its leading lines stands in
        top[-1] = cst.SimpleStatementLine((cst.Pass(),), leading_lines=top[-1].leading_lines)
    context = CodemodContext()
    for source, name, alias in imports:
        AddImportsVisitor.add_needed_import(context, source, name, alias)
    added = AddImportsVisitor(context).transform_module(module.with_changes(body=top))
    new_top = list(added.body)
    if standing:
        new_top[-1] = body[last].with_changes(leading_lines=new_top[-1].leading_lines)
    return module.with_changes(body=(*new_top, *body[last + 1 :]))
