"""The server's pieces without a client: positions in each encoding, minimal edits, the file's
encoding, and where a ``# noqa`` can go."""

from __future__ import annotations

import pytest
from lsprotocol import types

from shmlint.analysis.engine import check_bytes
from shmlint.basics.config import Config
from shmlint.basics.types import Finding
from shmlint.server import actions
from shmlint.server.diagnostics import diagnostic
from shmlint.server.settings import apply_options
from shmlint.server.text import Positions, line_edits, split_lines, to_bytes
from tests.fixture_markers import FIXTURES
from tests.server.lsp import apply_edits

LINE = 'x = "😀é" + y\n'  # 😀: 1 character, 2 UTF-16 units, 4 UTF-8 bytes


@pytest.mark.parametrize(
    ("encoding", "units"),
    [
        (types.PositionEncodingKind.Utf16, 9),
        (types.PositionEncodingKind.Utf8, 12),
        (types.PositionEncodingKind.Utf32, 8),
    ],
)
def test_positions_count_the_clients_code_units(encoding: str, units: int) -> None:
    positions = Positions(LINE, encoding)
    after_quote = LINE.index('"', 5) + 1  # the character after the closing quote
    assert positions.position(0, after_quote) == types.Position(0, units)
    assert positions.character(types.Position(0, units)) == after_quote


def test_lines_break_only_where_the_protocol_breaks_them() -> None:
    assert split_lines("a\r\nb\rc\x0cd\ne") == ["a\r\n", "b\r", "c\x0cd\n", "e"]
    assert Positions("a\nb\n").end() == types.Position(2, 0)
    assert Positions("a\nbc").end() == types.Position(1, 2)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\nb\nc\n", "a\nB\nc\n"),
        ("a\nb\nc\n", "import x\na\nb\nc\n"),
        ("a\nb\nc", "a\nb\nc\nd\n"),
        ("a\nb\nc\n", "c\n"),
        ("", "a\n"),
    ],
)
def test_line_edits_turn_the_old_text_into_the_new(old: str, new: str) -> None:
    edits = line_edits(old, new, Positions(old))
    assert apply_edits(old, edits) == new
    assert len(edits) == 1  # one change, one edit: the rest of the document is left alone


def test_editor_text_goes_back_to_the_files_encoding() -> None:
    text = "# -*- coding: latin-1 -*-\nname = 'café'\n"
    assert to_bytes(text) == text.encode("latin-1")
    assert to_bytes("name = 'café'\n") == "name = 'café'\n".encode()
    # Not encodable as it declares: kept as UTF-8 rather than lost.
    assert to_bytes("# coding: ascii\nx = 'é'\n") == "# coding: ascii\nx = 'é'\n".encode()


SOURCE = """import numpy as np
import ray


def fetch(ref) -> np.ndarray:
    return ray.get(ref)


def keep(ref, kept) -> None:
    value: np.ndarray = ray.get(ref)
    kept.append(value)  # noqa: E501
"""


def _findings(text: str) -> list[Finding]:
    return list(check_bytes(text.encode(), "m.py", Config()).findings)


def test_noqa_goes_at_the_end_or_joins_the_lines_list() -> None:
    findings = _findings(SOURCE)
    assert [(f.code, f.line) for f in findings] == [("SHM101", 6), ("SHM103", 11)]
    positions = Positions(SOURCE)
    edits = [actions.noqa_edit(SOURCE, f, positions) for f in findings]
    assert all(edit is not None for edit in edits)
    fixed = apply_edits(SOURCE, [e for e in edits if e is not None])
    lines = fixed.splitlines()
    assert lines[5] == "    return ray.get(ref)  # noqa: SHM101"
    assert lines[10] == "    kept.append(value)  # noqa: E501, SHM103"
    assert _findings(fixed) == []


def test_no_noqa_inside_a_string_or_after_a_backslash() -> None:
    text = (
        "import numpy as np\nimport ray\n\n\ndef f(ref) -> np.ndarray:\n"
        '    return (ray.get(ref), """\n""")\n'
    )
    (finding,) = _findings(text)
    assert finding.line == 6  # a comment there would end up inside the string
    assert actions.noqa_edit(text, finding, Positions(text)) is None
    plain = text.replace('"""\n"""', '""')
    (finding,) = _findings(plain)
    assert actions.noqa_edit(plain, finding, Positions(plain)) is not None
    backslash = plain.replace("(ray.get(ref), ", "\\\n        (ray.get(ref), ")
    (finding,) = _findings(backslash)
    assert actions.noqa_edit(backslash, finding, Positions(backslash)) is None


def test_fix_titles_and_kinds() -> None:
    (finding,) = _findings(SOURCE)[:1]
    config = Config()
    assert actions.fix_title(finding, config) == (
        "Detach the read at line 6: wrap it in detach_zero_copy()"
    )
    in_place, errors = apply_options(config, {"helper-style": "in-place"})
    assert errors == []
    unsafe = Finding(**{**_as_dict(finding), "unsafe_fix": True})
    assert actions.fix_title(unsafe, in_place).endswith("on it after (unsafe fix)")
    assert actions.fixable([unsafe]) == [] and actions.fixable([unsafe], unsafe=True) == [unsafe]
    assert actions.wants(None, actions.FIX_ALL)
    assert actions.wants(["source"], actions.FIX_ALL)
    assert actions.wants(["source.fixAll"], actions.FIX_ALL)
    assert not actions.wants(["quickfix"], actions.FIX_ALL)
    assert not actions.wants(["source.organizeImports"], actions.FIX_ALL)


def _as_dict(finding: Finding) -> dict[str, object]:
    return {name: getattr(finding, name) for name in Finding.__dataclass_fields__}


def test_held_across_read_is_an_error_and_the_read_is_related() -> None:
    text = (FIXTURES / "SHM104.py").read_text(encoding="utf-8")
    findings = _findings(text)
    by_code = {f.code: f for f in findings}
    assert "SHM104" in by_code
    stall = diagnostic(by_code["SHM104"], "file:///m.py", Positions(text))
    assert stall.severity == types.DiagnosticSeverity.Error and stall.code == "SHM104"
    (read,) = stall.related_information or []
    assert read.location.range.start.line == by_code["SHM104"].source_line - 1
    others = [diagnostic(f, "file:///m.py", Positions(text)) for f in findings]
    assert {d.severity for d in others if d.code != "SHM104"} <= {types.DiagnosticSeverity.Warning}
