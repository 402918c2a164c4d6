"""Document text as the protocol sees it: lines, positions in the client's code units, bytes.

Findings count columns in characters (code points); LSP positions count UTF-16 code units
unless the client and server agreed on UTF-8 or UTF-32. Lines end at ``\\n``, ``\\r\\n`` or
``\\r`` (the protocol's line breaks, and ``ast``'s), never at the other breaks
``str.splitlines`` knows (form feeds stay inside a line).
"""

from __future__ import annotations

import difflib
import io
import re
import tokenize

from lsprotocol import types

UTF8, UTF16, UTF32 = (
    types.PositionEncodingKind.Utf8.value,
    types.PositionEncodingKind.Utf16.value,
    types.PositionEncodingKind.Utf32.value,
)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_BREAK = re.compile(r"(?:\r\n|\r|\n)$")


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` with their line breaks (no empty last line)."""
    return _LINE.findall(text)


def content(line: str) -> str:
    """A line without its line break."""
    return _BREAK.sub("", line)


class Positions:
    """Converts between (line, character) and the client's positions for one text."""

    def __init__(self, text: str, encoding: str = UTF16) -> None:
        self.lines = split_lines(text)
        self.encoding = str(getattr(encoding, "value", encoding))  # "utf-16", an enum's too

    def _units(self, chars: str) -> int:
        if self.encoding == UTF32 or chars.isascii():
            return len(chars)
        if self.encoding == UTF8:
            return len(chars.encode("utf-8", "surrogatepass"))
        return len(chars.encode("utf-16-le", "surrogatepass")) // 2

    def line_text(self, line: int) -> str:
        """Line ``line`` (0-based) without its break ("" past the end)."""
        return content(self.lines[line]) if 0 <= line < len(self.lines) else ""

    def position(self, line: int, character: int) -> types.Position:
        """The client position of 0-based ``line`` and character column ``character``
        (clamped to the line's end)."""
        if line >= len(self.lines):
            return self.end()
        text = self.line_text(max(line, 0))
        return types.Position(max(line, 0), self._units(text[: max(character, 0)]))

    def end(self) -> types.Position:
        """The position just after the last character of the text."""
        if not self.lines:
            return types.Position(0, 0)
        last = self.lines[-1]
        if content(last) != last:  # ends with a line break: the empty line after it
            return types.Position(len(self.lines), 0)
        return types.Position(len(self.lines) - 1, self._units(last))

    def character(self, position: types.Position) -> int:
        """The character column of a client position on its line."""
        text = self.line_text(position.line)
        if text.isascii() or self.encoding == UTF32:
            return min(position.character, len(text))
        units = 0
        for index, char in enumerate(text):
            if units >= position.character:
                return index
            units += self._units(char)
        return len(text)

    def finding_range(self, line: int, col: int, end_line: int, end_col: int) -> types.Range:
        """The client range of a 1-based line / 0-based column span (an empty or backwards
        end becomes the start)."""
        start = self.position(line - 1, col)
        if end_line < line or (end_line == line and end_col < col):
            end_line, end_col = line, col
        return types.Range(start, self.position(end_line - 1, end_col))


def line_edits(old: str, new: str, positions: Positions) -> list[types.TextEdit]:
    """The smallest whole-line edits that turn ``old`` into ``new`` (``positions`` is of
    ``old``): the rest of the document, and the cursor in it, stays where it was."""
    before, after = split_lines(old), split_lines(new)
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    edits = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start = positions.position(i1, 0) if i1 < len(before) else positions.end()
        end = positions.position(i2, 0) if i2 < len(before) else positions.end()
        edits.append(types.TextEdit(types.Range(start, end), "".join(after[j1:j2])))
    return edits


def source_encoding(text: str) -> str:
    """The encoding the file declares (PEP 263 cookie), else UTF-8: the editor's text is
    encoded back to the bytes the file would have on disk."""
    head = "".join(split_lines(text)[:2]).encode("utf-8", "surrogateescape")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(head).readline)
    except (SyntaxError, LookupError):
        return "utf-8"
    return "utf-8" if encoding == "utf-8-sig" else encoding


def to_bytes(text: str) -> bytes:
    """The editor's text as file bytes (in its declared encoding where it can be)."""
    encoding = source_encoding(text)
    try:
        return text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return text.encode("utf-8", "surrogateescape")
