"""The app's look: favicon, per-page browser titles, the skeleton shown before the first content."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

FAVICON = str(Path(__file__).resolve().parent / "assets" / "favicon.png")
APP_NAME = "Factor Journal"

# Shown the moment the script starts (before the heavy imports and the first Firestore read), then cleared.
SKELETON = """
<div class="fj-skeleton" role="status" aria-live="polite">
  <p style="font-size:1.05rem;margin:0 0 .8rem 0">Loading your Factor Journal…</p>
  <div class="fj-bar" style="width:55%"></div><div class="fj-bar" style="width:80%"></div>
  <div class="fj-bar" style="width:70%"></div><div class="fj-bar" style="width:40%"></div>
</div>
<style>
.fj-skeleton .fj-bar{height:.9rem;margin:.55rem 0;border-radius:.4rem;
  background:linear-gradient(90deg,rgba(128,128,128,.15),rgba(128,128,128,.32),rgba(128,128,128,.15));
  background-size:200% 100%;animation:fj-shimmer 1.2s infinite linear}
@keyframes fj-shimmer{from{background-position:200% 0}to{background-position:-200% 0}}
</style>
"""


def set_page(title: str | None = None) -> None:
    """Browser tab title ('Where are we · Factor Journal') and favicon for the page being shown."""
    st.set_page_config(page_title=f"{title} · {APP_NAME}" if title else APP_NAME, page_icon=FAVICON, layout="wide")


# The say-back buttons name their factor ("That's right: Machine learning expertise is low"), and those under an
# answer the reader was unsure about its level in the factor's words: on a phone their labels wrap instead of being
# cut with an ellipsis (Streamlit's default for a button's label).
SAYBACK_BUTTONS = """
<style>
[class*="st-key-sayback-"] button [data-testid="stMarkdownContainer"],
[class*="st-key-sayback-"] button [data-testid="stMarkdownContainer"] p,
[class*="st-key-unsure-"] button [data-testid="stMarkdownContainer"],
[class*="st-key-unsure-"] button [data-testid="stMarkdownContainer"] p {
  white-space: normal; overflow: visible; text-overflow: clip; text-align: left;
}
</style>
"""

# Where the keyboard is, on every page: one clear ring in one blue that stands at least 3:1 against the light and
# the dark theme's backgrounds alike, so it holds whichever theme is showing (the browser's preference or the one
# picked in Streamlit's own settings, which a page cannot tell reliably).  Streamlit draws only a faint background
# behind a focused link and a faint halo on a slider thumb, toggle or radio.  A toggle's, radio's or checkbox's input
# is drawn invisible: its visible label carries the ring.
FOCUS_RING = "#3e7bfa"
FOCUS_VISIBLE = """
<style>
:root { --fj-focus: FOCUS_RING; }
a:focus-visible, button:focus-visible, summary:focus-visible, [role="slider"]:focus-visible,
[role="switch"]:focus-visible, [role="radio"]:focus-visible, [role="checkbox"]:focus-visible,
[role="tab"]:focus-visible, label:has(input[type="checkbox"]:focus-visible),
label:has(input[type="radio"]:focus-visible) {
  outline: 3px solid var(--fj-focus) !important; outline-offset: 2px !important;
}
</style>
""".replace("FOCUS_RING", FOCUS_RING)
