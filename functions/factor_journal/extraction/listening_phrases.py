"""The phrases a careful listener hears in a turn, as tables of regular expressions over normalised text
(``signals.normalise``): asking to pause, not knowing and handing the question on, asking back, another
organisation as the subject, wishes and plans, words about today, and the small words around them.

``listening`` decides with them (``screen_turn``); they decide nothing by themselves.  Data, not logic: what a
pattern matches is shown in the comment above it, and ``tests/factor_journal/extraction/test_listening.py`` holds
what the screen makes of them.
"""

from __future__ import annotations

import re
from typing import Final

from factor_journal.extraction import signals

# Pieces of a turn: sentences, then clauses at commas, dashes and joining words.  A fragment of fewer than
# three words ("Honestly", "Not sure") is judged with the rest of the turn, never alone.
FRAGMENT_BREAK: Final = re.compile(
    r"[.;!?:()]+\s*|,\s*|\s+[-\u2013\u2014]+\s+|\s+\b(?:but|though|although|however|whereas|and|plus|because)\b\s+"
)

WE: Final = re.compile(
    r"\b(?:we|we're|we've|we'd|we'll|us|our|ours|ourselves|here|this (?:company|firm|place|business|site|plant))\b"
)
PRESENT: Final = re.compile(
    r"\b(?:here|now|today|nowadays|currently|these days|at the moment|at present|right now|so far|this (?:company"
    r"|firm|place|business)|still|already|not yet|yet)\b|\bwe(?:'re| are|'ve| have| do| don't| use| run| keep| get"
    r"| can't| cannot| can| need| rely| only| just| also| never| always| hardly| still| haven't| aren't)\b"
)

# Asking to pause, stop or move on ----------------------------------------------------------------------
PAUSE: Final = re.compile(
    r"\b(?:(?:can|could|shall|may) (?:we|i) (?:please |maybe |just )?park|park (?:this|that|it)(?: one)?(?: for)?"
    r"|let'?s leave (?:\w+ ){1,2}(?:for|till|until) (?:another|later|next|tomorrow)|for another (?:day|time)"
    r"|(?:i |we )?(?:need|have|want|got|ought) to (?:stop|pause|break off|finish|wrap (?:up|this up))"
    r"|^pause\b|\bpause (?:there|here)|call it a day|give me (?:a|one|two|five|ten|\d+|a few|a couple of)"
    r" (?:sec|secs|second|seconds|min|mins|minute|minutes|moment|moments)\b)"
    r"|\b(?:can|could|shall|may|might) (?:we|i) (?:please |maybe |perhaps |just )?(?:take (?:a|five|ten|a short"
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
    r"|^(?:please )?skip\b|^next(?:,? please| one\b| question\b)"
    r"|\bskip (?:that|this|the) (?:one|question|bit|part)\b"
    # time asked for, or the talk put off: "back in 5", "talk tomorrow?", "I'll reconnect in a bit"
    r"|\b(?:can|could|shall|may) we (?:talk about|do|go to|look at|cover|start with) (?:[\w']+ ){1,4}instead\b"
    r"|\bpausing\b|\bback in (?:a|one|two|five|ten|\d{1,2})\b|\b(?:stop|break|leave it) for (?:now|today)\b"
    r"|\b(?:talk|speak|chat|continue|carry on|catch up|finish) (?:tomorrow|later|next week|after|on \w+day)\b"
    r"|\bsame time (?:next|tomorrow)\b|\bcut (?:this|it) short\b|\bsave where we (?:are|got to)\b"
    r"|\b(?:i'll|i will|let me|can i|could i) (?:reconnect|log (?:back )?(?:in|on)|rejoin|call (?:you )?back|come back"
    r"|be back|jump back|pick (?:this|it) up)\b|\b(?:jump|skip|go|move|get) (?:ahead |on )?to the next (?:section|part"
    r"|question|topic|bit|one)\b|^(?:just )?(?:a|one) (?:moment|minute|min|sec|second)\b"
    r"|\bgive me (?:a (?:few|couple of) |a |some |\w+ )?(?:sec|secs|second|seconds|min|mins|minute|minutes"
    r"|moment|moments"
    r"|tick|mo)\b"
)
# Words about the company's data, systems, people or ways of working: a request to pause or a hand-off followed
# by these says something after all ("Give me a sec. The tills upload every sale nightly.")
WORK_WORDS: Final = re.compile(
    r"\b(?:data|system|systems|spreadsheets?|excel|sheets?|reports?|reporting|software|apps?|erp|crm|databases?"
    r"|servers?|cloud|dashboards?|records?|files?|invoices?|stock|tools?|models?|ai|machines?|sensors?|scann\w*"
    r"|logs?|logged|track\w*|paper|emails?|portal|process\w*|staff|train\w*|orders?|figures|numbers|budget"
    r"|automat\w*|manual\w*|by hand|typed|keyed|entered|upload\w*|export\w*|sync\w*|tills?|website|online"
    r"|digital|computers?|laptops?|backups?|passwords?|access|security|analytics|forecast\w*|written|write"
    r"|document\w*|recorded|notes?"
    r"|procedures?|recipes?|checklists?|forms?|rules?|polic(?:y|ies)|quality|customers?|suppliers?)\b"
)

# Not knowing, handing the question on, too new to tell -------------------------------------------------
# Not knowing, said alone, is often the answer ("Do you know what the scanners saved?" "Not a clue."): it is left to
# the reader unless the speaker also hands the question on or says they are too new to tell.
NOT_KNOWING: Final = re.compile(
    r"\b(?:i (?:really |honestly |genuinely |just |simply )?(?:don't|do not|dont) know|i wouldn't know"
    r"|i (?:have|had) no idea|no idea|not a clue|no clue|haven't (?:a|the (?:faintest|foggiest|slightest))"
    r"|couldn't (?:tell you|say|answer)(?! (?:i|we|that|it|they)\b)|can't (?:tell you|say|answer (?:that|this))"
    r"(?! (?:i|we|that|it|they)\b)|cannot (?:tell you|say)(?! (?:i|we|that|it|they)\b)|i(?:'m| am) not (?:sure"
    r"|certain)|i'?d (?:only )?be guessing|(?:would|could) only guess|your guess is as good as mine|beats me)\b"
)
UNSURE: Final = re.compile(r"\b(?:dunno|not (?:really |too |that |entirely )?(?:sure|certain))\b")  # with NOT_KNOWING
# A bare hand-off to someone, as a whole fragment ("ask Sam", "check with the accountant", "Sam would know", "Karen
# knows all that"): a deferral only beside not knowing ("I don't know, ask Sam"); alone it may be the answer ("Who
# can fix the macros?" "Ask Heike."), and "nobody knows" / "only Sam knows" say how things are here.
NAMED_HAND_OFF: Final = re.compile(
    r"^(?:just |maybe |perhaps |probably |best )?(?:ask|check with|speak to|talk to) (?!for\b|about\b|if\b|whether\b)"
    r"\w+(?: \w+){0,2}$"
    r"|^(?!(?:only|nobody|no one|everyone|everybody|anyone|anybody)\b)(?:\w+ ){0,2}\w+(?:'d| would| will|'ll| might"
    r"| should| could) (?:\w+ )?know$"
    r"|^(?!(?:only|nobody|no one|everyone|everybody|anyone|anybody)\b)\w+(?: \w+)? knows?(?: all| more| best)?"
    r"(?: about)?(?: (?:that|this|those|it|them))?(?: stuff)?$"
)
DEFERRAL: Final = re.compile(
    r"\b(?:you(?:'d| would) (?:really |probably |honestly |best |better )?(?:want|need) (?:to (?:ask|speak to|talk to"
    r"|check with) )?(?:our|the|my) \w+|(?:that|this)(?:'s| is) (?:\w+'s|my \w+'s|our \w+'s) (?:territory|area"
    r"|department|domain|job|call|thing|baby|remit|patch|side|field)|still (?:learning|working out|figuring out)"
    r"|i(?:'m| am) not (?:the (?:right|best) (?:person|one)|in a position)"
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
    r"|i(?:'ve| have)? only been (?:here|with|in|at|on)\b|(?:days?|weeks?|months?|a fortnight) into (?:the|my|this)"
    r" (?:role|job|post|position)|i(?:'ve| have) been here (?:for )?(?:only )?(?:a|one|two|three|\d+|a few|a couple"
    r" of) (?:days|weeks|fortnight)"
    r"|i(?:'m| am) (?:very |fairly |quite |brand |still |pretty )?new(?: here| to| in| at|$)"
    r"|my (?:first|second|third) (?:day|week|month)\b|before my time|(?:still )?(?:finding my feet"
    r"|learning the ropes|getting to know (?:the|how))|i(?:'m| am) (?:a |the )?new (?:starter|joiner|hire|one)"
    r"|(?:i'll|let me|i will|i'd have to|i need to|i'd need to) (?:find out|check|look (?:it|that) up|ask|get back"
    r"|come back|double-?check)|(?:get|come) back to you|pass (?:that|this|it) on to|forward (?:that|this|it) to"
    r"|no comment|not for me to say|can't speak (?:to|for)|couldn't speak (?:to|for)"
    r"|i(?:'m| am) (?:only |just )?(?:covering|filling in|standing in|temping|holding the fort)"
    r"|i(?:'m| am) (?:only |just )?(?:agency|(?:a |the )?(?:temp|locum|stand-in|cover|agency (?:worker|temp|staff)"
    r"|placement student|work experience))\b"
    r"|i'?d (?:only )?be (?:making (?:it|that|things) up|speculating|guessing)|i don't (?:get involved"
    r"|deal) (?:in|with)"
    r"|(?:asking|ask) the wrong (?:person|one|bloke|guy|woman)|you'?d want \w+ (?:for|on) (?:that|this)"
    r"|(?:someone|somebody|\w+) (?:upstairs|downstairs|at (?:head office|hq|the top)|in (?:the )?(?:office|accounts"
    r"|finance|it)) (?:would|will|'d|'ll|might|should) (?:\w+ )?know"
    r"|(?:i'?d|i would) have to (?:ask|check|dig|look|find out|get)|(?:i'?ll|i will|i'?d rather) (?:leave|skip|pass on)"
    r" (?:that|this|it)|better not (?:say|guess|answer)|(?:don't|do not) want to (?:give you|say) (?:the )?(?:wrong"
    r"|something wrong))\b"
)

# A question to the interviewer, not about the company --------------------------------------------------
ASKS_BACK: Final = re.compile(
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
FAMILY: Final = signals.FAMILY + r"|mate|pal|flatmate|godfather|godmother|nephew|niece|grandad|gran|grandma|grandpa"
OTHER_ORG: Final = re.compile(
    # family and friends and what they run or work for
    rf"\bmy (?:{FAMILY})(?:s|-in-law|-in-laws)?(?:'s)?\b"
    r"|\ba (?:friend|mate|pal|neighbou?r|cousin|relative)(?: of mine)?\b"
    r"|\b(?:someone|somebody|a (?:guy|bloke|woman|man|lady|chap|contact|colleague|former colleague)) (?:i|we) know\b"
    r"|\ban? (?:old|former|ex-?)\s?colleague\b|\bpeople i know\b"
    # the neighbours
    r"|\b(?:the|a|that) (?:\w+ ){0,2}?\w+ (?:next door|down the (?:road|street|hall|corridor)|across the (?:road"
    r"|street|yard|way|car park)|opposite|round the corner|on (?:the|our) (?:same )?(?:estate|street|park|road))"
    r"|\b(?:the|a|that) (?:\w+ ){0,2}?\w+ (?:next to|beside|behind|alongside) (?:us|ours|our \w+)\b"
    r"|^\w+ (?:next to|beside|alongside) (?:us|ours)\b"
    r"|\b(?:an?|one|two|some) (?:\w+ )?(?:suppliers?|vendors?|customers?|clients?|competitors?|rivals?"
    r"|hauliers?|distributors?) of ours\b|\bback at\b|\b(?:company|firm|place|bank|employer|job|outfit|business)"
    r" i (?:came from|moved from|left|worked (?:at|for))\b"
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
    r"|former|previous|ex-?"
    r"|parent|sister|logistics|packaging|steel|software|IT|it|raw material|fruit|feed|fabric) )?(?:suppliers?|vendors?"
    r"|customers?|clients?|competitors?|rivals?|competition|distributors?|wholesalers?|hauliers?"
    r"|contractors?|subcontractors?|franchisees?|parent company|sister company|group headquarters|head office"
    r"|printer|accountants?)(?:'s|s')?(?:, [^,]{1,40},)?(?= (?:(?:\w+ly|just|also|all|both) )?(?:has|have|had|is|are"
    r"|was|were|uses?"
    r"|used|runs?|ran|does|did|do|keeps?|kept|built|bought|got|went|switched|moved|spent|introduced|installed|employs?"
    r"|hired|own|owns|rolled|launched|set up|sets up|just|told|tells|said|says|mentioned|reckons|swears)\b)"
    r"|\b(?:another|a different|some other|other) (?:company|firm|business|organi[sz]ation|client|customer|site of"
    r" theirs)\b"
    # a neighbour, a landlord, a sister company, a rival, someone met elsewhere, a former workplace
    r"|\b\w+(?:'s)? (?:down the (?:road|street|way)|next door|across the (?:road|street|yard))\b|\bnext door(?:'s)?\b"
    r"|\bthe (?:\w+ )?(?:unit|shop|firm|business|lot|people|place|site) next to (?:us|ours)\b|\b(?:our "
    r"|the )?landlord\b"
    r"|\b(?:the|our) (?:\w+ )?(?:sister|parent|partner) (?:company|firm|business|group|organi[sz]ation)\b"
    r"|\b(?:a|one of the|some of the|the) (?:other|rival|competing|neighbouring|nearby) (?:\w+ )?(?:councils?|agenc(?:y"
    r"|ies)|firms?|compan(?:y|ies)|practices?|schools?|hospitals?|trusts?|bakeries|bakery|restaurants?|hotels?"
    r"|garages?|farms?|businesses|charit(?:y|ies))\b"
    r"|\b(?:a|the|one|this) (?:chap|guy|bloke|woman|man|lady|fellow|speaker|rep|consultant) from (?:a|an|the|some)\b"
    r"|\b(?:a )?friend of mine\b"
    r"|\bwhere i was (?:before|previously)\b|\bback when i (?:was|worked)\b|\bi (?:used to|once) (?:temp|be|work)"
    r" (?:at|for|in)\b|\b(?:i|we) trained at\b"
    r"|\bthe (?:\w+ )?(?:haulier|courier|supplier|co-?op|wholesaler|printer|accountants?|bank|agency|distributor"
    r"|contractor|landlord|vendor) (?:we|i) (?:use|buy (?:\w+ )?from|work with|sell to|deal with)\b"
    r"|\b(?:our|the) (?:\w+ )?(?:accountant|supplier|customer|client)(?:'s|s') (?:firm|company|business"
    r"|office|practice)\b"
    r"|\b(?:the|a|an|one) (?:\w+ ){0,3}(?:trust|ministry|hospital|university|franchise|chain)(?:'s)? (?:has|have"
    r"|had|is|are|was|were|runs?|ran|uses?|used|spent|built|bought|owns?)\b"
    # a former workplace, however named: "in my old trust", "previous gig", "the outfit I was at before", "in the lab
    # where I did my PhD", "at the firm I was working at earlier"
    r"|\b(?:at|in) (?:the|a|an|that) (?:[\w'-]+ ){0,3}?(?:where |that |which )?i (?:was (?:at|with|working|employed)"
    r"|used to (?:work|temp)|worked|trained|did my|interned|temped)\b"
    r"|\b(?:at|in) my (?:old|previous|last|former) \w+\b|\b(?:my )?previous (?:gig|job|role|post|employer|company"
    r"|firm|workplace|place|life)\b|\bi was (?:at|with) before\b"
    r"|\bi was (?:working|employed) (?:at |for |in )?(?:earlier|before)\b"
    r"|\bwhen i (?:consulted|contracted|freelanced|temped|interned) (?:for|at|with)\b"
    # something seen, heard or read elsewhere: a talk, a demo, a podcast, an article, a trade show
    r"|\b(?:saw|heard|read|watched|caught|listened to|went to|attended|sat in on) (?:a|an|this|that|some|the)"
    r" (?:\w+ ){0,3}?"
    r"(?:talk|demo|podcast|article|webinar|presentation|video|piece|story|post|case study|keynote|panel|conference"
    r"|expo|meetup|meet-up|trade show|trade fair|seminar|summit)\b|\bthere was (?:a|an|this) (?:\w+ ){0,2}?(?:talk|demo"
    r"|podcast|article|webinar|presentation|video|piece|story|keynote|panel|session) (?:at|on|in|about|where|from"
    r"|with|by)\b|\bread (?:in|on) (?:the )?[\w ]{1,25}? (?:that|about|how)\b"
    # a third party the company serves or buys from as the subject
    r"|\b(?:the|a|an|one) (?:\w+ ){0,2}\w+ (?:that|who|which) (?:supplies|delivers to|sells to|buys from|works with"
    r"|services|serves|audits) us\b|\bthe (?:\w+ ){0,2}\w+ (?:we|i)(?:'re| are)? (?:deliver(?:ing)? to|suppl(?:y|ying)"
    r"|sell(?:ing)? to|buy(?:ing)? from|audit(?:ing)?|visit(?:ing)?|consult(?:ing)? for)\b"
)
# A competitor or customer pushing the company toward AI, or winning business with it: competitive_pressure
PRESSURE: Final = re.compile(
    r"\b(?:ai|a\.i\.|artificial intelligence|machine learning|chat ?bots?|chatgpt|copilot|genai|automat\w*"
    r"|predict\w*|algorithms?|smart|digital\w*|pushing|push us|asking (?:us|for)|asked (?:us|for)|ask (?:us|for)"
    r"|demand\w*|requir\w*|expect\w*|tenders?|contracts?|win(?:s|ning)?|won|los(?:e|t|ing)|beat\w*|ahead|behind"
    r"|pressure|undercut\w*|market share|price war|wants?|wanted)\b"
)

MARKET: Final = re.compile(r"\b(?:competitors?|rivals?|competition|customers?|clients?)\b")

# Wishes, what-ifs and plans that say nothing about today -----------------------------------------------
HYPOTHETICAL: Final = re.compile(
    r"\b(?:i|we)(?:'d| would) (?:really |dearly |so |very much |quite |just |eventually |probably |also )?(?:love"
    r"|like|want|prefer|hope|be keen|be interested|be happy|be open|wish|go for|start with|try|look at|pick|choose"
    r"|begin|start|fancy|welcome|consider|explore)\b"
    r"|\bit(?:'d| would) be (?:so |really |very |quite |pretty |absolutely )?(?:great|nice|lovely"
    r"|amazing|brilliant|fantastic|good|cool|interesting|fun|a dream|a game[- ]changer|helpful|useful|ideal"
    r"|handy|wonderful|exciting)\b|\bwouldn't it be\b|\bdream(?:ing)? (?:of|about|would be|is)\b|\bin an ideal"
    r" world\b|\bin a perfect world\b|\bideally\b|\bhypothetically\b|\bin theory\b|^(?:just )?imagine\b"
    r"|\bimagine (?:if|that|we|having|a world)\b|\bwhat if\b|^suppos(?:e|ing)\b"
    r"|\bif (?:only|money were no|budget were no|we ever|i ever|one day|someday)\b"
    r"|\b(?:i|we)(?:'re| are|'m| am) (?:\w+ )?(?:planning|hoping|aiming|intending|thinking (?:about|of)|considering"
    r"|looking (?:at|into)|toying with|keen|going|talking about|discussing|weighing up|thinking)(?: to| on| of)?\b"
    r"|\b(?:i|we)(?:'ve| have) been (?:\w+ )?(?:talking about|thinking about|kicking around|toying with|mulling"
    r"|discussing)\b|\b(?:has|have|had) floated\b|\bfloated (?:the idea|a move|moving)\b|^(?:were|should|had) (?:we|i"
    r"|they) (?:ever )?(?:to )?\w+"
    r"|\b(?:i|we) (?:plan|hope|intend|aim|want|mean|wish|would like|might|may) to\b"
    r"|\bthe (?:plan|idea|goal|hope|dream|ambition|intention|aim|wish|thinking|vision|proposal)(?: for \w+)?"
    r"(?:,[^,]{1,50},)? (?:is|would be|was)\b(?! to (?:wait|do nothing|see|keep|carry on|stay|ignore|sit))"
    r"|\bthe (?:dream|hope|wish)\b|\bwhat (?:i|we)(?:'d| would) (?:like|love|want)\b"
    r"|\b(?:they|he|she)(?:'d| would) (?:really |quite |also )?(?:like|love|want|prefer) to\b"
    r"|\b(?:we|i)(?:'ll| will| shall) (?:probably |maybe |perhaps |eventually |definitely |hopefully |likely )?(?:look"
    r"|start|try|think|consider|build|hire|move|roll|launch|invest|begin|bring|buy|explore|test|pilot|want|get round)\b"
    # time ahead, a wish list, a wish of the owners or the board
    r"|\bwish ?list\b|\bthere'?s talk of\b"
    r"|\b(?:my|our) (?:plan|idea|goal|hope|dream|ambition|wish|aim|thinking|vision|intention)s? (?:is|are|would be|was"
    r"|for)\b|\b(?:gonna|going to) (?:try"
    r"|get|look|start|move|buy|hire|build)\b|(?:^|\b)would be (?:so |really |very )?(?:nice|great|lovely|good"
    r"|brilliant|handy"
    r"|ideal|grand|ace|awesome|class|deadly|sweet)\b|\b(?:the )?(?:partners|board|owners?|boss|management"
    r"|directors?|md|ceo|coo|cfo|head|head office|trustees"
    r"|council) (?:wants?|would like|hopes?|plans?|intends?|is keen) (?:to|on|a|an|us to)\b|^assuming\b|\b(?:i"
    r"|we) want (?:the|our|a|an|someone|somebody|everyone"
    r"|people|all)\b|\b(?:i|we) (?:might|may) (?:\w+ )?(?:hire|get|try|buy|move|start|bring|switch"
    r"|invest|add|look)\b"
)
# Time ahead ("down the line", "next spring", "in five years' time"): a plan when the sentence says something
# (at least AHEAD_MIN_WORDS words; "The vendor. Eventually." answers who, "Maybe twice in five years." how often)
# Time ahead and the words that open a condition or a time ahead, shared by the rules below
SOMETIME: Final = r"eventually|down the line|long[- ]term|one day|some ?day"
IF_OR_WHEN: Final = r"when|once|if|after|until|as soon as|by the time|assuming|supposing|provided"
AHEAD: Final = re.compile(
    rf"\b(?:{SOMETIME}|in the long run|at some point|in (?:the )?future"
    r"|in (?:a|two|three|four|five|ten|\d+) (?:years?|months?)(?:'s?)? time)\b|^(?:in|within) (?:a|two|three|four|five"
    r"|ten|\d+) (?:years?|months?)\b|\b(?:next|this coming) (?:year|month|spring|summer|autumn|fall|winter"
    r"|quarter|financial year|fiscal year)\b(?!'s)|\b(?:pencilled|penciled|slated) (?:in )?for\b"
    r"|\b(?:in|for|by) q[1-4]\b"
)
# A frame that puts what follows in the future or under a condition ("Once the new manager starts, …"): the
# words before a wish in the same sentence, when they open this way, are part of the wish
AHEAD_FRAME: Final = re.compile(
    rf"^(?:(?:{IF_OR_WHEN}|should|unless)\b"
    r"|(?:next|this coming) \w+\b|(?:in|within) (?:a|two|three|five|ten|\d+) (?:years?|months?)"
    rf"|{SOMETIME}|after the \w+|the (?:plan|idea|goal|hope|aim)\b)"
)
# What a plan is about, said before it ("The OCR pilot for invoices is pencilled in for Q3"): no verb of its own
PLANNED_THING: Final = re.compile(
    r"^(?:the|our|a|an|this|that|my|any) (?:[\w'-]+ ){0,6}?(?:is|are|was|were|has been|have been|will be|'s|gets?"
    r"|got)\s*$"
)
# Subordinate clauses about a time ahead or a condition: their verbs do not state how things are now
AHEAD_CLAUSE: Final = re.compile(rf"\b(?:{IF_OR_WHEN})\b[^,.;]*")
# What follows "but" in a plan that is still only a plan ("…, but it depends on the budget")
STILL_A_PLAN: Final = re.compile(
    r"^(?:it |that |this |all )?(?:depends|'s subject to|is subject to)|^(?:only )?if\b|^(?:we'll|we will|let's) see\b"
    r"|^who knows\b|^(?:no|nothing)(?:'s| is)? (?:decided|booked|agreed|signed|fixed|confirmed|scheduled)"
    r"|^whether\b|^early days\b|^that'?s the (?:plan|idea|dream|hope|intention|thinking|theory)\b"
)
# Words that state how things are now: a turn with one of these is never refused as merely hypothetical
TODAY: Final = re.compile(
    r"\b(?:not yet|nothing yet|none yet|so far|currently|at the moment|at present|right now|for now|today|these days"
    r"|nowadays|still|already|as it stands|as things stand|at this point|until now|to date|up to now)\b"
    r"|^\W*(?:no|nope|nah|none|nothing|never|yes|yeah|yep|we do|we have|zero|nil|not one|not a (?:penny|cent))\b"
    r"|\b(?:we|i) (?:have|has|use|run|keep|do|don't|can't|cannot|haven't|lack|rely|struggle|spend|get|need|only"
    r"|never|always|hardly|barely)\b|\b(?:we've|we're|there's|there are|there is)\b"
    r"|\b(?:we|i) (?!(?:would|will|might|may|could|should|shall|want|hope|plan|intend|aim|wish|are|were|ever|really"
    r"|probably|also|then|just|need|'d|'ll|'re|'ve)\b)[a-z]+(?:s|ed)?\b(?<!ing)"
)

# Fragments that say nothing either way (apologies, hedges, thanks, how the speaker feels)
NEUTRAL: Final = re.compile(
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
# The speaker runs the family business ("My brother and I run the shop"): the family is us
FAMILY_BUSINESS: Final = re.compile(
    rf"\bmy (?:{FAMILY})(?:s|-in-law)? and i\b|\bi and my\b|\b(?:with|alongside) my (?:{FAMILY})"
    r"|\b(?:family|family-run|family-owned) (?:business|firm|company)\b"
)
HEDGE_OPENING: Final = re.compile(
    r"^(?:(?:i think|i guess|i suppose|i believe|i reckon|i'd say|i know|apparently|i hear|i heard|i'm told"
    r"|as far as i know|from what i (?:see|know|hear|can tell)|i'm pretty sure|i'm fairly sure)\W*)+"
)
FORMER: Final = re.compile(
    r"my (?:old|previous|last|former|first|past|ex)|used to work|previously work|when i (?:was|worked)|before (?:this"
    r"|i came)|back when|where i"
)


WE_SPEAKING: Final = re.compile(
    r"\b(?:we|we're|we've|we'd|we'll|our|ours|ourselves|here|for us)\b"
)  # "us" is not enough
PERSONAL_STATE: Final = re.compile(
    r"^(?:i(?:'m| am) (?:so |very |a bit |really |just )?(?:tired|busy|late|sorry|afraid|knackered|swamped|shattered"
    r"|exhausted|in (?:a|the) \w+|on (?:a|the) \w+|off\b|out\b|running|driving|walking|about to|not allowed|not able"
    r"|not comfortable|not keen)|i (?:have|need|got|must) to (?:go|run|leave|dash|take|step|get|be)|i(?:'ve| have) got"
    r" (?:a|an|another|to)\b|my (?:head|brain|day|week|morning|coffee|tea|phone|laptop|screen|camera|line"
    r"|connection|battery|train|bus|kids?))"
)
PIVOT: Final = re.compile(
    r"\b(?:but|though|however|that said|what i (?:do )?(?:know|see|can see|can (?:say|tell you))|on my (?:side|end)"
    r"|the (?:bit|part|thing) i (?:do )?(?:know|see)|i do know"
    r"|from what i (?:see|can see|hear|can tell)|as far as i (?:can tell|know)|i can tell you|in my (?:team|area))\b"
)
# A conditional wish: "if …, I'd / we'd …" (not "there'd be nothing": that states today's limit)
IF_WOULD: Final = re.compile(
    r"\bif\b.*\b(?:i|we)(?:'d| would) (?!be\b|have to\b|need\b|know\b|notice\b|see\b|find\b)(?:\w+ly )?\w+"
    r"|\bif\b.*\b(?:they|he|she)"
    r"(?:'d| would) (?:probably |likely )?(?:want|like|love|expect|insist|bring|change)\b|\b(?:i|we)"
    r"(?:'d| would) (?!be\b|have to\b|need\b|know\b|notice\b|see\b|find\b)(?:\w+ly )?\w+\b.*\bif\b"
    r"|^should (?:\w+ ){1,3}ever\b|\bif (?:\w+ ){0,3}ever\b"
)
SENTENCE: Final = re.compile(r"(?<=[.!?;:])\s+")


LEAD: Final = re.compile(
    r"^(?:(?:funnily enough|funny enough|funny you (?:ask|mention it)|honestly|well|so|oh"
    r"|actually|interestingly|mind you|apparently|by the way|(?:i )?(?:saw|read|heard)(?: (?:on|in) [\w ]{1,20}?)?"
    r"(?: that)?|went to a [\w ]{1,30}?|at an? [\w ]{1,30}?|(?:at|in) [\w ]{1,25}?(?= where i\b)"
    r"|the [\w ]{1,25}?(?= where i\b))\W*)+"
)


NEUTRAL_LEAD: Final = re.compile(r"^(?:(?:sorry|ok|okay|hmm|um|so|but|and|right|wait|also|honestly|genuinely)\W+)+")


WOULD: Final = re.compile(r"\b(?:would|'d|could|will|'ll|might)\b")


CONTRAST: Final = re.compile(r"\b(?:but|though|although|however|except|whereas|yet)\b")
