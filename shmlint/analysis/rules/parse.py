"""SHM001: files that cannot be read, decoded or parsed."""

from __future__ import annotations

from shmlint.analysis.rules.base import Rule


class ParseError(Rule):
    """
    ## What it does
    Reports a file shmlint could not read, decode or parse. The file is skipped: it is not
    analysed, and `--fix` never rewrites it.

    Only files shmlint has to parse are parsed: a file whose text names no read, no Ray and
    no detach helper (nor, in a project run, a function of the project that returns a read)
    cannot hold a finding and is skipped unparsed, so a syntax error there is not reported
    (the example below is reported in a file that mentions `ray`). Use your linter's own
    syntax check (flake8's E999, ruff's syntax errors) for every file.

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
