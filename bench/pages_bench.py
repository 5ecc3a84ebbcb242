"""Issue 4 figures: document reads per page view, and the overview's server-side render time
for a user with 50 assessed factors and 5,000 journal entries (rendered with Streamlit's AppTest)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from factor_journal import runtime
from factor_journal.links import LinkSigner
from factor_journal.models import InferredUpdate, UserProfile
from factor_journal.store import FactorJournalStore, entry_id_for

from bench.common import app_on_fresh_database, measure_page, percentiles

ASSESSED = 50
JOURNAL_ENTRIES = 5000
RENDERS = 15


def _seed(store: FactorJournalStore) -> str:
    user = f"bench-pages-{uuid.uuid4().hex[:8]}"
    store.register_user(UserProfile(user_id=user, display_name="Bench User"))
    factors = [f.id for f in store.catalog.assessable_factors][:ASSESSED]
    start = datetime.now(UTC) - timedelta(days=300)
    for index in range(0, len(factors), 6):
        store.record_inferences(
            user,
            [InferredUpdate(factor_id=f, value=30 + i, confidence=0.7, rationale="bench", session_id="s1",
                            conversation_excerpt="User: benchmark words", observed_at=start) for i, f in enumerate(factors[index : index + 6])],
        )  # fmt: skip
    per_factor = JOURNAL_ENTRIES // len(factors)
    writer = store.client.bulk_writer()
    for factor in factors:
        template = store.history(user, factor, page_size=1).entries[0]
        journal = store.client.document(f"users/{user}/factors/{factor}").collection("journal")
        for index in range(per_factor - 1):
            entry = template.model_copy(
                update={"entry_id": entry_id_for(f"seed-{index}", factor), "observed_at": start - timedelta(hours=index + 1)}
            )
            writer.set(journal.document(entry.entry_id), entry.to_document())
    writer.close()
    return user


def run() -> dict[str, Any]:
    client = app_on_fresh_database("fj-bench")
    store = runtime.store()
    user = _seed(store)
    token = LinkSigner(client).issue(user)
    reads = {}
    for page in ("overview", "capabilities", "history", "review", "ask", "conversation"):
        reads[page], _ = measure_page(token, page)
    samples = [measure_page(token, "overview")[1] for _ in range(RENDERS)]
    assessed = store.summary(user).overall.total_factors_assessed
    results = {
        "user": {"assessed_factors": assessed, "journal_entries": JOURNAL_ENTRIES},
        "reads_per_page_view": reads,
        "overview_render": percentiles(samples),
        "note": "reads counted after sign-in (the link and the viewer are re-checked on every run, cached 5 s: 2 reads "
        "per check for a person, 3 for a manager); "
        "history/review/ask read journal pages on demand; conversation reads the session's turns",
    }
    print(f"  pages: reads per view {reads}; overview render p50 {results['overview_render']['p50_ms']} ms "
          f"(p95 {results['overview_render']['p95_ms']} ms) for {assessed} factors / {JOURNAL_ENTRIES} entries")  # fmt: skip
    return results
