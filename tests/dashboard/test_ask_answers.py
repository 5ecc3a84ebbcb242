"""Ask why cites an answer nothing was understood from as the person's words, with its date, its mark and a way
to that answer in the conversation (AppTest on the emulator; the answer is analysed by the real pipeline, only the
model is scripted)."""

from __future__ import annotations

from urllib.parse import parse_qs

from test_app import open_app, texts
from test_conversation_page import answered

from dashboard.context import answer_anchor
from doubles import ReadingsByText
from factor_journal.questions.composing import NOT_ASSESSED

MISSED = (
    "Every month our controller spends two days making the sales report and the stock report agree, "
    "and they still never quite do."
)


def test_words_not_part_of_the_assessment_are_cited_with_their_date_and_lead_to_the_answer(
    app_database, signer, store, make_user
):
    user = make_user(store, display_name="Mo Month")
    session, [turn] = answered(store, user, MISSED, extractor=ReadingsByText({MISSED: []}))
    said_at = dict(store.session_turns(user, session))[turn]["created_at"]
    store.start_session(user)  # a later conversation: the one the conversation page would continue
    app = open_app(signer.issue(user), "ask")
    app.text_input(key="ask_question").input("Why does it take our controller days to get the month closed?").run()
    shown = texts(app)
    assert f"Your words, {NOT_ASSESSED}" in shown and MISSED in shown
    assert f"**{said_at:%d %b %Y}** · {NOT_ASSESSED} · found by meaning" in shown  # its date and its mark
    [link] = [link for link in app.get("page_link") if "in the conversation" in link.proto.label]
    assert parse_qs(link.proto.query_string) == {"session": [session], "answer": [turn]}
    assert link.proto.page.endswith("conversation")

    for name, [value] in parse_qs(link.proto.query_string).items():  # the link followed
        app.query_params[name] = value
    app.switch_page("screens/conversation.py").run()
    assert not app.exception, app.exception
    assert "The answer you opened from Ask why." in texts(app) and MISSED in texts(app)
    bodies = [element.proto.body for element in app.get("html")]
    anchor = answer_anchor(turn)
    assert any(f'id="{anchor}"' in body for body in bodies)  # the answer's anchor on the page ...
    assert any("scrollIntoView" in body and anchor in body for body in bodies)  # ... which it scrolls to
    # and the way to say what it was about is open under it (here no factor comes close: any factor, by name)
    assert "This was about…" in texts(app) and [box for box in app.selectbox if box.key == f"about-find-{turn}"]
    assert "session" not in app.query_params and "answer" not in app.query_params  # they left the address
