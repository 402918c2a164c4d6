"""The two fix styles as libcst transformers: wrap the read, or detach it in place after it."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.metadata import ParentNodeProvider

Read = cst.Call | cst.Await


def _call_stmt(helper: str, argument: str) -> cst.SimpleStatementLine:
    call = cst.Call(func=cst.Name(helper), args=[cst.Arg(cst.Name(argument))])
    return cst.SimpleStatementLine(body=[cst.Expr(call)])


def detach_statements(
    helper: str, name: str, is_list: bool, loop_var: str
) -> list[cst.BaseStatement]:
    """``helper(name)``, or ``for item in name: helper(item)`` for a list of outputs."""
    if not is_list:
        return [_call_stmt(helper, name)]
    body = cst.IndentedBlock(body=[_call_stmt(helper, loop_var)])
    return [cst.For(target=cst.Name(loop_var), iter=cst.Name(name), body=body)]


class WrapReads(cst.CSTTransformer):
    """``ray.get(x)`` → ``helper(ray.get(x))`` for each target read, with that read's helper
    (parentheses stay outside)."""

    def __init__(self, targets: dict[cst.CSTNode, str]) -> None:
        super().__init__()
        self.targets = targets
        self.wrapped = 0

    def _wrap(self, original: Read, updated: Read) -> cst.BaseExpression:
        helper = self.targets.get(original)
        if helper is None:
            return updated
        self.wrapped += 1
        inner = updated.with_changes(lpar=[], rpar=[])
        return cst.Call(
            func=cst.Name(helper),
            args=[cst.Arg(inner)],
            lpar=updated.lpar,
            rpar=updated.rpar,
        )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        return self._wrap(original_node, updated_node)

    def leave_Await(self, original_node: cst.Await, updated_node: cst.Await) -> cst.BaseExpression:
        return self._wrap(original_node, updated_node)


class InPlaceReads(cst.CSTTransformer):
    """Detach each target read with an in-place helper (one that returns None, like vLLM's).

    ``x = READ`` gets ``helper(x)`` (or a ``for`` loop over a list of outputs) after it; a read
    elsewhere in a simple statement is hoisted first into a fresh local:
    ``return READ`` → ``output = READ`` / ``helper(output)`` / ``return output``.
    """

    METADATA_DEPENDENCIES = (ParentNodeProvider,)

    def __init__(self, targets: dict[cst.CSTNode, bool], helper: str) -> None:
        super().__init__()
        self.targets = targets  # read node → does it return a list of outputs?
        self.helper = helper
        self.fixed = 0
        self._scope_names: dict[cst.CSTNode, set[str]] = {}
        self._created: dict[cst.CSTNode, set[str]] = {}  # statement → names made for it
        self._hoisted: dict[cst.CSTNode, tuple[str, cst.BaseExpression]] = {}
        self._pending: dict[cst.CSTNode, list[cst.CSTNode]] = {}

    def _fresh(self, base: str, line: cst.SimpleStatementLine) -> str:
        """A name unused in the enclosing function (or module), distinct from the other names
        made for the same statement. Names made for other statements may be reused: each is
        dead after its statement."""
        scope: cst.CSTNode | None = line
        while scope is not None and not isinstance(scope, (cst.FunctionDef, cst.Module)):
            scope = self.get_metadata(ParentNodeProvider, scope, None)
        assert scope is not None
        if scope not in self._scope_names:
            self._scope_names[scope] = names_in(scope)
        taken = self._scope_names[scope] | self._created.setdefault(line, set())
        candidate, number = base, 0
        while candidate in taken:
            number += 1
            candidate = f"{base}_{number}"
        self._created[line].add(candidate)
        return candidate

    def _statement_of(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        parent = self.get_metadata(ParentNodeProvider, node, None)
        while parent is not None and not isinstance(parent, cst.SimpleStatementLine):
            parent = self.get_metadata(ParentNodeProvider, parent, None)
        return parent

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._pending[node] = []

    def _leave_read(self, original: Read, updated: Read) -> cst.BaseExpression:
        if original not in self.targets:
            return updated
        line = self._statement_of(original)
        if line is None or len(line.body) != 1:
            return updated  # `a; b` lines and reads outside simple statements: not fixed
        small = line.body[0]
        if (
            isinstance(small, cst.Assign)
            and small.value is original
            and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name)
        ):
            self._pending[line].append(original)
            return updated
        name = self._fresh("outputs" if self.targets[original] else "output", line)
        self._hoisted[original] = (name, updated.with_changes(lpar=[], rpar=[]))
        self._pending[line].append(original)
        return cst.Name(name, lpar=updated.lpar, rpar=updated.rpar)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        return self._leave_read(original_node, updated_node)

    def leave_Await(self, original_node: cst.Await, updated_node: cst.Await) -> cst.BaseExpression:
        return self._leave_read(original_node, updated_node)

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        reads = self._pending.pop(original_node, [])
        if not reads:
            return updated_node
        before: list[cst.BaseStatement] = []
        after: list[cst.BaseStatement] = []
        for read in reads:
            is_list = self.targets[read]
            if read in self._hoisted:
                name, expression = self._hoisted[read]
                target = cst.AssignTarget(cst.Name(name))
                before.append(cst.SimpleStatementLine(body=[cst.Assign([target], expression)]))
                before.extend(self._detach(name, is_list, original_node))
            else:
                small = original_node.body[0]
                assert isinstance(small, cst.Assign)
                name = small.targets[0].target.value  # type: ignore[attr-defined]
                after.extend(self._detach(name, is_list, original_node))
            self.fixed += 1
        statements: Sequence[cst.BaseStatement] = [*before, updated_node, *after]
        if before:
            # Comments and blank lines above the statement stay above the new first line.
            first = before[0].with_changes(leading_lines=updated_node.leading_lines)
            statements = [first, *before[1:], updated_node.with_changes(leading_lines=()), *after]
        return cst.FlattenSentinel(statements)

    def _detach(
        self, name: str, is_list: bool, line: cst.SimpleStatementLine
    ) -> list[cst.BaseStatement]:
        loop_var = self._fresh(_singular(name), line) if is_list else ""
        return detach_statements(self.helper, name, is_list, loop_var)


def names_in(node: cst.CSTNode) -> set[str]:
    """Every identifier spelled in ``node`` (bindings, reads, attributes: all of them)."""
    names: set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            names.add(node.value)

    node.visit(Collect())
    return names


def _singular(name: str) -> str:
    if name.endswith("s") and len(name) > 1:
        return name[:-1]
    return f"{name}_item"
