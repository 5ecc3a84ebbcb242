"""What a careful listener would not take as evidence about this organisation today.

``screen_turn`` is the one place that decides, whatever extractor reads the turn next (the pipeline calls
it before extraction, the semantic extractor's ``is_evidence`` calls it too): a turn is refused, with a
kind and a readable reason, when it

* instructs the system rather than answers (``hostile``: ``signals.is_hostile``);
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

Pure functions of the text; no model, no network.
"""

from __future__ import annotations

import re
from typing import Final

from factor_journal.documents import ScreenedTurn, ScreenKind
from factor_journal.extraction import signals

# Pieces of a turn: sentences, then clauses at commas, dashes and joining words.  A fragment of fewer than
# three words ("Honestly", "Not sure") is judged with the rest of the turn, never alone.
_FRAGMENT_BREAK: Final = re.compile(
    r"[.;!?:()]+\s*|,\s*|\s+[-\u2013\u2014]+\s+|\s+\b(?:but|though|although|however|whereas|and|plus|because)\b\s+"
)
MIN_FRAGMENT_WORDS: Final = 3

_WE: Final = re.compile(
    r"\b(?:we|we're|we've|we'd|we'll|us|our|ours|ourselves|here|this (?:company|firm|place|business|site|plant))\b"
)
_PRESENT: Final = re.compile(
    r"\b(?:here|now|today|nowadays|currently|these days|at the moment|at present|right now|so far|this (?:company"
    r"|firm|place|business)|still|already|not yet|yet)\b|\bwe(?:'re| are|'ve| have| do| don't| use| run| keep| get"
    r"| can't| cannot| can| need| rely| only| just| also| never| always| hardly| still| haven't| aren't)\b"
)

# Asking to pause, stop or move on ----------------------------------------------------------------------
_PAUSE: Final = re.compile(
    r"\b(?:can|could|shall|may|might) (?:we|i) (?:please |maybe |perhaps |just )?(?:take (?:a|five|ten|a short"
    r"|a quick) ?(?:break|breather|pause|minutes?)?|pause|stop(?: here| there| for)?|break (?:off|here|for)"
    r"|finish (?:this|later|another)|carry on (?:later|tomorrow|another)|pick (?:this|it|that) up|come back to"
    r"|move on|talk about something else|change (?:the )?(?:subject|topic)|skip|leave (?:it|this|that)"
    r"|do (?:this|the rest) (?:later|another|tomorrow|next)|continue (?:later|tomorrow|another|next)"
    r"|go on to|switch)\b"
    r"|\blet'?s (?:just )?(?:move on|skip|stop|pause|take a (?:break|breather)|park (?:this|that|it)"
    r"|change (?:the )?(?:subject|topic)|talk about something else|leave (?:it|this|that)|call it a day|wrap (?:up"
    r"|this up)|continue (?:later|tomorrow|another)|go on to|get on to|talk about)\b"
    r"|\b(?:i )?(?:need|want) (?:a|to take a|to have a) (?:quick |short )?(?:break|minute|moment|pause|breather)\b"
    r"|\b(?:i'?d|i would) (?:much )?(?:rather|prefer(?: to)?) (?:not (?:talk|go|get) (?:about|into)|talk about"
    r"|move on|stop|skip|change the subject|leave (?:it|this|that)|come back|do this|continue|talk to you)"
    r"|\b(?:another|different|next|new) (?:topic|subject|question)\b|\bchange (?:the |of )?(?:subject|topic)\b"
    r"|\benough (?:about|of) (?:this|that|\w+)\b|\b(?:i'?ve|i have) (?:got|had) to (?:go|run|jump|dash|leave)\b"
    r"|\b(?:i )?(?:have|need|got) to (?:go|run|jump (?:off|on|onto|into)|dash|leave|hop (?:off|on|onto)|take (?:this"
    r"|a|another) call|head off|step out|drop off)\b"
    r"|\bhold that thought\b|\b(?:park|table|shelve) (?:this|that|it) (?:for now|for later|for today)\b"
    r"|\b(?:not now|maybe later|some other time|another time|another day)\b|\bpause (?:here|this|the|for)\b"
    r"|\bback in (?:a |five |ten |two |\d+ )?(?:sec|min|minute|moment|bit)|\bbe right back\b|\bbrb\b"
    r"|\b(?:stop|pause) (?:the|this) (?:interview|conversation|chat|session|questionnaire)\b"
    r"|\b(?:can|could) we (?:not|skip)\b|\bmove on,? please\b|\bnext one,? please\b|\bcontinue tomorrow\b"
    r"|^(?:please )?skip\b|^next(?:\W*$|,? please| one| question)"
    r"|\bskip (?:that|this|the) (?:one|question|bit|part)\b"
)

# Not knowing, handing the question on, too new to tell -------------------------------------------------
# Not knowing, said alone, is often the answer ("Do you know what the scanners saved?" "Not a clue."): it is left to
# the reader unless the speaker also hands the question on or says they are too new to tell.
_NOT_KNOWING: Final = re.compile(
    r"\b(?:i (?:really |honestly |genuinely |just |simply )?(?:don't|do not|dont) know|i wouldn't know"
    r"|i (?:have|had) no idea|no idea|not a clue|no clue|haven't (?:a|the (?:faintest|foggiest|slightest))"
    r"|couldn't (?:tell you|say|answer)(?! (?:i|we|that|it|they)\b)|can't (?:tell you|say|answer (?:that|this))"
    r"(?! (?:i|we|that|it|they)\b)|cannot (?:tell you|say)(?! (?:i|we|that|it|they)\b)|i(?:'m| am) not (?:sure"
    r"|certain)|i'?d (?:only )?be guessing|(?:would|could) only guess|your guess is as good as mine|beats me)\b"
)
_DEFERRAL: Final = re.compile(
    r"\b(?:i(?:'m| am) not (?:the (?:right|best) (?:person|one)|in a position)"
    r"|i(?:'m| am) (?:the )?wrong (?:person|one)|above my pay ?grade|beyond my (?:remit|area)"
    r"|not (?:something|a thing|an area|a topic) i (?:deal with|know (?:much )?about|see|handle|cover|touch"
    r"|look after)|not my (?:area|department|side|team|call|patch|field|remit|job|world|thing)"
    r"|you(?:'d| would)? (?:have|need|want) to ask|(?:better|best) (?:to )?ask|worth asking|try asking"
    r"|\w+ (?:in|from|over in|at) (?:the )?\w+ (?:would|will|might|should|could|'d|'ll) know"
    r"|^(?:just |maybe |perhaps )?(?:ask|try|check with|speak to|talk to) (?:\w+ ){1,2}(?:in|from|at|over in|on)"
    r" (?:the )?\w+$"
    r"|(?:he|she|they|someone|somebody)(?:'d| would| will|'ll| might| should) (?:\w+ )?know"
    r"|(?:our|the|my) (?:\w+ ){1,2}(?:would|will|'d|'ll|might|should) (?:\w+ )?know\b"
    r"|(?:he|she|they|\w+)(?:'s| is| are) the (?:one|person|people|expert|experts) (?:to ask|for that|who knows?)"
    r"|i(?:'ve| have)? only (?:just )?(?:joined|started|arrived|been (?:here|with)|come)"
    r"|i(?:'ve| have)? (?:just|recently) (?:joined|started|arrived|come)"
    r"|i(?:'m| am) (?:very |fairly |quite |brand |still |pretty )?new(?: here| to| in| at|$)"
    r"|(?:my|the) (?:first|second|third) (?:day|week|month)\b|before my time|(?:still )?(?:finding my feet"
    r"|learning the ropes|getting to know (?:the|how))|new (?:starter|joiner|hire|in the job)"
    r"|(?:i'll|let me|i will|i'd have to|i need to|i'd need to) (?:find out|check|look (?:it|that) up|ask|get back"
    r"|come back|double-?check)|(?:get|come) back to you|pass (?:that|this|it) on to|forward (?:that|this|it) to"
    r"|no comment|not for me to say|can't speak (?:to|for)|couldn't speak (?:to|for))\b"
)

# A question to the interviewer, not about the company --------------------------------------------------
_ASKS_BACK: Final = re.compile(
    r"\b(?:what|how|why|which|where|who) (?:would|do|did|should|could|will|can) you\b|\bwhy (?:do|are|would) you"
    r" (?:ask|want|need)|\bwhat(?:'s| is) the (?:point|purpose|reason|idea) (?:of|behind)\b"
    r"|\b(?:is|isn't) (?:that|this|it) (?:normal|typical|usual|common|bad|good|okay|ok|unusual|a problem)\b"
    r"|\bhow do (?:other|most|similar|the other) (?:companies|firms|businesses|people|organi[sz]ations)\b"
    r"|\bwhat do (?:other|most|similar) (?:companies|firms|businesses|people)\b"
    r"|\b(?:do|did|can|could|would|will|are|have) you (?:think|recommend|suggest|mean|know|have|see|need|want"
    r"|advise|agree|reckon)\b|\b(?:can|could|would) you (?:tell|explain|give|show|send|share|clarify)\b"
    r"|\bwhat does (?:that|this|it|\w+) (?:mean|involve|include|cover)\b|\bwho (?:sees|reads|gets) (?:this|the)\b"
    r"|\bhow (?:many|much) (?:more|longer)\b|\bhow long (?:is|will|does) (?:this|it|the)\b|\bmeaning what\b"
    r"|\b(?:is|will) (?:this|it|the (?:call|interview|chat)) (?:being |be )?(?:recorded|shared|stored|anonymous)\b"
    r"|\b(?:will|do|can|could|may) i (?:get|see|ask|send|have|turn|keep)\b[^.!?]*\?"
)

# Another organisation as the subject -------------------------------------------------------------------
_FAMILY: Final = signals._FAMILY + r"|mate|pal|flatmate|godfather|godmother|nephew|niece|grandad|gran|grandma|grandpa"
_ORG_NOUN: Final = (
    r"(?:firm|company|business|shop|bakery|garage|practice|farm|factory|plant|restaurant|caf[eé]|pub|store"
    r"|agency|startup|start-up|office|workshop|salon|brewery|clinic|bank|employer|place|outfit|lot|mob|crowd)"
)
_OTHER_ORG: Final = re.compile(
    # family and friends and what they run or work for
    rf"\bmy (?:{_FAMILY})(?:s|-in-law|-in-laws)?(?:'s)?\b"
    r"|\ba (?:friend|mate|pal|neighbou?r|cousin|relative)(?: of mine)?\b"
    r"|\b(?:someone|somebody|a (?:guy|bloke|woman|man|lady|chap|contact|colleague|former colleague)) (?:i|we) know\b"
    r"|\ban? (?:old|former|ex-?)\s?colleague\b|\bpeople i know\b"
    # the neighbours
    r"|\b(?:the|a|that) (?:\w+ ){0,2}?\w+ (?:next door|down the (?:road|street|hall|corridor)|across the (?:road"
    r"|street|yard|way|car park)|opposite|round the corner|on (?:the|our) (?:same )?(?:estate|street|park|road))"
    r"|\bour neighbou?rs?\b|\bthe (?:people|lot|folks|guys) (?:next door|across the (?:road|street)|down the road)"
    # a former employer
    r"|\b(?:at|in) my (?:old|previous|last|former|first|past) (?:job|company|employer|firm|place|work|workplace|role"
    r"|position|team|life)\b|\bmy (?:old|previous|last|former|ex-?) ?(?:job|company|employer|firm|boss|place|team"
    r"|workplace|manager)\b|\bwhere i (?:used to|previously|once) work(?:ed)?\b|\bwhen i (?:was|worked) (?:at|with|for"
    r"|in)\b"
    r"|\bi (?:used to|previously|once) work(?:ed)? (?:at|for|in|with)\b|\bback when i was at\b"
    r"|\bthe (?:\w+ ){0,2}i (?:used to|previously) work(?:ed)? (?:at|for)\b|\b(?:my|the) last (?:\w+ )?i worked (?:at"
    r"|for)\b|\bwhere i (?:trained|was before|came from|worked before)\b|\bbefore (?:this job|i came here)\b"
    # suppliers, customers, partners and competitors as the subject of what is said
    r"|\b(?:our|one of our|a|an|the|some|two of our|a few of our|most of our|that|this) (?:(?:main|biggest"
    r"|largest|key|big|local|new|old|only|preferred|favourite|nearest|closest|main|direct|bigger|larger|regional"
    r"|parent|sister|logistics|packaging|steel|software|IT|it|raw material|fruit|feed|fabric) )?(?:suppliers?|vendors?"
    r"|customers?|clients?|competitors?|rivals?|competition|distributors?|wholesalers?|hauliers?"
    r"|contractors?|subcontractors?|franchisees?|parent company|sister company|group headquarters|head office"
    r"|printer|accountants?)(?:'s|s')?(?= (?:(?:\w+ly|just|also|all|both) )?(?:has|have|had|is|are|was|were|uses?"
    r"|used|runs?|ran|does|did|do|keeps?|kept|built|bought|got|went|switched|moved|spent|introduced|installed|employs?"
    r"|hired|own|owns|rolled|launched|set up|sets up|just)\b)"
    r"|\b(?:another|a different|some other|other) (?:company|firm|business|organi[sz]ation|client|customer|site of"
    r" theirs)\b"
)
# A competitor or customer pushing the company toward AI, or winning business with it: competitive_pressure
_PRESSURE: Final = re.compile(
    r"\b(?:ai|a\.i\.|artificial intelligence|machine learning|chat ?bots?|chatgpt|copilot|genai|automat\w*"
    r"|predict\w*|algorithms?|smart|digital\w*|pushing|push us|asking (?:us|for)|asked (?:us|for)|ask (?:us|for)"
    r"|demand\w*|requir\w*|expect\w*|tenders?|contracts?|win(?:s|ning)?|won|los(?:e|t|ing)|beat\w*|ahead|behind"
    r"|pressure|undercut\w*|market share|price war)\b"
)

_MARKET: Final = re.compile(r"\b(?:competitors?|rivals?|competition|customers?|clients?)\b")

# Wishes, what-ifs and plans that say nothing about today -----------------------------------------------
_HYPOTHETICAL: Final = re.compile(
    r"\b(?:i|we)(?:'d| would) (?:really |dearly |so |very much |quite |just |eventually |probably |also )?(?:love"
    r"|like|want|prefer|hope|be keen|be interested|be happy|be open|wish|go for|start with|try|look at|pick|choose"
    r"|begin|start)\b|\bit(?:'d| would) be (?:so |really |very |quite |pretty |absolutely )?(?:great|nice|lovely"
    r"|amazing|brilliant|fantastic|good|cool|interesting|fun|a dream|a game[- ]changer|helpful|useful|ideal"
    r"|handy|wonderful|exciting)\b|\bwouldn't it be\b|\bdream(?:ing)? (?:of|about|would be|is)\b|\bin an ideal"
    r" world\b|\bin a perfect world\b|\bideally\b|\bhypothetically\b|\bin theory\b|^(?:just )?imagine\b"
    r"|\bimagine (?:if|that|we|having|a world)\b|\bwhat if\b|^suppos(?:e|ing)\b"
    r"|\bif (?:only|money were no|budget were no|we ever|i ever|one day|someday)\b"
    r"|\b(?:i|we)(?:'re| are|'m| am) (?:\w+ )?(?:planning|hoping|aiming|intending|thinking (?:about|of)|considering"
    r"|looking (?:at|into)|toying with|keen|going)(?: to| on| of)?\b"
    r"|\b(?:i|we) (?:plan|hope|intend|aim|want|mean|wish|would like|might|may) to\b"
    r"|\bthe (?:plan|idea|goal|hope|dream|ambition|intention|aim|wish) (?:is|would be|was)\b(?! to (?:wait|do nothing"
    r"|see|keep|carry on|stay|ignore|sit))"
    r"|\b(?:we|i)(?:'ll| will| shall) (?:probably |maybe |perhaps |eventually |definitely |hopefully |likely )?(?:look"
    r"|start|try|think|consider|build|hire|move|roll|launch|invest|begin|bring|buy|explore|test|pilot|want|get round)\b"
)
# Words that state how things are now: a turn with one of these is never refused as merely hypothetical
_TODAY: Final = re.compile(
    r"\b(?:not yet|nothing yet|none yet|so far|currently|at the moment|at present|right now|for now|today|these days"
    r"|nowadays|still|already|as it stands|as things stand|at this point|until now|to date|up to now)\b"
    r"|^\W*(?:no|nope|nah|none|nothing|never|yes|yeah|yep|we do|we have)\b"
    r"|\b(?:we|i) (?:have|has|use|run|keep|do|don't|can't|cannot|haven't|lack|rely|struggle|spend|get|need|only"
    r"|never|always|hardly|barely)\b|\b(?:we've|we're|there's|there are|there is)\b"
)

# Fragments that say nothing either way (apologies, hedges, thanks, how the speaker feels)
_NEUTRAL: Final = re.compile(
    r"^(?:(?:sorry|honestly|to be (?:honest|fair|frank)|frankly|truthfully|look|well|so|oh|um|uh|er|hmm|ok|okay"
    r"|right|yeah|yes|no|i mean|you know|good question|great question|fair question|tricky one|tough one"
    r"|hard to say|difficult to say|thanks|thank you|cheers|please|i'm afraid|afraid not|i guess|i suppose"
    r"|i think|i reckon|i'm sorry|apologies|my apologies|forgive me|bear with me|long day|it's been a long day"
    r"|i'm (?:tired|knackered|exhausted|shattered|swamped|buried|slammed)|i'm in a rush|in a hurry"
    r"|that's a (?:good|great|fair|big|tricky|tough|hard) (?:one|question)|for what it's worth|if that helps"
    r"|if that makes sense|does that make sense|sorry about that|no offence|with respect|to be clear|anyway"
    r"|(?:let|give|bear with|excuse) me\b.*|hang on\b.*|hold on\b.*|one (?:sec|second|moment|minute)\b.*"
    r"|sorry to be (?:a pain|difficult|vague|unhelpful)|not sure|not really sure|who knows|no idea|dunno)\W*)+$"
)


def _fragments(text: str) -> list[str]:
    said = signals.normalise(text)
    return [f.strip() for f in _FRAGMENT_BREAK.split(said) if f and f.strip()]


def _words(fragment: str) -> int:
    return len(signals.tokens(fragment))


def _quoted(match: re.Match[str] | None, fallback: str = "") -> str:
    return f"\u201c{match.group(0).strip()}\u201d" if match else fallback


_PERSONAL_FRAME: Final = re.compile(
    rf"\bmy (?:{_FAMILY})|\b(?:a|an) (?:friend|mate|pal|neighbou?r|cousin|relative|old|former|ex)|someone|somebody"
    r"|\bpeople i know|neighbou?r|next door|down the|across the|opposite|round the corner|on (?:the|our)|my (?:old"
    r"|previous|last|former|first|past|ex)|used to work|previously work|when i (?:was|worked)|back when|where i"
    r"|before (?:this|i came)|\b(?:a|an|that|this) (?:\w+ )?(?:guy|bloke|woman|man|lady|chap|contact|colleague)"
)
_THIRD_PERSON: Final = re.compile(r"\b(?:they|they're|they've|their|theirs|them|he|he's|his|him|she|she's|her|there)\b")
_THEY_TO_US: Final = re.compile(r"^(?:they|he|she)\b(?!.*\b(?:we|we're|we've|our|ours|here)\b)")
# The speaker runs the family business ("My brother and I run the shop"): the family is us
_FAMILY_BUSINESS: Final = re.compile(
    rf"\bmy (?:{_FAMILY})(?:s|-in-law)? and i\b|\bi and my\b|\b(?:with|alongside) my (?:{_FAMILY})"
    r"|\b(?:family|family-run|family-owned) (?:business|firm|company)\b"
)
_HEDGE_OPENING: Final = re.compile(
    r"^(?:(?:i think|i guess|i suppose|i believe|i reckon|i'd say|i know|apparently|i hear|i heard|i'm told"
    r"|as far as i know|from what i (?:see|know|hear|can tell)|i'm pretty sure|i'm fairly sure)\W*)+"
)
_FORMER: Final = re.compile(
    r"my (?:old|previous|last|former|first|past|ex)|used to work|previously work|when i (?:was|worked)|before (?:this"
    r"|i came)|back when|where i"
)


def _frame(fragment: str) -> re.Match[str] | None:
    """Another organisation as what the fragment is about: named in its first words ("My cousin runs a bakery",
    "At my last job…", "Our main supplier runs…"), not in passing ("keyed in by my sister", "the supplier's
    portal")."""
    match = _OTHER_ORG.search(fragment)
    if match is None or len(signals.tokens(fragment[: match.start()])) > 1:
        return None
    return match


def _about_us_now(fragment: str, frame: re.Match[str] | None, after: re.Match[str] | None, former: bool) -> bool:
    """Whether a fragment with no screening pattern in it states something about this organisation now.

    ``frame``: another organisation named at the fragment's start; ``after``: the first such frame of an earlier
    fragment (a later fragment may go on about it: "They do everything on paper"); ``former``: the turn tells of a
    former employer (whose "we had…" is not us)."""
    if frame is not None:
        own = _OTHER_ORG.sub(" ", fragment)  # "our main supplier runs SAP": the "our" belongs to the supplier
        if _PRESSURE.search(fragment) and _MARKET.search(fragment):
            return True  # competitors or customers pushing toward AI, or winning business: competitive pressure
        if not _WE.search(own):
            return False
        return not former or bool(_PRESENT.search(own))
    if after is not None and _THEY_TO_US.match(fragment):
        return False  # "They showed us their dashboards": what the other organisation did
    if _WE.search(fragment):
        if former and not _PRESENT.search(fragment):
            return False  # "we had a proper warehouse" in a story about a former employer
        return not _HYPOTHETICAL.search(fragment) or bool(_TODAY.search(_HYPOTHETICAL.sub(" ", fragment)))
    if after is not None and (_PERSONAL_FRAME.search(after.group(0)) or _THIRD_PERSON.search(fragment)):
        return False  # "They do everything on paper" after "My cousin runs a bakery": still the cousin's
    if _words(fragment) < MIN_FRAGMENT_WORDS or _NEUTRAL.match(fragment):
        return False
    plain = _HEDGE_OPENING.sub("", fragment)
    if re.match(r"^(?:i|i'm|i've|i'd|i'll|my|me|you|you're|your)\b", plain) and not _TODAY.search(
        re.sub(r"^(?:i|you)\b", " ", plain)
    ):
        return False  # about the speaker or the interviewer, not the company
    return not _HYPOTHETICAL.search(fragment) or bool(_TODAY.search(_HYPOTHETICAL.sub(" ", fragment)))


def screen_turn(answer: str) -> ScreenedTurn | None:
    """Why the turn is no evidence about this organisation today, or None when it may be evidence.

    Pure.  Hostile text is refused whatever else it says; every other kind only when no fragment of the turn
    states something about this organisation now (see the module doc).  The reason quotes the words that
    decided it.
    """
    if not answer.strip():
        return ScreenedTurn(kind=ScreenKind.small_talk, reason="no update: the turn is empty")
    said = signals.normalise(answer)
    if signals.is_hostile(answer):
        return ScreenedTurn(kind=ScreenKind.hostile, reason=f"no update: {_WHY[ScreenKind.hostile]}")
    older = _older_rules(answer, said)
    if older is not None:
        return older

    fragments = _fragments(answer)
    frames = [_frame(f) for f in fragments]
    if _FAMILY_BUSINESS.search(said):
        frames = [None if f is not None and f.group(0).startswith("my ") else f for f in frames]
    former = any(f is not None and _FORMER.search(f.group(0)) for f in frames)
    found: dict[ScreenKind, re.Match[str]] = {}
    first: re.Match[str] | None = None
    for fragment, frame in zip(fragments, frames, strict=True):
        matched = False
        for kind, pattern in (
            (ScreenKind.pause, _PAUSE),
            (ScreenKind.deferral, _DEFERRAL),
            (ScreenKind.question_back, _ASKS_BACK),
        ):
            match = pattern.search(fragment)
            rest = pattern.sub(" ", fragment)
            if match and not (_WE.search(rest) and (kind == ScreenKind.question_back or _TODAY.search(rest))):
                found.setdefault(kind, match)
                matched = True
                break
        if matched:
            continue
        if _NOT_KNOWING.search(fragment) and not (
            _WE.search(rest := _NOT_KNOWING.sub(" ", fragment)) and _TODAY.search(rest)
        ):
            continue  # said alone it may be the answer; with a hand-off it is a deferral
        if _about_us_now(fragment, frame, first, former):
            return None  # the turn says something about this organisation now: let the reader judge it
        if frame is not None:
            found.setdefault(ScreenKind.other_organisation, frame)
            first = first or frame
        elif (hypothetical := _HYPOTHETICAL.search(fragment)) is not None:
            found.setdefault(ScreenKind.hypothetical, hypothetical)
    if ScreenKind.hypothetical in found and _TODAY.search(_HYPOTHETICAL.sub(" ", said)) and len(found) == 1:
        return None  # a plan beside a word about today ("not yet; it's on the list for next year")
    for kind in _ORDER:
        if kind in found:
            return _refused(kind, found[kind])
    return None


_ORDER: Final = (
    ScreenKind.pause, ScreenKind.other_organisation, ScreenKind.deferral, ScreenKind.question_back,
    ScreenKind.hypothetical,
)  # fmt: skip
_WHY: Final = {
    ScreenKind.pause: "the turn asks to pause or change the subject",
    ScreenKind.other_organisation: "the turn is about another organisation, not this one",
    ScreenKind.deferral: "the speaker does not know or hands the question on",
    ScreenKind.question_back: "the turn asks the interviewer something back",
    ScreenKind.hypothetical: "a wish, a what-if or a plan that says nothing about today",
    ScreenKind.small_talk: "small talk that says nothing about the company",
    ScreenKind.hostile: "the turn instructs the system rather than answers",
}


def _refused(kind: ScreenKind, match: re.Match[str] | None) -> ScreenedTurn:
    return ScreenedTurn(kind=kind, reason=f"no update: {_WHY[kind]}" + (f" ({_quoted(match)})" if match else ""))


def _older_rules(answer: str, said: str) -> ScreenedTurn | None:
    """The whole-turn rules ``signals`` had before this module (filler, a question back, a short deferral, hearsay),
    each given its kind."""
    if signals.is_filler(answer):
        return ScreenedTurn(kind=ScreenKind.small_talk, reason=f"no update: {_WHY[ScreenKind.small_talk]}")
    if signals.is_question_only(answer):
        return ScreenedTurn(kind=ScreenKind.question_back, reason=f"no update: {_WHY[ScreenKind.question_back]}")
    if signals.is_deferral(answer):
        pause = _PAUSE.search(said)
        kind = ScreenKind.pause if pause else ScreenKind.deferral
        if not pause and (asked := signals._INTERROGATIVE.match(said)) is not None and said.endswith("?"):
            kind = ScreenKind.question_back
            return ScreenedTurn(kind=kind, reason=f"no update: {_WHY[kind]} ({_quoted(asked)})")
        return _refused(kind, pause or signals._DEFERRAL.search(said))
    if signals.is_hearsay(answer) and not _FAMILY_BUSINESS.search(said):
        frame = _OTHER_ORG.search(said)
        kind = ScreenKind.other_organisation if frame else ScreenKind.small_talk
        return _refused(kind, frame or signals._HEARSAY.search(said))
    return None
