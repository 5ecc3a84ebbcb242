"""What a careful listener would not take as evidence about this organisation today.

``screen_turn`` is the one place that decides, and it decides in two ways (the pipeline calls it before
extraction, the semantic extractor's ``is_evidence`` too):

* **What must never reach any reader**, whatever reads the turn next: text that instructs the system rather than
  answers (``hostile``: ``signals.is_hostile``), an empty turn (``small_talk``), text longer than a turn may be
  (``oversized``).  This is all that stands before a language model (``judged_by_model=True``): whether the rest
  is evidence about this organisation today is the model's judgment, under its system instruction, which states
  the same rule (``prompts.READER_RULES``).
* **The rules, for the embedded reader** (and to name why a turn that changed nothing was set aside): a turn is
  also refused, with a kind and a readable reason, when it

  * asks to pause, stop, move on or change the subject (``pause``);
  * does not know, hands the question to someone else or says the speaker is too new to tell (``deferral``);
  * asks the interviewer something back (``question_back``);
  * is about another organisation: a relative's or a friend's firm, a neighbour, a supplier's, a customer's or
    a competitor's own systems, a former employer (``other_organisation``);
  * is a wish, a what-if or a plan that says nothing about how things are now (``hypothetical``);
  * is filler or an aside about other people or the news (``small_talk``).

Beyond the older whole-turn rules of ``signals`` (kept as they were measured), a turn is cut into fragments
(sentences and clauses) and refused only when **no fragment states something about this organisation now**:
"I only joined in May, but the numbers never match" is evidence for its second half, "Our competitor has a
data team of twelve; we have nobody" for its second, "If the line stops the operator writes it on paper"
describes today, and "Our supplier portal is a mess" is about us.  Competitors and customers pushing the
company toward AI (or winning business with it) are evidence too: that is what ``competitive_pressure`` reads.
The phrases the rules hear are tables in ``listening_phrases``.

Pure functions of the text; no model, no network.
"""

from __future__ import annotations

import re
from typing import Final

from factor_journal.conversation import MAX_TURN_TEXT_CHARS, text_length
from factor_journal.documents import ScreenedTurn, ScreenKind
from factor_journal.extraction import signals
from factor_journal.extraction.listening_phrases import (
    AHEAD,
    AHEAD_CLAUSE,
    AHEAD_FRAME,
    ASKS_BACK,
    CONTRAST,
    DEFERRAL,
    FAMILY_BUSINESS,
    FORMER,
    FRAGMENT_BREAK,
    HEDGE_OPENING,
    HYPOTHETICAL,
    IF_WOULD,
    LEAD,
    MARKET,
    NAMED_HAND_OFF,
    NEUTRAL,
    NEUTRAL_LEAD,
    NOT_KNOWING,
    OTHER_ORG,
    PAUSE,
    PERSONAL_STATE,
    PIVOT,
    PLANNED_THING,
    PRESENT,
    PRESSURE,
    SENTENCE,
    STILL_A_PLAN,
    TODAY,
    UNSURE,
    WE,
    WE_SPEAKING,
    WORK_WORDS,
    WOULD,
)

# A fragment of fewer than three words ("Honestly", "Not sure") is judged with the rest of the turn, never alone
MIN_FRAGMENT_WORDS: Final = 3
# A turn that opens by pausing or deferring is refused when what follows is only its reason, at most this long
OPENING_REST_MAX_WORDS: Final = 16
# The words before "would be grand/nice…" are the wished thing when they are this few (and nothing about us or today)
WISHED_THING_MAX_WORDS: Final = 6
# A sentence with a time ahead ("down the line", "next spring") is a plan only when it has this many words ("The
# vendor. Eventually." answers who)
AHEAD_MIN_WORDS: Final = 4


def _fragments(text: str) -> list[str]:
    said = signals.normalise(text)
    return [f.strip() for f in FRAGMENT_BREAK.split(said) if f and f.strip()]


def _words(fragment: str) -> int:
    return len(signals.tokens(fragment))


def _quoted(match: re.Match[str] | None, fallback: str = "") -> str:
    return f"\u201c{match.group(0).strip()}\u201d" if match else fallback


def _sentences(said: str) -> list[str]:
    return [x.strip() for x in SENTENCE.split(said) if x.strip()]


def _frame(text: str) -> re.Match[str] | None:
    """Another organisation as what the text is about: named in its first words ("My cousin runs a bakery", "At
    my last job…", "Our main supplier runs…"), not in passing ("keyed in by my sister", "the supplier's portal")."""
    match = OTHER_ORG.search(text)
    lead = LEAD.sub("", text[: match.start()]) if match else ""
    if match is None or len(signals.tokens(lead)) > 1:
        return None
    return match


def _is_question(sentence: str) -> bool:
    """A sentence that asks something ("Why does it matter how we ship?"), not a statement with a rising tone."""
    plain = LEAD.sub("", NEUTRAL_LEAD.sub("", sentence))
    return sentence.endswith("?") and bool(
        signals.INTERROGATIVE.match(plain) or ASKS_BACK.search(sentence) or re.match(r"^(?:compared to|meaning)", plain)
    )


def _is_hypothetical(sentence: str) -> re.Match[str] | None:
    """A wish, a what-if or a plan, with no word about how things are now in the same sentence and no contrast
    ("we'd like to, but nobody can be spared"); what comes before the marker is judged on its own (see
    ``screen_turn``)."""
    ahead = AHEAD.search(sentence) if _words(sentence) >= AHEAD_MIN_WORDS else None
    matches = [m for m in (HYPOTHETICAL.search(sentence), IF_WOULD.search(sentence), ahead) if m is not None]
    if not matches:
        return None
    match = min(matches, key=lambda m: m.start())
    if TODAY.search(AHEAD.sub(" ", HYPOTHETICAL.sub(" ", AHEAD_CLAUSE.sub(" ", sentence)))):
        return None
    contrast = CONTRAST.search(sentence)
    if contrast and not STILL_A_PLAN.match(sentence[contrast.end() :].strip()):
        return None
    return match


def _wished_thing(before: str, marker: re.Match[str]) -> bool:
    """The few words a "would be grand" judges ("Sensors on the walk-in fridges would be grand"): the wish's subject,
    no word about us or about today."""
    return (
        marker.group(0).startswith("would be")
        and _words(before) <= WISHED_THING_MAX_WORDS
        and not (WE_SPEAKING.search(before) or TODAY.search(before))
    )


def _goes_on_wishing(sentence: str, previous: str) -> bool:
    """A sentence that carries on the wish before it: after "Ideally?" or "My wish list:", or in the same "would"
    mood with no word about today ("…, I'd want a data person. They would sort the reports out.")."""
    if TODAY.search(AHEAD_CLAUSE.sub(" ", sentence)):
        return False
    return previous.endswith(("?", ":")) or bool(WOULD.search(sentence))


def _content(fragment: str) -> bool:
    """Whether a fragment (no screening pattern in it) states something: not filler, a hedge, how the speaker
    feels or what they must do next."""
    if _words(fragment) < MIN_FRAGMENT_WORDS or NEUTRAL.match(fragment):
        return False
    plain = HEDGE_OPENING.sub("", fragment)
    return not (PERSONAL_STATE.match(plain) or re.match(r"^(?:you|you're|your)\b", plain))


def _opening(sentences: list[str]) -> tuple[ScreenKind, re.Match[str]] | None:
    """A turn that opens by pausing or deferring and goes on only with its reasons (no "but…", no "what I do
    know is…"): "Could we switch topics? This one's political." / "Not my area; Ines would know"."""
    for index, sentence in enumerate(sentences):
        fragments = _fragments(sentence)
        first = next((f for f in fragments if not NEUTRAL.match(f) and _words(f) >= 2), None)
        if first is None:
            continue
        for kind, pattern in ((ScreenKind.pause, PAUSE), (ScreenKind.deferral, DEFERRAL)):
            match = pattern.search(first)
            if match:
                later = fragments[fragments.index(first) + 1 :] + [
                    f for x in sentences[index + 1 :] for f in _fragments(x)
                ]
                after = sentence[sentence.index(first) + len(first) :] + " " + " ".join(sentences[index + 1 :])
                speaks = [
                    f
                    for f in later
                    if WE_SPEAKING.search(f)
                    and _words(f) >= MIN_FRAGMENT_WORDS
                    and not PAUSE.search(f)
                    and not DEFERRAL.search(f)
                    and not PERSONAL_STATE.match(HEDGE_OPENING.sub("", f))
                ]
                if PIVOT.search(after) or speaks or _words(after) > OPENING_REST_MAX_WORDS:
                    return None
                return kind, match
        return None
    return None


def _only_reasons_around(sentences: list[str]) -> tuple[ScreenKind, re.Match[str]] | None:
    """A short turn that pauses or hands the question on anywhere ("Battery's on 2%, I'll reconnect in a bit.",
    "Give me ten minutes, a delivery just turned up.") when its other words are only the reasons: no "but…", no
    word about us, nothing about data, systems, people or ways of working (``WORK_WORDS``), at most
    ``OPENING_REST_MAX_WORDS`` words."""
    fragments = [f for x in sentences for f in _fragments(x)]
    for kind, pattern in ((ScreenKind.pause, PAUSE), (ScreenKind.deferral, DEFERRAL)):
        match = next((m for f in fragments if (m := pattern.search(f))), None)
        if match is None:
            continue
        rest = [pattern.sub(" ", f) for f in fragments]
        said = " ".join(rest)
        if (
            PIVOT.search(said)
            or WE_SPEAKING.search(said)
            or WORK_WORDS.search(said)
            or sum(_words(f) for f in rest if not NEUTRAL.match(f)) > OPENING_REST_MAX_WORDS
        ):
            return None
        return kind, match
    return None


_ORDER: Final = (
    ScreenKind.pause,
    ScreenKind.other_organisation,
    ScreenKind.deferral,
    ScreenKind.question_back,
    ScreenKind.hypothetical,
)
_WHY: Final = {
    ScreenKind.pause: "the turn asks to pause or change the subject",
    ScreenKind.other_organisation: "the turn is about another organisation, not this one",
    ScreenKind.deferral: "the speaker does not know or hands the question on",
    ScreenKind.question_back: "the turn asks the interviewer something back",
    ScreenKind.hypothetical: "a wish, a what-if or a plan that says nothing about today",
    ScreenKind.small_talk: "small talk that says nothing about the company",
    ScreenKind.hostile: "the turn instructs the system rather than answers",
    ScreenKind.oversized: f"the turn is longer than {MAX_TURN_TEXT_CHARS:,} characters",
}


def why_set_aside(kind: ScreenKind) -> str:
    """The readable reason a turn of ``kind`` is no evidence ("the turn asks the interviewer something back")."""
    return _WHY[kind]


def screen_turn(answer: str, *, judged_by_model: bool = False) -> ScreenedTurn | None:
    """Why the turn is no evidence about this organisation today, or None when it may be evidence.

    Pure.  Hostile, empty and oversized text is refused whatever else it says.  With ``judged_by_model`` (the
    reader is a language model under its system instruction) that is all: the model judges the rest.  Otherwise
    every other kind is refused only when nothing in the turn states something about this organisation now (see
    the module doc).  The reason quotes the words that decided it.
    """
    if not answer.strip():
        return ScreenedTurn(kind=ScreenKind.small_talk, reason="no update: the turn is empty")
    if text_length(answer) > MAX_TURN_TEXT_CHARS:
        return ScreenedTurn(kind=ScreenKind.oversized, reason=f"no update: {_WHY[ScreenKind.oversized]}")
    if signals.is_hostile(answer):
        return ScreenedTurn(kind=ScreenKind.hostile, reason=f"no update: {_WHY[ScreenKind.hostile]}")
    if judged_by_model:
        return None
    said = signals.normalise(answer)
    older = _older_rules(answer, said)
    if older is not None:
        return older
    sentences = _sentences(said)
    opening = _opening(sentences) or _only_reasons_around(sentences)
    if opening is not None:
        return _refused(*opening)

    family_business = bool(FAMILY_BUSINESS.search(said))
    frames = [_frame(x) for x in sentences]
    if family_business:
        frames = [None if f is not None and f.group(0).startswith("my ") else f for f in frames]
    former = any(f is not None and FORMER.search(f.group(0)) for f in frames)
    found: dict[ScreenKind, re.Match[str]] = {}
    not_knowing = bool(NOT_KNOWING.search(said) or UNSURE.search(said))  # a bare hand-off beside it is a deferral
    first: re.Match[str] | None = None
    wishing: str | None = None  # the last sentence that wished or planned, while the turn goes on wishing
    for sentence, frame in zip(sentences, frames, strict=True):
        if frame is not None:
            own = OTHER_ORG.sub(" ", sentence)  # "our main supplier runs SAP": the "our" belongs to the supplier
            if PRESSURE.search(sentence) and MARKET.search(sentence):
                return None  # competitors or customers pushing toward AI, or winning business: competitive pressure
            if WE_SPEAKING.search(own) and (not former or PRESENT.search(own)):
                return None  # "…; we have nobody": a word about us now
            found.setdefault(ScreenKind.other_organisation, frame)
            first = first or frame
            continue
        if first is not None and MARKET.search(first.group(0)) and PRESSURE.search(sentence):
            return None  # what those customers or competitors want of us: competitive pressure
        if first is not None and not WE_SPEAKING.search(sentence):
            continue  # "They swear by them." after "The garden centre across the road…": still theirs
        if former and WE_SPEAKING.search(sentence) and not PRESENT.search(sentence):
            continue  # "We had a proper warehouse." in a story about a former employer
        if _is_question(sentence):
            found.setdefault(ScreenKind.question_back, re.match(r".{0,40}", sentence))  # type: ignore[arg-type]
            continue
        hypothetical = _is_hypothetical(sentence)
        if (
            hypothetical is None
            and wishing is not None
            and (_goes_on_wishing(sentence, wishing) or STILL_A_PLAN.match(NEUTRAL_LEAD.sub("", sentence)))
        ):
            wishing = sentence  # "…might bring a consultancy in. Depends on the quote.": still the plan
            continue
        wishing = None
        if hypothetical is not None:
            found.setdefault(ScreenKind.hypothetical, hypothetical)
            wishing = sentence
            sentence = sentence[: hypothetical.start()]  # what comes before the wish or plan is judged on its own
            before = LEAD.sub("", NEUTRAL_LEAD.sub("", sentence))
            if AHEAD_FRAME.match(before) or PLANNED_THING.match(before) or _wished_thing(before, hypothetical):
                sentence = ""  # "Once the new manager starts, we're going to…": the frame belongs to the wish
        for fragment in _fragments(sentence):
            matched = None
            for kind, pattern in (
                (ScreenKind.pause, PAUSE),
                (ScreenKind.deferral, DEFERRAL),
                (ScreenKind.question_back, ASKS_BACK),
            ):
                match = pattern.search(fragment)
                rest = pattern.sub(" ", fragment)
                if match and not (WE.search(rest) and (kind == ScreenKind.question_back or TODAY.search(rest))):
                    matched = found.setdefault(kind, match)
                    break
            if matched is None and not_knowing and (handed_on := NAMED_HAND_OFF.search(fragment)):
                matched = found.setdefault(ScreenKind.deferral, handed_on)
            if matched is not None:
                continue
            if NOT_KNOWING.search(fragment) and not (
                WE.search(rest := NOT_KNOWING.sub(" ", fragment)) and TODAY.search(rest)
            ):
                continue  # said alone it may be the answer; with a hand-off it is a deferral
            if _content(fragment) or (WE_SPEAKING.search(fragment) and TODAY.search(fragment)):
                return None  # the turn says something about this organisation now: let the reader judge it
    if set(found) == {ScreenKind.hypothetical} and TODAY.search(HYPOTHETICAL.sub(" ", AHEAD_CLAUSE.sub(" ", said))):
        return None  # a plan beside a word about today ("Not yet. It's on the list for next year.")
    for kind in _ORDER:
        if kind in found:
            return _refused(kind, found[kind])
    return None


def _refused(kind: ScreenKind, match: re.Match[str] | None) -> ScreenedTurn:
    return ScreenedTurn(kind=kind, reason=f"no update: {_WHY[kind]}" + (f" ({_quoted(match)})" if match else ""))


def _goes_on_about_work(said: str) -> bool:
    """Whether a short turn that holds off ("hang on", "not my area") goes on, in a clause of its own, to say
    something about data, systems, people or ways of working ("…, but I know our invoices are all typed in")."""
    rest = signals.DEFERRAL_PHRASES.sub(" . ", said)
    return any(
        _words(x) >= MIN_FRAGMENT_WORDS + 2
        and WORK_WORDS.search(x)
        and not (x.endswith("?") or DEFERRAL.search(x) or PAUSE.search(x) or re.match(r"^\W*i\b", x))
        for x in _sentences(rest)
    )


def _older_rules(answer: str, said: str) -> ScreenedTurn | None:
    """The whole-turn rules ``signals`` had before this module (filler, a question back, a short deferral, hearsay),
    each given its kind."""
    if signals.is_filler(answer):
        return ScreenedTurn(kind=ScreenKind.small_talk, reason=f"no update: {_WHY[ScreenKind.small_talk]}")
    if signals.is_question_only(answer):
        for kind, pattern in ((ScreenKind.pause, PAUSE), (ScreenKind.deferral, DEFERRAL)):
            if match := pattern.search(said):  # "Could we move on to another topic?" asks to pause
                return _refused(kind, match)
        return ScreenedTurn(kind=ScreenKind.question_back, reason=f"no update: {_WHY[ScreenKind.question_back]}")
    if signals.is_deferral(answer) and not _goes_on_about_work(said):
        pause = PAUSE.search(said)
        kind = ScreenKind.pause if pause else ScreenKind.deferral
        if not pause and (asked := signals.INTERROGATIVE.match(said)) is not None and said.endswith("?"):
            kind = ScreenKind.question_back
            return ScreenedTurn(kind=kind, reason=f"no update: {_WHY[kind]} ({_quoted(asked)})")
        return _refused(kind, pause or signals.DEFERRAL_PHRASES.search(said))
    if signals.is_hearsay(answer) and not FAMILY_BUSINESS.search(said):
        frame = OTHER_ORG.search(said)
        kind = ScreenKind.other_organisation if frame else ScreenKind.small_talk
        return _refused(kind, frame or signals.HEARSAY.search(said))
    return None
