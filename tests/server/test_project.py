"""The server's project (``shmlint.server.project``) without a client: which files it checks
and how, a configuration read again, and a failed build falling back to per-file checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from shmlint.run.session import ProjectSession
from shmlint.server.project import Project

READ = "import numpy as np\nimport ray\n\n\ndef f(r) -> np.ndarray:\n    return ray.get(r)\n"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # Project moves into its root; this puts us back after
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "m.py").write_text(READ)
    (project / "build").mkdir()
    (project / "build" / "gen.py").write_text(READ)  # excluded by default
    (project / "pyproject.toml").write_text("[tool.shmlint]\n")
    return project


def _codes(project: Project, path: Path | None, text: str) -> list[str] | None:
    result, _ = project.check(path, text)
    return None if result is None else [f.code for f in result.findings]


def test_which_files_are_checked_and_how(root: Path, tmp_path: Path) -> None:
    project = Project(root, None)
    project.build()
    assert _codes(project, root / "pkg" / "m.py", READ) == ["SHM101"]
    assert _codes(project, root / "build" / "gen.py", READ) is None  # excluded: not ours
    assert _codes(project, root / "notes.txt", READ) is None
    assert _codes(project, tmp_path / "elsewhere.py", READ) == ["SHM101"]  # on its own
    assert _codes(project, None, READ) == ["SHM101"]  # an unsaved buffer
    # A file created since the build joins the project when it is opened.
    (root / "pkg" / "new.py").write_text(READ)
    assert _codes(project, root / "pkg" / "new.py", READ) == ["SHM101"]
    assert project.session is not None and "pkg/new.py" in project.session


def test_the_configuration_is_read_again(root: Path) -> None:
    project = Project(root, {"min-confidence": "medium"})
    assert not project.reconfigure() and project.errors == []
    (root / "pyproject.toml").write_text('[tool.shmlint]\nignore = ["SHM1"]\n')
    assert project.reconfigure() and project.errors == []
    (root / "pyproject.toml").write_text('[tool.shmlint]\nignore = ["SHM199"]\n')
    assert project.reconfigure()  # back to the defaults (and the option), with the error
    assert project.config.options.min_confidence.value == "medium"
    (error,) = project.errors
    assert "unknown rule code 'SHM199'" in error and "default configuration" in error


def test_a_failed_build_leaves_per_file_checks(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(self: ProjectSession, progress: object = None) -> None:
        raise RuntimeError("the build broke")

    monkeypatch.setattr(ProjectSession, "build", fail)
    project = Project(root, None)
    with pytest.raises(RuntimeError, match="the build broke"):
        project.build()
    assert project.session is None
    assert _codes(project, root / "pkg" / "m.py", READ) == ["SHM101"]
    assert not project.close(root / "pkg" / "m.py")
    assert not project.disk_changed([root / "pkg" / "m.py"], created_or_deleted=True)


def test_a_build_prunes_the_cache(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's build stores facts, as a command-line run does: past the cache's limit,
    what other runs left days ago goes (shmlint/run/prune.py)."""
    import os
    import time

    monkeypatch.delenv("SHMLINT_CACHE_DIR", raising=False)
    (root / "pyproject.toml").write_text("[tool.shmlint]\ncache-max-size = 1\n")
    from shmlint.run.salts import FORMAT

    stale = root / ".shmlint_cache" / f"v{FORMAT}" / "k0" / ("k0" + "0" * 62 + ".json")
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b" " * (2**20 + 1))
    os.utime(stale, (time.time() - 2 * 86_400,) * 2)
    (stale.parent.parent / "pruned").touch()  # pruned a moment ago: only storing facts prunes
    project = Project(root, None)
    project.build()
    assert not stale.exists()
