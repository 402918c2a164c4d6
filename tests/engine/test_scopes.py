"""Walrus bindings: a scope looks for ``:=`` only in the expressions whose lines spell it, and
finds every binding a walk of all expressions finds."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from shmlint.basics.names import Scope, Walrus, walrus_lines
from tests.fixture_markers import FIXTURES

TEXT = """\
import ray

if (first := ray.get(ref)) is not None:
    pass
total = [y for x in items if (y := f(
    x
    ))]
note = "a := in a string"

@decorate(built := make())
class Box(Base if (base := pick()) else object):
    field = (inner := 1)

    def method(self, value=(default := 2)):
        while (chunk := read()):
            pass
        return lambda: (late := 3)

def plain():
    return 1

values = compute(
    (later := 4),
)
"""


def _scopes(tree: ast.Module, walrus: Walrus) -> list[tuple[str, set[str], dict[str, str]]]:
    found = []
    module = Scope(tree, None, walrus=walrus)
    found.append(("<module>", module.locals, module.imports))
    stack = [(tree, module)]
    while stack:
        node, scope = stack.pop()
        for child in ast.walk(node):
            if child is not node and isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
            ):
                inner = Scope(child, scope)
                found.append((getattr(child, "name", "<lambda>"), inner.locals, inner.imports))
    return found


def _same(text: str) -> None:
    tree = ast.parse(text)
    assert _scopes(tree, walrus_lines(text)) == _scopes(tree, True)


def test_lines_that_spell_the_operator() -> None:
    assert walrus_lines(None) is True
    assert walrus_lines("x = 1\n") == ()
    assert walrus_lines(TEXT) == (3, 5, 8, 10, 11, 12, 14, 15, 17, 23)


def test_every_binding_is_found() -> None:
    _same(TEXT)
    tree = ast.parse(TEXT)
    module = Scope(tree, None, walrus=walrus_lines(TEXT))
    assert {"first", "y", "built", "base", "later"} <= module.locals
    box = next(node for node in tree.body if isinstance(node, ast.ClassDef))
    assert "inner" in Scope(box, module).locals
    method = box.body[1]
    assert isinstance(method, ast.FunctionDef)
    assert "chunk" in Scope(method, Scope(box, module)).locals


@pytest.mark.parametrize("path", sorted(FIXTURES.rglob("*.py")), ids=str)
def test_fixtures_bind_the_same(path: Path) -> None:
    _same(path.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_the_ray_tree_binds_the_same() -> None:
    from benchmarks.corpus import corpus

    spelled = 0
    for path in sorted(corpus("ray==2.60.0").rglob("*.py")):
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        if ":=" in text:
            spelled += 1
            _same(text)
    assert spelled > 30


TARGETS = """\
a, (b, *c) = f()
[d, e] = g()
for i, (j, k) in pairs:
    pass
with open(p) as (h, *rest):
    pass
del a, b
obj[(w := 0)] = 1
obj.attr = 2
first[0], second.x = 3, 4
"""


def test_assignment_targets_bind_their_names() -> None:
    """Names in tuples, lists and starred targets bind; a subscript or attribute target
    binds none (but a walrus inside it does)."""
    tree = ast.parse(TARGETS)
    for walrus in (walrus_lines(TARGETS), True):
        module = Scope(tree, None, walrus=walrus)
        assert module.locals == {"a", "b", "c", "d", "e", "i", "j", "k", "h", "rest", "w"}
