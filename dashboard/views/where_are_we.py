"""Where are we: progress, tier, what unlocks the next one, what to re-check, where we were, what to discuss next.

Reads the precomputed summary document (one read per view); freshness is computed from it on read
(``factor_journal.freshness``): every confidence shown or weighed here is aged to today.  On the person's own
pages the next best questions are what their conversation asks next (``page_models.questions_ahead``), so they
also read the turns of the session it continues.
"""

from __future__ import annotations

import streamlit as st

from dashboard import bars, context, labels
from dashboard.safe_text import md, quote
from dashboard.views import chart_as_table
from factor_journal.conversation import excerpt_as_read
from factor_journal.errors import FactorJournalError
from factor_journal.freshness import FreshAssessment, TierNote
from factor_journal.guidance import in_sentence, next_tier_statement
from factor_journal.page_models import (
    COMPUTED,
    categories_by_progress,
    questions_ahead,
    recheck_list,
    shown_apart,
    what_we_know,
)

STATUS_ORDER = ["unconfirmed", "confirmed", "user_provided", COMPUTED]  # how the count of each is listed


def render() -> None:
    subject, store, assessment = context.open_fresh_page("Where are we")
    notice = st.session_state.pop("overview_notice", None)
    if notice:
        st.success(notice)
    summary = assessment.summary
    overall = summary.overall
    person = Person.of(subject)
    if overall.total_factors_assessed == 0:
        st.info(
            f"Nothing has been assessed yet. This page fills in as {md(person.name)} talks with the assistant."
            if person.read_only
            else "Nothing has been assessed yet. Start the conversation and this page will fill in as you talk: "
            "what we know, how sure we are, and which AI projects you can evaluate."
        )
    columns = st.columns(4)
    columns[0].metric(
        "Mapped",
        f"{overall.completeness:.0%}",
        f"{overall.total_factors_assessed}/{overall.total_factors} factors",
        delta_color="off",
        delta_arrow="off",
    )
    stored = assessment.stored.overall.avg_confidence
    aged = shown_apart(stored, overall.avg_confidence)  # today's confidence is not the one said
    columns[1].metric(
        "Confidence",
        f"{overall.avg_confidence:.0%}",
        f"{stored:.0%} when said" if aged else None,
        delta_color="off",
        delta_arrow="off",
    )
    columns[2].metric(
        "Decision tier", overall.decision_tier_name, overall.decision_budget, delta_color="off", delta_arrow="off"
    )
    columns[3].metric("Can evaluate", labels.count(len(summary.capabilities.can_evaluate), "project type"))
    if aged:  # why, in words a screen reader reads too (a metric's help is a tooltip it cannot reach)
        st.caption(labels.CONFIDENCE_TODAY)
    mapped = min(1.0, overall.completeness)  # a whole percent, as the metric rounds it (a float would be cut)
    st.progress(round(mapped * 100), text=f"{mapped:.0%} of the factors mapped")
    if assessment.tier_note is not None:  # a decision never flips silently (docs/freshness.md)
        st.warning(person.tier_note(assessment.tier_note), icon=":material/history:")
    if person.read_only and summary.overall.next_tier is None:
        st.markdown(f"**Next decision tier.** {md(person.name)} has reached the highest decision tier.")
    else:
        st.markdown(f"**Next decision tier.** {next_tier_statement(summary)}")
    to_recheck(store, subject, assessment)
    what_we_know_section(store.catalog, assessment, person)

    left, right = st.columns([3, 2])
    with left:
        st.header("Progress by category", anchor=False)
        st.html(bars.category_progress(summary))  # no plotly on the page a link opens first: see dashboard/bars.py
        chart_as_table(labels.category_rows(categories_by_progress(summary)))
    with right:
        st.header("Where we were", anchor=False)
        last = summary.last_conversation
        if last is None:
            st.write(
                f"{md(person.name)} has not talked with the assistant yet."
                if person.read_only
                else "We have not talked yet."
            )
        else:
            with st.container(border=True):
                st.markdown(f"**{md(last.topic)}** · {last.timestamp:%d %b %Y}")
                if not subject.read_only:  # the excerpt is the person's own words (docs/security.md)
                    quote(excerpt_as_read(last.excerpt))
        if person.read_only:  # the next questions are the person's to answer, not a reader's
            return
        st.header("Next best questions", anchor=False)
        # what the conversation asks next, then after it: the conversation's own rule over its session's turns
        visit = st.session_state.get("conversation_visit", assessment.at)
        turns = context.conversation_so_far(subject)
        suggestions = questions_ahead(store.catalog, store.graph, assessment, turns, visit)
        if not suggestions:
            st.write("Every factor is assessed with good confidence.")
        for suggestion in suggestions:
            st.markdown(f"- **{suggestion.question}**  \n  _{suggestion.factor_name}: {suggestion.reason}_")


class Person:
    """Who the overview speaks about: "you" on the person's own pages, their name (escaped) to a read-only reader."""

    def __init__(self, name: str, read_only: bool) -> None:
        self.name, self.read_only = name, read_only
        self.subject = md(name) if read_only else "you"
        self.possessive = "their" if read_only else "your"

    @classmethod
    def of(cls, subject: context.Subject) -> Person:
        return cls(subject.display_name, subject.read_only)

    def status(self, status: object) -> str:
        """Who stands behind an answer: 'yours' is 'given by them' to a reader."""
        return labels.status_label(status, self.read_only)

    def tier_note(self, note: TierNote) -> str:
        """The tier note (freshness writes it to the person) as a reader reads it."""
        if not self.read_only:
            return note.message
        count = labels.count(len(note.confirm), "answer")
        answers, tier = (labels.of_person(thing, md(self.name), start=True) for thing in ("answers", "tier"))
        if note.lapsed:
            return (
                f"{answers} reach {note.reached_name}, but some were said long ago: as they stand "
                f"today they support {note.now_name}. Confirming the {count} below would get {note.reached_name} "
                "back; that is theirs to do."
            )
        when = f"from {note.lapses_at:%d %b %Y} " if note.lapses_at is not None else ""
        return (
            f"{tier}, {note.reached_name}, rests on answers said long ago: {when}their age takes "
            f"it down a tier unless they confirm the {count} below."
        )


def _talk_about(store, subject, factor_id: str, when: str) -> None:
    """Put the factor's question to the person in their conversation (the assistant's turn), so the
    conversation page opens on it."""
    session = context.conversation_session(subject)
    factor = store.catalog.factor(factor_id)
    asked = factor.elicitation_questions[0]
    question = f"You told us about {in_sentence(factor.name)} {when}: does it still hold? {asked}"
    store.add_turn(subject.user_id, session, "assistant", question)


def _confirm_all(store, subject, factor_ids: list[str], tier: str) -> None:
    """Confirm each answer (one transaction each, through the store); stops at the first refusal."""
    done = 0
    for fid in factor_ids:
        try:
            store.confirm(subject.user_id, fid)
        except FactorJournalError as error:
            st.error(f"{store.catalog.factor(fid).name}: {error}")
            break
        done += 1
    st.session_state["overview_notice"] = f"Confirmed {done} answers: {tier} rests on answers said today."
    st.rerun()


def to_recheck(store, subject, assessment: FreshAssessment) -> None:
    """The answers said long ago that now count for little: when last said, how sure then and now, and one
    click to confirm each still holds (a confirmation through the store, one transaction) or to talk about it."""
    listed = recheck_list(assessment)
    if not listed.shown:
        return
    catalog = store.catalog
    st.header("To re-check", anchor="to-re-check")  # its anchor: the reminder's link scrolls to it
    due = len(assessment.to_recheck)
    person = Person.of(subject)
    st.caption(
        f"{due} answer{'s' if due != 1 else ''} said long ago "
        f"{'count' if due != 1 else 'counts'} for less now: things change. Nothing is lost — "
        + (
            f"{md(person.name)} can confirm what still holds, or talk about it again."
            if person.read_only
            else "confirm what still holds, or talk about it again."
        )
        if due
        else f"Confirming these keeps {person.possessive} decision tier."
    )
    note = assessment.tier_note
    if note is not None and len(note.confirm) > 1 and not subject.read_only:
        label = f"All {len(note.confirm)} answers the tier rests on still hold"
        if st.button(
            label,
            key="recheck-confirm-tier",
            icon=":material/done_all:",
            help="Confirm each of the answers listed first, as it is: each counts as said today",
        ):
            _confirm_all(store, subject, note.confirm, note.reached_name)
    for item in listed.shown:
        fid = item.factor_id
        name = catalog.factor(fid).name
        state = assessment.stored.factors[fid]
        value = state.current_value or 0.0
        when = labels.day(item.said_at)
        types = f"{item.unlocks} project type{'s rest' if item.unlocks != 1 else ' rests'}"
        rest = f" · {types} on it" if item.unlocks else ""
        with st.container(border=True):
            st.markdown(
                f"**{md(name)}**: {labels.band(catalog, fid, value)} ({labels.amount(value)}) · "
                f"last said {when} ({labels.age(item.said_at, assessment.at)}) · "
                f"{item.stored_confidence:.0%} sure then, {item.confidence:.0%} now{rest}"
            )
            if subject.read_only:
                continue
            confirm, talk = st.columns(2)
            if confirm.button(
                labels.factor_control("holds", name),
                key=f"recheck-confirm-{fid}",
                icon=":material/check:",
                help="Confirm it as it is: it counts as said today",
                wrap=True,
            ):
                try:
                    store.confirm(subject.user_id, fid)
                except FactorJournalError as error:
                    st.error(str(error))
                else:
                    st.session_state["overview_notice"] = f"Confirmed {name}: it counts as said today."
                    st.rerun()
            if talk.button(
                labels.factor_control("talk", name), key=f"recheck-talk-{fid}", icon=":material/forum:", wrap=True
            ):
                _talk_about(store, subject, fid, f"on {when}")
                st.switch_page("screens/conversation.py")
    if listed.more:
        st.caption(f"… and {listed.more} more.")


def what_we_know_section(catalog, assessment: FreshAssessment, person: Person) -> None:
    """Every assessed factor by category: name, band and value, confidence, who stands behind it, when said
    (``page_models.what_we_know``: from the summary alone, no further reads).

    The confidence shown is today's (aged), with the stored one beside it when they differ, and answers due for
    a re-check are marked; the unconfirmed ones are one click from Review."""
    st.header("What we know", anchor=False)
    listing = what_we_know(catalog, assessment)
    if not listing.assessed:
        st.write(
            f"Nothing yet: what {md(person.name)} tells the assistant will be listed here, factor by factor."
            if person.read_only
            else "Nothing yet: what you tell us in the conversation will be listed here, factor by factor."
        )
        return
    # One count everywhere: the summary's (the "Mapped" metric and the category chart), which leaves out the
    # composites (scores computed from other factors): they are listed, marked computed, but not counted.
    assessed = assessment.summary.overall.total_factors_assessed
    counts = ", ".join(
        f"{listing.by_status[s]} {person.status(s)}" for s in STATUS_ORDER if s in listing.by_status and s != COMPUTED
    )
    computed = [item.name for category in listing.categories for item in category.factors if item.status == COMPUTED]
    also = (
        f" Also {len(computed)} score{'s' if len(computed) != 1 else ''} computed from them, not counted: "
        f"{', '.join(computed)}."
        if computed
        else ""
    )
    st.caption(
        f"{assessed} factor{'s' if assessed != 1 else ''} assessed{': ' + counts if counts else ''}.{also}"
        f" Unconfirmed means the assistant read it from the conversation and {person.subject} "
        f"{'has' if person.read_only else 'have'} not checked it yet."
    )
    unconfirmed = len(assessment.summary.unconfirmed_inferences)
    if unconfirmed and not person.read_only:
        st.page_link("screens/review.py", label=f"Review the {unconfirmed} unconfirmed", icon=":material/task_alt:")
    columns = st.columns(2)
    for index, category in enumerate(listing.categories):
        lines = []
        for item in category.factors:
            sure = f"{item.confidence:.0%} sure"
            if item.stored_confidence is not None:
                sure += f" (was {item.stored_confidence:.0%})"
            stale = " · **to re-check**" if item.due else ""
            band = labels.band(catalog, item.factor_id, item.value)
            lines.append(
                f"- **{item.name}**: {band} ({labels.amount(item.value)}) · "
                f"{sure} · {person.status(item.status)} · said {labels.day(item.said_at)}{stale}"
            )
        with columns[index % 2]:
            progress = assessment.summary.categories.get(category.category_id)  # the chart's figures
            counted = (
                f"{progress.factor_count} of {progress.total_factors}"
                if progress is not None
                else f"{category.assessed} of {category.total}"
            )
            st.markdown(f"**{category.name}** · {counted} assessed")
            st.markdown("\n".join(lines))
