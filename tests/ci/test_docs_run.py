"""The docs run as written: every marked block of README.md and docs/*.md, one test case each.

A marker is an HTML comment on the line right before a fence:

- ``<!-- test: run -->`` (bash or python): the block runs as one script, bash with ``-eu -o
  pipefail`` or ``python FILE`` (``file=NAME``, default ``snippet.py``); ``exit=N`` is the
  expected exit status (default 0).
- ``<!-- test: run each exit=0,1 -->``: a cheat sheet; each line runs on its own and must exit
  with one of the codes, and in ``a && b`` every command but the last must exit 0 (or the rest
  of the line never runs).
- ``<!-- test: output -->`` on a plain block: what the run block before it prints. Each line
  must match a line of the output (stdout, then stderr), in order; ``...`` is any text.
- ``<!-- test: pre-commit exit=N -->`` (yaml): a ``.pre-commit-config.yaml``, or hook entries
  for one, run by real pre-commit (``run --all-files``) in a scratch git repository. The hooks
  come from this checkout's ``.pre-commit-hooks.yaml`` with the block's overrides on top, as
  ``repo: local`` hooks of ``language: system`` so that nothing is installed (the installing
  path is ``test_pre_commit.py``'s, marked slow); ``N`` is the hook's exit status.
- ``<!-- test: pyproject -->`` (toml): added to the project's ``pyproject.toml``; ``shmlint
  check`` must accept it.
- ``<!-- test: skip reason="..." -->``: not run (installs, network, GitHub); reported skipped.

Every bash and yaml block must carry a marker, so a new recipe is run or says why not. Blocks
run in a scratch project: examples/ (also copied as src/, the docs' usual path), a small
pyproject.toml and a passing test, ``.venv`` linked to this interpreter's environment, whose
bin directory comes first on PATH (``shmlint``, ``flake8``, ``python``, ``pytest``).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml  # pre-commit's own dependency

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"^\s*<!--\s*test:(?P<body>.*?)-->\s*$")
FENCE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)")
MUST_MARK = {"bash", "sh", "shell", "console", "yaml", "yml"}
KINDS = {"run", "output", "pre-commit", "pyproject", "skip"}
OPTIONS = {"exit", "file", "reason"}
FLAGS = {"each"}
TIMEOUT = 120
PYPROJECT = '[project]\nname = "demo"\nversion = "0.1.0"\n'
SMOKE_TEST = "def test_smoke() -> None:\n    assert 1 + 1 == 2\n"


@dataclass
class Block:
    """A marked fenced block: where it is, what the marker says, and its text."""

    name: str  # the file, relative to the repository
    line: int  # the marker's line, 1-based
    kind: str
    options: dict[str, str]
    flags: set[str]
    lang: str
    text: str
    output: Block | None = field(default=None, repr=False)  # the `output` block that follows

    @property
    def id(self) -> str:
        return f"{self.name}:{self.line}"

    def exits(self) -> set[int]:
        return {int(code) for code in self.options.get("exit", "0").split(",")}


def _parse(path: Path, root: Path = ROOT) -> tuple[list[Block], list[str]]:
    """The marked blocks of one file, and what is wrong with its markers."""
    lines = path.read_text(encoding="utf-8").splitlines()
    where = path.relative_to(root).as_posix()
    blocks: list[Block] = []
    problems: list[str] = []
    pending: tuple[int, str, dict[str, str], set[str]] | None = None
    i = 0
    while i < len(lines):
        marker, fence = MARKER.match(lines[i]), FENCE.match(lines[i])
        if pending is not None and fence is None:
            problems.append(f"{where}:{pending[0]}: marker not followed by a fenced block")
            pending = None
        if marker:
            words = shlex.split(marker.group("body"))
            kind = words[0] if words else ""
            options = dict(w.split("=", 1) for w in words[1:] if "=" in w)
            flags = {w for w in words[1:] if "=" not in w}
            unknown = (set(options) - OPTIONS) | (flags - FLAGS) | ({kind} - KINDS)
            if unknown:
                problems.append(f"{where}:{i + 1}: unknown in marker: {sorted(unknown)}")
            if not re.fullmatch(r"\d+(,\d+)*", options.get("exit", "0")):
                problems.append(f"{where}:{i + 1}: exit= takes codes like 1 or 0,1")
            pending = (i + 1, kind, options, flags)
        elif fence:
            start, ticks, lang = i, fence.group("fence"), fence.group("lang")
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(ticks):
                i += 1
            if i == len(lines):
                problems.append(f"{where}:{start + 1}: fence never closed")
            text = "\n".join(lines[start + 1 : i]) + "\n"
            if pending is not None:
                line, kind, options, flags = pending
                blocks.append(Block(where, line, kind, options, flags, lang, text))
                pending = None
            elif lang in MUST_MARK:
                problems.append(f"{where}:{start + 1}: {lang} block without a test marker")
        i += 1
    if pending is not None:
        problems.append(f"{where}:{pending[0]}: marker not followed by a fenced block")
    runs: Block | None = None
    for block in blocks:
        if block.kind == "output":
            if runs is None or runs.output is not None:
                problems.append(f"{block.id}: output block without a run block before it")
            else:
                runs.output = block
        else:
            runs = block if block.kind == "run" else None
    return blocks, problems


def _collect() -> tuple[list[Block], list[str]]:
    blocks: list[Block] = []
    problems: list[str] = []
    for path in DOCS:
        found, wrong = _parse(path)
        blocks += found
        problems += wrong
    return blocks, problems


BLOCKS, PROBLEMS = _collect()


def _cases() -> list[Any]:
    cases = []
    for block in BLOCKS:
        if block.kind == "output":
            continue  # checked with its run block
        marks = []
        if block.kind == "skip":
            marks.append(pytest.mark.skip(reason=block.options.get("reason", "no reason given")))
        cases.append(pytest.param(block, id=block.id, marks=marks))
    return cases


def test_markers_mark_blocks() -> None:
    assert PROBLEMS == []
    assert any(b.kind == "run" for b in BLOCKS)


def test_a_marker_without_a_fence_is_found(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- test: run -->\n\n```bash\nshmlint\n```\n\n<!-- test: run -->\n")
    _, problems = _parse(doc, root=tmp_path)
    assert problems == [
        "doc.md:1: marker not followed by a fenced block",
        "doc.md:3: bash block without a test marker",
        "doc.md:7: marker not followed by a fenced block",
    ]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = tmp_path / "project"
    shutil.copytree(ROOT / "examples", proj / "examples")
    shutil.copytree(ROOT / "examples", proj / "src")
    (proj / "tests").mkdir()
    (proj / "tests" / "test_smoke.py").write_text(SMOKE_TEST)
    (proj / "pyproject.toml").write_text(PYPROJECT)
    (proj / ".gitignore").write_text(".venv\n.shmlint_cache/\n")
    (proj / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    return proj


def _env(project: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTEST_CURRENT_TEST", None)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = sys.prefix
    env["PRE_COMMIT_HOME"] = str(project.parent / "pre-commit-home")
    env["RAY_ADDRESS"] = "local"  # a fresh local Ray, never a cluster left running
    env.pop("SHMLINT_CACHE_DIR", None)  # the docs talk about .shmlint_cache/ in the project
    return env


def _run(args: list[str], project: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            args,
            cwd=project,
            env=_env(project),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{shlex.join(args)} ran longer than {TIMEOUT} s")


def _show(proc: subprocess.CompletedProcess[str]) -> str:
    return f"\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"


def _missing_line(expected: str, actual: str) -> str | None:
    """The first expected line that no later output line matches (``...`` is any text)."""
    have = [line.strip() for line in actual.splitlines()]
    at = 0
    for want in expected.strip("\n").splitlines():
        pattern = re.compile(".*?".join(re.escape(part) for part in want.strip().split("...")))
        while at < len(have) and not pattern.fullmatch(have[at]):
            at += 1
        if at == len(have):
            return want
        at += 1
    return None


def _run_script(block: Block, project: Path) -> None:
    if block.lang == "python":
        name = block.options.get("file", "snippet.py")
        (project / name).write_text(block.text)
        proc = _run([sys.executable, name], project)
    else:
        assert block.lang in {"bash", "sh", "shell"}, f"cannot run a {block.lang!r} block"
        (project / "block.sh").write_text(block.text)
        proc = _run(["bash", "-eu", "-o", "pipefail", "block.sh"], project)
    wanted = block.exits()
    assert proc.returncode in wanted, f"exit {proc.returncode}, expected {wanted}" + _show(proc)
    if block.output is not None:
        missing = _missing_line(block.output.text, proc.stdout + proc.stderr)
        assert missing is None, f"{block.output.id}: not in the output: {missing!r}" + _show(proc)


def _run_each(block: Block, project: Path) -> None:
    for line in block.text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        commands = line.strip().split(" && ")
        for n, command in enumerate(commands, 1):
            proc = _run(["bash", "-c", command], project)
            last = n == len(commands)
            wanted = block.exits() if last else {0}
            note = "" if last else " (so the rest of the line never runs)"
            assert proc.returncode in wanted, f"{command!r} exited {proc.returncode}{note}" + _show(
                proc
            )


def _hook_config(block: Block, project: Path) -> dict[str, Any]:
    """The block as a local, install-free pre-commit config, checked as written first."""
    doc = yaml.safe_load(textwrap.dedent(block.text))
    if isinstance(doc, list):  # hook entries, as listed under a repo's `hooks:`
        repos = [{"repo": "shmlint", "hooks": doc}]
    else:
        (project / ".pre-commit-config.yaml").write_text(block.text)
        proc = _run([sys.executable, "-m", "pre_commit", "validate-config"], project)
        assert proc.returncode == 0, "invalid pre-commit config" + _show(proc)
        repos = doc["repos"]
    definitions = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    by_id = {hook["id"]: hook for hook in definitions}
    hooks = []
    for repo in repos:
        for entry in repo["hooks"]:
            assert entry["id"] in by_id, f"no hook {entry['id']!r} in .pre-commit-hooks.yaml"
            hooks.append({**by_id[entry["id"]], **entry, "language": "system"})
    return {"repos": [{"repo": "local", "hooks": hooks}]}


def _run_pre_commit(block: Block, project: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("needs git")
    config = _hook_config(block, project)
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    for args in (["init", "-q"], ["add", "."]):
        proc = _run(["git", *args], project)
        assert proc.returncode == 0, _show(proc)
    proc = _run([sys.executable, "-m", "pre_commit", "run", "--all-files"], project)
    codes = {int(code) for code in re.findall(r"^- exit code: (\d+)$", proc.stdout, re.M)}
    got = codes or {proc.returncode}
    assert got == block.exits(), f"hook exit {sorted(got)}, expected {block.exits()}" + _show(proc)


def _check_pyproject(block: Block, project: Path) -> None:
    with (project / "pyproject.toml").open("a") as pyproject:
        pyproject.write("\n" + block.text)
    proc = _run(["shmlint", "check", "--exit-zero", "src/"], project)
    assert proc.returncode == 0, "shmlint refused the configuration" + _show(proc)


@pytest.mark.parametrize("block", _cases())
def test_block_runs(block: Block, project: Path) -> None:
    if block.kind == "run":
        if "each" in block.flags:
            _run_each(block, project)
        else:
            _run_script(block, project)
    elif block.kind == "pre-commit":
        _run_pre_commit(block, project)
    elif block.kind == "pyproject":
        _check_pyproject(block, project)
    else:
        pytest.fail(f"nothing runs a {block.kind!r} block")
