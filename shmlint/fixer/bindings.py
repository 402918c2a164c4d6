"""Which name a fix calls a helper by, and which import it adds (read from the module's ast).

The bundled ``detach_zero_copy_from_model_runner_output`` returns the output it detaches;
vLLM's own helper of the same name (and Aphrodite's copy) detaches in place and returns
``None``. A wrapping fix must never call such a helper, nor one bound under the helper's name
anywhere the read may see it (a function's own import, a ``try`` / ``if`` at the top, a
star import, a parameter): the module gets the helper under a fresh alias instead.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator

Import = tuple[str, str, str | None]  # (source, name, alias)


@dataclasses.dataclass(frozen=True, slots=True)
class Binding:
    """One binding of the helper's name: what it is, and whether it is the module's own
    (top level, also inside a top-level ``try`` / ``if``)."""

    kind: str  # "import" (of the helper, from its module), "returns", "in-place", "other"
    top: bool


def _same_source(node: ast.ImportFrom, source: str) -> bool:
    """``from source import ...``; relatively, a module the source ends with."""
    module = node.module or ""
    if not node.level:
        return module == source
    return bool(module) and (source == module or source.endswith(f".{module}"))


def _returns_value(node: ast.FunctionDef) -> bool:
    """A ``return`` with a value (not ``None``), and no ``-> None``: it gives back a value."""
    if isinstance(node.returns, ast.Constant) and node.returns.value in (None, "None"):
        return False
    todo: list[ast.AST] = list(node.body)
    while todo:
        sub = todo.pop()
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(sub, (ast.Yield, ast.YieldFrom)):
            return False  # a generator
        if isinstance(sub, ast.Return) and not (
            sub.value is None or (isinstance(sub.value, ast.Constant) and sub.value.value is None)
        ):
            return True
        todo.extend(ast.iter_child_nodes(sub))
    return False


def _bindings(tree: ast.Module, source: str, name: str) -> Iterator[Binding]:
    """Every binding of ``name`` in the module: its top level (also inside a top-level
    ``try`` / ``if`` / ``with`` / loop), and inside functions and lambdas (a parameter, an
    assignment, an import: each shadows the module's name there). A class body's own names
    are the class's attributes, not the module's."""

    def walk(node: ast.AST, top: bool, in_class: bool) -> Iterator[Binding]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                if child.name == name and not in_class:
                    yield Binding("other", top)
                yield from walk(child, False, True)
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if child.name == name and not in_class:
                    kind = "other"  # (a coroutine, or what a decorator makes of it)
                    if isinstance(child, ast.FunctionDef) and not child.decorator_list:
                        kind = "returns" if _returns_value(child) else "in-place"
                    yield Binding(kind, top)
                yield from walk(child, False, False)
                continue
            if isinstance(child, ast.Lambda):
                yield from walk(child, False, False)
                continue
            if not in_class:
                yield from _bound_here(child, source, name, top)
            yield from walk(child, top, in_class)

    yield from walk(tree, True, False)


def _bound_here(node: ast.AST, source: str, name: str, top: bool) -> Iterator[Binding]:
    """A binding of ``name`` by ``node`` itself (an import, a stored name, a parameter)."""
    if isinstance(node, ast.ImportFrom):
        for alias in node.names:
            if alias.name == "*":
                if not _same_source(node, source):
                    yield Binding("other", top)  # (it may bind any name)
            elif (alias.asname or alias.name) == name:
                own = _same_source(node, source) and alias.name == name
                yield Binding("import" if own else "other", top)
    elif isinstance(node, ast.Import):
        for alias in node.names:
            if (alias.asname or alias.name).partition(".")[0] == name:
                yield Binding("other", top)
    elif isinstance(node, ast.Name) and node.id == name:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            yield Binding("other", top)
    elif isinstance(node, ast.arg) and node.arg == name:
        yield Binding("other", False)


def _spelled(tree: ast.Module) -> set[str]:
    """Every name the module spells or binds (a fresh alias avoids them all)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((a.asname or a.name).partition(".")[0] for a in node.names)
    return found


def _existing_alias(tree: ast.Module, source: str, name: str) -> str | None:
    """``X`` of a top-level ``from source import name as X``, when nothing else binds ``X``."""
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and _same_source(node, source):
            for alias in node.names:
                if alias.name == name and alias.asname and alias.asname != name:
                    if len(list(_bindings(tree, source, alias.asname))) == 1:
                        return alias.asname
    return None


def helper_calls(
    tree: ast.Module, used: list[tuple[str, str]], in_place: bool
) -> tuple[dict[tuple[str, str], str], list[Import]]:
    """The name each used helper (source, name) is called by in the fixed module, and the
    imports to add. ``in_place``: the fix calls the helper on its own line (``helper-style =
    "in-place"``): a function of the module by the name must return nothing, not a value."""
    calls: dict[tuple[str, str], str] = {}
    imports: list[Import] = []
    taken: set[str] | None = None
    fitting = "in-place" if in_place else "returns"
    for source, name in used:
        found = list(_bindings(tree, source, name))
        # Anything but the helper imported from its module, or a top-level function of the
        # module that fits (returns what it is given; with the in-place style, returns nothing).
        clash = any(not (b.kind == "import" or (b.kind == fitting and b.top)) for b in found)
        if not clash and any(b.top for b in found):
            calls[(source, name)] = name  # (the module's own binding of it)
            continue
        aliased = _existing_alias(tree, source, name)
        if aliased is not None:
            calls[(source, name)] = aliased
            continue
        if not clash:
            calls[(source, name)] = name
            imports.append((source, name, None))
            continue
        if taken is None:
            taken = _spelled(tree)
        alias, number = f"shmlint_{name}", 0
        while alias in taken:
            number += 1
            alias = f"shmlint_{name}_{number}"
        taken.add(alias)
        calls[(source, name)] = alias
        imports.append((source, name, alias))
    return calls, imports


__all__ = ["Import", "helper_calls"]
