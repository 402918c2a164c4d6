"""The package version, in one place (read by ``shmlint --version`` and the cache key)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("shmlint")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
