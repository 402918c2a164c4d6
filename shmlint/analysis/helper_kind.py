"""Which functions are detach helpers by what they do (SHM301, shmlint.analysis.helpers): they
copy *read-only* arrays — checking ``flags.writeable`` or ``is_zero_copy``, themselves or
through a module-level function of their module that does — back into fields of a parameter.
"""

from __future__ import annotations

import ast

from shmlint.basics import catalog
from shmlint.basics.astwalk import statements
from shmlint.basics.names import last_name

READ_ONLY_CHECKS = frozenset({"writeable", "WRITEABLE", "is_zero_copy"})


def checks_read_only(node: ast.AST) -> bool:
    """``node`` spells a read-only check: ``flags.writeable``, ``is_zero_copy``."""
    return any(
        (isinstance(sub, ast.Attribute) and sub.attr in READ_ONLY_CHECKS)
        or (isinstance(sub, ast.Constant) and sub.value in READ_ONLY_CHECKS)
        or (isinstance(sub, ast.Name) and sub.id in READ_ONLY_CHECKS)
        for sub in ast.walk(node)
    )


def _calls_any(node: ast.AST, names: frozenset[str]) -> bool:
    """``node`` calls a function of the module by one of ``names`` (``f(x)``, unqualified)."""
    return bool(names) and any(
        isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in names
        for sub in ast.walk(node)
    )


def detaches_param_fields(
    node: ast.FunctionDef | ast.AsyncFunctionDef, param: str, checkers: frozenset[str]
) -> bool:
    """A detach helper by what it does, whatever its name: it copies *read-only* arrays (it
    checks ``flags.writeable`` or ``is_zero_copy``, itself or through a module-level function
    that does: ``checkers``, as ``_copy_if_readonly(arr)``) and stores the copies back into
    fields of ``param`` (``p.f = …``, ``p._replace(f=…)``, ``replace(p, f=…)``). Copying
    fields for other uses, or storing copies without a read-only check, is ordinary code
    (measured on vLLM 0.34: model-setup functions store copies back into their own fields)."""
    if not checks_read_only(node) and not _calls_any(node, checkers):
        return False
    body = list(statements(node.body, into_scopes=False))
    names = {param}  # the parameter, and the loop variables over it (`for o in outputs`)
    for statement in body:
        if (
            isinstance(statement, (ast.For, ast.AsyncFor))
            and _is_name(statement.iter, param)
            and isinstance(statement.target, ast.Name)
        ):
            names.add(statement.target.id)
    for statement in body:
        targets: list[ast.expr] = []
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, ast.AnnAssign):
            targets = [statement.target]
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id in names
            ):
                return True
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Call)
            and last_name(sub.func) in {"setattr", "__setattr__"}
            and sub.args
            and isinstance(sub.args[0], ast.Name)
            and sub.args[0].id in names
        ):
            return True
        if isinstance(sub, ast.Call) and sub.keywords:
            func = sub.func
            if isinstance(func, ast.Attribute) and func.attr == "_replace":
                root = func.value
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in names:
                    return True
            if last_name(func) == "replace" and sub.args and _is_name(sub.args[0], param):
                return True
    return False


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def spells_helper_name(text: str, sanitizers: frozenset[str]) -> bool:
    """The text spells a detach helper's name: a bundled helper's, or a configured sanitizer's
    last part (a file that spells none calls none by name)."""
    if any(name in text for name in catalog.HELPER_NAMES):
        return True
    return any(name.rpartition(".")[2] in text for name in sanitizers)


def names_helper(spelled: str | None, qname: str | None, sanitizers: frozenset[str]) -> bool:
    """A call of a detach helper by its name: the bundled helpers' names (from any module, and
    under any name they are imported as: the last part of ``qname``) and the configured
    sanitizers (``spelled`` matches a bare one, ``qname`` a qualified one)."""
    if spelled in catalog.HELPER_NAMES or spelled in sanitizers:
        return True
    if qname is None:
        return False
    return qname in sanitizers or qname.rpartition(".")[2] in catalog.HELPER_NAMES


def checkers_of(tree: ast.Module, read_only_lines: list[int] | None) -> frozenset[str]:
    """The module-level functions that check arrays for being read-only (their lines spell a
    check: ``read_only_lines``, when the text is at hand), as ``_copy_if_readonly(arr)``: a
    helper calling one checks through it. A detach helper itself is none: a function calling
    it passes the whole object on, which detaches no field it names."""
    found = set()
    for node in statements(tree.body, into_scopes=False):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if read_only_lines is not None:
            end = node.end_lineno or node.lineno
            if not any(node.lineno <= line <= end for line in read_only_lines):
                continue
        params = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        if checks_read_only(node) and not any(
            detaches_param_fields(node, param.arg, frozenset()) for param in params
        ):
            found.add(node.name)
    return frozenset(found)
