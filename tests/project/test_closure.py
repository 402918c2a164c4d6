"""The closure (shmlint/facts/closure.py) loads the deferred modules the analysed ones reach
by name; followed in waves with a batch ``prefetch`` (the runner's worker pool), it loads the
same modules as one by one. (That its facts answer as every module's would is checked by the
lazy-parsing tests of tests/project/test_passes.py.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from shmlint.basics.config import Config
from shmlint.facts.closure import close
from shmlint.facts.summary import ModuleSummary
from shmlint.run.passes import syntax_summary

MODULES = {
    # `pkg` re-exports `Out` from `pkg.out`; `Out`'s base and field lead further.
    "pkg/__init__.py": "from pkg.out import Out\n",
    "pkg/out.py": (
        "import dataclasses\nfrom pkg.base import Base\nfrom pkg.inner import Inner\n\n\n"
        "@dataclasses.dataclass\nclass Out(Base):\n    inner: Inner\n"
    ),
    "pkg/base.py": "class Base:\n    pass\n",
    "pkg/inner.py": (
        "import dataclasses\nfrom deep.leaf import Leaf\n\n\n"
        "@dataclasses.dataclass\nclass Inner:\n    leaf: Leaf\n"
    ),
    "deep/__init__.py": "",
    "deep/leaf.py": "class Leaf:\n    pass\n",
    "unused.py": "class Unused:\n    pass\n",
}


def _deferred(
    root: Path, modules: dict[str, str] = MODULES
) -> tuple[dict[str, Callable[[], list[ModuleSummary]]], list[str]]:
    """A loader per module of ``modules`` (written under ``root``), and the loads made."""
    config = Config(root=root)
    summaries: dict[str, ModuleSummary] = {}
    for name, text in modules.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        summary = syntax_summary(text.encode(), str(path), config)
        assert summary is not None
        summaries[summary.module] = summary
    loads: list[str] = []

    def loader(module: str) -> list[ModuleSummary]:
        loads.append(module)
        return [summaries[module]]

    return {module: (lambda m=module: loader(m)) for module in summaries}, loads


@pytest.mark.parametrize("names", [["pkg.Out"], ["pkg.Out", "deep.leaf.Leaf", "pkg.base"]])
def test_waves_load_what_one_by_one_loads(tmp_path: Path, names: list[str]) -> None:
    deferred, loads = _deferred(tmp_path)
    one_by_one = {s.module for s in close(names, deferred)}
    assert "unused" not in one_by_one
    assert {"pkg", "pkg.out", "pkg.base", "pkg.inner", "deep", "deep.leaf"} == one_by_one
    loads.clear()

    waves: list[set[str]] = []
    in_waves = {s.module for s in close(names, deferred, lambda modules: waves.append(modules))}
    assert in_waves == one_by_one
    assert set().union(*waves) == one_by_one  # each module prefetched, in its wave
    assert sorted(loads) == sorted(one_by_one)  # and loaded once
    if names == ["pkg.Out"]:
        # `pkg`, then `pkg.out` (its alias), then what `Out` names, then `Inner`'s field.
        assert waves[:2] == [{"pkg"}, {"pkg.out"}]
        assert len(waves) == 4


def test_a_name_is_followed_only_as_far_as_a_deferred_module_lies() -> None:
    from shmlint.facts.closure import _above, _deferred_prefixes

    deferred = {"a", "a.b.c", "x.y", "p.q.r.s"}
    above = _above(deferred)
    assert above == {"a", "a.b", "a.b.c", "x", "x.y", "p", "p.q", "p.q.r", "p.q.r.s"}

    def every_prefix(parts: list[str]) -> list[tuple[int, str]]:
        names = (".".join(parts[:cut]) for cut in range(1, len(parts) + 1))
        return [(cut, name) for cut, name in enumerate(names, 1) if name in deferred]

    for name in ["a.b.c.X", "a.x.c", "a.b", "x.y.z.w", "x.z.y", "p.q.r.s.T.u", "p.r", "q.a"]:
        parts = name.split(".")
        assert _deferred_prefixes(parts, deferred, above) == every_prefix(parts), name


def test_a_package_importing_a_class_named_as_its_submodule_ends(tmp_path: Path) -> None:
    """`from pkg.kernel import kernel` in pkg/__init__.py (vLLM's `MPLinearKernel`): a name
    through `pkg.kernel` runs through the package again, one part longer each time; it is
    followed a bounded number of times (before, it grew until memory ran out)."""
    import signal

    texts = {
        "pkg/__init__.py": "from pkg.kernel import kernel\n",
        "pkg/kernel.py": "class kernel:\n    pass\n",
    }
    deferred, _ = _deferred(tmp_path, texts)

    def stop(*_: object) -> None:
        raise TimeoutError("the closure did not end")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    try:
        loaded = close(["pkg.kernel.run"], deferred)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert sorted(s.module for s in loaded) == ["pkg", "pkg.kernel"]
