"""A bar chart as HTML and CSS, for the page a person opens first (pure: no Streamlit, no plotly).

The overview is what a resume link opens: a plotly chart there made the browser fetch, compile and run plotly's
4.7 MB script before the page was done (plotly stays for the charts people zoom into elsewhere).  These bars are a
few hundred bytes of markup in the page's own colours, scale with the window and need no script at all; their
figures are in the table under them ("The chart as a table"), which is what a screen reader reads.
"""

from __future__ import annotations

from html import escape

from factor_journal.models import AssessmentSummary
from factor_journal.page_models import categories_by_progress

MAPPED, CONFIDENCE = "#2563eb", "#f59e0b"  # charts.PALETTE's value and confidence

STYLE = """
<style>
.fj-bars { display: grid; grid-template-columns: minmax(7rem, max-content) 1fr; gap: .35rem .75rem;
  align-items: center; font-size: .9rem; margin: .25rem 0 .75rem 0; }
.fj-bars .fj-name { text-align: right; }
.fj-bars .fj-pair { display: grid; gap: 2px; }
.fj-bars .fj-bar { display: grid; grid-template-columns: 1fr 3rem; align-items: center; gap: .35rem;
  font-size: .75rem; white-space: nowrap; }
.fj-bars .fj-fill { height: .7rem; border-radius: 2px; min-width: 1px; }
.fj-legend { display: flex; gap: 1rem; font-size: .8rem; margin-bottom: .25rem; }
.fj-legend span::before { content: ""; display: inline-block; width: .7rem; height: .7rem; border-radius: 2px;
  margin-right: .3rem; vertical-align: -.05rem; background: var(--fj-swatch); }
</style>
"""


def category_progress(summary: AssessmentSummary) -> str:
    """Completeness and average confidence per category as two bars each, the best-mapped category first (the
    order of the table under it); each mapped bar labelled with its factors
    mapped ('3/7'), each confidence bar with its percent."""
    rows = []
    for category in categories_by_progress(summary):
        mapped, sure = category.completeness * 100, category.avg_confidence * 100
        rows.append(
            f'<div class="fj-name">{escape(category.name)}</div><div class="fj-pair">'
            f'<div class="fj-bar"><div><div class="fj-fill" style="width:{mapped:.1f}%;background:{MAPPED}"></div>'
            f"</div><span>{category.factor_count}/{category.total_factors}</span></div>"
            f'<div class="fj-bar"><div><div class="fj-fill" style="width:{sure:.1f}%;background:{CONFIDENCE}"></div>'
            f"</div><span>{sure:.0f}%</span></div></div>"
        )
    legend = (
        f'<div class="fj-legend" aria-hidden="true"><span style="--fj-swatch:{MAPPED}">Mapped</span>'
        f'<span style="--fj-swatch:{CONFIDENCE}">Confidence</span></div>'
    )
    label = "Mapped and confidence by category (the figures are in the table below the chart)"
    return f'{STYLE}<div role="img" aria-label="{label}">{legend}<div class="fj-bars">{"".join(rows)}</div></div>'
