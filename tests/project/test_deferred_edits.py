"""Edits of a module phase 1 deferred (nothing to check in it) that the merge read for its
names: the facts derive from the last ones as for an analysed module (lines moved, functions
added, removed or renamed, imports and classes added: shmlint/run/derived.py), between the
syntactic summary the merge read and the one it would read now, and equal a merge of the
edited tree."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from shmlint.basics.config import Config
from shmlint.cli import main
from shmlint.run.passes import first_pass, syntax_summary
from tests.project.merged import (
    PROJECT_TREES,
    assert_merged,
    copied,
    derived_facts,
    merged_facts,
    write_tree,
)
from tests.project.test_removed import _removals
from tests.project.test_resigned import signature_edits
from tests.project.test_unimported import import_removals
from tests.speed.test_incremental import _full_runs


def _edits(text: str) -> list[str]:
    """A line on top; a function added; one removed; one renamed; one's parameter added; an
    import on top; each import removed; a class appended."""
    edits = [f"# moved\n{text}", f"{text}\n\ndef _added(a):\n    return a\n"]
    edits += _removals(text)[:1]
    renamed = re.search(r"^def (\w+)\(", text, re.M)
    if renamed:
        edits.append(f"{text[: renamed.end(1)]}_renamed{text[renamed.end(1) :]}")
    edits += signature_edits(text)[:1]
    edits += [f"import os.path as _added\n{text}", f"{text}\n\nclass _Added:\n    x: int = 0\n"]
    return edits + import_removals(text)


@pytest.mark.parametrize("case", PROJECT_TREES, ids=lambda path: path.name)
def test_facts_after_an_edit_of_a_module_the_merge_read_are_the_merged_facts(
    case: Path, tmp_path: Path
) -> None:
    tree, config, before = copied(case, tmp_path)
    read = {path for path, _ in before.modules.values()}
    derived = tried = 0
    for path in sorted(tree.rglob("*.py")):
        data = path.read_bytes()
        if not first_pass(data, str(path), config, lazy=True).deferred or str(path) not in read:
            continue  # (analysed, or never read by the merge: its edits change no facts)
        old = syntax_summary(data, str(path), config)
        original = data.decode()
        for edited in _edits(original):
            path.write_text(edited, encoding="utf-8")
            new = syntax_summary(edited.encode(), str(path), config)
            assert old is not None and new is not None
            facts = derived_facts(before, old, new, ([], []), tree, config)
            tried += 1
            if facts is not None:
                assert_merged(facts, tree, config, edited)
                derived += 1
        path.write_text(original, encoding="utf-8")
    assert derived <= tried


def test_a_deferred_module_the_merge_read_is_derived_not_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # pkg/records.py has nothing to check (deferred); the merge reads it for the class the
    # keeper's annotation names, whose array the finding cites.
    files = {
        "pkg/__init__.py": "",
        "pkg/records.py": "import dataclasses\n\nimport numpy as np\n\n\n@dataclasses.dataclass\n"
        "class Out:\n    arr: np.ndarray\n",
        "pkg/user.py": "import ray\n\nfrom pkg.records import Out\n\n\nclass Keeper:\n"
        "    def keep(self, ref):\n        value: Out = ray.get(ref)\n        self.value = value\n",
    }
    write_tree(tmp_path, files)
    command = ["check", "--isolated", "--output-format", "json", "--min-confidence", "medium"]
    cache = ("--cache-dir", str(tmp_path / ".cache"))
    main([*command, *cache, str(tmp_path)])
    before = json.loads(capsys.readouterr().out)
    assert "holds arrays (`arr`)" in before[0]["message"]
    records = tmp_path / "pkg" / "records.py"
    full = _full_runs(monkeypatch)
    for edited in (
        "# moved\n" + files["pkg/records.py"],
        "import os\n# moved\n" + files["pkg/records.py"] + "\n\ndef helper(x):\n    return x\n",
    ):
        records.write_text(edited)
        main([*command, *cache, str(tmp_path)])
        warm = capsys.readouterr().out
        assert not full  # (derived, from the summary the last run read or stored)
        main([*command, "--no-cache", str(tmp_path)])
        assert capsys.readouterr().out == warm
        full.clear()


def test_a_deferred_module_that_stops_spelling_a_possible_readers_name_is_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # pkg/peeker.py is merged because it spells `peek` (a function that may return a read):
    # once it does not, a merge of the tree leaves it out.
    files = {
        "pkg/__init__.py": "",
        "pkg/reads.py": "import ray\n\n\ndef fetch(ref):\n    return ray.get(ref)\n\n\n"
        "def peek(box):\n    return box.get()\n",
        "pkg/peeker.py": "def look(box):\n    return box  # peek\n",
    }
    write_tree(tmp_path, files)
    command = ["check", "--isolated", "--cache-dir", str(tmp_path / ".cache"), str(tmp_path)]
    main(command)
    (tmp_path / "pkg" / "peeker.py").write_text("# moved\ndef look(box):\n    return box\n")
    full = _full_runs(monkeypatch)
    main(command)
    capsys.readouterr()
    assert full  # (the merge runs: without it, the facts would keep pkg.peeker)


def test_a_deferred_module_after_facts_served_from_the_cache_is_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # An edit undone is served the facts stored for its keys: which deferred modules they read
    # is not recorded then, and pkg/records.py was not read (a review's case: derived, the
    # facts gained its new function).
    records = "import dataclasses\n\nimport numpy as np\n\n\n@dataclasses.dataclass\nclass Out:\n"
    records += "    arr: np.ndarray\n"
    keeps = "import ray\n\n{}\n\nclass Keeper:\n    def keep(self, ref):\n"
    keeps += "        value{} = ray.get(ref)\n        self.value = value\n"
    without, naming = keeps.format("", ""), keeps.format("from pkg.records import Out\n", ": Out")
    files = {"pkg/__init__.py": "", "pkg/records.py": records, "pkg/user.py": without}
    write_tree(tmp_path, files)
    command = ["check", "--isolated", "--cache-dir", str(tmp_path / ".cache"), str(tmp_path)]
    user = tmp_path / "pkg" / "user.py"
    for text in (without, naming, without):  # (the last run is served its facts)
        user.write_text(text)
        main(command)
    (tmp_path / "pkg" / "records.py").write_text(records + "\n\ndef helper():\n    return 1\n")
    full = _full_runs(monkeypatch)
    main(command)
    capsys.readouterr()
    assert full


def test_a_method_added_beside_an_import_to_an_actor_s_base_is_left_to_the_merge(
    tmp_path: Path,
) -> None:
    # (Found by a fuzz run.) An actor's methods include its bases': `extra` becomes one of
    # `Runner`'s, which a function added alone is refused for (added.stands); added beside an
    # import (a declaration), the derived facts lacked it in `actor_methods`.
    base = "class Base:\n    pass\n"
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/m1.py": "import ray\nfrom pkg.m7 import Base\n\n\n@ray.remote\n"
            "class Runner(Base):\n    pass\n",
            "pkg/m7.py": base,
        },
    )
    config = Config(root=tmp_path)
    before = merged_facts(tmp_path, config)
    m7 = tmp_path / "pkg" / "m7.py"
    old = syntax_summary(base.encode(), str(m7), config)
    edited = "import os\n\n\nclass Base:\n    def extra(self, payload):\n        return payload\n"
    m7.write_text(edited)
    new = syntax_summary(edited.encode(), str(m7), config)
    assert old is not None and new is not None
    assert derived_facts(before, old, new, ([], []), tmp_path, config) is None
    assert "extra" in merged_facts(tmp_path, config).actor_methods
