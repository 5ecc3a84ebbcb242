"""What people read on the pages, laid out and in the right voice (AppTest against the Firestore emulator).

Ask why's answer is formatted by the app while everything a person wrote stays text; a manager reading a
member's overview reads about that person, not to them; the overview's counts agree with each other.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

from streamlit.testing.v1 import AppTest
from test_access import rendered_markdown
from test_app import category_bars, infer, open_app, texts

from factor_journal.organisation import OrganisationDirectory

MARKDOWN_WORDS = "**bold** [link](http://x) ![p](http://x/p.png)"
QUESTION = "How much do you trust the numbers in your monthly reports when the board asks for them at short notice?"


def test_ask_why_lays_out_its_answer_and_keeps_a_persons_words_inert(app_database, signer, store, make_user):
    user = make_user(store, display_name="Ann Answer")
    said = f"We have four separate systems: {MARKDOWN_WORDS}"
    infer(
        store,
        user,
        "data_quality",
        20,
        0.75,
        2,
        rationale=f'User said "{said}" (answering "{QUESTION}"): reads as low (P=0.81).',
        excerpt=f"Assistant: {QUESTION}\nUser: {said}",
    )
    app = open_app(signer.issue(user), "ask")
    app.text_input(key="ask_question").input("Why is data quality so low?").run()
    assert not app.exception
    shown = texts(app)
    markdown = "\n".join(rendered_markdown(app))
    plain = "\n".join(str(e.value) for e in app.text)

    assert "**Data quality** is" in markdown  # the app's own emphasis, rendered as such
    assert "**Data quality**" not in plain and "> User:" not in shown and "> " not in plain  # never shown as source
    assert "\\*\\*bold\\*\\*" in markdown and "**bold**" not in markdown  # the person's words, escaped
    assert "](http://x" not in markdown
    assert MARKDOWN_WORDS in plain  # and shown as they were typed, as text, in the evidence
    # A reader's rationale is kept whole (questions.RATIONALE_CHARS), so it reads in plain words to its end.
    line = next(line for line in plain.splitlines() if "(answering" in line)
    assert f'(answering "{QUESTION}")' in line and line.endswith("read as low, quite sure.")


# --- What a link that does not open says -------------------------------------------------------------


def test_a_link_that_stopped_working_says_what_to_do_and_no_sign_in_is_offered(app_database, signer, store, make_user):
    user = make_user(store, display_name="Lee Link")
    expired = signer.issue(user, ttl=timedelta(seconds=1))
    revoked = signer.issue(user)
    signer.revoke(revoked)
    time.sleep(1.5)
    for token, reason, what_to_do in [
        (expired, f"expired on {datetime.now(UTC):%d %b %Y}", "A new one can be sent to the email address it came to"),
        (revoked, "withdrawn", "latest Factor Journal email"),  # a withdrawn link is not renewed
    ]:
        shown = texts(open_app(token))
        assert reason in shown and what_to_do in shown, shown
        assert "sign in" not in shown.lower() and "14 days" not in shown


def test_a_page_opened_without_a_session_says_why_the_link_is_asked_for_again(app_database):
    shown = texts(open_app(None))
    assert "For your privacy" in shown and "reloading a page" in shown and "through the link in your email" in shown


def test_the_link_in_use_shows_its_own_expiry(app_database, signer, store, make_user):
    user = make_user(store, display_name="Sam Short")
    infer(store, user, "data_quality", 20, 0.75, 1)
    app = open_app(signer.issue(user, ttl=timedelta(days=2)))
    until = datetime.now(UTC) + timedelta(days=2)
    assert f"This link works until {until:%d %b %Y}" in texts(app)
    assert "14 days" not in texts(app)


# --- The overview's counts agree --------------------------------------------------------------------


def test_the_overview_counts_the_same_factors_everywhere(app_database, signer, store, assessed_user):
    """A composite (the AI readiness score, computed from other factors) is listed, but counted nowhere."""
    assert store.summary(assessed_user).factors["ai_readiness_score"].is_assessed  # derived from the five said
    app = open_app(signer.issue(assessed_user))
    [mapped] = [m for m in app.metric if m.label == "Mapped"]
    assessed, total = (int(n) for n in str(mapped.proto.delta).split()[0].split("/"))
    assert assessed == 5
    shown = texts(app)
    assert f"{assessed} factors assessed" in shown and "AI readiness score" in shown
    names, mapped, _ = category_bars(app)
    in_chart = dict(zip(names, mapped, strict=True))
    headers = re.findall(r"\*\*(.+?)\*\* · (\d+) of (\d+) assessed", shown)
    assert headers and sum(int(n) for _, n, _ in headers) == assessed
    for name, counted, of in headers:
        assert in_chart[name] == f"{counted}/{of}", name


# --- A manager reads about the person, not to them ---------------------------------------------------


def _managed(store, make_user, member: str, org: str) -> str:
    """``member`` moved into a new organisation ``org`` with a manager; returns the manager."""
    directory = OrganisationDirectory(store)
    directory.create(org, "Voice Org")
    store.register_user(store.get_user(member).model_copy(update={"org_id": org}))
    manager = make_user(store, org_id=org, display_name="Maria Manager")
    directory.assign_manager(org, manager)
    return manager


def _as_their_manager(signer, manager: str, org: str, member: str, page: str) -> AppTest:
    """The member's ``page`` (``screens/<page>.py``) as their manager reads it, read-only."""
    app = open_app(signer.issue(manager, kind="manager", org_id=org))
    app.session_state["drill_user"] = member
    app.switch_page(f"screens/{page}.py").run()
    return app


def test_a_manager_reading_a_members_overview_reads_about_them(app_database, signer, store, make_user, assessed_user):
    org = f"org-{assessed_user}"
    manager = _managed(store, make_user, assessed_user, org)
    store.correct(assessed_user, "ml_expertise", 55, "We hired a third data scientist")  # an answer of their own

    own = texts(open_app(signer.issue(assessed_user)))
    assert "Next best questions" in own and "you have not checked it yet" in own and "1 yours" in own

    app = _as_their_manager(signer, manager, org, assessed_user, "overview")
    assert not app.exception
    shown = texts(app)
    assert "Anna Berg · Where are we" in shown
    assert "Anna Berg has not checked it yet" in shown and "1 given by them" in shown
    assert "Next best questions" not in shown
    for second_person in ("you have", "yours", "your ", "You have", "Your "):
        assert second_person not in shown, second_person


def test_a_manager_reading_a_members_capabilities_reads_about_them(
    app_database, signer, store, make_user, assessed_user
):
    """The capabilities page, read-only, named what the member can evaluate 'You can evaluate now' to the manager."""
    org = f"org-caps-{assessed_user}"
    manager = _managed(store, make_user, assessed_user, org)

    assert "You can evaluate now" in texts(open_app(signer.issue(assessed_user), "capabilities"))

    app = _as_their_manager(signer, manager, org, assessed_user, "capabilities")
    assert not app.exception
    shown = texts(app)
    assert "Anna Berg · Capabilities" in shown and "Anna Berg can evaluate now" in shown
    for second_person in ("You can", "you can", "your ", "Your "):
        assert second_person not in shown, second_person


def test_ask_why_speaks_to_its_person_of_their_own_answers_as_the_other_pages_do(
    app_database, signer, store, make_user
):
    """The person's own correction reads "You corrected what was understood from your answer", and a value they gave
    reads "yours" as on the overview -- in the answer and in its evidence alike, never "their answer" nor "user
    provided"."""
    user = make_user(store, display_name="Yvonne Yours")
    infer(store, user, "data_quality", 55, 0.6, 2, rationale="reads as mid", excerpt="User: it is fine mostly")
    store.correct(
        user, "data_quality", 25, "User corrected what was understood from their answer (low) in the conversation"
    )
    app = open_app(signer.issue(user), "ask")
    app.text_input(key="ask_question").input("Why is data quality so low?").run()
    assert not app.exception
    shown = texts(app) + "\n".join(str(e.value) for e in app.text)
    markdown = "\n".join(rendered_markdown(app)).replace("\\", "")  # as read, not as escaped
    assert "): You corrected what was understood from your answer (low)" in markdown  # in the answer's line
    assert "(confidence 95%, yours)." in markdown
    assert "their answer" not in shown and "user provided" not in shown and "User corrected" not in shown
