"""``shmlint server``: findings, quick fixes and rule docs in the editor (LSP over stdio).

Needs the ``server`` extra (``pip install 'shmlint[server]'``: pygls and lsprotocol); the rest
of shmlint never imports this package. Set-up per editor: docs/editors.md.
"""

from __future__ import annotations

from shmlint.server.app import ShmlintServer, serve

__all__ = ["ShmlintServer", "serve"]
