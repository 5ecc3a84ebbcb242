"""The person's first view (issue 48): a resume link opened in headless Chromium, timed inside the page.

``make bench BENCH_ARGS="--only first_view"``.  For each of ``ROUNDS`` rounds a Streamlit server is started for
it (``python -m dashboard.serve``, as ``make demo`` and the Dockerfile start it) and a new browser with an empty
cache opens a fresh resume link to the overview (**cold**: the first visit after the server started, nothing
cached in the browser), then ``WARM_VISITS`` more fresh links in the same browser (**warm**).

Timed inside the page, from the start of the navigation (``performance.now()``), by a ``MutationObserver``
installed before any of the page's own scripts run (Chrome DevTools' ``Page.addScriptToEvaluateOnNewDocument``):

* ``skeleton_ms``: Streamlit's own frame is drawn (its script bundle loaded and run);
* ``first_content_ms``: the overview's first content, its title ("Where are we");
* ``figures_ms``: its headline figures ("Mapped", the first metric);
* ``ready_ms``: its last section, "What we know".

Nothing is polled while the page loads: the test waits on the page's own record, read once it says "ready".  The
pages suite measured these by polling the page's text from WebDriver every 50 ms until session 27; each poll
made the browser compute the whole page's rendered text on a 2-core machine, and the figures it gave
(0.94 s warm, 1.71 s cold in ``pages.overview_time_to_first_content`` of 2026-12-06) include that work.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import APP, app_on_fresh_database
from bench.pages_bench import _seed
from factor_journal import runtime
from factor_journal.links import LinkSigner
from factor_journal.repositories.links import LinkRecords
from factor_journal_tools.browser import free_port, headless_chromium, wait_until_serving

ROUNDS = 5
WARM_VISITS = 2
TARGETS_MS = {"cold": 1500, "warm": 800}  # issue 48: the overview's first content

# Installed before the page's scripts: marks, from the navigation's start, when each moment is first seen.
OBSERVER = r"""
window.__fjFirstView = {};
const mark = (name) => { if (!(name in window.__fjFirstView)) window.__fjFirstView[name] = performance.now(); };
new MutationObserver(() => {
  const root = document.getElementById('root');
  if (root && root.querySelectorAll('div').length > 3) mark('skeleton_ms');
  const main = document.querySelector('[data-testid="stMain"]');
  if (!main) return;
  const title = main.querySelector('h1');
  if (title && title.textContent.includes('Where are we')) mark('first_content_ms');
  const text = main.textContent;
  if (text.includes('Mapped')) mark('figures_ms');
  if (text.includes('What we know')) mark('ready_ms');
}).observe(document, {subtree: true, childList: true, characterData: true});
"""
MOMENTS = ("skeleton_ms", "first_content_ms", "figures_ms", "ready_ms")


def _visit(driver: Any, url: str) -> dict[str, float]:
    """One visit: the moments the page recorded (absent: not reached within 30 s)."""
    driver.get(url)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        seen = driver.execute_script("return window.__fjFirstView || {}")
        if "ready_ms" in seen and "figures_ms" in seen:
            break
        time.sleep(0.25)  # between checks the page runs undisturbed: the moments are the page's own
    return {name: round(value, 1) for name, value in seen.items()}


def _round(client: Any, user: str) -> dict[str, Any]:
    """A server started for the round, a new browser: one cold visit and ``WARM_VISITS`` warm ones."""
    port = free_port()
    root = Path(APP).resolve().parents[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "dashboard.serve", "--server.headless", "true", "--server.port", str(port)],
        cwd=root,
        env=dict(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    driver = None
    try:
        if not wait_until_serving(f"http://127.0.0.1:{port}"):
            raise RuntimeError("the Streamlit server did not start within 60 s")
        driver = headless_chromium(1280, 1000)
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": OBSERVER})
        signer = LinkSigner(LinkRecords(client))
        visits = [_visit(driver, f"http://127.0.0.1:{port}/?t={signer.issue(user)}") for _ in range(1 + WARM_VISITS)]
        return {"cold": visits[0], "warm": visits[1:]}
    finally:
        if driver is not None:
            driver.quit()
        server.terminate()
        server.wait(timeout=20)


def medians(visits: list[dict[str, float]]) -> dict[str, float | None]:
    """Each moment's median over ``visits`` (None when no visit reached it).  Pure."""
    return {
        name: round(statistics.median(seen), 1) if (seen := [v[name] for v in visits if name in v]) else None
        for name in MOMENTS
    }


def run() -> dict[str, Any]:
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        return {"skipped": "chromium and chromedriver are not installed"}
    client = app_on_fresh_database("fj-bench-first-view")
    user = _seed(runtime.store())
    rounds = [_round(client, user) for _ in range(ROUNDS)]
    cold = [r["cold"] for r in rounds]
    warm = [visit for r in rounds for visit in r["warm"]]
    figures = {"cold": medians(cold), "warm": medians(warm)}
    for kind, moments in figures.items():
        print(f"  first view ({kind}, median of {len(cold if kind == 'cold' else warm)}): {moments}")
    return {
        **figures,
        "target_first_content_ms": TARGETS_MS,
        "met": {
            kind: (figures[kind]["first_content_ms"] or float("inf")) <= target for kind, target in TARGETS_MS.items()
        },
        "visits": {"cold": cold, "warm": warm},
        "note": f"{ROUNDS} rounds: a server started for each, a new browser, one cold visit and {WARM_VISITS} warm "
        "ones, each with a fresh resume link; moments from the navigation's start, recorded inside the page",
    }
