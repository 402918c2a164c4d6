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
from shmlint.analysis.helper_kind import names_helper, spells_helper_name
from shmlint.basics.names import Scope, last_name, qualified_name
from shmlint.basics.options import Options
from shmlint.facts.view import ProjectView


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


# Calls that take a coroutine (an `async def` helper called for them is not its None).
_COROUTINE_CALLS = frozenset(
    {"asyncio.gather", "asyncio.create_task", "asyncio.ensure_future", "asyncio.wait_for"}
    | {"asyncio.shield", "asyncio.run", "asyncio.wait", "asyncio.as_completed"}
)
_COROUTINE_METHODS = frozenset({"create_task", "run_until_complete", "ensure_future"})


def used_in_place_helpers(
    tree: ast.Module, module_scope: Scope, view: ProjectView, options: Options, text: str | None
) -> list[UsedNone]:
    """Every call of an in-place detach helper whose value the module uses."""
    if text is not None and not spells_helper_name(text, options.extend_sanitizers):
        return []
    local = _own_helpers(tree)
    found: list[UsedNone] = []
    _visit(tree, module_scope, view, options, local, found)
    return found


def _own_helpers(tree: ast.Module) -> dict[str, bool]:
    """The module's top-level functions by name: whether a call of one can be its None (a
    plain ``def``; not a coroutine function, nor one a decorator may have replaced)."""
    found: dict[str, bool] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = not node.decorator_list
        elif isinstance(node, ast.AsyncFunctionDef):
            found[node.name] = False
    return found


def _dropped(node: ast.expr) -> list[ast.Call]:
    """The calls whose value an expression statement drops: the statement's call itself,
    awaited or not, and those of the branches of a conditional or boolean expression."""
    if isinstance(node, ast.Await):
        return _dropped(node.value)
    if isinstance(node, ast.Call):
        return [node]
    if isinstance(node, ast.IfExp):
        return _dropped(node.body) + _dropped(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [call for value in node.values for call in _dropped(value)]
    return []


def _takes_coroutines(call: ast.Call, scope: Scope) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _COROUTINE_METHODS:
        return True
    return qualified_name(func, scope) in _COROUTINE_CALLS


def _coroutine_args(call: ast.Call) -> list[ast.Call]:
    """The calls a coroutine-taking call is handed: ``gather(f(a), *[f(x) for x in xs])``."""
    found: list[ast.Call] = []
    for arg in call.args:
        value = arg.value if isinstance(arg, ast.Starred) else arg
        if isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            value = value.elt
        elements = value.elts if isinstance(value, (ast.List, ast.Tuple, ast.Set)) else [value]
        found += [element for element in elements if isinstance(element, ast.Call)]
    return found


def _visit(
    node: ast.AST,
    scope: Scope,
    view: ProjectView,
    options: Options,
    local: dict[str, bool],
    found: list[UsedNone],
    skipped: frozenset[ast.AST] = frozenset(),
) -> None:
    """Calls under ``node`` (in ``scope``), each nested function in its own scope; not in
    lambdas (a callback's value is often dropped)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Lambda):
            continue
        inner = skipped
        if isinstance(child, ast.Expr):
            inner = skipped | frozenset(_dropped(child.value))
        elif isinstance(child, ast.Call) and _takes_coroutines(child, scope):
            inner = skipped | frozenset(_coroutine_args(child))
        if (
            isinstance(child, ast.Call)
            and child not in skipped
            and _in_place(child, scope, view, options, local)
        ):
            found.append(UsedNone(Site.of(child), ast.unparse(child.func)))
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _visit(child, Scope(child, scope), view, options, local, found, inner)
        else:
            _visit(child, scope, view, options, local, found, inner)


def _in_place(
    call: ast.Call, scope: Scope, view: ProjectView, options: Options, local: dict[str, bool]
) -> bool:
    """The call's target is a detach helper of the project that returns nothing."""
    func = call.func
    if not isinstance(func, (ast.Name, ast.Attribute)):
        return False
    name = view.qname(func, scope)
    if name is None:
        return False
    if not names_helper(last_name(func), name, options.extend_sanitizers):
        return False
    module, _, own = name.rpartition(".")
    if module == view.module and not local.get(own, True):
        return False  # the module's own coroutine function, or a decorated one
    return view.returns_nothing(name)


__all__ = ["UsedNone", "used_in_place_helpers"]
