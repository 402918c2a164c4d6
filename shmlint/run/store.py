"""Entries on disk, under a salt: JSON bodies each in a file of its own, or many in a pack that
an index names (one file read for many entries), written atomically (a temporary file
renamed) and read defensively: a missing, truncated or foreign entry is a miss, never
trusted. What the entries mean is :class:`shmlint.run.cache.Cache`'s."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from shmlint.run.prune import REFRESH_AFTER, refresh

# The entries a pack index keeps at most, the least recently used dropped first: the last full
# runs' and recent edits' (an index of 20,000 entries is ~3 MB of JSON).
PACK_INDEX_KEEP = 20_000
# The most entries one pack holds (a worker's chunk of files is at most as many).
PACK_ENTRIES = 16
# In a pack index, what separates a pack from the key an entry is stored under (Cache.where).
REFERENCE = ":"
# Written into a cache directory shmlint creates (as ruff does): git ignores it, and backup
# tools that honour the Cache Directory Tagging Specification skip it.
MARKERS = {
    ".gitignore": "# Created by shmlint: a cache, never committed.\n*\n",
    "CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by shmlint.\n",
}


class EntryStore:
    """The entries of one cache directory under one salt (configuration, code, and the
    facts a phase-2 result was checked against)."""

    def __init__(self, directory: Path, config_salt: str, facts_digest: str = "") -> None:
        self.directory = directory
        self._config_salt = config_salt
        self._salt = f"{config_salt}\0{facts_digest}".encode()
        self._packs: _Packs | None = None

    @property
    def salt(self) -> bytes:
        """What every key of this cache starts from (configuration, code, facts)."""
        return self._salt

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
        packed = self._packed()
        body = packed.entry(key)
        if body is None:
            body = self._file_entry(key)
            if body is not None:  # (its pack, if the index names one, is gone)
                packed.own.add(key)
        return body

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
        packed = self._packed()
        where = packed.where(key)
        if where is None or key in packed.own:
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


class _Packs:
    """The packs a cache's index names, each read on first use (one file for many entries)."""

    def __init__(self, cache: EntryStore) -> None:
        self.cache = cache
        self.index: dict[str, str] | None = None
        self.read: dict[str, dict[str, Any]] = {}
        self.own: set[str] = set()  # entries read from their own files, though indexed

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
