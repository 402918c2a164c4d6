"""shmlint: find and fix code that keeps Ray zero-copy shared-memory values alive.

The public API is re-exported here; the runtime helpers live in :mod:`shmlint.runtime` (which
imports only numpy and the standard library).
"""

from shmlint._version import __version__

__all__ = ["__version__"]
