"""Edits a review found derived otherwise than a merge (each failed before its mend): an
``__init__`` added beside a function changed in place; names dropped that end at a deferred
module (``closure.deferred_through`` left it out); names followed through a module several
files claim (the closure follows each deferred file's imports, the facts keep one file's)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shmlint.facts.added import added_functions
from shmlint.facts.refielded import refielded_classes
from shmlint.facts.resigned import reworked_functions
from shmlint.facts.summary import ModuleSummary
from tests.project.merged import merged_facts, reading, warm_after_edits


def _removed(old: ModuleSummary, new: ModuleSummary, *questions: list[str]) -> object:
    """The reading of functions removed (``added_functions`` backwards)."""
    return added_functions(new, old, questions[1], questions[0])


# --- 1. (8b89bfc) an `__init__` added beside a function changed in place -------------------
# resign's `callees & index.unplaced` looks only at `gone`; stands() checks a came-only
# `C.__init__` by its own name, but calls of `C(...)` are placed by the class's name: they
# now land in `param:C.__init__.*` instead of the fields (or nowhere).
BOX = (
    "import ray\n\n\n"
    "class Box:\n    value: int\n\n    def read(self):\n        return self.value.get()\n\n\n"
    "def kept(x):\n    return x\n\n\n"
    "def compiled(dag):\n    return dag.experimental_compile()\n"
)
BOX_FILES = {
    "pkg/__init__.py": "import ray\n",
    "pkg/mod.py": BOX,
    "pkg/user.py": (
        "import ray\n\nfrom pkg.mod import Box\n\n\ndef make(dag):\n"
        "    compiled = dag.experimental_compile()\n    return Box(compiled.execute(1))\n"
    ),
}
BOX_EDITED = BOX.replace(
    "    value: int\n", "    value: int\n\n    def __init__(self, other):\n        pass\n"
).replace("def kept(x):\n    return x\n", "def kept(x):\n    return str(x)\n")


def test_init_added_beside_a_change(tmp_path: Path) -> None:
    _, derived, _ = reading(tmp_path, BOX_FILES, BOX_EDITED, reworked_functions)
    assert derived is None
    # derived: attr:pkg.mod.Box.value={'ref'...}; merged: param:pkg.mod.Box.__init__.other


# --- 2. (4a9a915) still_reached: deferred_through leaves out a module a name ends at ---------
# `found` is only added to past a module (`cut == len(parts): continue` comes first), so a
# dropped name that IS a deferred module (here the root `train` of the question `m:train`)
# gives gone == {} although the closure read `train` for it alone.
HEAD = (
    "import ray\n\n\n"
    "def kept(x):\n    return x\n\n\n"
    "def compiled(dag):\n    return dag.experimental_compile()\n"
)
KICK = "\n\ndef kick(handle, x):\n    handle.train.remote(x)\n"
TRAIN_FILES = {
    "pkg/__init__.py": "import ray\n",
    "pkg/mod.py": HEAD + KICK,
    "train.py": "def main():\n    return 1\n",  # deferred; read only for `m:train`
}


@pytest.mark.parametrize(
    ("edited", "read"),
    [
        (HEAD, _removed),  # shrink
        (HEAD.replace("    return x\n", "    return str(x)\n", 1), reworked_functions),  # resign
    ],
    ids=["removed", "reworked"],
)
def test_dropped_question_naming_a_deferred_module(
    tmp_path: Path, edited: str, read: Callable[..., Any]
) -> None:
    before, derived, config = reading(tmp_path, TRAIN_FILES, edited, read)
    assert "train" in before.modules
    assert derived is None  # (it kept module `train`, and `train.main`)
    assert "train" not in merged_facts(tmp_path, config).modules


READER_FILES = {
    "pkg/__init__.py": "import ray\n",
    "pkg/reads.py": "import ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n",
    "pkg/mid.py": "from pkg.reads import fetch as f\n",  # deferred, spells `fetch`
    "train.py": "from pkg.mid import f\n",  # deferred, read only for `m:train`
    "pkg/sub/__init__.py": "import train as x\n",  # deferred
    "pkg/a.py": "import ray\n\nfrom pkg import sub as s\n",
    # g returns a read only while train.py is merged: a.s.x.f -> train.f -> pkg.mid.f -> fetch
    "pkg/other.py": (
        "import ray\n\nfrom pkg import a\n\n\ndef g(x):\n    return a.s.x.f(x)\n\n\n"
        "def compiled(dag):\n    return dag.experimental_compile()\n"
    ),
    "pkg/use.py": (
        "import numpy as np\n\nfrom pkg.other import g\n\n\nclass Keeper:\n"
        "    def keep(self, ref) -> None:\n        self.kept: np.ndarray = g(ref)\n"
    ),
    "pkg/mod.py": HEAD + KICK,
}


@pytest.mark.parametrize(
    ("files", "edited"),
    [(BOX_FILES, BOX_EDITED), (READER_FILES, HEAD)],
    # (A derived run kept SHM101 at pkg/mod.py:11, SHM102 at pkg/use.py:8.)
    ids=["init-added-beside-a-change", "dropped-question-naming-a-deferred-module"],
)
def test_a_warm_run_finds_what_a_run_without_cache_finds(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],
    edited: str,
) -> None:
    warm_after_edits(tmp_path, capsys, monkeypatch, files, [edited])


# --- 3. (4a9a915) still_reached: a kept name followed through an analysed file's alias of a
# module a deferred file claims too (the closure follows the deferred file's imports only)
SHARED_HEAD = (
    "import ray\nimport sub\n\nfrom far import z\n\n\n"
    "def kept(x):\n    return sub.z.fn(x)\n\n\n"
    "def compiled(dag):\n    return dag.experimental_compile()\n"
)
SHARED_FILES = {
    "pkg/__init__.py": "import ray\n",
    "pkg/mod.py": SHARED_HEAD + "\n\ndef gone(x):\n    return z.fn(x)\n",
    "sub.py": "X = 1\n",  # deferred, module `sub`
    "sub/__init__.py": "import ray\n\nfrom far import z\n",  # analysed, module `sub` too
    "far/__init__.py": "",
    "far/z.py": "from deeper import fn\n",
    "deeper.py": "def fn(x):\n    return x\n",
}


def test_kept_name_through_a_module_an_analysed_file_shares(tmp_path: Path) -> None:
    before, derived, config = reading(tmp_path, SHARED_FILES, SHARED_HEAD, _removed)
    assert "deeper" in before.modules
    assert derived is None  # (it kept `deeper`)
    assert "deeper" not in merged_facts(tmp_path, config).modules


# --- 4. (before these commits, still there) deferred_through follows one file's alias of a
# module two deferred files claim; the closure follows both
LIB_HEAD = (
    "import ray\nimport lib\nimport b\n\n\n"
    "def kept(x):\n    return x\n\n\n"
    "def compiled(dag):\n    return dag.experimental_compile()\n"
)
LIB_FILES = {
    "pkg/__init__.py": "import ray\n",
    "pkg/mod.py": LIB_HEAD,
    "lib/__init__.py": "from b import thing\n",  # first in file order: facts.aliases
    "lib.py": "from a import thing\n",
    "a.py": "def thing(x):\n    return x\n",
    "b.py": "def thing(x):\n    return x\n",
}


def test_added_body_through_a_module_two_deferred_files_claim(tmp_path: Path) -> None:
    edited = f"{LIB_HEAD}\n\ndef added(x):\n    return lib.thing(x)\n"
    before, derived, config = reading(tmp_path, LIB_FILES, edited, added_functions)
    assert "a" not in before.modules
    assert derived is None
    assert "a" in merged_facts(tmp_path, config).modules  # (the merge reads a.py now)


# --- A third review: the packages above an edited module (refielded.py's `own`) -------------
BOX_ONLY = "import ray\n\n\nclass Box:\n    value: int\n"


def test_a_field_dropping_the_only_name_through_a_deferred_package_above(tmp_path: Path) -> None:
    # `value: int` is `pkg.mod.int` to the closure: it read `pkg` (deferred) for it alone.
    files = {"pkg/__init__.py": "X = 1\n", "pkg/mod.py": BOX_ONLY}
    edited = BOX_ONLY.replace("    value: int\n", "    pass\n")
    before, derived, config = reading(tmp_path, files, edited, refielded_classes)
    assert "pkg" in before.modules
    assert derived is None
    assert "pkg" not in merged_facts(tmp_path, config).modules


def test_a_field_followed_through_the_package_s_alias_of_the_module(tmp_path: Path) -> None:
    # `pkg` imports `mod` from elsewhere: the closure follows `pkg.mod.str` through it, to a
    # module it did not read before.
    files = {
        "pkg/__init__.py": "from far import z as mod\n",
        "pkg/mod.py": BOX_ONLY,
        "far/__init__.py": "",
        "far/z.py": "from deep import thing as str\n",
        "deep.py": "def thing():\n    return 1\n",
    }
    edited = BOX_ONLY.replace("    value: int\n", "    value: int\n    other: str\n")
    before, derived, config = reading(tmp_path, files, edited, refielded_classes)
    assert "deep" not in before.modules
    assert derived is None
    assert "deep" in merged_facts(tmp_path, config).modules
