"""Functions whose result holds nothing of what is passed to them: every value they return is
built anew (``np.concatenate(parts)``, ``f"{host}:{port}"``, ``len(batch)``), so a read passed
in does not come out.

The analysis of a call gives its result whatever its arguments hold (an unknown function may
return one of them); of a project function found *fresh* here, nothing (``callees.py``). The
test is syntactic and errs towards "not fresh": names are followed by spelling through the
whole body (nested scopes too), without regard to order, and a name counts as carrying its
function's inputs when anything that may hold them is ever bound to it, stored into it, or
passed to a call together with it. What ends a value's ties to its inputs are the forms the
dataflow itself treats as copies (``catalog``: copying calls and methods, arithmetic, plain
data), so a function is fresh exactly when its return expressions would be clean there.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Container

from shmlint.basics import catalog
from shmlint.basics.astwalk import statements
from shmlint.basics.names import dotted_name

# Decorators that leave what calling the function returns alone (by last name): Python's,
# Ray's API stability markers, torch's gradient modes.
_PLAIN_DECORATORS = frozenset(
    {
        "staticmethod",
        "classmethod",
        "abstractmethod",
        "override",
        "final",
        "cache",
        "lru_cache",
        "PublicAPI",
        "DeveloperAPI",
        "Deprecated",
        "no_grad",
        "inference_mode",
    }
)
# Expressions whose value is plain data, whatever their parts hold (as the dataflow rates them).
_PLAIN = (ast.Constant, ast.JoinedStr, ast.Compare, ast.UnaryOp)
_DISPLAYS = (ast.List, ast.Tuple, ast.ListComp)
# The longest function (in lines) whose body is walked.
_LONGEST = 80
# Builtins whose result may be any of the function's own values.
_INTROSPECTION = frozenset({"locals", "vars", "globals", "eval", "exec", "getattr", "dir"})
# Nodes that bind or fill (:meth:`_Carriers._note`), and nodes that bind otherwise.
_NOTED = (
    ast.Assign,
    ast.AnnAssign,
    ast.AugAssign,
    ast.NamedExpr,
    ast.For,
    ast.AsyncFor,
    ast.comprehension,
    ast.withitem,
    ast.Call,
)
_BINDERS = (
    ast.Name,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.Global,
    ast.Nonlocal,
    ast.ExceptHandler,
    ast.MatchAs,
    ast.MatchStar,
    ast.MatchMapping,
)


class _Carriers:
    """Which names of one function may hold what its parameters hold (a fixpoint)."""

    def __init__(
        self,
        node: ast.FunctionDef,
        qualify: Callable[[ast.expr], str | None],
        modules: Container[str],
    ) -> None:
        self.qualify = qualify
        self.modules = modules  # the names the module imports
        args = node.args
        every = (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
        self.carrying: set[str] = {a.arg for a in every if a is not None}
        self.bound: set[str] = set(self.carrying)  # names the function binds (calls by them)
        self.imported: dict[str, str] = {}  # its own imports: local name → qualified
        # (targets, names the value may carry, opaque): a binding; also read backwards, as an
        # alias (`b = a; b.append(x)` fills `a`).
        self.bindings: list[tuple[set[str], set[str], bool]] = []
        # (names filled, names the filling value may carry, opaque): a store or a call.
        self.fillings: list[tuple[set[str], set[str], bool]] = []
        self.generator = False  # a yield anywhere (a nested scope's too: erring safe)
        # Whether a call is passed what may hold the inputs: it may keep them in state of the
        # module's (`register(x)`; `return REGISTRY`), so every name not bound here carries.
        self.leaks = False
        self.passed: list[tuple[set[str], bool]] = []  # what each call is passed
        self.body = node.body

    def settle(self) -> None:
        """Walk the body (once) and find the names that may carry the inputs."""
        noted = []
        for statement in self.body:
            for sub in ast.walk(statement):
                if isinstance(sub, _NOTED):
                    noted.append(sub)
                elif isinstance(sub, _BINDERS):
                    self._binder(sub)
                elif isinstance(sub, (ast.Yield, ast.YieldFrom)):
                    self.generator = True
                    return
        for sub in noted:
            self._note(sub)
        self._settle()

    def _binder(self, node: ast.AST) -> None:
        """Names bound by anything but an assignment carry everything (what a nested function
        or an exception holds is not followed)."""
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                self.bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.bound.add(node.name)
            self.carrying.add(node.name)
            if not isinstance(node, ast.ClassDef):
                self._nested_parameters(node.args)
        elif isinstance(node, ast.Lambda):
            self._nested_parameters(node.args)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            self.carrying.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self.bound.add(node.name)
            self.carrying.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            self.bound.add(node.name)
            self.carrying.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            self.bound.add(node.rest)
            self.carrying.add(node.rest)

    def own_import(self, node: ast.Import | ast.ImportFrom) -> None:
        """``import numpy as np`` in the function's own body names the module there."""
        for alias in node.names:
            if isinstance(node, ast.Import):
                local = alias.asname or alias.name.partition(".")[0]
                self.imported[local] = alias.name if alias.asname else local
            elif node.level == 0 and node.module and alias.name != "*":
                self.imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def _nested_parameters(self, args: ast.arguments) -> None:
        """A nested function's parameters hold whatever its callers pass (``g(x)``)."""
        every = (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
        names = {a.arg for a in every if a is not None}
        self.bound |= names
        self.carrying |= names

    def _note(self, node: ast.AST) -> None:
        """Record the bindings and fillings ``node`` makes."""
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._bind(target, node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._bind(node.target, node.value)
        elif isinstance(node, ast.AugAssign):
            # `out += part` (a list extended in place, whatever the operator says).
            self._bind(node.target, node.value)
        elif isinstance(node, ast.NamedExpr):
            self._bind(node.target, node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            self._bind(node.target, node.iter)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            self._bind(node.optional_vars, node.context_expr)
        elif isinstance(node, ast.Call) and not self._copies(node):
            # A call may put any of its inputs into any other (`fill(out, x)`, `x.into(out)`,
            # `out.append(x)`).
            parts = [*node.args, *(k.value for k in node.keywords)]
            if isinstance(node.func, ast.Attribute):
                parts.append(node.func.value)
            filled = {name for part in parts for name in _roots(part)}
            carried: set[str] = set()
            opaque = False
            for part in parts:
                names, unknown = self._carried(part)
                carried |= names
                opaque |= unknown
            self.fillings.append((filled, carried, opaque))
            self.passed.append((carried, opaque))

    def _bind(self, target: ast.expr, value: ast.expr) -> None:
        carried, opaque = self._carried(value)
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            # `out[k] = v`, `out.x = v`: fills the object the target starts from.
            self.fillings.append((_roots(target), carried, opaque))
            return
        names = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        self.bindings.append((names, carried, opaque))

    def _settle(self) -> None:
        changed = True
        while changed:
            before = len(self.carrying)
            for targets, carried, opaque in self.bindings:
                if opaque or carried & self.carrying:
                    self.carrying |= targets
                if targets & self.carrying:
                    self.carrying |= carried
            for filled, carried, opaque in self.fillings:
                if opaque or carried & self.carrying:
                    self.carrying |= filled
            changed = len(self.carrying) != before
        self.leaks = any(opaque or carried & self.carrying for carried, opaque in self.passed)
        self.leaks |= any(
            (opaque or carried & self.carrying) and filled - self.bound
            for filled, carried, opaque in self.fillings
        )  # (`_LAST["v"] = x`: module state)

    def carries(self, node: ast.expr) -> bool:
        """True when ``node``'s value may hold something the parameters hold."""
        names, opaque = self._carried(node)
        if self.leaks and names - self.bound:
            return True  # (a module's own object a call may have filled: `register(x)`)
        return opaque or bool(names & self.carrying)

    def _carried(self, node: ast.expr) -> tuple[set[str], bool]:
        """The names whose values ``node``'s value may hold, and whether it may hold anything
        (a form the test does not follow)."""
        found: set[str] = set()
        todo = [node]
        while todo:
            current = todo.pop()
            if isinstance(current, ast.Name):
                found.add(current.id)
            elif isinstance(current, _PLAIN):
                continue
            elif isinstance(current, ast.Attribute):
                if current.attr not in catalog.CLEAN_ATTRIBUTES:
                    todo.append(current.value)
            elif isinstance(current, ast.Subscript):
                todo.append(current.value)
            elif isinstance(current, ast.Starred):
                todo.append(current.value)
            elif isinstance(current, ast.NamedExpr):
                todo.append(current.value)
            elif isinstance(current, ast.BinOp):
                if isinstance(current.op, (ast.Add, ast.Mult)) and (
                    isinstance(current.left, _DISPLAYS) or isinstance(current.right, _DISPLAYS)
                ):
                    todo += [current.left, current.right]  # `[x] + rest` keeps the elements
            elif isinstance(current, ast.IfExp):
                todo += [current.body, current.orelse]
            elif isinstance(current, (ast.Tuple, ast.List, ast.Set)):
                todo += current.elts
            elif isinstance(current, ast.BoolOp):
                todo += current.values
            elif isinstance(current, ast.Dict):
                todo += [k for k in current.keys if k is not None] + current.values
            elif isinstance(current, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
                todo.append(current.elt)
            elif isinstance(current, ast.DictComp):
                todo += [current.key, current.value]
            elif isinstance(current, ast.Call):
                if self._copies(current):
                    continue  # `np.concatenate(parts)`, `x.tolist()`, `len(x)`
                func = current.func
                if isinstance(func, ast.Name) and func.id in _INTROSPECTION:
                    return found, True  # `locals()`, `eval("x")`: anything
                if not isinstance(func, ast.Name) or func.id in self.bound or self.leaks:
                    todo.append(func)  # (a receiver, a local holding inputs, module state)
                todo += current.args
                todo += [k.value for k in current.keywords]
            else:
                return found, True
        return found, False

    def _copies(self, call: ast.Call) -> bool:
        """A call whose result holds none of its inputs (as the dataflow's copies: a module's
        function by its qualified name, then a value's copying method)."""
        func = call.func
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        module = (
            isinstance(root, ast.Name)
            and root.id not in self.bound
            and (root.id in self.imported or root.id in self.modules)
        )
        if isinstance(func, ast.Attribute) and not module:
            if func.attr in catalog.COPY_METHODS:  # `x.copy()`, `x.tolist()`
                return not (func.attr == "astype" and catalog.copy_false(call))
        if not isinstance(root, ast.Name) or root.id in self.bound:
            return False  # (a local `np` is not numpy)
        if root.id in self.imported:
            dotted = dotted_name(func)
            rest = "" if dotted is None else dotted.partition(".")[2]
            head = self.imported[root.id]
            qualified: str | None = f"{head}.{rest}" if rest else head
        else:
            qualified = self.qualify(func)
        if qualified is None:
            return False
        if qualified.rpartition(".")[2] in catalog.HELPER_NAMES:
            return True
        return catalog.library_copies(qualified, call) is True


def _roots(node: ast.expr) -> set[str]:
    """The names whose objects ``node`` may reach in place: ``out`` of ``out[k].x``, of each
    element of a display, of a call's receiver and arguments (``out.setdefault(k, [])``,
    ``vars(out)``: what it gives may be a part of them), of either side of ``or``."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred, ast.NamedExpr)):
        node = node.target if isinstance(node, ast.NamedExpr) else node.value
    if isinstance(node, ast.Name):
        return {node.id}
    parts: list[ast.expr] = []
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        parts = node.elts
    elif isinstance(node, ast.Dict):
        parts = [*(k for k in node.keys if k is not None), *node.values]
    elif isinstance(node, ast.Call):
        func = node.func
        parts = [*node.args, *(k.value for k in node.keywords)]
        if isinstance(func, ast.Attribute):
            parts.append(func.value)
    elif isinstance(node, ast.BoolOp):
        parts = node.values
    elif isinstance(node, ast.IfExp):
        parts = [node.body, node.orelse]
    return {name for part in parts for name in _roots(part)}


def fresh_result(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    qualify: Callable[[ast.expr], str | None],
    modules: Container[str] = frozenset(),
) -> bool:
    """True when no value ``node`` returns can hold what is passed to it (its parameters,
    ``self`` included). Not for a coroutine, a generator, a decorated function (what calling
    it gives is the decorator's) or one returning nothing."""
    if isinstance(node, ast.AsyncFunctionDef):
        return False
    if any(_decorator(d) not in _PLAIN_DECORATORS for d in node.decorator_list):
        return False
    if (node.end_lineno or node.lineno) - node.lineno > _LONGEST:
        return False  # (its body not walked: the cost of a long function for a rare gain)
    carriers = _Carriers(node, qualify, modules)
    returned = []
    assigned: dict[str, list[ast.expr]] = {}
    for statement in statements(node.body, into_scopes=False):
        if isinstance(statement, ast.Return) and statement.value is not None:
            returned.append(statement.value)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            carriers.own_import(statement)
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(statement.value)
    if not returned:
        return False
    # Most functions return what is passed in, plainly (`return x[0]`, `out = f(x); return
    # out`): seen before the body is walked. (The function's own names not known yet, more
    # calls pass for copies: fewer names are carried, so a parameter among them is carried
    # for certain.)
    plainly = [*returned]
    plainly += [v for r in returned if isinstance(r, ast.Name) for v in assigned.get(r.id, ())]
    if any(carriers.carries(value) for value in plainly):
        return False
    carriers.settle()
    return not carriers.generator and not any(carriers.carries(value) for value in returned)


def _decorator(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Name):
        return target.id
    return target.attr if isinstance(target, ast.Attribute) else ""
