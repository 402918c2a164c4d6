"""The server's configuration: ``[tool.shmlint]`` of the workspace, then the editor's
initialization options on top. Errors are messages for the user, never exceptions."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from shmlint.basics.config import Config, ConfigError, find_pyproject, load_config
from shmlint.basics.types import Confidence

# Initialization options the server takes (the editor's settings, over the pyproject's).
OPTIONS = ("min-confidence", "helper-style")
HELPER_STYLES = ("wrap", "in-place")


def load_settings(root: Path, options: object) -> tuple[Config, list[str]]:
    """The configuration for the project at ``root``, and what is wrong with it. A bad
    ``pyproject.toml`` leaves the defaults (with the options still applied); a bad option is
    skipped."""
    errors: list[str] = []
    try:
        config = load_config(find_pyproject(root))
    except ConfigError as error:
        errors.append(f"{error} (using the default configuration until it is fixed)")
        config = Config()
    config, wrong = apply_options(config, options)
    return config, errors + wrong


def apply_options(config: Config, options: object) -> tuple[Config, list[str]]:
    """``config`` with the initialization options applied (``min-confidence``,
    ``helper-style``); unknown keys and bad values are reported, naming the key."""
    if options is None:
        return config, []
    if not isinstance(options, Mapping):
        return config, ["initialization options must be an object (ignored)"]
    errors: list[str] = []
    for key in sorted(set(options) - set(OPTIONS)):
        errors.append(f"unknown initialization option {key!r} (shmlint takes {', '.join(OPTIONS)})")
    confidence = options.get("min-confidence")
    if confidence is not None:
        try:
            level = Confidence(confidence)
        except ValueError:
            errors.append("initialization option min-confidence must be 'high' or 'medium'")
        else:
            config = dataclasses.replace(
                config, options=dataclasses.replace(config.options, min_confidence=level)
            )
    style = options.get("helper-style")
    if style is not None:
        if style in HELPER_STYLES:
            config = dataclasses.replace(config, helper_style=style)
        else:
            errors.append("initialization option helper-style must be 'wrap' or 'in-place'")
    return config, errors
