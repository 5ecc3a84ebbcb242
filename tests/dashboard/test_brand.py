"""The brand's colours against the app's own themes (pure)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from dashboard import brand

THEMES = tomllib.loads((Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml").read_text())["theme"]


def _luminance(colour: str) -> float:
    """WCAG 2 relative luminance of a #rrggbb colour."""
    channels = [int(colour.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one: str, other: str) -> float:
    lighter, darker = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("surface", ["backgroundColor", "secondaryBackgroundColor"])
def test_the_focus_ring_stands_out_on_either_theme(theme, surface):
    assert contrast(brand.FOCUS_RING, THEMES[theme][surface]) >= 3.0  # WCAG 2.2 non-text contrast
    assert f"--fj-focus: {brand.FOCUS_RING};" in brand.FOCUS_VISIBLE
    assert "prefers-color-scheme" not in brand.FOCUS_VISIBLE  # one ring whichever way the theme was chosen


def test_the_contrast_measure_is_wcags():
    assert round(contrast("#000000", "#ffffff"), 1) == 21.0 and contrast("#777777", "#777777") == 1.0
