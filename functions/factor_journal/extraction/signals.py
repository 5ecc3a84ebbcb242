"""Cheap textual signals the semantic extractor adds to the embeddings: negation, hedging, yes/no answers,
counts, and hostile text (instructions aimed at the assessment rather than evidence about the company).

Static embeddings average their words, so "we are not bad at reporting" lands near "bad at reporting";
these signals give the classifiers what averaging loses.  All pure functions of the text.
"""

from __future__ import annotations

import re
from typing import Final

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'"})
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")

_NEGATIONS: Final = frozenset(
    [
        "no",
        "not",
        "never",
        "without",
        "lack",
        "lacks",
        "lacking",
        "cannot",
        "nobody",
        "none",
        "nothing",
        "neither",
        "nor",
        "hardly",
        "barely",
        "dont",
        "doesnt",
        "didnt",
        "isnt",
        "arent",
        "havent",
        "hasnt",
        "cant",
        "wont",
        "wasnt",
        "werent",
        "nope",
        "nah",
    ]
)
_HEDGES: Final = re.compile(
    r"\b(?:sort of|kind of|partly|partially|somewhat|to some extent|more or less|in part|a bit|a little|"
    r"mostly|fairly|reasonably|so-so|ok|okay|fine|patchy|mixed|hit and miss|depends|some of|half|"
    r"in places|not always|sometimes|usually|a few|getting there|early days|starting to|working on|"
    r"though|although|but)\b"
)
_POSITIVE_AFTER_NEGATION: Final = re.compile(
    r"\b(?:not|never|isn't|aren't|wasn't|hardly)\s+(?:that\s+|too\s+|so\s+|all\s+that\s+)?"
    r"(?:bad|terrible|awful|poor|weak|a problem|an issue|hopeless|behind)\b"
)
_NEGATIVE_AFTER_NEGATION: Final = re.compile(
    r"\b(?:not|never|isn't|aren't|wasn't|hardly|don't|doesn't|no)\s+(?:that\s+|too\s+|so\s+|really\s+|very\s+)?"
    r"(?:good|great|mature|strong|clean|reliable|trusted|consistent|documented|automated|ready|there yet|much)\b"
)
_YES = re.compile(r"^\W*(?:yes|yeah|yep|yup|sure|definitely|absolutely|of course|indeed|correct|we do|we have)\b")
_NO = re.compile(
    r"^\W*(?:no|nope|nah|not yet|not really|never|none|nothing|we don't|we do not|we haven't|not at all)\b"
)
_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)?\s*%?|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|dozen|hundred)\b")

# Hostile text: instructions to the system, forged roles, requests to set or mark values.
_HOSTILE: Final = re.compile(
    r"ignore (?:all |any |the |your |my )?(?:previous|prior|above|earlier|preceding|former)?\s*"
    r"(?:instructions|rules|prompts?|messages?|guidelines|directions)"
    r"|disregard (?:all |any |the |your )?(?:previous|prior|above|earlier)?\s*(?:instructions|rules|prompts?)"
    r"|forget (?:all |your |the )?(?:previous |prior )?(?:instructions|rules)"
    r"|(?:^|\n|\[|<|\()\s*(?:system|developer|admin|assistant)\s*(?:prompt|message|note|override)?\s*[:>\]\)]"
    r"|\bsystem (?:prompt|message|override|instruction)s?\b|\bnew instructions?\b|\bdeveloper mode\b|\bjailbreak"
    r"|\byou are now\b|\bact as\b|\bpretend (?:to be|you)\b|\bprompt injection\b"
    r"|\b(?:set|mark|rate|score|record|put|update|change|give|assign|bump|max)\w*\s+(?:us|me|my|our|the company|"
    r"everything|all|every|this company|them)\b[^.!?\n]{0,50}(?:\b100\b|100%|\bhigh(?:est)?\b|\bfull(?:y)?\b|\bmax"
    r"|\bready\b|\bperfect\b|\btop\b|\bexpert\b|\bten out of ten\b)"
    r"|\b(?:scores?|readiness|ratings?|values?|factors?)\s+(?:to|at|of|as)\s+(?:100|high|max|maximum|full|ready|perfect)\b"
    r"|\b(?:every|all)\s+(?:the\s+)?(?:factors?|scores?|values?|categories)\b"
    r"|\bfully (?:ai[- ])?ready\b|\bhigh[_ ]risk tier\b|\bconfidence (?:to |of )?1(?:\.0)?\b|\bai_readiness_score\b"
    r"|\b[a-z]+_[a-z_]+\s*[=:]\s*\d+|\bset [a-z]+_[a-z_]+ to\b|\"(?:factor_id|value|confidence)\"\s*:"
    r"|\brecord (?:that|this)\b|\bnote down\b|\bwrite down that\b|\bpretend (?:i|we)\b|\b(?:10|ten) out of (?:10|ten)\b"
    r"|\bwhatever (?:i|we) said\b|\bdelete (?:them|my|our|the|those)\b[^.!?\n]{0,20}\banswers?\b"
    r"|\bauthori[sz]ed audit\b"
)


def normalise(text: str) -> str:
    return " ".join(text.translate(_APOSTROPHES).lower().split())


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(normalise(text))


def negation_count(text: str) -> int:
    """Negation words ("not", "never", "nobody", "n't" forms) in ``text``."""
    return sum(1 for token in tokens(text) if token.replace("'", "") in _NEGATIONS or token.endswith("n't"))


def hedge_count(text: str) -> int:
    """Hedges and qualifiers ("sort of", "mostly", "though", "half") in ``text``."""
    return len(_HEDGES.findall(normalise(text)))


def negated_negative(text: str) -> bool:
    """Whether a negative judgement is negated ("not bad", "isn't a problem"): leans up, not down."""
    return bool(_POSITIVE_AFTER_NEGATION.search(normalise(text)))


def negated_positive(text: str) -> bool:
    """Whether a positive judgement is negated ("not mature", "isn't reliable", "not there yet")."""
    return bool(_NEGATIVE_AFTER_NEGATION.search(normalise(text)))


def answer_polarity(text: str) -> int:
    """+1 for an answer opening with yes, -1 with no, 0 otherwise."""
    said = normalise(text)
    if _NO.match(said):
        return -1
    if _YES.match(said):
        return 1
    return 0


def has_number(text: str) -> bool:
    return bool(_NUMBER.search(normalise(text)))


def is_hostile(text: str) -> bool:
    """Whether the text instructs the system (forged roles, "ignore previous instructions", "set all to 100").

    Such a turn is not evidence about the company: the semantic extractor proposes nothing for it.
    """
    return bool(_HOSTILE.search(normalise(text)))


def word_count(text: str) -> int:
    return len(tokens(text))


# Maturity markers: how people say "we don't / by hand" (low), "some, partly, a pilot" (mid) and
# "every, automated, owned, monitored" (high) whatever the topic.  Counted per band; learnt weights
# in the band classifier decide what they are worth (trained on the dev split).
_LOW_MARKERS: Final = re.compile(
    r"\b(?:nobody|no one|nothing|none|never|manual(?:ly)?|by hand|excel|spreadsheets?|paper|whiteboard|ad hoc|"
    r"chaos|mess|guess(?:work)?|gut|fad|don't|doesn't|didn't|can't|won't|haven't|hasn't|isn't|aren't|no|not|zero|"
    r"lost|broken|old|outdated|out of date|nightmare|hope|luck|email(?:ed)?|phone|post-its?|printed|"
    r"in (?:his|her|their|my) head|tribal)\b"
)
_MID_MARKERS: Final = re.compile(
    r"\b(?:some|partly|partially|half|a few|started|starting|pilot|trial|tested|one|two|depends|mostly|sometimes|"
    r"usually|mixed|patchy|in places|kind of|sort of|basic|working on|planned|plan|next year|but|though|although|"
    r"except|only|most|couple|occasionally|limited)\b"
)
_HIGH_MARKERS: Final = re.compile(
    r"\b(?:every|all|automated|automatic(?:ally)?|daily|real[- ]time|fully|standard(?:ised|ized)?|certified|policy|"
    r"dedicated|team of|years|always|proper|governed|monitored|owner|owns|single source|warehouse|platform|api|"
    r"nightly|hourly|live|streams?|integrated|signed|budget|board|ceo|funded|trained|documented|versioned|"
    r"pipeline|we do|yes)\b"
)


def maturity_markers(text: str) -> tuple[float, float, float, float, float, float]:
    """Low / mid / high maturity markers: their shares of all markers, then their counts (capped at 4, over 4)."""
    said = normalise(text)
    low, mid, high = len(_LOW_MARKERS.findall(said)), len(_MID_MARKERS.findall(said)), len(_HIGH_MARKERS.findall(said))
    total = low + mid + high + 1
    return (low / total, mid / total, high / total, min(low, 4) / 4, min(mid, 4) / 4, min(high, 4) / 4)


_SMALL_TALK: Final = re.compile(
    r"\b(?:lunch|coffee|tea|break|meeting|call|later|tomorrow|next week|monday|friday|weekend|holiday|recorded|"
    r"recording|how long (?:will|does) this|who (?:are|is) you|are you (?:a|an) (?:bot|ai|robot|human)|sorry|"
    r"hang on|one sec(?:ond)?|brb|pick this up|continue|reschedule|thanks|thank you|cheers|hello|hi|hey|"
    r"good (?:morning|afternoon)|what do you mean|example|repeat|rephrase|skip|pass|next question|let me think|"
    r"come back|minutes?|right person|confidential|summary|afterwards|article|stand for|by email|interesting)\b"
)
_INTERROGATIVE: Final = re.compile(
    r"^(?:sorry,?\s*)?(?:can|could|would|will|what|whats|what's|is|are|do|does|how|why|who|where|when|should|may)\b"
)


def asks_back(text: str) -> bool:
    """Whether the turn is a question back to the interviewer ("What do you mean by…?", "Is this recorded?")."""
    said = normalise(text)
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", said) if s.strip()]
    return bool(sentences) and sentences[-1].endswith("?") and any(_INTERROGATIVE.match(s) for s in sentences)


def small_talk_count(text: str) -> int:
    """Markers of small talk and logistics ("can we continue after lunch", "is this recorded")."""
    return len(_SMALL_TALK.findall(normalise(text)))
