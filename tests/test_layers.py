"""The package is a stack with one direction (docs/architecture.md), read from its own imports.

Every ``import`` of a shmlint module counts, at module level, under ``TYPE_CHECKING`` and inside
functions alike: an import moved into a function still may not go up or close a cycle.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "shmlint"

# Lowest first. A module may import its own layer and the layers below it, never above.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("basics", ("shmlint._version", "shmlint.basics")),
    ("facts", ("shmlint.facts",)),
    ("analysis", ("shmlint.analysis",)),
    ("run", ("shmlint.run",)),
    (
        "front ends",
        (
            "shmlint.cli",
            "shmlint.fixer",
            "shmlint.server",
            "shmlint.codemod",
            "shmlint.flake8_plugin",
            "shmlint.__main__",
        ),
    ),
)
# The runtime stands apart: it imports only itself, numpy and the standard library.
RUNTIME = ("shmlint.runtime", "shmlint.pytest_plugin")
TOP = "shmlint"  # the package's __init__: re-exports the version only


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _layer(module: str) -> int:
    for index, (_, prefixes) in enumerate(LAYERS):
        if _within(module, prefixes):
            return index
    raise AssertionError(f"{module} is in no layer: add its package to LAYERS")


def _imports(module: str) -> set[str]:
    """The shmlint modules ``module`` imports (``from pkg import sub`` is the submodule)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in MODULES else base)
    return {name for name in found if name == TOP or name.startswith(TOP + ".")}


GRAPH = {module: _imports(module) - {module} for module in MODULES}


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        if module != TOP and not _within(module, RUNTIME):
            _layer(module)


def test_imports_go_down_the_stack() -> None:
    upward = [
        f"{module} ({LAYERS[_layer(module)][0]}) imports {target} ({LAYERS[_layer(target)][0]})"
        for module, targets in sorted(GRAPH.items())
        if module != TOP and not _within(module, RUNTIME)
        for target in sorted(targets)
        if target != TOP and not _within(target, RUNTIME) and _layer(target) > _layer(module)
    ]
    assert not upward, "\n".join(upward)


def test_the_facts_model_knows_nothing_of_the_engine_and_the_engine_nothing_of_the_runner() -> None:
    for module, targets in GRAPH.items():
        if _within(module, ("shmlint.facts",)):
            assert not {t for t in targets if _within(t, ("shmlint.analysis",))}, module
        if _within(module, ("shmlint.analysis",)):
            assert not {t for t in targets if _within(t, ("shmlint.run",))}, module


def test_no_import_cycles() -> None:
    """Tarjan's strongly connected components over every import (functions included)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in GRAPH.get(module, ()):
            if target not in MODULES:
                continue
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(MODULES):
        if module not in index:
            visit(module)
    assert not cycles, cycles


def _imported_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and not node.level and node.module:
        return [node.module]
    return []


def test_the_runtime_imports_only_itself_numpy_and_the_standard_library() -> None:
    """At import time; the tracker imports ray inside its functions, when it is used (and the
    pytest plugin is pytest's)."""
    for module, path in MODULES.items():
        if not _within(module, RUNTIME):
            continue
        allowed_roots = set(sys.stdlib_module_names) | {"numpy", "shmlint", "__future__"}
        if module == "shmlint.pytest_plugin":
            allowed_roots.add("pytest")
        lazy_roots = allowed_roots | {"ray"}
        tree = ast.parse(path.read_text(encoding="utf-8"))
        in_functions = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for inner in ast.walk(node)
        }
        for node in ast.walk(tree):
            roots = lazy_roots if id(node) in in_functions else allowed_roots
            for name in _imported_names(node):
                assert name.split(".")[0] in roots, f"{module} imports {name}"
                if name.startswith("shmlint"):
                    assert _within(name, RUNTIME), f"{module} imports {name}"


@pytest.mark.parametrize(
    "args", [["check", "examples"], ["check", "--per-file", "examples"]], ids=" ".join
)
def test_the_check_path_never_imports_libcst(args: list[str]) -> None:
    """Nor the language server's pygls (an optional extra)."""
    code = (
        "import sys\nfrom shmlint.cli import main\n"
        f"status = main({args!r} + ['--no-cache', '-j', '1'])\n"
        "assert 'libcst' not in sys.modules, 'libcst imported'\n"
        "assert not {'pygls', 'lsprotocol'} & set(sys.modules), 'pygls imported'\n"
        "sys.exit(status)\n"
    )
    root = PACKAGE.parent
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=False
    )
    assert completed.returncode == 1, completed.stderr  # findings, and no assertion error
