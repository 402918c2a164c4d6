"""Without Ray the tracker says so and does nothing (no Ray session needed)."""

from __future__ import annotations

import sys

import pytest

from shmlint.runtime import track_retention


def test_without_ray_it_warns_and_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "ray" or m.startswith("ray.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.warns(RuntimeWarning, match="ray is not installed"):
        with track_retention() as tracker:
            pass
    assert tracker.reads == [] and tracker.retentions == []


def test_bad_action_is_refused() -> None:
    with pytest.raises(ValueError, match="action"):
        track_retention(action="explode")
