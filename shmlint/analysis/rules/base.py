"""The base of every rule: code, name, summary and how its message reads."""

from __future__ import annotations

from typing import ClassVar

from shmlint.basics.types import SourceKind

# The helper a message names when none is given (vLLM's, which the default fix calls for a
# channel read of unknown payload).
HELPER_NAME = "detach_zero_copy_from_model_runner_output"


class Rule:
    """A rule's metadata; the docstring of a subclass is its documentation."""

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line, for `shmlint rules` and SARIF short descriptions
    escape: ClassVar[str]  # how the value escapes, completing "value read ... {escape}"
    fix_safety: ClassVar[str] = "safe"  # "safe", "unsafe" or "none"

    @classmethod
    def message(
        cls,
        kind: SourceKind,
        source_line: int,
        via: str = "",
        why: str = "",
        helper: str = HELPER_NAME,
    ) -> str:
        """The finding's message: names the read's line, its kind, and why it escapes;
        ``via``: the value comes from a call of a project function returning a read; ``why``:
        the payload evidence that set the confidence; ``helper``: the function the fix would
        call (the message names it)."""
        because = f" ({why})" if why else ""
        if via:
            return (
                f"value read from the {kind.value} by {via}, called at line {source_line}"
                f"{because}, {cls.escape}; detach it in the function that reads it, or here"
            )
        return (
            f"value read from the {kind.value} at line {source_line}{because} {cls.escape}; "
            f"detach it at the read (copy, or {helper})"
        )
