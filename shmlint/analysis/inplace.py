"""SHM201: the result of an in-place detach helper is used.

vLLM's own ``detach_zero_copy_from_model_runner_output`` (and Aphrodite's copy) detaches the
output it is given *in place* and returns ``None``. Called as the bundled helper is
(``output = detach_zero_copy_from_model_runner_output(refs[0].get())``) it binds ``None``.

A call is reported when its target is a detach helper by name (the bundled helpers' names, a
configured sanitizer) that is a project function returning nothing (annotated ``-> None``, or
returning no value: the summary's evident ``None``), and the call's value is used: anything but
an expression statement (``helper(x)``, ``await helper(x)``).
"""

from __future__ import annotations

import ast
import dataclasses

from shmlint.analysis.dataflow.values import Site
from shmlint.basics import catalog
from shmlint.basics.names import Scope, last_name, qualified_name
from shmlint.basics.options import Options
from shmlint.facts.view import ProjectView

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclasses.dataclass(frozen=True, slots=True)
class UsedNone:
    """A used call of an in-place helper."""

    site: Site
    helper: str  # as the call spells it

    @property
    def message(self) -> str:
        return (
            f"`{self.helper}` detaches in place and returns None: this uses None, not the "
            f"detached value; call it on its own line (`{self.helper}(output)`) and keep its "
            f"argument"
        )


def _names(options: Options) -> frozenset[str]:
    """The last names a helper call can spell (the bundled helpers', configured ones')."""
    return catalog.HELPER_NAMES | frozenset(n.rpartition(".")[2] for n in options.extend_sanitizers)


def used_in_place_helpers(
    tree: ast.Module, module_scope: Scope, view: ProjectView, options: Options, text: str | None
) -> list[UsedNone]:
    """Every call of an in-place detach helper whose value the module uses."""
    names = _names(options)
    if text is not None and not any(name in text for name in names):
        return []
    found: list[UsedNone] = []
    _visit(tree, module_scope, view, options, names, found)
    return found


def _visit(
    node: ast.AST,
    scope: Scope,
    view: ProjectView,
    options: Options,
    names: frozenset[str],
    found: list[UsedNone],
) -> None:
    """Calls under ``node`` (in ``scope``), each nested function in its own scope."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Expr):
            inner = child.value.value if isinstance(child.value, ast.Await) else child.value
            if isinstance(inner, ast.Call):  # a statement: its value is dropped
                _visit(inner, scope, view, options, names, found)
                continue
        if isinstance(child, ast.Call) and _in_place(child, scope, view, options, names):
            found.append(UsedNone(Site.of(child), ast.unparse(child.func)))
        if isinstance(child, _SCOPES):
            _visit(child, Scope(child, scope), view, options, names, found)
        else:
            _visit(child, scope, view, options, names, found)


def _in_place(
    call: ast.Call, scope: Scope, view: ProjectView, options: Options, names: frozenset[str]
) -> bool:
    """The call's target is a detach helper of the project that returns nothing."""
    func = call.func
    qname = qualified_name(func, scope)
    spelled = last_name(func)
    if spelled not in names and (qname is None or qname.rpartition(".")[2] not in names):
        if qname is None or qname not in options.extend_sanitizers:
            return False
    name = view.qname(func, scope) if isinstance(func, (ast.Name, ast.Attribute)) else None
    return name is not None and view.returns_nothing(name)


__all__ = ["UsedNone", "used_in_place_helpers"]
