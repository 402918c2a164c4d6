"""Functions whose result holds nothing passed to them (shmlint/facts/fresh.py): which bodies
count, and a warm run following an edit that makes one fresh or not."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from shmlint.basics.names import Scope, dotted_name
from shmlint.facts.collect import summarize_syntax
from shmlint.facts.evidence import fresh_returns
from shmlint.facts.fresh import fresh_result
from shmlint.facts.returned import may_be_fresh
from tests.project.merged import file_codes, findings, warm_after_edits, write_tree


def _qualify(node: ast.expr) -> str | None:
    """As a module with `import numpy as np` and `import copy` resolves names."""
    dotted = dotted_name(node)
    if dotted is None:
        return None
    head, _, rest = dotted.partition(".")
    head = {"np": "numpy"}.get(head, head)
    return f"{head}.{rest}" if rest else head


def _fresh(source: str) -> bool:
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    return fresh_result(node, _qualify, {"np", "copy"})


FRESH = {
    "copy-call": "def f(x):\n    return np.concatenate(x)\n",
    "copy-method": "def f(x):\n    return x.tolist()\n",
    "f-string": "def f(host, port):\n    return f'{host}:{port}'\n",
    "arithmetic": "def f(a, b):\n    return a + b\n",
    "comparison": "def f(a, b):\n    return a == b\n",
    "clean-attribute": "def f(x):\n    return x.shape\n",
    "clean-builtin": "def f(x):\n    return len(x), int(x[0])\n",
    "through-locals": "def f(x):\n    y = np.copy(x)\n    z = y\n    return z\n",
    "loop-built": "def f(xs):\n    out = []\n    for x in xs:\n        out.append(x.copy())\n"
    "    return out\n",
    "dict-of-copies": "def f(x):\n    return {'a': np.array(x), 'n': len(x)}\n",
    "own-import": "def f(x):\n    import numpy as numeric\n    return numeric.stack(x)\n",
    "plain-decorators": "@staticmethod\n@DeveloperAPI\ndef f(x):\n    return np.stack(x)\n",
    "comprehension-of-copies": "def f(xs):\n    return [x.copy() for x in xs]\n",
    "helper": "def f(x):\n    return detach_zero_copy(x)\n",
    "record-of-copies": "def f(x):\n    return Record(n=len(x), rows=np.copy(x))\n",
    "module-state-untouched": "def f(x):\n    n = len(x)\n    return DEFAULTS\n",
}
NOT_FRESH = {
    "parameter": "def f(x):\n    return x\n",
    "element": "def f(x):\n    return x[0]\n",
    "attribute": "def f(x):\n    return x.data\n",
    "view-function": "def f(x):\n    return np.asarray(x)\n",
    "view-method": "def f(x):\n    return x.reshape(2, -1)\n",
    "unknown-call": "def f(x):\n    return transform(x)\n",
    "display-concatenation": "def f(x):\n    return [x] + []\n",
    "either": "def f(x, y):\n    return x or y\n",
    "conditional": "def f(x, c):\n    return x if c else None\n",
    "astype-no-copy": "def f(x):\n    return x.astype(int, copy=False)\n",
    "array-no-copy": "def f(x):\n    return np.array(x, copy=False)\n",
    "shadowed-module": "def f(x):\n    np = x\n    return np.concatenate(x)\n",
    "appended": "def f(x):\n    out = []\n    out.append(x)\n    return out\n",
    "stored": "def f(x):\n    out = {}\n    out['x'] = x\n    return out\n",
    "augmented": "def f(x):\n    out = []\n    out += x\n    return out\n",
    "alias-filled": "def f(x):\n    out = []\n    alias = out\n    alias.append(x)\n"
    "    return out\n",
    "filled-by-call": "def f(x):\n    out = {}\n    fill(out, x)\n    return out\n",
    "filled-by-receiver": "def f(x):\n    out = {}\n    x.into(out)\n    return out\n",
    "nested-parameter": "def f(x):\n    out = []\n    def g(q):\n        out.append(q)\n"
    "    g(x)\n    return out\n",
    "closure-call": "def f(x):\n    def g():\n        return x\n    return g()\n",
    "lambda": "def f(x):\n    return lambda: x\n",
    "walrus": "def f(x):\n    if (y := x):\n        pass\n    return y\n",
    "with": "def f(x):\n    with x as y:\n        return y\n",
    "loop-target": "def f(xs):\n    for x in xs:\n        last = x\n    return last\n",
    "comprehension": "def f(xs):\n    return [x for x in xs]\n",
    "global": "def f(x):\n    global G\n    G = x\n    return G\n",
    "exception": "def f(x):\n    try:\n        raise E(x)\n    except E as e:\n        return e\n",
    "exception-holding-input": "def f(x):\n    try:\n        y = x.missing\n"
    "    except AttributeError as e:\n        return e  # (its `obj` is x)\n    return None\n",
    "called-by-name-after-a-leak": "def f(x):\n    log(x)\n    return Record(np.copy(x))\n",
    "filled-through-a-method-result": "def f(x):\n    out = {}\n"
    "    out.setdefault('k', []).append(x)\n    return out\n",
    "filled-through-or": "def f(x):\n    out = {}\n    (out.get('k') or []).append(x)\n"
    "    return out\n",
    "stored-through-a-call": "def f(x):\n    out = O()\n    vars(out)['data'] = x\n"
    "    return out\n",
    "module-view-function": "def f(x):\n    return np.split(x, 2)\n",
    "shallow-copy-module": "def f(x):\n    return copy.copy(x)\n",
    "locals": "def f(x):\n    return locals()\n",
    "eval": "def f(x):\n    return eval('x')\n",
    "module-state-stored-then-read": "def f(x):\n    LAST['v'] = x\n    return latest()\n",
    "global-set-elsewhere": "def f(x):\n    global G\n    G = []\n    setter(x)\n    return G\n",
    "match": "def f(x):\n    match x:\n        case [y]:\n            return y\n",
    "generator": "def f(x):\n    yield np.copy(x)\n    return None\n",
    "generator-expression-yield": "def f(x):\n    y = yield x\n    return np.copy(y)\n",
    "coroutine": "async def f(x):\n    return np.copy(x)\n",
    "decorated": "@wrap\ndef f(x):\n    return np.copy(x)\n",
    "returns-nothing": "def f(x):\n    print(x)\n",
    "star-carried": "def f(*xs):\n    return xs\n",
    "module-state-filled": "def f(x):\n    register(x)\n    return REGISTRY\n",
    "module-state-filled-then-read": "def f(x):\n    cache.put(x)\n    return cache.get()\n",
    "local-callable": "def f(x):\n    g = x.method\n    return g()\n",
}


@pytest.mark.parametrize("source", FRESH.values(), ids=FRESH.keys())
def test_bodies_building_their_result_anew_are_fresh(source: str) -> None:
    assert _fresh(source)


@pytest.mark.parametrize("source", NOT_FRESH.values(), ids=NOT_FRESH.keys())
def test_bodies_that_may_return_an_input_are_not(source: str) -> None:
    assert not _fresh(source)


@pytest.mark.parametrize(
    ("source", "in_class", "expected"),
    [
        ("def f(x):\n    return np.copy(x)\n", False, True),
        ("def f():\n    return np.zeros(3)\n", False, False),  # (nothing passed)
        ("def f(self, x):\n    return np.copy(x)\n", True, False),  # (a subclass's may run)
        ("@staticmethod\ndef f(x):\n    return np.copy(x)\n", True, True),
        ("@classmethod\ndef f(cls):\n    return cls()\n", True, False),
        ("@classmethod\ndef f(cls, x):\n    return np.copy(x)\n", True, True),
        ("def f(x) -> Optional[str]:\n    return str(x)\n", False, False),  # (array-free)
        ("def f(x) -> dict[str, int | None]:\n    return {}\n", False, False),
        ("def f(x) -> np.ndarray:\n    return np.copy(x)\n", False, True),
        ("def f(x) -> dict[str, Any]:\n    return {}\n", False, True),
        ("def f(x) -> list:\n    return []\n", False, True),
    ],
)
def test_freshness_is_worked_out_where_it_can_matter(
    source: str, in_class: bool, expected: bool
) -> None:
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    params = tuple(a.arg for a in node.args.args)
    decorators = {dotted_name(d) for d in node.decorator_list}
    returns = ast.unparse(node.returns) if node.returns else ""
    assert may_be_fresh(node, params, in_class, decorators, returns) is expected


CONFIG = '[tool.shmlint]\nmin-confidence = "medium"\n'
FRESH_MOD = "import numpy as np\n\n\ndef combine(parts):\n    return np.concatenate(parts)\n"
PASSING_MOD = "import numpy as np\n\n\ndef combine(parts):\n    return parts\n"
USER = """\
import ray

from pkg.mod import combine


class Keeper:
    def keep(self, refs):
        self.rows = combine(ray.get(refs))
"""


def _files(mod: str) -> dict[str, str]:
    return {
        "pyproject.toml": CONFIG,
        "pkg/__init__.py": "",
        "pkg/mod.py": mod,
        "pkg/user.py": USER,
    }


def test_a_fresh_function_of_another_module_keeps_nothing_of_a_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tree(tmp_path, _files(FRESH_MOD))
    assert findings(tmp_path, capsys, "--no-cache") == []
    write_tree(tmp_path, _files(PASSING_MOD))
    assert file_codes(findings(tmp_path, capsys, "--no-cache")) == [("user.py", 8, "SHM102")]


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (FRESH_MOD, PASSING_MOD, [("user.py", 8, "SHM102")]),
        (PASSING_MOD, FRESH_MOD, []),
    ],
    ids=["made-passing", "made-fresh"],
)
def test_an_edit_of_the_callee_is_followed_warm(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    before: str,
    after: str,
    expected: list[tuple[str, int, str]],
) -> None:
    warm = warm_after_edits(tmp_path, capsys, monkeypatch, _files(before), [after])
    assert file_codes(warm) == expected


def test_a_name_defined_twice_is_fresh_only_if_neither_body_may_pass_its_input_on() -> None:
    # (The merge rates one of the definitions; the other may be the one that runs.)
    source = (
        "import numpy as np\n\n\ndef pick(x):\n    return np.concatenate(x)\n\n\n"
        "if ACCEL is not None:\n\n    def pick(x):\n        return ACCEL.pick(x)\n\n\n"
        "def stack(x):\n    return np.stack(x)\n"
    )
    tree = ast.parse(source)
    summary = summarize_syntax(tree, "pkg.mod", "pkg/mod.py", False, Scope(tree, None))
    fresh = {f.name: fresh_returns(f.returns)[0] for f in summary.functions}
    assert fresh == {"pkg.mod.pick": False, "pkg.mod.stack": True}
