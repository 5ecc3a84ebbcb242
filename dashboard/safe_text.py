"""People's words on the page as text, never as markup.

Anything a person typed (turns, and rationales, excerpts and answers that quote them), and
anything that came from a profile (names), can carry Markdown: an image that fetches
``https://…/pixel.png`` in whoever opens the page, a link, LaTeX, Streamlit's colour and icon
directives.  Such text goes through one of these, and only these:

* ``quote(text)``: a block of someone's words, rendered by ``st.text`` (no Markdown, no HTML);
* ``md(text)``: the same text escaped for use *inside* a Markdown string the app composes
  (``st.markdown(f"**{md(name)}**: …")``, titles, captions);
* ``plot(text)``: the same text escaped for a chart's labels and hover text, where Plotly reads a
  subset of HTML (``<a href>``, ``<span style>``, ``<br>``) and shows entities as the characters;
* ``announce(text)``: the same text escaped into an alert that only assistive technology reads out.
"""

from __future__ import annotations

import html
import re

# Every ASCII punctuation character may be backslash-escaped in CommonMark, and each of these
# can start markup somewhere (emphasis, links, images, code, headings, lists, tables, LaTeX,
# Streamlit directives such as :red[...] and :material/icon:).
_MARKUP = re.compile(r"([!-/:-@\[-`{-~])")


def md(text: object) -> str:
    """``text`` with every Markdown-significant character escaped, line breaks kept as spaces."""
    flat = " ".join(str(text if text is not None else "").split())
    return _MARKUP.sub(r"\\\1", flat)


def quote(text: object) -> None:
    """Show someone's words as plain text (``st.text``: no Markdown, no HTML, wrapped)."""
    import streamlit as st  # here, so that md() and plot() stay importable by pure modules (charts)

    st.text(str(text if text is not None else ""), wrap=True)


def plot(text: object) -> str:
    """``text`` for a Plotly label or hover text: shown as the characters typed, never as markup."""
    return html.escape(" ".join(str(text if text is not None else "").split()), quote=True)


_SCREEN_READER_ONLY = (
    "position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0,0,0,0);"
    "white-space:nowrap;border:0"
)


def announce(text: object) -> None:
    """Have a screen reader read ``text`` out now, without showing it: an alert inserted into the page (announced
    as it appears), drawn nowhere.  For what changed on the page away from where the person's focus is (what an
    answer was understood to say, a decision saved); call it once per change, as every call is read out again."""
    import streamlit as st

    st.html(f'<div role="alert" data-testid="fj-announcement" style="{_SCREEN_READER_ONLY}">{plot(text)}</div>')
