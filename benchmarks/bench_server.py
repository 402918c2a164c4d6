"""``shmlint server`` latency with a real LSP client: one-line edits in vLLM's executor.

    python benchmarks/bench_server.py [--tree .corpus/vllm-0.19.1] [--edits 60] [--warm]

Starts ``python -m shmlint server`` over stdio with pygls's own client, opens
``vllm/v1/executor/ray_executor.py`` of the vLLM 0.19.1 wheel (``python benchmarks/corpus.py
vllm==0.19.1`` unpacks it into ``.corpus/``), waits for its first diagnostics (the project's
facts are built first: cold, or from the cache with ``--warm``), then makes one-line edits as
incremental ``didChange`` notifications, each after a pause (a person typing, then stopping),
and times each until the ``publishDiagnostics`` of that version arrives. Edits alternate
between a change inside a line (an assert's message: the module's summary stays the same),
a line inserted (the lines below move) and that line removed again. Prints the median and
90th percentile per kind and overall, and the peak and final resident memory (from /proc) of
the server and of its helper process (phase 1 of edited files). The latency includes the
server's debounce. Measured here, never asserted in a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402

from benchmarks.corpus import corpus  # noqa: E402

TARGET = "vllm/v1/executor/ray_executor.py"
ASSERT = "        assert self.kv_output_aggregator is not None\n"
ANCHOR = "        refs = self.forward_dag.execute((scheduler_output, grammar_output))"


class Client(LanguageClient):
    """pygls's client, noting when each version's diagnostics arrive."""

    def __init__(self) -> None:
        super().__init__("bench-server", "1")
        self.arrived: dict[tuple[str, int | None], float] = {}
        self.counts: dict[tuple[str, int | None], int] = {}
        self.changed = asyncio.Event()

        @self.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: types.PublishDiagnosticsParams) -> None:
            key = (params.uri, params.version)
            self.arrived.setdefault(key, time.perf_counter())
            self.counts[key] = len(params.diagnostics)
            self.changed.set()

    async def wait_for(self, uri: str, version: int, timeout: float) -> float:
        deadline = time.perf_counter() + timeout
        while (uri, version) not in self.arrived:
            self.changed.clear()
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"no diagnostics for version {version} in {timeout} s")
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                continue
        return self.arrived[(uri, version)]


def _memory(pid: int) -> tuple[float, float]:
    """(peak, current) resident memory of a process in MB, from /proc."""
    values: dict[str, float] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            key, _, rest = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                values[key] = int(rest.split()[0]) / 1024
    return values.get("VmHWM", 0.0), values.get("VmRSS", 0.0)


def _role(pid: int) -> str:
    """What a child of the server is: its phase-1 helper, or multiprocessing's tracker."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return "child process"
    if b"resource_tracker" in command:
        return "resource tracker (multiprocessing's)"
    return "helper process (phase 1 of edited files)"


def _children(pid: int) -> list[int]:
    """The processes ``pid`` started (the server's helper), from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text(encoding="ascii")
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _line_of(text: str, needle: str) -> int:
    for number, line in enumerate(text.splitlines()):
        if line.startswith(needle.rstrip("\n")):
            return number
    raise SystemExit(f"{TARGET} no longer has the line {needle!r}")


def _change(uri: str, version: int, line: int, start: int, end: tuple[int, int], text: str):  # type: ignore[no-untyped-def]
    """An incremental change replacing (line, start)..end with ``text``."""
    where = types.Range(types.Position(line, start), types.Position(*end))
    change = types.TextDocumentContentChangePartial(range=where, text=text)
    document = types.VersionedTextDocumentIdentifier(uri=uri, version=version)
    return types.DidChangeTextDocumentParams(document, [change])


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


async def run(tree: Path, edits: int, pause: float, cache: Path) -> None:
    path = tree / TARGET
    text = path.read_text(encoding="utf-8")
    uri = path.as_uri()
    client = Client()
    env = dict(os.environ, SHMLINT_CACHE_DIR=str(cache))
    await client.start_io(sys.executable, "-m", "shmlint", "server", env=env)
    server = client._server
    assert server is not None
    started = time.perf_counter()
    folder = types.WorkspaceFolder(uri=tree.as_uri(), name=tree.name)
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=tree.as_uri(),
            workspace_folders=[folder],
        )
    )
    client.initialized(types.InitializedParams())
    item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(item))
    first = await client.wait_for(uri, 1, timeout=600)
    print(
        f"first diagnostics (project built): {first - started:.2f} s, "
        f"{client.counts[(uri, 1)]} findings"
    )
    assert_line = _line_of(text, ASSERT)
    anchor = _line_of(text, ANCHOR)
    width = len(ASSERT.rstrip("\n"))
    times: dict[str, list[float]] = {"in a line": [], "line inserted": [], "line removed": []}
    version, message = 1, ""
    for n in range(edits):
        await asyncio.sleep(pause)  # the user stops typing
        version += 1
        kind = ("in a line", "line inserted", "line removed")[n % 3]
        if kind == "in a line":  # give the assert a message, or take it away again
            old_end = (assert_line, width + len(message))
            message = "" if message else f', "edit {n}"'
            params = _change(uri, version, assert_line, width, old_end, message)
        elif kind == "line inserted":
            params = _change(uri, version, anchor, 0, (anchor, 0), f"        # note {n}\n")
        else:
            params = _change(uri, version, anchor, 0, (anchor + 1, 0), "")
        sent = time.perf_counter()
        client.text_document_did_change(params)
        arrived = await client.wait_for(uri, version, timeout=60)
        times[kind].append((arrived - sent) * 1000)
    peak, current = _memory(server.pid)
    helpers = [(_role(child), *_memory(child)) for child in _children(server.pid)]
    everything = [t for values in times.values() for t in values]
    print(f"{len(everything)} edits of {TARGET} (a {pause:.1f} s pause before each):")
    for kind, values in [*times.items(), ("all", everything)]:
        if values:
            print(
                f"  {kind:<14} median {statistics.median(values):6.1f} ms   "
                f"p90 {_percentile(values, 0.9):6.1f} ms   (n={len(values)})"
            )
    print(f"server memory: peak {peak:.0f} MB, now {current:.0f} MB (resident)")
    for role, helper_peak, helper_now in helpers:
        print(f"  its {role}: peak {helper_peak:.0f} MB, now {helper_now:.0f} MB")
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, help="the unpacked vLLM wheel (its parent of vllm/)")
    parser.add_argument("--edits", type=int, default=60)
    parser.add_argument("--pause", type=float, default=0.3, help="seconds before each edit")
    parser.add_argument(
        "--warm", type=Path, help="a cache directory to keep (the second run reads it)"
    )
    args = parser.parse_args()
    tree = (args.tree or corpus("vllm==0.19.1")).resolve()
    if not (tree / TARGET).is_file():
        raise SystemExit(f"{tree / TARGET}: not found")
    if args.warm is not None:
        asyncio.run(run(tree, args.edits, args.pause, args.warm))
        return
    with tempfile.TemporaryDirectory() as cache:
        asyncio.run(run(tree, args.edits, args.pause, Path(cache)))


if __name__ == "__main__":
    main()
