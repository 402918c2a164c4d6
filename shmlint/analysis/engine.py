"""One file in, one :class:`FileResult` out: prefilter, decode, parse, analyse, filter.

Never raises for a bad file: what cannot be read, decoded or parsed becomes one SHM001 finding.
"""

from __future__ import annotations

import ast
import dataclasses
import io
import re
import tokenize
import warnings
from collections.abc import Callable
from pathlib import Path

from shmlint.analysis.checks import ModuleInput
from shmlint.analysis.dataflow import RawFinding
from shmlint.analysis.fingerprint import fingerprints
from shmlint.analysis.helper_kind import spells_helper_name
from shmlint.analysis.rules import CHECKS, RULES
from shmlint.analysis.suppress import is_suppressed
from shmlint.basics.config import DEEP_HELPER, DEFAULT_HELPER, Config
from shmlint.basics.names import Scope, walrus_lines
from shmlint.basics.options import Options
from shmlint.basics.types import Confidence, FileResult, Finding, SourceKind
from shmlint.facts import external as installed
from shmlint.facts.collect import Recorder, summarize_syntax
from shmlint.facts.evidence import TypeTables
from shmlint.facts.layout import module_name
from shmlint.facts.merge import merge
from shmlint.facts.model import ProjectFacts
from shmlint.facts.summary import ModuleSummary
from shmlint.facts.view import ProjectView

# A file that mentions none of these cannot contain a source: it is never parsed.
LINES = re.compile(r"\r\n|\r|\n")
# `.remote(` and `ObjectRef` too: an agent loop can await `handle.m.remote()`, or a parameter
# annotated `ObjectRef`, without spelling `ray` itself.
_SOURCE_WORDS = ("experimental_compile", "CompiledDAG", ".remote(", "ObjectRef")
# `ray` as a word. A pattern that starts with a literal is searched fast (a leading `\b` or
# an alternation makes the engine try every position: 1.1 s on vLLM's tree, against 0.05 s);
# the character before a match is checked by hand (`array` ends in `ray`).
_RAY = re.compile(r"ray\b")
TOO_DEEP = "the file is too deeply nested to analyse"


# What a detach helper by behaviour must spell (SHM301, see shmlint.analysis.helpers).
_READ_ONLY_WORDS = ("writeable", "WRITEABLE", "is_zero_copy")


def split_lines(text: str) -> list[str]:
    """The lines as ast numbers them (``str.splitlines`` also breaks at ``\f``, ``\x1c``...);
    a plain split when the text has no ``\r`` (3x quicker than the regex)."""
    return LINES.split(text) if "\r" in text else text.split("\n")


def may_contain_source(text: str, options: Options) -> bool:
    """The cheap text check run before parsing a file on its own (it must never lose a
    finding): a read, or a detach helper (SHM301) over a class declared in the file."""
    return may_contain_read(text, options) or may_contain_helper(text, options)


def may_contain_read(text: str, options: Options) -> bool:
    """The file may read from Ray (or make compiled-graph handles)."""
    if any(word in text for word in _SOURCE_WORDS) or _spells_ray(text):
        return True
    if options.ref_name_pattern and ".get(" in text:
        return True
    return any(name.rpartition(".")[2] in text for name in options.extend_sources)


def _spells_ray(text: str) -> bool:
    for match in _RAY.finditer(text):
        start = match.start()
        if start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_"):
            return True
    return False


def may_contain_helper(text: str, options: Options) -> bool:
    """A detach helper by name, or code that checks arrays for being read-only."""
    if spells_helper_name(text, options.extend_sanitizers):
        return True
    return any(word in text for word in _READ_ONLY_WORDS)


def decode_source(data: bytes) -> str:
    """Decode Python source bytes as the interpreter would (PEP 263 cookie, BOM, else UTF-8).

    Raises ``UnicodeDecodeError``/``SyntaxError``/``LookupError`` for undecodable bytes.
    """
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


def source_text(data: bytes) -> str:
    r"""The text the analysis reads: :func:`decode_source`, line ends made ``\n``.

    ``ast`` reads ``\r\n`` and a lone ``\r`` (old Mac files) as line ends, as Python does;
    parts of the analysis that count lines in the text count ``\n`` only, so a file with
    ``\r`` line ends got no findings past its first line. Nothing else changes: a ``\r``
    inside a string literal reads as ``\n`` to Python too, and columns are unchanged.
    """
    return normal_newlines(decode_source(data))


def normal_newlines(text: str) -> str:
    r"""``text`` with ``\r\n`` and ``\r`` line ends spelled ``\n`` (as ``ast`` reads them)."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def check_bytes(
    data: bytes,
    path: str,
    config: Config,
    *,
    prefilter: bool = True,
    facts: ProjectFacts | None = None,
) -> FileResult:
    """Check one file's bytes (``path`` is only used for reporting and per-file ignores);
    ``facts``: the project's merged summaries (None: the file on its own)."""
    try:
        text = source_text(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as error:
        return error_result(path, config, 1, 0, f"cannot decode the file: {error}")
    return check_text(text, path, config, prefilter=prefilter, facts=facts)


def check_path(
    path: Path,
    display: str,
    config: Config,
    *,
    prefilter: bool = True,
    facts: ProjectFacts | None = None,
) -> FileResult:
    """Check one file on disk, reported as ``display``."""
    try:
        data = path.read_bytes()
    except OSError as error:
        return error_result(display, config, 1, 0, f"cannot read the file: {error.strerror}")
    return check_bytes(data, display, config, prefilter=prefilter, facts=facts)


def parse_source(text: str, path: str) -> ast.Module | tuple[int, int, str]:
    """The tree, or (line, column, message) of why there is none."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings are the user's compiler's business
            # Not `path`: CPython reads a syntax error's line from the file of that name on
            # disk, which is not the text checked (stdin, an editor's unsaved buffer).
            return ast.parse(text, filename="<shmlint>", type_comments=False)
    except SyntaxError as error:
        line = error.lineno or 1
        col = max((error.offset or 1) - 1, 0)
        return line, col, f"cannot parse the file: {error.msg}"
    except (RecursionError, MemoryError, ValueError) as error:
        return 1, 0, f"cannot parse the file: {type(error).__name__}"


def check_text(
    text: str,
    path: str,
    config: Config,
    *,
    prefilter: bool = True,
    facts: ProjectFacts | None = None,
) -> FileResult:
    """Check decoded source text."""
    text = normal_newlines(text)
    if prefilter and not may_contain_source(text, config.options):
        if facts is None or not facts.may_matter(text):
            return FileResult(path, (), parsed=False, skipped=True)
    tree = parse_source(text, path)
    if not isinstance(tree, ast.Module):
        return error_result(path, config, *tree)
    lines = split_lines(text)
    try:
        with installed.tracked() as read:
            findings = analyze_tree(tree, lines, path, config, text, facts)
    except RecursionError:
        return error_result(path, config, 1, 0, TOO_DEEP)
    return FileResult(path, tuple(findings), parsed=True, installed=tuple(sorted(read.items())))


def project_view(
    tree: ast.Module, scope: Scope, path: str, config: Config, facts: ProjectFacts | None
) -> ProjectView:
    """The view of the project from one module; without ``facts``, the module on its own."""
    if facts is None:
        return own_view(tree, scope, path, config)[1]
    module, is_package = module_name(path, config.root)
    return ProjectView(facts, module, is_package)


def own_view(
    tree: ast.Module,
    scope: Scope,
    path: str,
    config: Config,
    recorder: Recorder | None = None,
    questions: set[str] | None = None,
) -> tuple[ModuleSummary, ProjectView]:
    """The module's syntactic summary, and the view of it as the only module of a project
    (the per-file run; phase 1 also records flows and questions through it)."""
    module, is_package = module_name(path, config.root)
    summary = summarize_syntax(tree, module, path, is_package, scope)
    options = config.options
    facts = merge([summary], TypeTables.for_options(options), options.external_types)
    return summary, ProjectView(facts, module, is_package, recorder, questions, alone=True)


def analyze_tree(
    tree: ast.Module,
    lines: list[str],
    path: str,
    config: Config,
    text: str | None = None,
    facts: ProjectFacts | None = None,
    *,
    noqa: bool = True,
) -> list[Finding]:
    """The filtered findings of a parsed module (the flake8 plugin enters here; ``noqa``:
    whether ``# noqa`` comments suppress, False for flake8's ``--disable-noqa``)."""
    scope = Scope(tree, None, walrus=walrus_lines(text))
    view = project_view(tree, scope, path, config, facts)
    return analyze_with_view(tree, lines, path, config, text, view, scope, noqa=noqa)


def analyze_with_view(
    tree: ast.Module,
    lines: list[str],
    path: str,
    config: Config,
    text: str | None,
    view: ProjectView,
    scope: Scope,
    *,
    noqa: bool = True,
) -> list[Finding]:
    """The filtered findings of a parsed module seen through ``view``. Reads that exist only
    for phase 1's summary (``needs_ref``) are never reported; ``noqa``: see
    :func:`analyze_tree`."""
    findings = []
    threshold = config.options.min_confidence.rank
    dropped = _dropped(lines, path, config, noqa)
    module = ModuleInput(tree, scope, view, config.options, text, dropped)
    raws = [raw for check, _ in CHECKS for raw in check(module)]
    for raw in raws:
        if raw.label.needs_ref:
            continue
        if raw.confidence.rank < threshold or dropped(raw.code, raw.site.line):
            continue
        findings.append(_finding(raw, lines, path, config))
    if not findings:
        return findings  # (the path below resolves the file's directories: syscalls)
    findings.sort(key=Finding.sort_key)
    prints = fingerprints(findings, lines, project_path(path, config))
    return [dataclasses.replace(f, fingerprint=p) for f, p in zip(findings, prints)]


def _dropped(lines: list[str], path: str, config: Config, noqa: bool) -> Callable[[str, int], bool]:
    """Whether a finding of ``code`` on ``line`` is dropped (deselected for the file, or, with
    ``noqa``, a ``# noqa`` for it there): asked by the analysis when it reports, and by the
    filter of what it reported."""
    enabled: dict[str, bool] = {}

    def dropped(code: str, line: int) -> bool:
        known = enabled.get(code)
        if known is None:
            known = enabled[code] = config.is_enabled(code, path)
        if not known:
            return True
        return noqa and is_suppressed(lines[line - 1] if 1 <= line <= len(lines) else "", code)

    return dropped


def project_path(path: str, config: Config) -> str:
    """``path`` relative to the project root (the configuration's directory, else the current
    directory) when it lies below it; else as given."""
    root = config.root or Path.cwd()
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return Path(path).as_posix()


def _char_col(lines: list[str], line: int, byte_col: int) -> int:
    """ast columns are UTF-8 byte offsets; reports use characters (as ruff does)."""
    if not 1 <= line <= len(lines):
        return byte_col
    text = lines[line - 1]
    if text.isascii():
        return byte_col
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def _finding(raw: RawFinding, lines: list[str], path: str, config: Config) -> Finding:
    site, source = raw.site, raw.label.site
    helper_style = config.helper_style
    placement = raw.label.placement
    # The wrap fix applies to every read; the in-place fix needs a statement to split.
    fixable = raw.label.kind is not SourceKind.NONE and not raw.label.via
    fixable = fixable and (helper_style == "wrap" or placement != "none")
    unsafe = helper_style == "in-place" and placement == "conditional"
    picked = _helper_for(raw, config)
    helper = picked if fixable else ""
    rule = RULES[raw.code]
    # The message names the helper the fix calls: picked by payload, else the configured one.
    named = (picked or config.helper).rpartition(":")[2]
    message = raw.message or rule.message(
        raw.label.kind, source.line, raw.label.via, raw.why, named
    )
    return Finding(
        path=path,
        line=site.line,
        col=_char_col(lines, site.line, site.col),
        end_line=site.end_line,
        end_col=_char_col(lines, site.end_line, site.end_col),
        code=raw.code,
        message=message,
        confidence=raw.confidence,
        source_kind=raw.label.kind,
        source_line=source.line,
        source_col=_char_col(lines, source.line, source.col),
        source_end_line=source.end_line,
        source_end_col=_char_col(lines, source.end_line, source.end_col),
        fixable=fixable,
        unsafe_fix=fixable and unsafe,
        evidence=raw.why,
        helper=helper,
    )


def _helper_for(raw: RawFinding, config: Config) -> str:
    """The helper the wrap fix calls (DESIGN §4, issue "payload types" item 7): a model-runner
    output, and a channel read of unknown payload (vLLM's executor), keep
    ``detach_zero_copy_from_model_runner_output``; every other read gets the deep
    ``detach_zero_copy``. A configured ``helper`` (and the in-place style) overrides both."""
    if not config.helper_by_payload or config.helper_style != "wrap":
        return ""
    payload = raw.payload
    if payload.model_output or (raw.label.kind is SourceKind.CHANNEL and not payload.known):
        return DEFAULT_HELPER
    return DEEP_HELPER


def error_result(path: str, config: Config, line: int, col: int, message: str) -> FileResult:
    findings: tuple[Finding, ...] = ()
    if config.is_enabled("SHM001", path):
        finding = Finding(
            path, line, col, line, col, "SHM001", message, Confidence.HIGH, SourceKind.NONE, 0, 0
        )
        findings = (finding,)
    return FileResult(path, findings, parsed=False)
