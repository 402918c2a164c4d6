"""SHM301: a detach helper that misses an array-bearing field of the class it detaches.

A helper is the bundled helpers' names, a configured sanitizer, or any function that copies
arrays taken from fields of its parameter (``p.f.copy()``, ``np.array(p.f)``...). Its parameter
must be annotated with a project class (or an ``Optional`` / ``list`` of one). For every path
through the helper (each ``return``, and falling off the end; a ``raise`` is not a path that
hands a value back), the fields the path *handles* are:

- assigned: ``p.f = …``, ``p.f[k] = …``, ``setattr(p, "f", …)``, ``object.__setattr__``;
- rebuilt: ``dataclasses.replace(p, f=…)`` / ``p._replace(f=…)``;
- detached by a helper: ``helper(p.f)``; ``helper(p)`` / ``copy.deepcopy(p)`` / a
  ``setattr(p, name, …)`` with a computed name handle every field;
- known to be ``None`` on the path (``if p.f is None: return``).

Each array-bearing field some path does not handle is one finding, at the helper's ``def``.
"""

from __future__ import annotations

import ast
import dataclasses

from shmlint.analysis.dataflow.gate import lines_spelling
from shmlint.analysis.dataflow.values import Site
from shmlint.analysis.helper_kind import READ_ONLY_CHECKS, checkers_of, detaches_param_fields
from shmlint.basics import catalog
from shmlint.basics.astwalk import statements
from shmlint.basics.names import Scope, last_name, qualified_name
from shmlint.basics.options import Options
from shmlint.facts.evidence import leaves
from shmlint.facts.records import ClassFact
from shmlint.facts.view import ProjectView

ALL = "*"  # a handled-set member meaning "every field"
_COPY_METHODS = catalog.COPY_METHODS
_SETATTR = frozenset({"setattr", "object.__setattr__"})
_REPLACE = frozenset({"dataclasses.replace", "copy.replace"})
_DEEP = frozenset({"copy.deepcopy"})


@dataclasses.dataclass(frozen=True, slots=True)
class Miss:
    """A field a helper does not detach on some path."""

    site: Site
    message: str


@dataclasses.dataclass(frozen=True, slots=True)
class _Path:
    handled: frozenset[str]
    line: int  # where the path hands back (a return's line, or the end of the helper)
    returns: bool


class _Helper:
    """The path analysis of one helper function for one parameter."""

    def __init__(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        param: str,
        scope: Scope,
        options: Options,
    ):
        self.node = node
        self.options = options
        self.aliases = {param}
        self.scope = scope
        self.paths: list[_Path] = []
        # Locals computed from a field (`lp = out.logprobs`, `ids_c = copy(ids)`): a test on
        # them is a test on the field.
        self.derived: dict[str, str] = {}

    # --- what one expression or simple statement handles ------------------------------------

    def field_of(self, node: ast.expr) -> str | None:
        """``p.f`` (or ``p.f[...]``, ``p.f.x``) for an alias ``p`` of the parameter → ``f``."""
        while isinstance(node, ast.Subscript):
            node = node.value
        while isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in self.aliases:
                return node.attr
            node = node.value
            while isinstance(node, ast.Subscript):
                node = node.value
        return None

    def is_alias(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id in self.aliases

    def handled_by(self, node: ast.AST) -> set[str]:
        handled: set[str] = set()
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Attribute) and self.is_alias(sub.value):
                    handled.add(sub.attr)
                elif isinstance(sub, ast.Subscript):
                    field = self.field_of(sub)
                    if field is not None:
                        handled.add(field)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                handled |= self.call_handles(sub)
        return handled

    def call_handles(self, call: ast.Call) -> set[str]:
        qname = qualified_name(call.func, self.scope) or ""
        name = last_name(call.func)
        first = call.args[0] if call.args else None
        if qname in _SETATTR and first is not None and self.is_alias(first):
            key = call.args[1] if len(call.args) > 1 else None
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                return {key.value}
            return {ALL}
        if (qname in _REPLACE and first is not None and self.is_alias(first)) or (
            isinstance(call.func, ast.Attribute)
            and call.func.attr == "_replace"
            and self.is_alias(call.func.value)
        ):
            return {kw.arg for kw in call.keywords if kw.arg}
        sanitizer = (
            name in catalog.HELPER_NAMES
            or name in self.options.extend_sanitizers
            or qname in self.options.extend_sanitizers
            or qname in _DEEP
        )
        if sanitizer and first is not None and name != self.node.name:
            if self.is_alias(first):
                return {ALL}
            field = self.field_of(first)
            if field is not None:
                return {field}
        return set()

    # --- paths ------------------------------------------------------------------------------------

    def run(self) -> list[_Path]:
        end = self.block(self.node.body, frozenset())
        if end is not None:
            last = self.node.end_lineno or self.node.lineno
            self.paths.append(_Path(end, last, returns=False))
        return self.paths

    def block(self, body: list[ast.stmt], handled: frozenset[str]) -> frozenset[str] | None:
        """Walk statements; None once every path has left the block."""
        current: frozenset[str] | None = handled
        for statement in body:
            if current is None:
                return None
            current = self.statement(statement, current)
        return current

    def statement(self, node: ast.stmt, handled: frozenset[str]) -> frozenset[str] | None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return handled
        if isinstance(node, ast.Return):
            done = handled | self.handled_by(node)
            self.paths.append(_Path(frozenset(done), node.lineno, returns=True))
            return None
        if isinstance(node, ast.Raise):
            return None
        if isinstance(node, ast.If):
            when_true, when_false = self.narrow(node.test)
            body = self.block(node.body, handled | when_true)
            orelse = self.block(node.orelse, handled | when_false)
            return _join(body, orelse)
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            return self.loop(node, handled)
        if isinstance(node, (ast.With, ast.AsyncWith)):
            return self.block(node.body, handled)
        if isinstance(node, ast.Try):
            body = self.block(node.body, handled)
            if body is not None and node.orelse:
                body = self.block(node.orelse, body)
            ends = [body] + [self.block(h.body, handled) for h in node.handlers]
            end = None
            for item in ends:
                end = _join(end, item)
            return self.block(node.finalbody, end) if end is not None else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name):
                if self.is_alias(value):
                    self.aliases.add(target.id)
                elif target.id in self.aliases:
                    self.aliases.discard(target.id)
            sources = self.fields_in(value)
            if sources:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        self.derived[sub.id] = sources[0]
        return handled | self.handled_by(node)

    def fields_in(self, expr: ast.expr) -> list[str]:
        """The fields an expression reads, directly or through locals computed from them."""
        found: list[str] = []
        for sub in ast.walk(expr):
            field = None
            if isinstance(sub, ast.Attribute):
                field = self.field_of(sub)
            elif isinstance(sub, ast.Name):
                field = self.derived.get(sub.id)
            elif (
                isinstance(sub, ast.Call)
                and last_name(sub.func) == "getattr"
                and len(sub.args) >= 2
                and self.is_alias(sub.args[0])
            ):
                key = sub.args[1]
                constant = isinstance(key, ast.Constant) and isinstance(key.value, str)
                field = str(key.value) if isinstance(key, ast.Constant) and constant else ALL
            if field is not None and field not in found:
                found.append(field)
        return found

    def loop(
        self, node: ast.For | ast.AsyncFor | ast.While, handled: frozenset[str]
    ) -> frozenset[str] | None:
        over_alias = isinstance(node, (ast.For, ast.AsyncFor)) and self.is_alias(node.iter)
        if over_alias and isinstance(node, (ast.For, ast.AsyncFor)):
            # `for o in outputs`: o is each element; an empty list has nothing to detach.
            if isinstance(node.target, ast.Name):
                self.aliases.add(node.target.id)
        body = self.block(node.body, handled)
        displays = (ast.Tuple, ast.List, ast.Set)
        at_least_once = isinstance(node, (ast.For, ast.AsyncFor)) and (
            isinstance(node.iter, displays) and bool(node.iter.elts)
        )
        if over_alias or at_least_once:
            return body if body is not None else handled
        return _join(handled, body)  # the body may run zero times

    def narrow(self, test: ast.expr) -> tuple[frozenset[str], frozenset[str]]:
        """Fields with nothing (left) to detach when ``test`` is true / false: known ``None``,
        or judged by the test itself (``if not out.f.flags.writeable: copy`` — on the branch
        the test skips, the helper decided ``f`` needs no copy)."""
        mentioned = frozenset(self.fields_in(test))
        when_true, when_false = self._none_checks(test)
        return when_true | mentioned, when_false | mentioned

    def _none_checks(self, test: ast.expr) -> tuple[frozenset[str], frozenset[str]]:
        """Fields known ``None`` when ``test`` is true / false."""
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            right = test.comparators[0]
            if isinstance(right, ast.Constant) and right.value is None:
                field = self.field_of(test.left)
                if field is not None and isinstance(test.ops[0], ast.Is):
                    return frozenset({field}), frozenset()
                if field is not None and isinstance(test.ops[0], ast.IsNot):
                    return frozenset(), frozenset({field})
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            when_true, when_false = self._none_checks(test.operand)
            if not when_true and not when_false:
                field = self.field_of(test.operand)
                return (frozenset({field}), frozenset()) if field else (frozenset(), frozenset())
            return when_false, when_true
        if isinstance(test, ast.BoolOp):
            parts = [self._none_checks(value) for value in test.values]
            if isinstance(test.op, ast.And):
                return frozenset().union(*(p[0] for p in parts)), frozenset()
            return frozenset(), frozenset().union(*(p[1] for p in parts))
        field = self.field_of(test) if isinstance(test, ast.Attribute) else None
        if field is not None:
            return frozenset(), frozenset({field})  # falsy: None (or empty)
        return frozenset(), frozenset()


def _join(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    if a is None:
        return b
    if b is None:
        return a
    if ALL in a:
        return b
    if ALL in b:
        return a
    return a & b


def _annotated_class(
    annotation: ast.expr | None, view: ProjectView, scope: Scope
) -> ClassFact | None:
    if annotation is None:
        return None
    for leaf in leaves(annotation):
        fact = view.class_fact(leaf, scope)
        if fact is not None and fact.array_fields():
            return fact
    return None


def incomplete_helpers(
    tree: ast.Module, module_scope: Scope, view: ProjectView, options: Options, text: str | None
) -> list[Miss]:
    """SHM301 findings of a module: one per helper and missed array-bearing field.

    A function is a candidate only by name or when its lines spell a read-only check
    (``text``: a per-line gate, as the dataflow's), so most functions cost nothing.
    """
    read_only_lines = None
    if text is not None:
        names = (*catalog.HELPER_NAMES, *options.extend_sanitizers)
        spelled = [word for word in READ_ONLY_CHECKS if word in text]
        if not spelled and not any(name.rpartition(".")[2] in text for name in names):
            return []  # no function here is named as a helper or checks for read-only arrays
        read_only_lines = (
            [
                number
                for number, line in enumerate(text.split("\n"), start=1)
                if any(word in line for word in spelled)
            ]
            if spelled
            else []
        )
    checkers = checkers_of(tree, read_only_lines)
    if text is not None and read_only_lines is not None:
        read_only_lines = sorted({*read_only_lines, *lines_spelling(text, checkers)})
    misses: list[Miss] = []
    for node in statements(tree.body):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        positional = [*node.args.posonlyargs, *node.args.args]
        annotated = [arg for arg in positional[:2] if arg.annotation is not None]
        if not annotated:
            continue
        named = node.name in catalog.HELPER_NAMES or node.name in options.extend_sanitizers
        if not named and read_only_lines is not None:
            end = node.end_lineno or node.lineno
            if not any(node.lineno <= line <= end for line in read_only_lines):
                continue
        candidates = [a for a in annotated if named or detaches_param_fields(node, a.arg, checkers)]
        if not candidates:
            continue
        scope = Scope(node, module_scope)
        for arg in candidates:
            fact = _annotated_class(arg.annotation, view, scope)
            if fact is not None:
                misses.extend(_check(node, arg.arg, fact, scope, options))
                break
    return misses


def _check(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    param: str,
    fact: ClassFact,
    scope: Scope,
    options: Options,
) -> list[Miss]:
    paths = _Helper(node, param, scope, options).run()
    site = Site(node.lineno, node.col_offset, node.lineno, node.col_offset)
    short = fact.name.rpartition(".")[2]
    misses = []
    for field in fact.array_fields():
        missing = [p for p in paths if ALL not in p.handled and field.name not in p.handled]
        if not missing:
            continue
        where = missing[0]
        how = f"the return at line {where.line}" if where.returns else "the end of the function"
        message = (
            f"detach helper `{node.name}` does not detach `{short}.{field.name}` on every path "
            f"(array-bearing, declared at {field.path}:{field.line}); missed on the path to {how}"
        )
        misses.append(Miss(site, message))
    return misses
