"""Generated multi-module projects: every shortcut of the project run gives what the full
analysis gives. Each module is a few definitions drawn from Ray-shaped templates (functions
that compile graphs, return or forward refs and handles, read them, keep them; classes that
store what their constructor gets; Ray queues; awaits), with names drawn from a small pool,
so that modules call, import and subclass each other's definitions in ways no hand-written
fixture covers. For each project:

- phase 1 gives every file its per-file result;
- re-checking only the files the plan picks gives the findings of re-checking every file
  against the project's facts;
- parsing only the modules the facts need gives the findings of parsing them all;
- after edits, a run from the cache reports what a run without it reports.

The same examples every run (a CI gate must not fail by chance). To hunt for new ones,
``SHMLINT_HUNT=2000 python -m pytest tests/project/test_generated_projects.py
tests/fixer/test_fix_generated.py`` draws that many fresh ones per test.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shmlint.analysis.engine import check_path
from shmlint.basics.config import Config
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence
from shmlint.run.files import check_files
from shmlint.run.passes import first_pass
from shmlint.run.runner import check_project

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
    "async def {f}(worker):\n    out = await worker.{m}.remote()\n    return out\n",
    "def {f}(worker, kept):\n    ref = worker.{m}.remote()\n    kept.append(ray.get(ref))\n",
    (
        "def {f}(dag):\n    compiled = dag.experimental_compile()\n"
        "    for i in range(3):\n        out = compiled.execute(i).get()\n    return 0\n"
    ),
    (
        "async def {f}(dag):\n    graph = dag.experimental_compile(enable_asyncio=True)\n"
        "    future = await graph.execute_async(1)\n    out = await future\n    return out\n"
    ),
    (
        "def {f}(refs):\n    outs = []\n    for ref in refs:\n        outs.append(ref.get())\n"
        "    return outs\n"
    ),
    (
        "class {C}:\n    def __init__(self, x):\n        self.{a} = x\n\n"
        "    async def {m}(self):\n        out = await self.{a}\n        return out\n"
    ),
    "def {f}(x) -> np.ndarray:\n    return ray.get(x)\n",
    "def {f}(x) -> int:\n    return ray.get(x)\n",
    "def {f}(x):\n    built = {C}(x)\n    return built.{m}()\n",
    "@dataclasses.dataclass\nclass {C}:\n    {a}: np.ndarray\n    count: int = 0\n",
    "def {f}(ref) -> {D}:\n    return ray.get(ref)\n",
    "def {f}(ref):\n    value = ray.get(ref)\n    return detach_zero_copy(value)\n",
    "def {f}(ref):\n    out = ray.get(ref)\n    return lambda: out\n",
    "KEPT = []\n\n\ndef {f}(ref):\n    KEPT.append(ray.get(ref))\n",
    "def {f}(worker):\n    return {g}(worker.{m}.remote())\n",
    "def {f}(x):\n    refs = {g}(x)\n    return refs[0].get()\n",
    "@ray.remote\ndef {f}(n) -> np.ndarray:\n    return np.zeros(n)\n",
    "def {f}(n):\n    out = ray.get({g}.remote(n))\n    return out\n",
)

_HEADER = (
    "import dataclasses\n\nimport numpy as np\nimport ray\nfrom ray.util.queue import Queue\n\n"
    "from shmlint.runtime import detach_zero_copy\n{imports}\n\n"
)


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


def budget(examples: int) -> settings:
    """``examples`` fixed examples, or (``SHMLINT_HUNT=N``) N fresh ones."""
    hunt = int(os.environ.get("SHMLINT_HUNT", "0") or 0)
    return settings(
        max_examples=hunt or examples,
        derandomize=not hunt,
        database=None if not hunt else settings.default.database,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )


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


@budget(120)
@given(st.tuples(_module(0), _module(1), _module(2)))
def test_every_shortcut_is_exact_on_generated_projects(bodies: tuple[str, str, str]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "pyproject.toml").write_text('[tool.shmlint]\nmin-confidence = "medium"\n')
        paths = _write(root, list(bodies))
        config = Config(options=MEDIUM.options, root=root)
        problems = _differences(paths, config)
        assert not problems, (problems, [p.read_text() for p in paths])


def _json(root: Path, *extra: str) -> list[dict[str, object]]:
    import contextlib
    import io
    import json

    from shmlint.cli import main

    out = io.StringIO()
    command = ["check", "--output-format", "json", "-j", "1", "--min-confidence", "medium"]
    with contextlib.redirect_stdout(out):
        assert main([*command, *extra, str(root / "pkg")]) in (0, 1)
    found = json.loads(out.getvalue())
    for finding in found:  # (where the file is; the rest must be equal)
        finding["path"] = Path(str(finding["path"])).name
    return found  # type: ignore[no-any-return]


@budget(40)
@given(
    st.tuples(_module(0), _module(1), _module(2)),
    st.lists(
        st.tuples(st.integers(0, 2), st.sampled_from(("comment", "add", "replace"))),
        min_size=1,
        max_size=3,
    ),
    st.data(),
)
def test_warm_runs_after_edits_find_what_a_run_without_cache_finds(
    bodies: tuple[str, str, str], edits: list[tuple[int, str]], data: st.DataObject
) -> None:
    """The run record, the incremental run of a few edited files, the lookups replay and the
    phase-2 results kept across a facts change: each warm run after an edit reports what a
    run without any cache reports."""
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        paths = _write(root, list(bodies))
        cache = str(root / "cache")
        _json(root, "--cache-dir", cache)
        for index, kind in edits:
            path = paths[index]
            text = path.read_text()
            if kind == "comment":
                text += "# an edit\n"
            elif kind == "add":
                text += "\n\n" + data.draw(_module(index)) + "\n"
            else:
                header = _HEADER.format(imports=_imports(index))
                text = header + data.draw(_module(index)) + "\n"
            path.write_text(text)
            assert _json(root, "--cache-dir", cache) == _json(root, "--no-cache"), kind
