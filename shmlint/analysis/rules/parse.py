"""SHM001: files that cannot be read, decoded or parsed."""

from __future__ import annotations

from shmlint.analysis.rules.base import HELPER_NAME, Rule
from shmlint.basics.types import SourceKind


class ParseError(Rule):
    """
    ## What it does
    Reports a file shmlint could not read, decode or parse. The file is skipped: it is not
    analysed, and `--fix` never rewrites it.

    ## Why is this bad?
    A file shmlint cannot parse is a file it cannot check: retention bugs in it go unseen.
    Decoding follows PEP 263 (an encoding cookie, else UTF-8).

    ## Example
    ```python
    def broken(:
        pass
    ```

    ## Use instead
    ```python
    def fixed():
        pass
    ```

    ## Fix safety
    There is no fix: correct the file (or its encoding) by hand.

    ## References
    - [PEP 263 – Defining Python Source Code Encodings](https://peps.python.org/pep-0263/)
    """

    code = "SHM001"
    name = "parse-error"
    summary = "The file could not be read, decoded or parsed; it was skipped"
    escape = ""
    fix_safety = "none"

    @classmethod
    def message(
        cls,
        kind: SourceKind,
        source_line: int,
        via: str = "",
        why: str = "",
        helper: str = HELPER_NAME,
    ) -> str:
        """Not used: parse errors carry the parser's own message."""
        return "could not parse the file"
