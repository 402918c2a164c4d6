"""Per-file result cache under ``.shmlint_cache/``: what its entries are.

An entry is keyed by the file's bytes, its reported path, the effective configuration and the
code of the analysis itself (shmlint/run/salts.py), so any change to one of them misses: a
development install or a patched build never serves results of the code it had before. How
entries are stored, alone or in packs, atomically and read defensively (a stale, truncated or
foreign entry is ignored and recomputed, never trusted): shmlint/run/store.py.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shmlint.basics.config import Config
from shmlint.basics.stamps import stale
from shmlint.basics.types import FileResult
from shmlint.run.encoding import Calls, decode_calls, decode_result, encode_result
from shmlint.run.replan import Askers
from shmlint.run.salts import FORMAT, config_digest
from shmlint.run.store import MARKERS, EntryStore

if TYPE_CHECKING:
    from shmlint.facts.added import Growth
    from shmlint.facts.model import ProjectFacts
    from shmlint.facts.summary import ModuleSummary
    from shmlint.run.passes import FirstPass

# Facts stored as others relined, over at most this many relinings (each ~10 ms to load on
# the ray wheel); past it the facts are stored whole.
RELINED_DEPTH = 8
# Whole facts are stored apart from the JSON entries, in their binary form (facts/binary.py).
FACTS_SUFFIX = ".facts"
# A phase-2 plan: the files to re-check, the facts' digest, each file's call evidence.
Plan = tuple[list[int], str, list[Calls | None]]
DIRECTORY_NAME = ".shmlint_cache"
# Where the cache lives when ``--cache-dir`` is not given (as ruff's RUFF_CACHE_DIR).
DIRECTORY_VARIABLE = "SHMLINT_CACHE_DIR"


def default_directory(config: Config) -> Path:
    """``$SHMLINT_CACHE_DIR`` when set, else ``.shmlint_cache`` next to the configuration,
    else in the current directory."""
    configured = os.environ.get(DIRECTORY_VARIABLE)
    if configured:
        return Path(configured)
    return (config.root or Path.cwd()) / DIRECTORY_NAME


class NotACacheError(Exception):
    """``shmlint clean`` was pointed at a directory that is not shmlint's cache."""


def is_cache(directory: Path) -> bool:
    """``directory`` holds the ``CACHEDIR.TAG`` shmlint writes into a cache it creates."""
    try:
        tag = (directory / "CACHEDIR.TAG").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return tag == MARKERS["CACHEDIR.TAG"]


def clean(directory: Path) -> bool:
    """Remove a cache directory; True when there was one. Raises :class:`NotACacheError`
    for a directory (or a link to one) that is not shmlint's cache: ``--cache-dir`` may name
    any directory, and a typo must not delete a tree."""
    if not directory.is_dir():
        return False
    if directory.is_symlink():
        raise NotACacheError(
            f"{directory}: not removed: it is a symbolic link (name the cache directory itself)"
        )
    if not is_cache(directory):
        raise NotACacheError(
            f"{directory}: not removed: it does not look like shmlint's cache (no CACHEDIR.TAG "
            "written by shmlint in it)"
        )
    shutil.rmtree(directory)
    return True


class Cache(EntryStore):
    """The cache of one run (one configuration).

    Entries: per-file results (keyed also by the digest of the project facts a phase-2 result
    was checked against), phase-1 entries (summary, per-file result and questions, keyed by
    bytes and path), merged project facts (keyed by every phase-1 key of the run), and what
    a file's phase 2 looked up in the facts (keyed by its path and the facts' digest).
    """

    def __init__(self, directory: Path, config: Config, facts_digest: str = "") -> None:
        self._begin(directory / f"v{FORMAT}", config_digest(config), facts_digest)

    def _begin(self, directory: Path, config_salt: str, facts_digest: str) -> None:
        EntryStore.__init__(self, directory, config_salt, facts_digest)
        self.hits = self.misses = 0
        self.grown = False  # facts were stored through this object (a run's biggest write)
        # Per facts key loaded through this object: the relinings loading them took.
        self._relinings: dict[str, int] = {}

    def with_facts(self, facts_digest: str) -> Cache:
        """The same cache, for results checked against project facts with this digest."""
        other = Cache.__new__(Cache)
        other._begin(self.directory, self._config_salt, facts_digest)
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

    def get_askers(self, key: str) -> Askers | None:
        """Which files of a full run asked each question of ``replan.ASKED``, or None."""
        return Askers.from_json(self._entry(key))

    def put_askers(self, key: str, askers: Askers) -> None:
        """Store which files of a full run asked each question of ``replan.ASKED``."""
        self._store(key, askers.to_json())

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

    def get_record(self, key: str) -> Any:
        """The body of a run record (shmlint/run/record.py), or None."""
        return self._entry(key)

    def put_record(self, key: str, body: Any) -> None:
        """Store a run record."""
        self._store(key, body)

    def put(self, key: str, result: FileResult) -> None:
        """Store a result; a cache that cannot be written is silently not used."""
        self._store(key, encode_result(result))


def syntax_body(summary: ModuleSummary | None) -> dict[str, Any]:
    """The stored form of a deferred module's summary (:meth:`Cache.get_syntax_summary`)."""
    return {"summary": None if summary is None else summary.to_json()}


# A Cache's state as sent to a worker (its packs read so far stay behind).
_STATE = ("directory", "_config_salt", "_salt", "hits", "misses")
