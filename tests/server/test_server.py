"""``shmlint server`` end to end: a real LSP client (pytest-lsp) talks to ``python -m shmlint
server`` over stdio, as an editor does."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from pathlib import Path

import pytest
from lsprotocol import types

from shmlint.basics.config import find_pyproject, load_config
from shmlint.cli import main
from shmlint.run.discovery import iter_python_files
from shmlint.run.pool import default_jobs
from shmlint.run.runner import check_project
from tests.fixture_markers import FIXTURES
from tests.server.lsp import NEOVIM, TIMEOUT, apply_edits, edits_of, lsp_session

pytestmark = pytest.mark.asyncio

FUTURES = """import ray


class FutureWrapper:
    def __init__(self, ref):
        self.ref = ref

    def result(self):
        return ray.get(self.ref)
"""
PLAIN_EXECUTOR = """from pkg.futures import FutureWrapper


class Executor:
    def __init__(self, worker):
        self.worker = worker

    def execute_model(self, scheduler_output):
        ref = self.worker.execute_model.remote(scheduler_output)
        return FutureWrapper(ref)
"""
# The same executor, now feeding the wrapper from a compiled graph's channel.
CHANNEL_EXECUTOR = """from pkg.futures import FutureWrapper


class Executor:
    def __init__(self, dag):
        self.forward_dag = dag.experimental_compile()

    def execute_model(self, scheduler_output):
        refs = self.forward_dag.execute(scheduler_output)
        return FutureWrapper(refs[0])
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def wrapper(tmp_path: Path) -> Path:
    root = tmp_path / "wrapper"
    shutil.copytree(FIXTURES / "project" / "wrapper", root)
    return root


def _reported(root: Path, display: str, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """What ``shmlint check`` reports for one file: (code-less) spans of its findings."""
    monkeypatch.chdir(root)
    config = load_config(find_pyproject(root))
    files = list(iter_python_files(["."], config))
    _, results = check_project(files, config, jobs=1, cache=None)
    (result,) = [r for r in results if r.path == display]
    return [(f.line - 1, f.col, f.end_line - 1, f.end_col) for f in result.findings]


def _span(diagnostic: types.Diagnostic) -> tuple[int, ...]:
    r = diagnostic.range
    return (r.start.line, r.start.character, r.end.line, r.end.character)


async def test_an_open_file_gets_the_project_findings_as_diagnostics(
    wrapper: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _reported(wrapper, "pkg/futures.py", monkeypatch)
    async with lsp_session(wrapper) as client:
        uri = client.open(wrapper / "pkg" / "futures.py")
        found = await client.diagnostics_for(uri, 1)
        registered = {r.method for r in client.registrations}
    assert [_span(d) for d in found] == expected
    assert {d.code for d in found} == {"SHM101"} and {d.source for d in found} == {"shmlint"}
    assert {d.severity for d in found} == {types.DiagnosticSeverity.Warning}
    # The channel read (a cross-module finding: only the project run makes it high) ...
    first = found[0]
    assert "compiled-graph channel at line 12" in first.message
    # ... and the read itself, as related information.
    (related,) = first.related_information or []
    assert related.location.uri == uri and related.location.range.start.line == 11
    assert "read here" in related.message
    assert types.WORKSPACE_DID_CHANGE_WATCHED_FILES in registered


async def test_the_quick_fix_fixes_the_document_and_the_diagnostics_clear(wrapper: Path) -> None:
    async with lsp_session(wrapper) as client:
        uri = client.open(wrapper / "pkg" / "futures.py")
        found = await client.diagnostics_for(uri, 1)
        at_line_14 = next(d for d in found if d.range.start.line == 13)
        actions = await client.actions(uri, at_line_14.range, only=["quickfix"])
        titles = [a.title for a in actions]
        fix = next(a for a in actions if a.title.startswith("Detach"))
        assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
        assert fix.diagnostics and fix.diagnostics[0].code == "SHM101"
        version = client.edit(uri, edits_of(fix, uri))
        after = await client.diagnostics_for(uri, version)
        text = client.texts[uri]
    assert "Suppress SHM101 on this line (# noqa: SHM101)" in titles
    assert "outputs = detach_zero_copy_from_model_runner_output(ray.get(" in text
    assert "from shmlint.runtime import detach_zero_copy_from_model_runner_output" in text
    # Both returns of that read are fixed; the other reads' findings stay.
    assert {d.range.start.line for d in found} == {13, 14, 24, 29}
    assert {d.range.start.line for d in after} == {25, 30}  # one line down: the import


async def test_fix_all_is_what_shmlint_fix_writes(
    wrapper: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reference = tmp_path / "reference"
    shutil.copytree(wrapper, reference)
    async with lsp_session(wrapper, client=NEOVIM) as client:  # no lazy resolve: eager edits
        uri = client.open(wrapper / "pkg" / "futures.py")
        await client.diagnostics_for(uri, 1)
        whole = types.Range(types.Position(0, 0), types.Position(40, 0))
        (fix_all,) = await client.actions(uri, whole, only=["source.fixAll"])
        assert fix_all.kind == "source.fixAll.shmlint"
        version = client.edit(uri, edits_of(fix_all, uri))
        after = await client.diagnostics_for(uri, version)
        fixed = client.texts[uri]
    monkeypatch.chdir(reference)
    assert main(["--fix", "--no-cache", "."]) == 0  # the whole project, as the server sees it
    capsys.readouterr()
    assert fixed == (reference / "pkg" / "futures.py").read_text(encoding="utf-8")
    assert after == []
    assert (wrapper / "pkg" / "futures.py").read_text() != fixed  # the editor saves, not us


async def test_noqa_suppresses_the_finding(wrapper: Path) -> None:
    async with lsp_session(wrapper) as client:
        uri = client.open(wrapper / "pkg" / "futures.py")
        found = await client.diagnostics_for(uri, 1)
        target = next(d for d in found if d.range.start.line == 29)
        actions = await client.actions(uri, target.range)
        noqa = next(a for a in actions if a.title.startswith("Suppress"))
        version = client.edit(uri, edits_of(noqa, uri))
        after = await client.diagnostics_for(uri, version)
        line = client.texts[uri].splitlines()[29]
    assert line.endswith("return refs[0].get()  # error: SHM101  # noqa: SHM101")
    assert len(after) == len(found) - 1 and all(d.range.start.line != 29 for d in after)


async def test_hover_shows_the_rule_documentation(wrapper: Path) -> None:
    async with lsp_session(wrapper) as client:
        uri = client.open(wrapper / "pkg" / "futures.py")
        found = await client.diagnostics_for(uri, 1)
        position = found[0].range.start
        params = types.HoverParams(types.TextDocumentIdentifier(uri), position)
        hover = await client.text_document_hover_async(params)
        nothing = types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(0, 0))
        empty = await client.text_document_hover_async(nothing)
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.kind == types.MarkupKind.Markdown
    text = hover.contents.value
    assert text.startswith("**SHM101** (returned-undetached)")
    assert "### What it does" in text and "### Use instead" in text
    assert empty is None


async def test_editing_a_second_module_updates_the_first(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "project",
        {"pkg/__init__.py": "", "pkg/futures.py": FUTURES, "pkg/executor.py": PLAIN_EXECUTOR},
    )
    async with lsp_session(root) as client:
        futures = client.open(root / "pkg" / "futures.py")
        assert await client.diagnostics_for(futures, 1) == []  # a plain ref: medium, hidden
        executor = client.open(root / "pkg" / "executor.py")
        await client.diagnostics_for(executor, 1)
        seen = len(client.published)
        client.change(executor, CHANNEL_EXECUTOR)  # unsaved: the editor's text counts
        fed = await client.until(lambda: [p for p in client.published[seen:] if p.uri == futures])
        (channel,) = fed[-1].diagnostics
        seen = len(client.published)
        client.change(executor, PLAIN_EXECUTOR)
        back = await client.until(lambda: [p for p in client.published[seen:] if p.uri == futures])
    assert channel.code == "SHM101" and "compiled-graph channel" in channel.message
    assert channel.range.start.line == 8
    assert not back[-1].diagnostics
    assert (root / "pkg" / "executor.py").read_text() == PLAIN_EXECUTOR


async def test_a_change_on_disk_updates_open_documents(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "project",
        {"pkg/__init__.py": "", "pkg/futures.py": FUTURES, "pkg/executor.py": PLAIN_EXECUTOR},
    )
    executor, other = root / "pkg" / "executor.py", root / "pkg" / "other.py"
    steps = [  # (what happens on disk, the event, SHM101 in futures.py after it)
        (lambda: executor.write_text(CHANNEL_EXECUTOR), executor, "Changed", True),
        (lambda: executor.write_text(PLAIN_EXECUTOR), executor, "Changed", False),
        (lambda: other.write_text(CHANNEL_EXECUTOR), other, "Created", True),
        (other.unlink, other, "Deleted", False),
    ]
    async with lsp_session(root) as client:
        futures = client.open(root / "pkg" / "futures.py")
        assert await client.diagnostics_for(futures, 1) == []
        for change, path, kind, reported in steps:
            seen = len(client.published)
            change()
            event = types.FileEvent(path.as_uri(), types.FileChangeType[kind])
            client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams([event]))
            after = await client.until(
                lambda seen=seen: [p for p in client.published[seen:] if p.uri == futures]
            )
            assert [d.code for d in after[-1].diagnostics] == (["SHM101"] if reported else [])


async def test_without_file_watching_a_save_looks_at_the_disk(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "project",
        {"pkg/__init__.py": "", "pkg/futures.py": FUTURES, "pkg/executor.py": PLAIN_EXECUTOR},
    )
    async with lsp_session(root, client=NEOVIM) as client:  # Neovim 0.7 watches no files
        futures = client.open(root / "pkg" / "futures.py")
        assert await client.diagnostics_for(futures, 1) == []
        (root / "pkg" / "other.py").write_text(CHANNEL_EXECUTOR, encoding="utf-8")
        seen = len(client.published)
        document = types.TextDocumentIdentifier(futures)
        client.text_document_did_save(types.DidSaveTextDocumentParams(document))
        fed = await client.until(
            lambda: [p for p in client.published[seen:] if p.uri == futures and p.diagnostics]
        )
    assert client.registrations == []
    assert [d.code for d in fed[-1].diagnostics] == ["SHM101"]


async def test_a_bad_configuration_is_a_message_and_the_server_goes_on(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "project",
        {
            "pyproject.toml": '[tool.shmlint]\nselect = ["SHM999"]\n',
            "pkg/__init__.py": "",
            "pkg/futures.py": FUTURES,
            "pkg/executor.py": CHANNEL_EXECUTOR,
        },
    )
    options = {"min-confidence": "very", "colour": "blue"}
    async with lsp_session(root, options=options) as client:
        uri = client.open(root / "pkg" / "futures.py")
        found = await client.diagnostics_for(uri, 1)  # the defaults stand in meanwhile
        messages = [m.message for m in client.messages]
        kinds = {m.type for m in client.messages}
        # Fixed on disk: the watcher event re-reads it, without a message.
        (root / "pyproject.toml").write_text('[tool.shmlint]\nignore = ["SHM101"]\n')
        event = types.FileEvent((root / "pyproject.toml").as_uri(), types.FileChangeType.Changed)
        seen = len(client.published)
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams([event]))
        after = await client.until(lambda: [p for p in client.published[seen:] if p.uri == uri])
        later = len(client.messages)
    assert [d.code for d in found] == ["SHM101"]
    assert kinds == {types.MessageType.Error}
    assert any("tool.shmlint.select: unknown rule code 'SHM999'" in m for m in messages)
    assert any("min-confidence must be 'high' or 'medium'" in m for m in messages)
    assert any("unknown initialization option 'colour'" in m for m in messages)
    assert not after[-1].diagnostics and later == len(messages)


async def test_a_file_that_does_not_parse_gets_only_shm001(wrapper: Path) -> None:
    async with lsp_session(wrapper) as client:
        uri = client.open(wrapper / "pkg" / "futures.py")
        found = await client.diagnostics_for(uri, 1)
        text = client.texts[uri]
        broken = client.change(uri, text.replace("def result(self, timeout=None):", "def result(:"))
        during = await client.diagnostics_for(uri, broken)
        fixed = client.change(uri, text)
        after = await client.diagnostics_for(uri, fixed)
    assert [(d.code, d.range.start.line) for d in during] == [("SHM001", 10)]
    assert "cannot parse the file" in during[0].message
    assert after == found


async def test_init_options_set_confidence_and_helper_style(wrapper: Path) -> None:
    (wrapper / "pyproject.toml").unlink()  # the fixture's own min-confidence = medium
    options = {"min-confidence": "medium", "helper-style": "in-place"}
    async with lsp_session(wrapper, options=options) as client:
        uri = client.open(wrapper / "pkg" / "futures.py")
        found = await client.diagnostics_for(uri, 1)
        plain = next(d for d in found if d.range.start.line == 24)
        (fix,) = [a for a in await client.actions(uri, plain.range) if a.title.startswith("Det")]
        text = apply_edits(client.texts[uri], edits_of(fix, uri))
    assert {d.range.start.line for d in found} == {13, 14, 24, 29}  # the medium one too
    assert fix.title == (
        "Detach the read at line 25: call detach_zero_copy_from_model_runner_output() on it after"
    )
    assert "        output = ray.get(self.ref)\n" in text
    assert "        detach_zero_copy_from_model_runner_output(output)\n" in text


async def test_only_the_latest_version_is_published(wrapper: Path) -> None:
    async with lsp_session(wrapper) as client:
        uri = client.open(wrapper / "pkg" / "futures.py")
        await client.diagnostics_for(uri, 1)
        text = client.texts[uri]
        seen = len(client.published)
        versions = [client.change(uri, text + "\n" * n) for n in range(1, 6)]
        await client.diagnostics_for(uri, versions[-1], after=seen)
        published = [p.version for p in client.published[seen:] if p.uri == uri]
    assert published[-1] == versions[-1]
    assert published == sorted(published)  # never an older version after a newer one
    assert len(published) < len(versions)  # debounced: not one check per keystroke


@pytest.mark.parametrize(
    ("encoding", "before"),
    [("utf-16", 19), ("utf-8", 22), ("utf-32", 18)],  # the units of `    label = "😀é"; `
)
async def test_positions_are_in_the_negotiated_encoding(
    tmp_path: Path, encoding: str, before: int
) -> None:
    source = (
        "import numpy as np\nimport ray\n\n\n"
        "def fetch(ref) -> np.ndarray:\n"
        '    label = "😀é"; return ray.get(ref)\n'
    )
    root = _write(tmp_path / "project", {"m.py": source})
    async with lsp_session(root, encodings=[encoding]) as client:
        uri = client.open(root / "m.py")
        (found,) = await client.diagnostics_for(uri, 1)
    # `return` is the line's 19th character; 😀 takes 2 UTF-16 / 4 UTF-8 units, é 1 / 2.
    assert found.range.start == types.Position(5, before)
    assert found.range.end.character == before + len("return ray.get(ref)")


async def test_files_outside_the_project_and_excluded_ones(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "project",
        {
            "pyproject.toml": '[tool.shmlint]\nextend-exclude = ["vendored"]\n',
            "vendored/m.py": "import numpy as np\nimport ray\ndef f(r) -> np.ndarray:\n"
            "    return ray.get(r)\n",
        },
    )
    outside = _write(tmp_path / "elsewhere", {"o.py": (root / "vendored" / "m.py").read_text()})
    async with lsp_session(root) as client:
        excluded = client.open(root / "vendored" / "m.py")
        alone = client.open(outside / "o.py")
        assert await client.diagnostics_for(excluded, 1) == []
        (finding,) = await client.diagnostics_for(alone, 1)
    assert finding.code == "SHM101"


async def test_shutdown_and_exit(wrapper: Path) -> None:
    async with lsp_session(wrapper) as client:
        uri = client.open(wrapper / "pkg" / "futures.py")
        await client.diagnostics_for(uri, 1)
        process = client._server
        assert process is not None and process.returncode is None
        # The build was reported as work done progress (the client offered it).
        ((token, reports),) = client.progress_reports.items()
        assert str(token).startswith("shmlint")
        assert isinstance(reports[0], types.WorkDoneProgressBegin)
        assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    # lsp_session sent shutdown, then exit, and waited for the process.
    assert process.returncode == 0


async def test_exit_without_shutdown_is_exit_code_1(wrapper: Path) -> None:
    async with lsp_session(wrapper) as client:
        uri = client.open(wrapper / "pkg" / "futures.py")
        await client.diagnostics_for(uri, 1)
        process = client._server
        assert process is not None
        client.exit(None)  # no shutdown first: the protocol says exit code 1
        await asyncio.wait_for(process.wait(), TIMEOUT)
        assert process.returncode == 1
        client.capabilities = None  # (nothing left to shut down)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text(encoding="ascii")
            except OSError:
                continue
            fields = stat.rpartition(")")[2].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"  # a zombie has ended


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.skipif(default_jobs() < 2, reason="one CPU: the server starts no helper process")
async def test_a_killed_server_leaves_no_process_behind(wrapper: Path) -> None:
    async with lsp_session(wrapper) as client:
        uri = client.open(wrapper / "pkg" / "futures.py")
        await client.diagnostics_for(uri, 1)
        process = client._server
        assert process is not None
        children = _children(process.pid)
        assert children  # the helper that runs phase 1 of edited files (and its tracker)
        process.kill()  # as an editor that crashed would leave it
        client.capabilities = None  # (nothing left to shut down)

        def gone() -> bool:
            return not any(_alive(child) for child in children)

        try:
            await client.until(gone, timeout=15)
        finally:  # (if they outlived it, end them: they hold the server's pipes open)
            for child in filter(_alive, children):
                os.kill(child, signal.SIGKILL)
        await asyncio.wait_for(process.wait(), TIMEOUT)
