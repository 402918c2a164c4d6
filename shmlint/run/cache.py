"""Per-file result cache under ``.shmlint_cache/``.

An entry is keyed by the file's bytes, its reported path, the effective configuration and the
code of the analysis itself (a digest of the package's own sources, :func:`code_digest`), so any
change to one of them misses: a development install or a patched build never serves results of
the code it had before. Entries are written atomically and read
defensively: a stale, truncated or foreign entry is ignored (and recomputed), never trusted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shmlint._version import __version__
from shmlint.basics.config import Config
from shmlint.basics.stamps import stale
from shmlint.basics.types import FileResult
from shmlint.run.encoding import Calls, decode_calls, decode_result, encode_result
from shmlint.run.prune import REFRESH_AFTER, refresh

if TYPE_CHECKING:
    from shmlint.facts.added import Growth
    from shmlint.facts.model import ProjectFacts
    from shmlint.facts.summary import ModuleSummary
    from shmlint.run.passes import FirstPass

FORMAT = 2
# The entries a pack index keeps at most, the least recently used dropped first: the last full
# runs' and recent edits' (an index of 20,000 entries is ~3 MB of JSON).
PACK_INDEX_KEEP = 20_000
# The most entries one pack holds (a worker's chunk of files is at most as many).
PACK_ENTRIES = 16
# Facts stored as others relined, over at most this many relinings (each ~10 ms to load on
# the ray wheel); past it the facts are stored whole.
RELINED_DEPTH = 8
# In a pack index, what separates a pack from the key an entry is stored under (Cache.where).
REFERENCE = ":"
# Whole facts are stored apart from the JSON entries, in their binary form (facts/binary.py).
FACTS_SUFFIX = ".facts"
# A phase-2 plan: the files to re-check, the facts' digest, each file's call evidence.
Plan = tuple[list[int], str, list[Calls | None]]
DIRECTORY_NAME = ".shmlint_cache"
# Where the cache lives when ``--cache-dir`` is not given (as ruff's RUFF_CACHE_DIR).
DIRECTORY_VARIABLE = "SHMLINT_CACHE_DIR"
PACKAGE_DIRECTORY = Path(__file__).resolve().parents[1]  # shmlint/
# Written into a cache directory shmlint creates (as ruff does): git ignores it, and backup
# tools that honour the Cache Directory Tagging Specification skip it.
MARKERS = {
    ".gitignore": "# Created by shmlint: a cache, never committed.\n*\n",
    "CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by shmlint.\n",
}


@functools.cache
def code_digest() -> str:
    """The digest of this package's own code, computed once per process: the analysis that
    made a cached result is the analysis that reads it."""
    return package_digest(PACKAGE_DIRECTORY)


def package_digest(package: Path) -> str:
    """A digest of every Python source of ``package`` (relative path and bytes).

    The runtime helpers are hashed too: hashing a few more small files is cheaper than a list
    of which modules can change a result, which would rot.
    """
    sources = []  # (relative parts, path): the order of sorted(package.rglob("*.py"))
    for directory, _, names in os.walk(package):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                sources.append((os.path.relpath(path, package).split(os.sep), path))
    digest = hashlib.sha256(__version__.encode())
    for parts, path in sorted(sources):
        digest.update(b"\0" + "/".join(parts).encode() + b"\0")
        with open(path, "rb") as source:
            digest.update(source.read())
    return digest.hexdigest()


def config_digest(config: Config) -> str:
    """A stable digest of everything in ``config`` that can change a result."""
    options = config.options
    canonical = {
        "select": list(config.select),
        "ignore": list(config.ignore),
        "per_file_ignores": [[p, list(c)] for p, c in config.per_file_ignores],
        "helper": config.helper,
        "helper_style": config.helper_style,
        "root": str(config.root.resolve()) if config.root else str(Path.cwd()),
        "extend_sources": sorted(options.extend_sources),
        "extend_sanitizers": sorted(options.extend_sanitizers),
        "array_types": sorted(options.array_types),
        "zero_copy_torch": options.zero_copy_torch,
        "external_types": options.external_types,
        # Where installed classes are looked up (the environment: two share a cache apart).
        "import_path": list(sys.path) if options.external_types else [],
        "ref_name_pattern": options.ref_name_pattern,
        "min_confidence": options.min_confidence.value,
    }
    text = json.dumps(canonical, sort_keys=True)
    return hashlib.sha256(f"{code_digest()}\0{FORMAT}\0{text}".encode()).hexdigest()


def default_directory(config: Config) -> Path:
    """``$SHMLINT_CACHE_DIR`` when set, else ``.shmlint_cache`` next to the configuration,
    else in the current directory."""
    configured = os.environ.get(DIRECTORY_VARIABLE)
    if configured:
        return Path(configured)
    return (config.root or Path.cwd()) / DIRECTORY_NAME


def clean(directory: Path) -> bool:
    """Remove a cache directory; True when there was one."""
    if not directory.is_dir():
        return False
    shutil.rmtree(directory)
    return True


class Cache:
    """The cache of one run (one configuration).

    Entries: per-file results (keyed also by the digest of the project facts a phase-2 result
    was checked against), phase-1 entries (summary, per-file result and questions, keyed by
    bytes and path), merged project facts (keyed by every phase-1 key of the run), and what
    a file's phase 2 looked up in the facts (keyed by its path and the facts' digest).
    """

    def __init__(self, directory: Path, config: Config, facts_digest: str = "") -> None:
        self.directory = directory / f"v{FORMAT}"
        self._config_salt = config_digest(config)
        self._salt = f"{self._config_salt}\0{facts_digest}".encode()
        self.hits = self.misses = 0
        self._packs: _Packs | None = None
        self.grown = False  # facts were stored through this object (a run's biggest write)
        # Per facts key loaded through this object: the relinings loading them took.
        self._relinings: dict[str, int] = {}

    def with_facts(self, facts_digest: str) -> Cache:
        """The same cache, for results checked against project facts with this digest."""
        other = Cache.__new__(Cache)
        other.directory = self.directory
        other._config_salt = self._config_salt
        other._salt = f"{self._config_salt}\0{facts_digest}".encode()
        other.hits = other.misses = 0
        other._packs = None
        other.grown = False
        other._relinings = {}
        return other

    def __getstate__(self) -> dict[str, Any]:
        """What a worker process is sent: not the packs read so far."""
        return {name: getattr(self, name) for name in _STATE}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)
        self._packs = None
        self.grown = False
        self._relinings = {}

    def key(self, display: str, data: bytes) -> str:
        """The entry key of one file's bytes reported as ``display``."""
        digest = hashlib.sha256(self._salt)
        digest.update(display.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(data)
        return digest.hexdigest()

    def first_pass_key(self, display: str, data: bytes) -> str:
        """The key of one file's phase-1 entry (independent of the rest of the project)."""
        digest = hashlib.sha256(f"summary\0{self._config_salt}".encode())
        digest.update(display.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(data)
        return "s" + digest.hexdigest()

    def lookups_key(self, first_key: str) -> str:
        """The key of the lookups phase 2 made in the facts this cache is for, analysing the
        bytes whose phase-1 key is ``first_key`` (so they belong to the result stored for the
        same bytes and facts); ``""``: what every replay of these facts needs whole
        (shmlint.facts.lookups.shared_json)."""
        digest = hashlib.sha256(self._salt + b"\0lookups\0" + first_key.encode())
        return "l" + digest.hexdigest()

    def _path(self, key: str, suffix: str = ".json") -> Path:
        return self.directory / key[:2] / f"{key}{suffix}"

    def _read(self, key: str) -> str | None:
        """The text stored under ``key`` (None: missing, unreadable or not UTF-8)."""
        data = self._read_bytes(self._path(key))
        try:
            return None if data is None else data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def _read_bytes(self, path: Path) -> bytes | None:
        """The bytes of an entry's file (None: missing or unreadable); the file is marked
        used when its last mark is old (shmlint/run/prune.py keeps the used ones)."""
        try:
            with open(path, "rb") as handle:
                data = handle.read()
                marked = os.fstat(handle.fileno()).st_mtime
        except OSError:
            return None
        if time.time() - marked > REFRESH_AFTER:
            refresh(path)
        return data

    def _entry(self, key: str) -> Any:
        """The JSON body stored under ``key``: in a pack (:meth:`put_pack`), else in its own
        file (None: missing, unreadable or not this key's)."""
        body = self._packed().entry(key)
        return body if body is not None else self._file_entry(key)

    def _file_entry(self, key: str) -> Any:
        """The JSON body of ``key``'s own file (None: missing, unreadable or not this key's)."""
        text = self._read(key)
        if text is None:
            return None
        try:
            data = json.loads(text)
        except ValueError:
            return None
        if not isinstance(data, dict) or data.get("key") != key:
            return None
        return data.get("body")

    def _store(self, key: str, body: Any) -> None:
        self._write(key, json.dumps({"key": key, "body": body}))

    def get(self, key: str) -> FileResult | None:
        """The cached result, or None (missing, unreadable, corrupt or not this key's)."""
        body = self._entry(key)
        try:
            result = decode_result(body) if body is not None else None
        except (ValueError, KeyError, TypeError):
            result = None
        if result is not None and stale(result.installed):
            result = None  # an installed file its analysis read changed
        if result is None:
            self.misses += 1
        else:
            self.hits += 1
        return result

    def get_first_pass(self, key: str) -> FirstPass | None:
        """A cached phase-1 entry (summary, per-file result, questions), or None: from the
        packs of the last project run (:meth:`put_first_pass_pack`), else its own file."""
        from shmlint.run.passes import decode  # the analysis: not on a warm run's path

        body = self._entry(key)
        try:
            item = decode(body) if body is not None else None
        except (ValueError, KeyError, TypeError):
            return None
        return None if item is None or stale(item.result.installed) else item

    def put_first_pass(self, key: str, item: FirstPass) -> None:
        """Store a phase-1 entry in a file of its own."""
        from shmlint.run.passes import encode

        self._store(key, encode(item))

    def put_first_pass_pack(self, items: list[tuple[str, FirstPass]]) -> dict[str, str]:
        """Store several phase-1 entries in packs (entry key → pack key returned): a cold
        project run stores a pack per chunk of files, not a file per entry (creating a file
        costs ~1 ms on some disks, encoding the entry ~0.2 ms). :meth:`index_packs`
        makes the packs findable."""
        from shmlint.run.passes import encode

        return self.put_pack({key: encode(item) for key, item in items})

    def put_pack(self, bodies: dict[str, Any]) -> dict[str, str]:
        """Store several entries (key → JSON body) in packs of at most :data:`PACK_ENTRIES`
        (reading one entry reads its whole pack: a run in one process has one chunk of
        thousands of files); entry key → pack key is returned. They are found once an index
        names the packs (:meth:`index_packs`)."""
        keys = list(bodies)
        packs: dict[str, str] = {}
        for start in range(0, len(keys), PACK_ENTRIES):
            some = keys[start : start + PACK_ENTRIES]
            digest = hashlib.sha256(b"pack")
            for key in some:
                digest.update(b"\0" + key.encode())
            pack = "k" + digest.hexdigest()
            self._store(pack, {key: bodies[key] for key in some})
            packs.update(dict.fromkeys(some, pack))
        return packs

    def pack_index(self) -> dict[str, str]:
        """This cache's pack index as read (entry key → pack key)."""
        return self._packed().loaded_index()

    def _packed(self) -> _Packs:
        if self._packs is None:
            self._packs = _Packs(self)
        return self._packs

    def where(self, key: str) -> str:
        """Where entry ``key`` (one this cache just read) is, as a value of a pack index
        (:meth:`index_packs`): its pack, or a reference to the entry — ``pack:key``, or
        ``:key`` for an entry in its own file — which another cache's index may hold for an
        entry of its own (the phase-2 results a change of the facts keeps: their entries are
        not written again, 4 MB a run after a line moved on the ray wheel)."""
        where = self._packed().where(key)
        if where is None:
            return f"{REFERENCE}{key}"
        return where if REFERENCE in where else f"{where}{REFERENCE}{key}"

    def index_packs(self, new: dict[str, str], used: Iterable[str] = ()) -> None:
        """Add entries (entry key → pack key, or a reference to an entry: :meth:`where`) to
        the pack index of this configuration and facts (this cache's salt; one file, read once
        by a run that reads an entry): a project run's phase-1 entries, the phase-2 results a
        facts change kept. The index is merged,
        not replaced — a run over a few files (a pre-commit hook) must not hide the whole
        tree's entries from the next full run — with the keys a run ``used`` and the new ones
        moved to the recent end, and the oldest dropped past :data:`PACK_INDEX_KEEP`."""
        index = dict(self.pack_index())
        ran = dict.fromkeys(used)  # (in order, read once: ``used`` may be an iterator)
        for key in ran:
            pack = index.pop(key, None)
            if pack is not None:
                index[key] = pack
        for key, pack in new.items():
            index.pop(key, None)
            index[key] = pack
        excess = len(index) - max(PACK_INDEX_KEEP, len(ran.keys() | new.keys()))
        if excess > 0:
            index = dict(list(index.items())[excess:])
        self._store(self._pack_index_key(), index)
        self._packed().index = index  # (this cache reads what it just wrote)

    def get_pack_index(self) -> dict[str, str]:
        """The pack index of this configuration and facts (empty: none)."""
        body = self._file_entry(self._pack_index_key())
        return body if isinstance(body, dict) else {}

    def _pack_index_key(self) -> str:
        return "i" + hashlib.sha256(b"pack index\0" + self._salt).hexdigest()

    def get_syntax_summary(self, key: str) -> ModuleSummary | None | bool:
        """A deferred module's cached summary (None: it has none); False when not cached."""
        from shmlint.facts.summary import ModuleSummary

        body = self._entry(key)
        if not isinstance(body, dict):
            return False
        try:
            summary = body["summary"]
            return None if summary is None else ModuleSummary.from_json(summary)
        except (ValueError, KeyError, TypeError):
            return False

    def put_syntax_summary(self, key: str, summary: ModuleSummary | None) -> None:
        """Store a deferred module's summary (or that it has none)."""
        self._store(key, syntax_body(summary))

    def put_syntax_pack(self, items: list[tuple[str, ModuleSummary | None]]) -> dict[str, str]:
        """Store several deferred modules' summaries in packs (entry key → pack key
        returned), as :meth:`put_first_pass_pack` stores phase-1 entries."""
        return self.put_pack({key: syntax_body(summary) for key, summary in items})

    def external_key(self, path: str, stamp: tuple[int, int], module: str, package: bool) -> str:
        """The entry of an installed module's summary (shmlint/facts/external.py): its file at
        one (modification time, size), as which module; the code's and configuration's salt."""
        mtime, size = stamp
        spelled = f"external\0{self._config_salt}\0{path}\0{mtime}\0{size}\0{module}\0{package}"
        return "x" + hashlib.sha256(spelled.encode("utf-8", "surrogateescape")).hexdigest()

    def get_plan(self, key: str) -> Plan | None:
        """A project run's phase-2 plan: the files to re-check, the facts' digest, and each
        file's call evidence (``FirstPass.second_pass``)."""
        body = self._entry(key)
        try:
            calls = decode_calls(body["calls"])
            return [int(i) for i in body["second"]], str(body["digest"]), calls
        except (TypeError, KeyError, ValueError, IndexError):
            return None

    def put_plan(self, key: str, plan: Plan) -> None:
        """Store a project run's phase-2 plan."""
        self._store(key, {"second": plan[0], "digest": plan[1], "calls": plan[2]})

    def get_lookups(self, key: str) -> dict[str, Any] | None:
        """A file's logged lookups (shmlint.facts.lookups), or None."""
        body = self._entry(key)
        return body if isinstance(body, dict) else None

    def put_lookups(self, key: str, log: dict[str, Any]) -> None:
        """Store a file's logged lookups."""
        self._store(key, log)

    def get_last_facts(self) -> str:
        """The digest of the facts of the last project run in this configuration ("": none)."""
        body = self._entry(self._last_facts_key())
        return body if isinstance(body, str) else ""

    def put_last_facts(self, digest: str) -> None:
        """Record the digest of a project run's facts (see :meth:`get_last_facts`)."""
        self._store(self._last_facts_key(), digest)

    def _last_facts_key(self) -> str:
        return "d" + hashlib.sha256(f"last facts\0{self._config_salt}".encode()).hexdigest()

    def get_facts(self, key: str, depth: int = 0) -> ProjectFacts | None:
        """Cached merged project facts, or None; facts stored as others relined
        (:meth:`put_relined`) are rebuilt from those (``depth``: relinings already followed)."""
        from shmlint.facts import binary

        blob = self._read_bytes(self._path(key, FACTS_SUFFIX))
        facts = None if blob is None else binary.loads(blob, key)
        if facts is not None:
            self._relinings[key] = 0
            return facts
        # (A damaged or foreign blob is a miss; the key may be stored as a derivation too.)
        body = self._entry(key)
        try:
            if isinstance(body, dict) and "relined" in body:
                return self._relined(key, body["relined"], depth)
        except (ValueError, KeyError, TypeError, IndexError):
            pass
        return None

    def _relined(self, key: str, body: dict[str, Any], depth: int) -> ProjectFacts | None:
        from shmlint.facts.added import Growth
        from shmlint.facts.moved import decode_moved, relined

        if depth >= RELINED_DEPTH:
            return None
        base = str(body["base"])
        below = self.get_facts(base, depth + 1)
        if below is None or below.digest() != body["base_digest"]:
            return None  # (merged anew since, an installed file changed: not what was relined)
        facts = relined(below, decode_moved(body["moved"]))
        if facts is None:
            return None
        added = body.get("added")
        if added is not None:  # functions added (shmlint/facts/added.py), and what they ask
            facts = Growth.from_json(added).applied(facts, below.index)
        if facts is below:  # (the same object: its digest is the base's)
            facts = dataclasses.replace(facts)
        facts.assume_digest(str(body["digest"]))
        self._relinings[key] = self._relinings.get(base, RELINED_DEPTH) + 1
        return facts

    def put_relined(
        self,
        key: str,
        base: tuple[str, str],
        moved: dict[str, dict[int, int]],
        digest: str,
        added: Growth | None = None,
    ) -> bool:
        """Store facts as those under ``base`` (key and digest: loaded through this cache, and
        relined only while the facts there have that digest) with the lines ``moved``
        (shmlint/facts/moved.py), the functions ``added`` (their names, and the names they
        add to the index: shmlint/facts/added.py) and their assumed digest: a few bytes, where
        the ray wheel's facts are 9 MB of JSON (~0.15 s to encode). False, storing nothing,
        when loading them would take more than :data:`RELINED_DEPTH` relinings."""
        from shmlint.facts.moved import encode_moved

        if self._relinings.get(base[0], RELINED_DEPTH) + 1 > RELINED_DEPTH:
            return False
        body: dict[str, Any] = {
            "base": base[0],
            "base_digest": base[1],
            "moved": encode_moved(moved),
            "digest": digest,
        }
        if added is not None:
            body["added"] = added.to_json()
        self._store(key, {"relined": body})
        return True

    def put_facts(self, key: str, facts: ProjectFacts) -> None:
        """Store merged project facts with their digest and index, in their binary form
        (shmlint/facts/binary.py: loads in half the time of their JSON); the cache has
        :attr:`grown` once they are written (the run should prune it, shmlint/run/prune.py)."""
        from shmlint.facts import binary

        path = self._path(key, FACTS_SUFFIX)
        self.grown = self._write(key, binary.dumps(key, facts), path) or self.grown

    @property
    def salt(self) -> bytes:
        """What every key of this cache starts from (configuration, code, facts)."""
        return self._salt

    def get_record(self, key: str) -> Any:
        """The body of a run record (shmlint/run/record.py), or None."""
        return self._entry(key)

    def put_record(self, key: str, body: Any) -> None:
        """Store a run record."""
        self._store(key, body)

    def put(self, key: str, result: FileResult) -> None:
        """Store a result; a cache that cannot be written is silently not used."""
        self._store(key, encode_result(result))

    def _write(self, key: str, content: str | bytes, path: Path | None = None) -> bool:
        """Write ``key``'s entry (at ``path``, else its JSON file) atomically (a temporary file
        renamed); a cache that cannot be written is silently not used (False)."""
        path = path or self._path(key)
        import tempfile  # only a run that writes needs it

        data = content.encode("utf-8") if isinstance(content, str) else content
        with contextlib.suppress(OSError):
            try:
                descriptor, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            except FileNotFoundError:  # the first entry of its shard, or of the cache
                self._make(path.parent)
                descriptor, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
            os.replace(temporary, path)
            return True
        return False

    def _make(self, shard: Path) -> None:
        """Create a shard's directory; a cache directory created here gets :data:`MARKERS`."""
        root = self.directory.parent
        created = not root.exists()
        shard.mkdir(parents=True, exist_ok=True)
        if created:
            for name, text in MARKERS.items():
                (root / name).write_text(text, encoding="utf-8")


def syntax_body(summary: ModuleSummary | None) -> dict[str, Any]:
    """The stored form of a deferred module's summary (:meth:`Cache.get_syntax_summary`)."""
    return {"summary": None if summary is None else summary.to_json()}


# A Cache's state as sent to a worker (its packs read so far stay behind).
_STATE = ("directory", "_config_salt", "_salt", "hits", "misses")


class _Packs:
    """The packs a cache's index names, each read on first use (one file for many entries)."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache
        self.index: dict[str, str] | None = None
        self.read: dict[str, dict[str, Any]] = {}

    def loaded_index(self) -> dict[str, str]:
        if self.index is None:
            self.index = self.cache.get_pack_index()
        return self.index

    def where(self, key: str) -> str | None:
        """Where the index says entry ``key`` is (see :meth:`Cache.where`), or None."""
        value = self.loaded_index().get(key)
        return value if isinstance(value, str) else None

    def entry(self, key: str) -> Any:
        """The body of entry ``key`` from where the index says it is, or None (not indexed,
        or unreadable)."""
        where = self.where(key)
        if where is None:
            return None
        pack, _, stored = where.partition(REFERENCE)
        if not pack:  # kept under another key, in that key's own file
            return self.cache._file_entry(stored)
        bodies = self.read.get(pack)
        if bodies is None:
            found = self.cache._file_entry(pack)
            bodies = self.read[pack] = found if isinstance(found, dict) else {}
        return bodies.get(stored or key)
