"""A per-file round skips the bodies no Ray handle can reach (shmlint/analysis/dataflow/
quiet.py): the same findings as analysing every body, and a round that skipped a body which
a handle reached later is repeated."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

import shmlint.analysis.dataflow as dataflow
from shmlint.analysis.dataflow import analyze_module
from shmlint.analysis.dataflow import function as function_module
from shmlint.analysis.engine import own_view
from shmlint.basics.config import Config
from shmlint.basics.names import Scope
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence

ROOT = Path(__file__).resolve().parents[2]
MEDIUM = Config(options=Options(min_confidence=Confidence.MEDIUM))

# `stash` spells no handle word and no read: round 1 skips it, before `__init__` gives `ref`
# a handle. The round must be repeated for `stash`, then for `use`, which reads what `stash`
# stored: without the second look at the skipped body, round 1 would stand, finding nothing.
SKIPPED_THEN_REACHED = """\
class Engine:
    def use(self):
        out = self.saved.get()
        return out

    def stash(self):
        self.saved = self.ref

    def __init__(self, dag):
        self.ref = dag.experimental_compile().execute(1)
"""


def _analysed(text: str, path: str = "m.py") -> tuple[list[object], list[str]]:
    """The raw findings of a per-file analysis (labels' node keys zeroed) and the names of
    the function bodies it analysed, in order."""
    tree = ast.parse(text)
    scope = Scope(tree, None)
    _, view = own_view(tree, scope, path, MEDIUM)
    ran: list[str] = []
    real = function_module.FunctionAnalysis.run

    def counted(self: function_module.FunctionAnalysis) -> object:
        ran.append(getattr(self.node, "name", type(self.node).__name__))
        return real(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(function_module.FunctionAnalysis, "run", counted)
        found = analyze_module(tree, MEDIUM.options, text, view, scope)
    zeroed = [dataclasses.replace(f, label=dataclasses.replace(f.label, key=0)) for f in found]
    return list(zeroed), ran


def test_a_body_a_handle_reaches_after_its_turn_repeats_the_round(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found, ran = _analysed(SKIPPED_THEN_REACHED)
    assert [(f.code, f.site.line) for f in found] == [("SHM101", 4)]  # type: ignore[attr-defined]
    assert ran.count("stash") == 2  # skipped in round 1, analysed in rounds 2 and 3
    monkeypatch.setattr(dataflow, "_SKIP_QUIET", False)
    everything, all_ran = _analysed(SKIPPED_THEN_REACHED)
    assert everything == found
    assert all_ran.count("stash") == 3


def test_a_body_no_handle_reaches_is_skipped() -> None:
    text = """\
import ray


class Engine:
    def __init__(self, dag):
        self.compiled = dag.experimental_compile()

    def describe(self, names):
        return {name: len(name) for name in names}
"""
    _, ran = _analysed(text)
    assert "describe" not in ran
    assert "__init__" in ran


def _sources() -> list[Path]:
    return sorted((ROOT / "fixtures").rglob("*.py")) + sorted((ROOT / "examples").rglob("*.py"))


def _all_raw(paths: list[Path]) -> list[list[object]]:
    found = []
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            found.append(_analysed(text, str(path))[0])
        except SyntaxError:
            found.append([])
    return found


def test_skipping_finds_what_analysing_every_body_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    sources = _sources()
    skipping = _all_raw(sources)
    monkeypatch.setattr(dataflow, "_SKIP_QUIET", False)
    assert _all_raw(sources) == skipping
    assert sum(map(len, skipping)) > 100


@pytest.mark.slow
def test_skipping_finds_what_analysing_every_body_finds_on_the_ray_tree(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from benchmarks.corpus import corpus

    paths = sorted(corpus("ray==2.60.0").rglob("*.py"))
    skipping = _all_raw(paths)
    monkeypatch.setattr(dataflow, "_SKIP_QUIET", False)
    assert _all_raw(paths) == skipping


# Each way a handle enters a body that spells nothing else of Ray, with a finding that depends
# on it: skipping must keep the body (the same findings as analysing every body), and
# forgetting that way in (the mutation) must lose or change the finding.
_WAYS = {
    "remote": """\
import ray
import numpy as np


@ray.remote
def produce(n) -> np.ndarray:
    return np.zeros(n)


class Holder:
    def launch(self, n):
        self.ref = produce.remote(n)

    def use(self):
        out = ray.get(self.ref)
        return out
""",
    "options": """\
import ray
import numpy as np


@ray.remote
def produce() -> np.ndarray:
    return np.zeros(3)


class Holder:
    def configure(self):
        self.task = produce.options(num_cpus=1)

    def use(self):
        out = ray.get(self.task.remote())
        return out
""",
    "bind": """\
import ray
import numpy as np


@ray.remote
class Worker:
    def step(self, x) -> np.ndarray:
        return np.zeros(3)


def build(worker, node):
    return worker.step.bind(node)


def run(worker, node):
    out = build(worker, node).experimental_compile().execute(1).get()
    return out
""",
    "experimental_compile": """\
class Engine:
    def use(self):
        out = self.graph.execute(1).get()
        return out

    def make(self, dag):
        self.graph = dag.experimental_compile()
""",
    "CompiledDAG": """\
class Engine:
    def use(self):
        out = self.graph.execute(1).get()
        return out

    def keep(self, graph: "CompiledDAG"):
        self.graph = graph
""",
    "ObjectRef": """\
from ray import ObjectRef


class Holder:
    async def use(self):
        out = await self.ref
        return out

    def keep(self, ref: ObjectRef):
        self.ref = ref
""",
    "run_in_executor": """\
import ray


class Holder:
    async def use(self):
        out = await self.pending
        return out

    def start(self, loop, ref):
        self.pending = loop.run_in_executor(None, ray.get, ref)


def spawn(task):  # (a `.remote(` call: the module gets the facts pre-pass)
    return task.remote()
""",
    "to_thread": """\
import asyncio

import ray


class Holder:
    async def use(self):
        out = await self.pending
        return out

    def start(self, ref):
        self.pending = asyncio.to_thread(ray.get, ref)


def spawn(task):
    return task.remote()
""",
    "Queue": """\
from ray.util.queue import Queue


class Holder:
    def use(self):
        out = self.queue.get()
        return out

    def make(self):
        self.queue = Queue()


def spawn(task):
    return task.remote()
""",
}

# A way in by the module's facts: an attribute, a method's result, a module variable, an
# enclosing function's variable; and a handle maker imported under another name.
_FACTS = {
    "attr_kinds": SKIPPED_THEN_REACHED,
    "return_kinds": """\
class Engine:
    def use(self):
        out = self.relayed.execute(1).get()
        return out

    def relay(self):
        self.relayed = self.build()

    def build(self):
        return self.compiled

    def __init__(self, dag):
        self.compiled = dag.experimental_compile()
""",
    "module_kinds": """\
import ray

GRAPH = ray.dag.InputNode().experimental_compile()


def relay():
    return GRAPH


def use():
    out = relay().execute(1).get()
    return out
""",
    "outer": """\
def outer(dag):
    graph = dag.experimental_compile()

    def inner():
        return graph

    out = inner().execute(1).get()
    return out
""",
    "import": """\
from ray.util.queue import Queue as Inbox


class Holder:
    def use(self):
        out = self.inbox.get()
        return out

    def make(self):
        self.inbox = Inbox()


def spawn(task):
    return task.remote()
""",
}


def _forget(name: str, patch: pytest.MonkeyPatch) -> None:
    """The mutation: the pre-pass forgets one way a handle enters a body."""
    from shmlint.analysis.dataflow import context, quiet

    if name in quiet.HANDLE_WORDS:
        patch.setattr(quiet, "HANDLE_WORDS", quiet.HANDLE_WORDS - {name})
        patch.setattr(quiet, "_RENAMEABLE", quiet._RENAMEABLE - {name})  # `import Queue`
    elif name == "import":
        patch.setattr(quiet, "_RENAMEABLE", frozenset())
    else:
        real = context.ModuleContext.handle_names

        def forgetting(self: context.ModuleContext, outer: tuple[str, ...] = ()) -> list[str]:
            table = getattr(self.facts, name, None)
            drop = {k.rpartition(".")[2] for k in table} if table is not None else set(outer)
            return [n for n in real(self, outer) if n not in drop]

        patch.setattr(context.ModuleContext, "handle_names", forgetting)


@pytest.mark.parametrize("name", [*_WAYS, *_FACTS])
def test_every_way_a_handle_enters_keeps_its_body(name: str) -> None:
    text = {**_WAYS, **_FACTS}[name]
    found, _ = _analysed(text)
    assert found, "the case reports something"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dataflow, "_SKIP_QUIET", False)
        assert _analysed(text)[0] == found
    with pytest.MonkeyPatch.context() as patch:
        _forget(name, patch)
        assert _analysed(text)[0] != found, "forgetting this way in changes nothing"


def test_every_handle_word_has_its_case() -> None:
    from shmlint.analysis.dataflow.quiet import HANDLE_WORDS

    assert set(HANDLE_WORDS) == set(_WAYS)


@pytest.mark.parametrize(
    "text,imports,makes",
    [
        ("x = f.remote(1)", {}, True),
        ("x = f.remote (\n    1)", {}, True),  # a call may break before its parenthesis
        ("path = self.remote_path", {}, False),
        ("task = produce.options(num_cpus=1)  # produce is @ray.remote", {}, True),
        ("style = parser.options(color=True)", {}, False),  # no remote callable here
        ("def f(r: ObjectRef): ...", {}, True),
        ("g: 'CompiledDAG'", {}, True),
        ("dag = graph.experimental_compile()", {}, True),
        ("import queue\nq = queue.Queue()", {}, False),  # the standard library's queue
        ("from ray.util.queue import Queue\nq = Queue()", {"Queue": "ray.util.queue.Queue"}, True),
        (
            "from ray.util.queue import Queue as Inbox\nq = Inbox()",
            {"Inbox": "ray.util.queue.Queue"},
            True,
        ),
        ("sock.bind(('', 0))", {}, False),  # no remote function or actor to bind
        ("@ray.remote\nclass A: ...\nnode = a.step.bind(inp)", {}, True),
        ("await asyncio.to_thread(compute, 1)", {}, False),  # not `ray.get`
        ("await asyncio.to_thread(ray.get, ref)", {}, True),
        ("loop.run_in_executor(None, ray.get, ref)", {}, True),
    ],
)
def test_what_makes_a_module_run_the_facts_pre_pass(
    text: str, imports: dict[str, str], makes: bool
) -> None:
    from shmlint.analysis.dataflow.quiet import makes_handles

    assert makes_handles(text, imports) is makes
