"""The per-body gate (shmlint/analysis/dataflow/gate.py) keeps every line that may spell a read,
whatever the names it is given: skipping the scan of names a text does not hold loses none."""

from __future__ import annotations

import re

from shmlint.analysis.dataflow.gate import Gate
from shmlint.basics import catalog
from shmlint.basics.options import Options

TEXT = """\
import ray
from ray import get as fetch

def a(ref):
    return fetch(ref)

def b(handle):
    return reader_one (handle)

def c(x):
    return reader_two
    (x)

async def d(fut):
    return await fut

def e(x):
    return x + 1
"""


def _reference(text: str, names: set[str]) -> list[int]:
    """Lines where ``await`` or a call of any name starts, scanning for every name."""
    starts = [m.start() for m in re.finditer(r"await\b", text)]
    for name in names:
        starts += [m.start() for m in re.finditer(rf"{re.escape(name)}\s*\(", text)]
    return sorted({text.count("\n", 0, start) + 1 for start in starts})


def test_absent_names_change_nothing() -> None:
    absent = frozenset(f"reader_{i}_elsewhere" for i in range(400))
    extra = absent | {"reader_one", "reader_two"}
    gate = Gate(TEXT, Options(), extra)
    names = {"get", "fetch", *extra} | catalog.FUTURE_RESULT_METHODS | catalog.QUEUE_READ_METHODS
    assert gate._lines == _reference(TEXT, names)
    # A call spelled with a space, or across lines, starts on the name's line.
    assert 8 in gate._lines and 11 in gate._lines
    assert 18 not in gate._lines


def test_lines_match_the_bodies() -> None:
    import ast

    tree = ast.parse(TEXT)
    gate = Gate(TEXT, Options(), frozenset({"reader_one", "reader_two"}))
    kept = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and gate.may_read(node)
    ]
    assert kept == ["a", "b", "c", "d"]


# The direct gate: in a module that makes no handle, only `ray.get` itself (however imported)
# and configured sources read.
_DIRECT_CASES = {
    "plain": ("import ray\n\n\ndef f(ref):\n    return ray.get(ref)\n", True),
    "a dict's get": ("import ray\n\n\ndef f(d):\n    return d.get('k')\n", False),
    "unimported ray": ("def f(ref):\n    return ray.get(ref)\n", True),
    "module alias": ("import ray as r\n\n\ndef f(ref):\n    return r.get(ref)\n", True),
    "submodule alias": (
        "import ray._private.worker as w\n\n\ndef f(ref):\n    return w.get(ref)\n",
        True,
    ),
    "from import": ("from ray import get\n\n\ndef f(ref):\n    return get(ref)\n", True),
    "renamed": ("from ray import get as fetch\n\n\ndef f(ref):\n    return fetch(ref)\n", True),
    "imported in the body": (
        "def f(ref):\n    import ray as rr\n\n    return rr.get(ref)\n",
        True,
    ),
    "a call broken before its parenthesis": (
        "import ray\n\n\ndef f(ref):\n    return ray.get(\n        ref)\n",
        True,
    ),
    "configured": ("def f(q):\n    return q.read_item()\n", True),
    "an await": ("async def f(fut):\n    return await fut\n", False),
}


def test_the_direct_gate_keeps_a_body_that_calls_ray_get_however_imported() -> None:
    import ast

    from shmlint.analysis.dataflow.gate import DirectGate

    options = Options(extend_sources=frozenset({"pkg.read_item"}))
    for name, (text, reads) in _DIRECT_CASES.items():
        tree = ast.parse(text)
        function = next(
            n for n in ast.walk(tree) if isinstance(n, ast.AsyncFunctionDef | ast.FunctionDef)
        )
        assert DirectGate(text, options, tree).may_read(function) is reads, name
