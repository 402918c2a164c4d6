"""What every cache entry's key is salted by: the code of the analysis itself (a digest of the
package's own sources, :func:`code_digest`) and the effective configuration
(:func:`config_digest`), so any change to either misses: a development install or a patched
build never serves results of the code it had before."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from pathlib import Path

from shmlint._version import __version__
from shmlint.basics.config import Config
from shmlint.facts.external import search_path

# The layout of the entries (the cache's directory is named by it).
FORMAT = 2
PACKAGE_DIRECTORY = Path(__file__).resolve().parents[1]  # shmlint/


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
        "import_path": search_path() if options.external_types else [],
        "ref_name_pattern": options.ref_name_pattern,
        "min_confidence": options.min_confidence.value,
        # The interpreter whose parser read the files (a syntax one version lacks), and whose
        # marshal wrote the binary entries: two interpreters share a cache apart.
        "python": sys.implementation.cache_tag,
    }
    text = json.dumps(canonical, sort_keys=True)
    return hashlib.sha256(f"{code_digest()}\0{FORMAT}\0{text}".encode()).hexdigest()
