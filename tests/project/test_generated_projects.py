"""Generated multi-module projects: every shortcut of the project run gives what the full
analysis gives. Each module is a few definitions drawn from Ray-shaped templates (functions
that compile graphs, return or forward refs and handles, read them, keep them; classes that
store what their constructor gets; Ray queues; awaits), with names drawn from a small pool,
so that modules call, import and subclass each other's definitions in ways no hand-written
fixture covers. For each project:

- phase 1 gives every file its per-file result;
- re-checking only the files the plan picks gives the findings of re-checking every file
  against the project's facts;
- parsing only the modules the facts need gives the findings of parsing them all.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shmlint.analysis.engine import check_path
from shmlint.basics.config import Config
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence
from shmlint.run.passes import first_pass
from shmlint.run.runner import check_files, check_project

_NAMES = ("alpha", "beta", "gamma", "delta")
_ATTRS = ("ref", "graph", "held")
_CLASSES = ("Engine", "Holder")

# {f} {g}: function names; {a}: an attribute; {C} {D}: class names; {m}: a method name.
_TEMPLATES = (
    "def {f}(dag):\n    return dag.experimental_compile()\n",
    "def {f}(x):\n    return {g}(x)\n",
    "def {f}(x):\n    return {g}(x).execute(1)\n",
    "def {f}(ref):\n    return ray.get(ref)\n",
    "def {f}(x):\n    out = {g}(x).execute(1).get()\n    return out\n",
    "def {f}(x):\n    out = {g}(x)\n    return out\n",
    "def {f}(refs, kept):\n    kept.append({g}(refs))\n",
    "def {f}(x):\n    return {g}(x)[0].get()\n",
    "def {f}(worker):\n    return worker.{m}.remote()\n",
    "def {f}(x):\n    return {C}(x)\n",
    "def {f}(x):\n    return {C}({g}(x))\n",
    "async def {f}(ref):\n    out = await ref\n    return out\n",
    "def {f}(x):\n    graph = {g}(x)\n    first = graph.execute(1).get()\n    return first\n",
    (
        "class {C}:\n    def __init__(self, x):\n        self.{a} = x\n\n"
        "    def {m}(self):\n        return ray.get(self.{a})\n"
    ),
    (
        "class {C}:\n    def {m}(self):\n        out = self.{a}.get()\n        return out\n\n"
        "    def __init__(self, dag):\n        self.{a} = dag.experimental_compile().execute(1)\n"
    ),
    (
        "class {C}:\n    def __init__(self, x):\n        self.{a} = {g}(x)\n\n"
        "    def {m}(self):\n        out = self.{a}.execute(1).get()\n        return out\n"
    ),
    ("class {C}({D}):\n    def {m}(self):\n        self.kept = self.{a}.get()\n"),
    (
        "class {C}:\n    def __init__(self):\n        self.{a} = Queue()\n\n"
        "    def {m}(self):\n        return self.{a}.get()\n"
    ),
    "@ray.remote\nclass {C}:\n    def {m}(self) -> np.ndarray:\n        return np.zeros(3)\n",
    "def {f}(x):\n    return {g}(x).copy()\n",
)

_HEADER = "import numpy as np\nimport ray\nfrom ray.util.queue import Queue\n\n{imports}\n\n"


@st.composite
def _module(draw: st.DrawFn, index: int) -> str:
    """One module: its own names are suffixed with its index; it imports the others'."""
    count = draw(st.integers(1, 4))
    parts = []
    for _ in range(count):
        template = draw(st.sampled_from(_TEMPLATES))
        fields = {
            "f": f"{draw(st.sampled_from(_NAMES))}{index}",
            "g": f"{draw(st.sampled_from(_NAMES))}{draw(st.integers(0, 2))}",
            "a": draw(st.sampled_from(_ATTRS)),
            "C": f"{draw(st.sampled_from(_CLASSES))}{index}",
            "D": f"{draw(st.sampled_from(_CLASSES))}{draw(st.integers(0, 2))}",
            "m": draw(st.sampled_from(("run", "step", "result"))),
        }
        parts.append(template.format(**fields))
    return "\n\n".join(parts)


def _imports(index: int) -> str:
    """Every other module's names (one it does not define stays unresolved, as a name
    imported from another version of a package would)."""
    lines = []
    for other in range(3):
        if other != index:
            names = ", ".join(f"{name}{other}" for name in (*_NAMES, *_CLASSES))
            lines.append(f"from pkg.m{other} import {names}")
    return "\n".join(lines)


def _write(root: Path, bodies: list[str]) -> list[Path]:
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    paths = []
    for index, body in enumerate(bodies):
        path = package / f"m{index}.py"
        path.write_text(_HEADER.format(imports=_imports(index)) + body + "\n")
        paths.append(path)
    return paths


MEDIUM = Config(options=Options(min_confidence=Confidence.MEDIUM))


def _differences(paths: list[Path], config: Config) -> list[str]:
    files = [(path, str(path)) for path in paths]
    problems = []
    for path in paths:
        one = first_pass(path.read_bytes(), str(path), config).result
        alone = check_path(path, str(path), config)
        if one.findings != alone.findings:
            problems.append(f"{path.name}: phase 1 != per-file")
    facts, shortcut = check_project(files, config, jobs=1, cache=None)
    full = check_files(files, config, jobs=1, cache=None, facts=facts)
    for fast, slow in zip(shortcut, full, strict=True):
        if fast.findings != slow.findings:
            problems.append(f"{Path(fast.path).name}: shortcut != full phase 2")
    _, eager = check_project(files, config, jobs=1, cache=None, lazy=False)
    for lazy, every in zip(shortcut, eager, strict=True):
        if lazy.findings != every.findings:
            problems.append(f"{Path(lazy.path).name}: lazy != eager")
    return problems


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.tuples(_module(0), _module(1), _module(2)))
def test_every_shortcut_is_exact_on_generated_projects(bodies: tuple[str, str, str]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "pyproject.toml").write_text('[tool.shmlint]\nmin-confidence = "medium"\n')
        paths = _write(root, list(bodies))
        config = Config(options=MEDIUM.options, root=root)
        problems = _differences(paths, config)
        assert not problems, (problems, [p.read_text() for p in paths])
