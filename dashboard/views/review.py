"""Review: the assistant's unconfirmed inferences and held conflicts, confirmed or corrected by the user.

Every action goes through the domain store as a user entry; the summary is
updated in the same transaction, so the page reflects it at once.  Read-only (a
manager's view of a member, should the page ever be offered there) it shows the
factors and values only: no rationale, excerpt or button, since they quote the
person (docs/security.md).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import streamlit as st

from dashboard import context, labels
from dashboard.safe_text import quote
from factor_journal.conversation import excerpt_as_read
from factor_journal.page_models import changed_since_drawn, correction_to_save, shown_value
from factor_journal.validation import MAX_RATIONALE_CHARS

REVIEW_PAGE = 10


def render() -> None:
    subject, store, summary = context.open_page("Review")
    notice = st.session_state.pop("review_notice", None)
    if notice:
        st.success(notice)
    names = labels.factor_names(store.catalog)
    if not summary.unconfirmed_inferences and not summary.conflicts:
        st.info("Nothing to review: every assessed value is confirmed or was given by you.")
        return

    if summary.conflicts:
        st.header("Disagreements to settle", anchor=False)
    for conflict in summary.conflicts:
        with st.container(border=True):
            st.subheader(conflict.factor_name, anchor=False)  # a heading per item: a screen reader jumps by them
            st.markdown(
                f"You said **{conflict.current_value:g}**, but a later conversation "
                f"suggests **{conflict.proposed_value:g}** ({conflict.observed_at:%d %b %Y})."
            )
            if subject.read_only:  # the rationale quotes the person: theirs alone (docs/security.md)
                continue
            quote(labels.in_plain_words(conflict.rationale, names))
            keep, take = st.columns(2)
            named = partial(labels.factor_control, factor_name=conflict.factor_name)
            if keep.button(named("keep"), key=f"keep-{conflict.factor_id}", wrap=True):
                _act(
                    partial(
                        store.resolve_conflict,
                        subject.user_id,
                        conflict.factor_id,
                        accept=False,
                        rationale="User kept their value",
                    ),
                    f"Kept your value for {conflict.factor_name}.",
                )
            if take.button(named("take"), key=f"take-{conflict.factor_id}", wrap=True):
                _act(
                    partial(
                        store.resolve_conflict,
                        subject.user_id,
                        conflict.factor_id,
                        accept=True,
                        rationale="User accepted the newer reading",
                    ),
                    f"Updated {conflict.factor_name}.",
                )

    limit = st.session_state.setdefault("review_limit", REVIEW_PAGE)
    drawn: dict[str, float] = st.session_state.setdefault("review_drawn", {})
    if summary.unconfirmed_inferences:
        st.header("To confirm or correct", anchor=False)
    for item in summary.unconfirmed_inferences[:limit]:
        with st.container(border=True):
            st.subheader(item.factor_name, anchor=False)
            st.markdown(
                f"{labels.band(store.catalog, item.factor_id, item.value).capitalize()} · "
                f"{labels.amount(item.value)}/100 "
                f"at {item.confidence:.0%} confidence "
                f"· {item.evidence_count} piece{'s' if item.evidence_count != 1 else ''} of evidence"
            )
            if subject.read_only:  # its rationale and excerpt quote the person: theirs alone (docs/security.md)
                continue
            latest = store.history(subject.user_id, item.factor_id, page_size=1).entries
            if latest:
                quote(labels.in_plain_words(latest[0].change_rationale, names))
                if latest[0].conversation_excerpt:
                    quote(excerpt_as_read(latest[0].conversation_excerpt))
            drawn_for = drawn.get(item.factor_id)  # the value the slider was drawn for when last seen
            drawn[item.factor_id] = item.value
            slider = f"value-{item.factor_id}"
            if changed_since_drawn(drawn_for, item.value) or slider not in st.session_state:
                st.session_state[slider] = shown_value(item.value)  # the slider starts (again) at the value shown
            named = partial(labels.factor_control, factor_name=item.factor_name)
            confirm, correct = st.columns([1, 3])
            if confirm.button(named("confirm"), key=f"confirm-{item.factor_id}", wrap=True):
                if changed_since_drawn(drawn_for, item.value):  # they confirmed a value they no longer see
                    st.warning(_changed(item.factor_name, item.value, "Confirm it again if it is right."))
                else:
                    _act(
                        partial(store.confirm, subject.user_id, item.factor_id, seen=item.value),
                        f"Confirmed {item.factor_name}.",
                    )
            with correct.form(key=f"correct-{item.factor_id}", border=False):
                moved = st.slider(named("value"), 0.0, 100.0, step=0.1, format="%.1f", key=slider)
                reason = st.text_input(named("reason"), key=f"reason-{item.factor_id}", max_chars=MAX_RATIONALE_CHARS)
                if st.form_submit_button(named("save"), key=f"save-{item.factor_id}", wrap=True):
                    value = correction_to_save(drawn_for, item.value, moved)
                    if value is None:
                        st.warning(
                            _changed(
                                item.factor_name,
                                item.value,
                                "The slider starts at the new value; save again if it still needs correcting.",
                            )
                        )
                    else:  # the store refuses it too should the value change before its transaction
                        _act(
                            partial(store.correct, subject.user_id, item.factor_id, value, reason, seen=item.value),
                            f"Saved your value for {item.factor_name}.",
                        )

    remaining = len(summary.unconfirmed_inferences) - limit
    if remaining > 0 and st.button(f"Show {min(remaining, REVIEW_PAGE)} more", key="review_more"):
        st.session_state["review_limit"] = limit + REVIEW_PAGE
        st.rerun()


def _changed(factor_name: str, value: float, again: str) -> str:
    """What the page says when a decision was about a value that changed since the page showed it: nothing was
    saved, the value now, and ``again`` (a sentence: how to decide about the value now)."""
    return (
        f"{factor_name} changed since this page showed it: it is {labels.amount(value)}/100 now, so nothing was "
        f"saved. {again}"
    )


def _act(action: Callable[[], object], notice: str) -> None:
    context.act(action, notice, notice_key="review_notice")
