"""The helper's import, added on the module's top statements only, is what libcst's
``AddImportsVisitor`` gives run on the whole module (shmlint/fixer/imports.py)."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from shmlint.fixer.imports import with_imports

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "fixtures").rglob("*.py")) + sorted((ROOT / "examples").rglob("*.py"))
RUNTIME = "shmlint.runtime"
Imports = list[tuple[str, str, str | None]]
IMPORTS: list[Imports] = [
    [(RUNTIME, "detach_zero_copy", None)],
    [
        (RUNTIME, "detach_zero_copy", None),
        (RUNTIME, "detach_zero_copy_from_model_runner_output", None),
    ],
    [("helpers.detach", "keep_nothing", None)],
    [(RUNTIME, "detach_zero_copy_from_model_runner_output", "shmlint_detach")],
]
EDGES = {
    "empty": "",
    "a comment only": "# nothing here\n",
    "a docstring only": '"""Doc."""\n',
    "a docstring, then a class": '"""Doc."""\nclass A:\n    def f(self):\n        pass\n',
    "a class first": "# header\n\nclass A:\n    x = 1\n",
    "a function first, decorated": "@decorate\ndef f():\n    return ray.get(r)\n",
    "imports only": "import os\nfrom ray import get\n",
    "imports, then a class": "import ray\n# why\nclass A:\n    pass\n",
    "imports, then a comment and a blank line": "import ray\n\n# about f\ndef f():\n    pass\n",
    "the runtime imported already": "from shmlint.runtime import detach_zero_copy\nx = 1\n",
    "the runtime imported for another name": "from shmlint.runtime import other\n\nx = 1\n",
    "a future import": '"""Doc."""\nfrom __future__ import annotations\n\nimport a\nif x:\n    y\n',
    "a strict flag": "__strict__ = True\nimport os\nwhile True:\n    break\n",
    "a simple first line, not a docstring": "x = 1\nimport os\ntry:\n    y\nfinally:\n    z\n",
    "two statements on a line": "import os; import sys\nclass A: pass\n",
    "a trailing comment": "import os\n\ndef f():\n    pass\n# the end\n",
    "an import in a function": "def f():\n    from shmlint.runtime import detach_zero_copy\n",
    "an import star": "from shmlint.runtime import *\nclass A: pass\n",
}


def _whole(module: cst.Module, imports: Imports) -> cst.Module:
    context = CodemodContext()
    for source, name, alias in imports:
        AddImportsVisitor.add_needed_import(context, source, name, alias)
    return AddImportsVisitor(context).transform_module(module)


@pytest.mark.parametrize("imports", IMPORTS, ids=["one", "two", "elsewhere", "aliased"])
@pytest.mark.parametrize("name", sorted(EDGES))
def test_an_edge_case(name: str, imports: Imports) -> None:
    module = cst.parse_module(EDGES[name])
    assert with_imports(module, imports).code == _whole(module, imports).code


def test_every_fixture_and_example() -> None:
    assert len(SOURCES) > 50
    imports = IMPORTS[1]
    for path in SOURCES:
        module = cst.parse_module(path.read_bytes())
        assert with_imports(module, imports).code == _whole(module, imports).code, path
