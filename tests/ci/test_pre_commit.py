"""The pre-commit hooks, driven by real ``pre-commit try-repo`` on a scratch repository.

pre-commit builds the hook's virtualenv from this repository (pip, from the package index), so
this is marked slow; CI runs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RETAINING = (
    "import numpy as np\nimport ray\n\n\ndef f(ref) -> np.ndarray:\n    return ray.get(ref)\n"
)
CLEAN = "import ray\n\n\ndef f(ref) -> int:\n    return ray.get(ref)\n"

pytestmark = pytest.mark.slow


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout of shmlint")
    return tmp_path_factory.mktemp("pre-commit-home")


def _try_repo(hook: str, repo: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), hook, "--all-files"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )


def _scratch(tmp_path: Path, source: str) -> Path:
    repo = tmp_path / "scratch"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "ci@example.invalid")
    _git(repo, "config", "user.name", "ci")
    (repo / "worker.py").write_text(source)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "init")
    return repo


def test_check_hook_fails_on_retention(tmp_path: Path, pre_commit_home: Path) -> None:
    proc = _try_repo("shmlint", _scratch(tmp_path, RETAINING), pre_commit_home)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "worker.py:6:5: SHM101" in proc.stdout


def test_check_hook_passes_on_clean_code(tmp_path: Path, pre_commit_home: Path) -> None:
    proc = _try_repo("shmlint", _scratch(tmp_path, CLEAN), pre_commit_home)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_fix_hook_rewrites(tmp_path: Path, pre_commit_home: Path) -> None:
    repo = _scratch(tmp_path, RETAINING)
    proc = _try_repo("shmlint-fix", repo, pre_commit_home)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # pre-commit fails when files change
    fixed = (repo / "worker.py").read_text()
    assert "return detach_zero_copy(ray.get(ref))" in fixed  # an ndarray payload: the deep helper
    assert _try_repo("shmlint", repo, pre_commit_home).returncode == 0
