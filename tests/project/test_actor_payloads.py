"""What a read through a project function or an actor method holds: the declarations rated along
the way (readers, functions made remote where they are called, actor classes' inherited methods
in method resolution order, bases imported through re-exports)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shmlint.cli import main


def _run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], files: dict[str, str]
) -> dict[tuple[str, int], str]:
    """The project's findings at medium: (file name, line) → confidence."""
    for rel, text in {"pkg/__init__.py": "", **files}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    main(
        [
            "check",
            "--no-cache",
            "--isolated",
            "--min-confidence",
            "medium",
            "--output-format",
            "json",
            str(tmp_path),
        ]
    )
    found = json.loads(capsys.readouterr().out)
    return {(Path(f["path"]).name, f["line"]): f["confidence"] for f in found}


USER = (
    "import ray\n\n\nclass T:\n    def step(self, h):\n"
    "        self.m = ray.get(h.m.remote())\n"  # line 6
    "        self.n = ray.get(h.n.remote())\n"  # line 7
)


def test_diamond_inheritance_follows_the_mro(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = (
        "import numpy as np\n\n\nclass A:\n    def m(self) -> str: ...\n"
        "    def n(self) -> np.ndarray: ...\n\n\nclass B(A):\n    pass\n\n\n"
        "class C(A):\n    def m(self) -> np.ndarray: ...\n    def n(self) -> str: ...\n"
    )
    worker = "import ray\n\nfrom pkg.base import B, C\n\n\n@ray.remote\nclass D(B, C):\n    pass\n"
    got = _run(
        tmp_path, capsys, {"pkg/base.py": base, "pkg/worker.py": worker, "pkg/user.py": USER}
    )
    # D.__mro__ == (D, B, C, A, object): D.m is C.m (arrays), D.n is C.n (str)
    assert got == {("user.py", 6): "high"}


def test_an_unknown_base_before_the_project_base_may_define_the_method(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mixin = "class Mixin:\n    def m(self) -> str: ...\n    def n(self) -> str: ...\n"
    worker = (
        "import ray\nfrom somelib import LibWorker\n\nfrom pkg.mixin import Mixin\n\n\n"
        "@ray.remote\nclass W(LibWorker, Mixin):\n    pass\n"
    )
    got = _run(
        tmp_path, capsys, {"pkg/mixin.py": mixin, "pkg/worker.py": worker, "pkg/user.py": USER}
    )
    assert got == {("user.py", 6): "medium", ("user.py", 7): "medium"}  # LibWorker.m wins


def test_a_base_imported_through_a_reexport_is_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {
        "pkg/impl/__init__.py": "from pkg.impl.base import Base\n",
        "pkg/impl/base.py": "class Base:\n    def m(self) -> int: ...\n"
        "    def n(self) -> int: ...\n",
        "pkg/worker.py": "import ray\n\nfrom pkg.impl import Base\n\n\n@ray.remote\n"
        "class W(Base):\n    pass\n",
        "pkg/user.py": USER,
    }
    # (The summary holds the base as `pkg.impl.Base`: the merge follows it to its class.)
    assert _run(tmp_path, capsys, files) == {}


def test_a_wrapper_of_an_array_free_reader_reads_no_arrays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reads = (
        "import numpy as np\nimport ray\n\n\ndef ip(pg) -> str:\n    return ray.get(pg)\n\n\n"
        "def frame(ref) -> np.ndarray:\n    return ray.get(ref)\n\n\n"
        "def wrapped_ip(pg):\n    return ip(pg)\n\n\n"
        "def wrapped_frame(ref):\n    return frame(ref)\n"
    )
    user = (
        "from pkg.reads import frame, ip, wrapped_frame, wrapped_ip\n\n\nclass T:\n"
        "    def step(self, pg, ref):\n        self.a = ip(pg)\n        self.b = wrapped_ip(pg)\n"
        "        self.c = frame(ref)\n        self.d = wrapped_frame(ref)\n"
    )
    got = _run(tmp_path, capsys, {"pkg/reads.py": reads, "pkg/user.py": user})
    assert got == {("reads.py", 10): "high", ("user.py", 8): "high", ("user.py", 9): "high"}


def test_the_value_annotation_comes_before_the_readers_declared_type(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reads = "import ray\n\n\ndef ip(pg) -> str:\n    return ray.get(pg)\n"
    user = (
        "import numpy as np\n\nfrom pkg.reads import ip\n\n\nclass T:\n    def step(self, pg):\n"
        "        x: np.ndarray = ip(pg)\n        self.x = x\n"
    )
    # as `x: np.ndarray = ray.get(remote_ip.remote(pg))` is (rule order: 1 before 2)
    assert _run(tmp_path, capsys, {"pkg/reads.py": reads, "pkg/user.py": user}) == {
        ("user.py", 9): "high"
    }


def test_a_library_function_made_remote_is_no_actor_method(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    actor = "import ray\n\n\n@ray.remote\nclass E:\n    def train(self) -> dict[str, float]: ...\n"
    user = (
        "import ray\nimport xgboost_ray\n\n\nclass J:\n    def run(self):\n"
        "        self.m = ray.get(ray.remote(num_gpus=1)(xgboost_ray.train).remote())\n"
    )
    assert _run(tmp_path, capsys, {"pkg/actor.py": actor, "pkg/user.py": user}) == {
        ("user.py", 7): "medium"
    }


def test_a_base_built_at_run_time_stops_the_inherited_methods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `Impl` (a class a function builds) overrides `info -> str`: Python's order is Worker,
    # Left, Impl, Base, but Impl's bases are unknown, so Base's `info` must not be taken.
    base = (
        "import numpy as np\n\n\nclass Base:\n    def info(self) -> np.ndarray: ...\n\n\n"
        "class Left(Base):\n    def left(self) -> int: ...\n\n\ndef _variant():\n"
        "    class Impl(Base):\n        def info(self) -> str: ...\n\n    return Impl\n\n\n"
        "Impl = _variant()\n"
    )
    worker = (
        "import ray\n\nfrom pkg.base import Impl, Left\n\n\n@ray.remote\n"
        "class Worker(Left, Impl):\n    pass\n\n\nclass Driver:\n    def run(self, w):\n"
        "        self.info = ray.get(w.info.remote())\n"
    )
    assert _run(tmp_path, capsys, {"pkg/base.py": base, "pkg/worker.py": worker}) == {
        ("worker.py", 13): "medium"
    }
