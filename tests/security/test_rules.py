"""firestore.rules, proven against the real Firestore emulator with Auth-emulator ID tokens.

Every request is a real client request: the Firestore emulator's REST API, signed in with an ID
token the Auth emulator issued (``Authorization: Bearer``) or not signed in at all, so the rules
alone decide (documents are seeded with admin access, which bypasses them).  Allowed means HTTP 200,
denied means HTTP 403 ``PERMISSION_DENIED``; anything else fails the test.  What is proven:

- Own documents: a signed-in user reads their own profile, summary, snapshot, factor, journal
  entry, session and turn; another user (same organisation or not, with or without a profile) and
  a signed-out client read none of them.
- Functions-owned data: no client (the owner, their organisation's manager, a signed-out client)
  creates, updates or deletes profiles, summaries, snapshots, factors, journal entries, sessions,
  organisations, roll-up shards, daily figures, resume links, mail or any unlisted collection.
- Turns: the owner creates a turn in their own existing session when it is exactly
  ``{role: "user", text: 1..4000 characters not all whitespace, created_at: request time,
  awaiting_analysis: true}``; every
  other shape, place or author is denied, and existing turns are never updated or deleted by
  clients.  The rules accept exactly the texts the pipeline accepts (``turn_text_problem``).
- Managers: whoever ``organisations/{org}.managers`` lists, and nobody else, whatever a profile's
  ``role`` says.  A manager reads their organisation's document, roll-up shards and daily figures
  and their members' snapshots (progress, tiers, factor values); nothing that holds a person's own
  words (summary, journal, conversations, turns), nothing of another organisation.  Removal from
  the list, a move to another organisation and a member's move take effect on the next request.
- resume_links, mail and anything unlisted: no read by anyone, signed in or not.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore
from google.cloud.firestore_v1 import ArrayRemove, ArrayUnion
from rules_client import ALLOWED, DENIED, AdminRead, Fields, World, describe, encode_fields, outcome

from factor_journal.conversation import MAX_TURN_TEXT_CHARS, turn_text_problem

# --- Reading one's own documents --------------------------------------------------------------

OWN_DOCUMENTS = {
    "profile": "users/{owner}",
    "summary": "users/{owner}/metadata/assessment",
    "snapshot": "users/{owner}/snapshots/{day}",
    "factor": "users/{owner}/factors/{factor}",
    "journal entry": "users/{owner}/factors/{factor}/journal/{entry}",
    "session": "users/{owner}/conversations/{session}",
    "turn": "users/{owner}/conversations/{session}/turns/{turn}",
}

# Who reads alice's documents, and what the rules must answer.
OWN_READERS = [
    ("alice", ALLOWED),  # the owner
    ("amir", DENIED),  # another member of her organisation
    ("bob", DENIED),  # a member of another organisation
    ("newcomer", DENIED),  # signed in, no profile
    ("signed-out", DENIED),
]


@pytest.mark.parametrize(("reader", "expected"), OWN_READERS, ids=[f"{r}:{describe(e)}" for r, e in OWN_READERS])
@pytest.mark.parametrize("template", OWN_DOCUMENTS.values(), ids=OWN_DOCUMENTS.keys())
def test_only_the_owner_reads_their_documents(world: World, template: str, reader: str, expected: int) -> None:
    path = world.path(template, owner="alice")
    assert outcome(world[reader].read(path)) == expected, f"{reader} reading {path}"


@pytest.mark.parametrize("template", OWN_DOCUMENTS.values(), ids=OWN_DOCUMENTS.keys())
def test_every_owner_reads_their_own(world: World, template: str) -> None:
    """Not just alice: each assessed person, members and managers alike, reads their own."""
    for name in ("amir", "mona", "bob", "bea", "carl", "nora"):
        assert outcome(world[name].read(world.path(template, owner=name))) == ALLOWED, name


def test_nobody_reads_the_embeddings_of_what_was_said(world: World) -> None:
    """A journal entry's vector and an answer's are server-only: not even the person whose words they embed reads
    them (their journal entry and their turn, beside them, they do read), nor lists them."""
    for owner in ("alice", "amir", "bob"):
        entry = world.path("users/{owner}/factors/{factor}/journal/{entry}", owner=owner)
        assert outcome(world[owner].read(entry)) == ALLOWED
        for collection, document in (("journal_vectors", "{entry}"), ("answer_vectors", "{answer}")):
            vector = world.path(f"users/{{owner}}/{collection}/{document}", owner=owner)
            for reader in (owner, "mona", "signed-out"):
                assert outcome(world[reader].read(vector)) == DENIED, f"{reader} reading {vector}"
            listing = world.path(f"users/{{owner}}/{collection}", owner=owner)
            assert outcome(world[owner].list(listing)) == DENIED, f"{owner} listing {listing}"


def test_nobody_reads_the_copies_of_damaged_documents_set_aside(world: World) -> None:
    """A damaged document set aside keeps a copy of what it held in its record: server-only, for the team."""
    for owner in ("alice", "bob"):
        record = world.path("users/{owner}/set_aside/{entry}", owner=owner)
        for reader in (owner, "mona", "signed-out"):
            assert outcome(world[reader].read(record)) == DENIED, f"{reader} reading {record}"
        listing = world.path("users/{owner}/set_aside", owner=owner)
        assert outcome(world[owner].list(listing)) == DENIED, f"{owner} listing {listing}"


# --- Clients never write what the functions own -----------------------------------------------


@dataclass(frozen=True)
class Target:
    """A functions-owned document: an existing one (update, delete) and a fresh one (create).

    ``{owner}`` is alice in ``existing``; in ``fresh`` it is ``create_owner`` (someone for whom
    the document does not exist yet, e.g. ada, who has no summary, or newcomer, who has no profile).
    """

    name: str
    existing: str
    fresh: str
    create_owner: str = "alice"


TARGETS = [
    Target("profile", "users/{owner}", "users/{owner}", create_owner="newcomer"),
    Target("summary", "users/{owner}/metadata/assessment", "users/{owner}/metadata/assessment", "ada"),
    Target("other metadata", "users/{owner}/metadata/preferences", "users/{owner}/metadata/{fresh}"),
    Target("snapshot", "users/{owner}/snapshots/{day}", "users/{owner}/snapshots/{other_day}"),
    Target("factor", "users/{owner}/factors/{factor}", "users/{owner}/factors/{other_factor}"),
    Target(
        "journal entry",
        "users/{owner}/factors/{factor}/journal/{entry}",
        "users/{owner}/factors/{factor}/journal/{fresh}",
    ),
    Target("session", "users/{owner}/conversations/{session}", "users/{owner}/conversations/{fresh}"),
    Target("journal vector", "users/{owner}/journal_vectors/{entry}", "users/{owner}/journal_vectors/{fresh}"),
    Target("answer vector", "users/{owner}/answer_vectors/{answer}", "users/{owner}/answer_vectors/{fresh}"),
    Target(
        "lift request",
        "users/{owner}/conversations/{session}/lifts/{turn}",
        "users/{owner}/conversations/{session}/lifts/{fresh}",
    ),
    Target("set-aside record", "users/{owner}/set_aside/{entry}", "users/{owner}/set_aside/{fresh}"),
    Target("organisation", "organisations/{org_a}", "organisations/org-{fresh}"),
    Target("roll-up row", "organisations/{org_a}/people/{owner}", "organisations/{org_a}/people/{fresh}"),
    Target("figures shard", "organisations/{org_a}/figures/shard-00", "organisations/{org_a}/figures/shard-01"),
    Target("daily figures", "organisations/{org_a}/daily/{day}", "organisations/{org_a}/daily/{other_day}"),
    Target("resume link", "resume_links/{link}", "resume_links/{fresh}"),
    Target("mail", "mail/{mail}", "mail/{fresh}"),
    Target("unlisted collection", "unlisted/{misc}", "unlisted/{fresh}"),
]

# alice owns the user documents, belongs to org A and is the resume link's user and the mail's
# recipient; mona manages org A; nobody may write any of it.
WRITERS = ["owner", "mona", "signed-out"]
FORGED: Fields = encode_fields({"forged": True, "role": "manager", "current_value": 100})


def writer(who: str, owner: str) -> str:
    return owner if who == "owner" else who


@pytest.mark.parametrize("who", WRITERS)
@pytest.mark.parametrize("target", TARGETS, ids=[t.name for t in TARGETS])
def test_clients_cannot_create(world: World, target: Target, who: str, admin_read: AdminRead) -> None:
    path = world.path(target.fresh, owner=target.create_owner)
    client = world[writer(who, target.create_owner)]
    assert outcome(client.create(path, FORGED)) == DENIED, f"{client.name} creating {path}"
    assert admin_read(path) is None


@pytest.mark.parametrize("who", WRITERS)
@pytest.mark.parametrize("target", TARGETS, ids=[t.name for t in TARGETS])
def test_clients_cannot_update(world: World, target: Target, who: str, admin_read: AdminRead) -> None:
    path = world.path(target.existing)
    client = world[writer(who, "alice")]
    before = admin_read(path)
    assert before is not None
    assert outcome(client.update(path, FORGED)) == DENIED, f"{client.name} overwriting {path}"
    assert outcome(client.update(path, FORGED, mask=["forged"])) == DENIED, f"{client.name} patching {path}"
    assert admin_read(path) == before


@pytest.mark.parametrize("who", WRITERS)
@pytest.mark.parametrize("target", TARGETS, ids=[t.name for t in TARGETS])
def test_clients_cannot_delete(world: World, target: Target, who: str, admin_read: AdminRead) -> None:
    path = world.path(target.existing)
    client = world[writer(who, "alice")]
    assert outcome(client.delete(path)) == DENIED, f"{client.name} deleting {path}"
    assert admin_read(path) is not None


@pytest.mark.parametrize(
    ("who", "owner", "role", "org"),
    [
        ("newcomer", "newcomer", "member", "A"),
        ("newcomer", "newcomer", "manager", "A"),
        ("mona", "newcomer", "member", "A"),
    ],
    ids=["self-registration", "self-registration-as-manager", "manager-registers-someone"],
)
def test_nobody_registers_a_profile(world: World, who: str, owner: str, role: str, org: str) -> None:
    profile = {"user_id": world.uid(owner), "org_id": world.orgs[org], "role": role}
    path = world.path("users/{owner}", owner=owner)
    assert outcome(world[who].create(path, encode_fields(profile))) == DENIED


def test_a_member_cannot_promote_themselves_or_move(world: World, admin_read: AdminRead) -> None:
    path = world.path("users/{alice}")
    alice = world["alice"]
    assert outcome(alice.update(path, encode_fields({"role": "manager"}), mask=["role"])) == DENIED
    assert outcome(alice.update(path, encode_fields({"org_id": world.orgs["B"]}), mask=["org_id"])) == DENIED
    stored = admin_read(path)
    assert stored is not None
    assert (stored["role"], stored["org_id"]) == ("member", world.orgs["A"])


# --- Turns: the one thing clients write ---------------------------------------------------------

MAX_TEXT = MAX_TURN_TEXT_CHARS


def turn(**override: object) -> Fields:
    """A valid turn's client-sent fields (``created_at`` comes from the REQUEST_TIME transform)."""
    fields = {"role": "user", "text": "We have two data scientists.", "awaiting_analysis": True} | override
    return encode_fields({name: value for name, value in fields.items() if value is not ABSENT})


ABSENT = object()  # turn(field=ABSENT): the field is left out


OWN = "users/{alice}/conversations/{session}/turns/{fresh}"  # a new turn in alice's existing session


@pytest.mark.parametrize(
    "text",
    ["We have two data scientists.", "x", "x" * MAX_TEXT, "é" * MAX_TEXT, "  leading and trailing  "],
    ids=["sentence", "one-character", "exactly-the-limit", "the-limit-non-ascii", "whitespace-around"],
)
def test_the_owner_creates_a_valid_turn(world: World, text: str, admin_read: AdminRead) -> None:
    path = world.path(OWN)
    before = datetime.now(UTC)
    assert outcome(world["alice"].create(path, turn(text=text), server_time=["created_at"])) == ALLOWED
    stored = admin_read(path)
    assert stored is not None
    # the trigger listens here and may have claimed the turn already: its claim replaces the mark with its record
    assert (
        {"role", "text", "created_at"}
        <= set(stored)
        <= {"role", "text", "created_at", "awaiting_analysis", "extraction"}
    )
    assert stored.get("awaiting_analysis") is True or "extraction" in stored  # the sweep finds a lost turn by it
    assert (stored["role"], stored["text"]) == ("user", text)
    created_at = stored["created_at"]
    assert isinstance(created_at, datetime)
    assert before - timedelta(seconds=5) <= created_at <= datetime.now(UTC) + timedelta(seconds=5)


CLIENT_TIME = {"created_at": datetime(2026, 1, 1, tzinfo=UTC)}
NOW_BY_CLIENT = "now-by-client"  # created_at = the client's clock, not the request time
ANOTHER_USERS = "users/{bob}/conversations/{session}/turns/{fresh}"
OWN_MISSING_SESSION = "users/{alice}/conversations/no-such-{fresh}/turns/{fresh}"
DEFAULT_TIME = ("created_at",)

# (why, author, path template, fields, server-time fields)
INVALID_TURNS: list[tuple[str, str, str, Fields | str, tuple[str, ...]]] = [
    ("in another user's existing session", "alice", ANOTHER_USERS, turn(), DEFAULT_TIME),
    ("in a session that does not exist", "alice", OWN_MISSING_SESSION, turn(), DEFAULT_TIME),
    ("by the member's manager", "mona", OWN, turn(), DEFAULT_TIME),
    ("by another member of the organisation", "amir", OWN, turn(), DEFAULT_TIME),
    ("signed out", "signed-out", OWN, turn(), DEFAULT_TIME),
    ("role assistant", "alice", OWN, turn(role="assistant"), DEFAULT_TIME),
    ("role system", "alice", OWN, turn(role="system"), DEFAULT_TIME),
    ("role not a string", "alice", OWN, turn(role=1), DEFAULT_TIME),
    ("text an integer", "alice", OWN, turn(text=42), DEFAULT_TIME),
    ("text a map", "alice", OWN, turn(text={"text": "hi"}), DEFAULT_TIME),
    ("text an array", "alice", OWN, turn(text=["hi"]), DEFAULT_TIME),
    ("text null", "alice", OWN, turn(text=None), DEFAULT_TIME),
    ("text empty", "alice", OWN, turn(text=""), DEFAULT_TIME),
    ("text one character over", "alice", OWN, turn(text="x" * (MAX_TEXT + 1)), DEFAULT_TIME),
    ("text only spaces", "alice", OWN, turn(text="     "), DEFAULT_TIME),
    ("text only whitespace", "alice", OWN, turn(text=" \n\t\r\n "), DEFAULT_TIME),
    ("created_at client-chosen (past)", "alice", OWN, turn(**CLIENT_TIME), ()),
    ("created_at client-chosen (now)", "alice", OWN, NOW_BY_CLIENT, ()),
    ("created_at a string", "alice", OWN, turn(created_at="2026-01-01T00:00:00Z"), ()),
    ("extra field extraction", "alice", OWN, turn(extraction={"status": "processed"}), DEFAULT_TIME),
    ("extra field role2", "alice", OWN, turn(role2="user"), DEFAULT_TIME),
    ("extra server-time field", "alice", OWN, turn(), ("created_at", "processed_at")),
    ("missing role", "alice", OWN, turn(role=ABSENT), DEFAULT_TIME),
    ("missing text", "alice", OWN, turn(text=ABSENT), DEFAULT_TIME),
    ("missing created_at", "alice", OWN, turn(), ()),
    ("missing awaiting_analysis", "alice", OWN, turn(awaiting_analysis=ABSENT), DEFAULT_TIME),
    ("awaiting_analysis false", "alice", OWN, turn(awaiting_analysis=False), DEFAULT_TIME),
    ("awaiting_analysis a string", "alice", OWN, turn(awaiting_analysis="true"), DEFAULT_TIME),
    ("no fields at all", "alice", OWN, {}, DEFAULT_TIME),
]


@pytest.mark.parametrize(
    ("why", "author", "template", "fields", "server_time"),
    INVALID_TURNS,
    ids=[row[0] for row in INVALID_TURNS],
)
def test_invalid_turns_are_denied(
    world: World,
    why: str,
    author: str,
    template: str,
    fields: Fields | str,
    server_time: tuple[str, ...],
    admin_read: AdminRead,
) -> None:
    path = world.path(template)
    if fields == NOW_BY_CLIENT:
        fields = turn(created_at=datetime.now(UTC))
    assert isinstance(fields, dict)
    assert outcome(world[author].create(path, fields, server_time=server_time)) == DENIED, why
    assert admin_read(path) is None


TURN_CHANGES: list[tuple[str, Fields | None, list[str] | None, tuple[str, ...]]] = [
    # (why, fields or None for delete, update mask, server-time fields)
    ("overwrite with a valid turn", turn(text="edited"), None, DEFAULT_TIME),
    ("patch the text", turn(text="edited"), ["text"], ()),
    ("patch in an extraction receipt", turn(extraction={"status": "processed"}), ["extraction"], ()),
    ("delete", None, None, ()),
]


@pytest.mark.parametrize("author", ["alice", "mona", "signed-out"])
@pytest.mark.parametrize(("why", "fields", "mask", "server_time"), TURN_CHANGES, ids=[row[0] for row in TURN_CHANGES])
def test_existing_turns_are_never_changed_by_clients(
    world: World,
    why: str,
    fields: Fields | None,
    mask: list[str] | None,
    server_time: tuple[str, ...],
    author: str,
    admin_read: AdminRead,
) -> None:
    path = world.path("users/{alice}/conversations/{session}/turns/{turn}")
    before = admin_read(path)
    client = world[author]
    if fields is None:
        response = client.delete(path)
    else:
        response = client.update(path, fields, mask=mask, server_time=server_time)
    assert outcome(response) == DENIED, why
    assert admin_read(path) == before


# --- Managers -----------------------------------------------------------------------------------

# (reader, document template, expected).  alice and amir are members of A, mona manages A (listed);
# bob is a member of B, bea manages B; carl is a member of no organisation, nora a "manager" of
# none; max says role manager in A but is not on A's list; lena is on A's list with role member.
MANAGER_READS: list[tuple[str, str, int]] = [
    # A manager reads their members' snapshots and their organisation's roll-ups.
    ("mona", "users/{alice}/snapshots/{day}", ALLOWED),
    ("mona", "users/{amir}/snapshots/{day}", ALLOWED),
    ("mona", "organisations/{org_a}", ALLOWED),
    ("mona", "organisations/{org_a}/figures/shard-00", ALLOWED),
    ("mona", "organisations/{org_a}/daily/{day}", ALLOWED),
    ("bea", "users/{bob}/snapshots/{day}", ALLOWED),
    ("bea", "organisations/{org_b}/daily/{day}", ALLOWED),
    # The list decides, not the profile's role.
    ("lena", "users/{alice}/snapshots/{day}", ALLOWED),
    ("lena", "organisations/{org_a}/figures/shard-00", ALLOWED),
    ("max", "users/{alice}/snapshots/{day}", DENIED),
    ("max", "users/{amir}/snapshots/{day}", DENIED),
    ("max", "organisations/{org_a}", DENIED),
    ("max", "organisations/{org_a}/figures/shard-00", DENIED),
    ("max", "organisations/{org_a}/daily/{day}", DENIED),
    # Nothing of another organisation.
    ("mona", "users/{bob}/snapshots/{day}", DENIED),
    ("mona", "users/{bea}/snapshots/{day}", DENIED),
    ("mona", "organisations/{org_b}", DENIED),
    ("mona", "organisations/{org_b}/figures/shard-00", DENIED),
    ("mona", "organisations/{org_b}/daily/{day}", DENIED),
    ("bea", "users/{alice}/snapshots/{day}", DENIED),
    ("bea", "organisations/{org_a}", DENIED),
    ("bea", "organisations/{org_a}/figures/shard-00", DENIED),
    # Nor of people outside any organisation.
    ("mona", "users/{carl}/snapshots/{day}", DENIED),
    # Nothing that holds a member's own words, nor anything else of theirs: the summary (its
    # "where we were" excerpt, conflicts' rationales), profile, factors, journal, sessions, turns.
    ("mona", "users/{alice}/metadata/assessment", DENIED),
    ("mona", "users/{amir}/metadata/assessment", DENIED),
    ("bea", "users/{bob}/metadata/assessment", DENIED),
    ("mona", "users/{alice}", DENIED),
    ("mona", "users/{alice}/metadata/preferences", DENIED),
    ("mona", "users/{alice}/factors/{factor}", DENIED),
    ("mona", "users/{alice}/factors/{factor}/journal/{entry}", DENIED),
    ("mona", "users/{alice}/conversations/{session}", DENIED),
    ("mona", "users/{alice}/conversations/{session}/turns/{turn}", DENIED),
    # A member is no manager: not of colleagues, not of the organisation's roll-ups.
    ("alice", "users/{amir}/metadata/assessment", DENIED),
    ("alice", "users/{amir}/snapshots/{day}", DENIED),
    ("alice", "users/{mona}/metadata/assessment", DENIED),
    ("alice", "organisations/{org_a}", DENIED),
    ("alice", "organisations/{org_a}/figures/shard-00", DENIED),
    ("alice", "organisations/{org_a}/daily/{day}", DENIED),
    # A "manager" of no organisation manages nobody, not even others without an organisation.
    ("nora", "users/{carl}/snapshots/{day}", DENIED),
    ("nora", "users/{alice}/snapshots/{day}", DENIED),
    # Without a profile, or signed out: nothing.
    ("newcomer", "users/{alice}/snapshots/{day}", DENIED),
    ("newcomer", "organisations/{org_a}", DENIED),
    ("signed-out", "users/{alice}/metadata/assessment", DENIED),
    ("signed-out", "users/{alice}/snapshots/{day}", DENIED),
    ("signed-out", "organisations/{org_a}", DENIED),
    ("signed-out", "organisations/{org_a}/figures/shard-00", DENIED),
    ("signed-out", "organisations/{org_a}/daily/{day}", DENIED),
]


@pytest.mark.parametrize(
    ("reader", "template", "expected"),
    MANAGER_READS,
    ids=[f"{r}:{t.replace('/', '|')}:{describe(e)}" for r, t, e in MANAGER_READS],
)
def test_manager_reads(world: World, reader: str, template: str, expected: int) -> None:
    path = world.path(template)
    assert outcome(world[reader].read(path)) == expected, f"{reader} reading {path}"


# Listing a collection is a query: allowed only when the rules allow every document it could return.
LIST_QUERIES: list[tuple[str, str, int]] = [
    ("alice", "users/{alice}/snapshots", ALLOWED),
    ("alice", "users/{alice}/conversations/{session}/turns", ALLOWED),
    ("mona", "users/{alice}/snapshots", ALLOWED),
    ("max", "users/{alice}/snapshots", DENIED),
    ("max", "organisations/{org_a}/people", DENIED),
    ("mona", "organisations/{org_a}/people", ALLOWED),
    ("mona", "organisations/{org_a}/daily", ALLOWED),
    ("mona", "users/{bob}/snapshots", DENIED),
    ("mona", "users/{alice}/factors", DENIED),
    ("mona", "users/{alice}/metadata", DENIED),
    ("mona", "organisations/{org_b}/daily", DENIED),
    ("alice", "users", DENIED),
    ("mona", "users", DENIED),
    ("mona", "organisations", DENIED),
    ("alice", "resume_links", DENIED),
    ("alice", "mail", DENIED),
    ("signed-out", "users/{alice}/snapshots", DENIED),
]


@pytest.mark.parametrize(
    ("reader", "template", "expected"),
    LIST_QUERIES,
    ids=[f"{r}:{t.replace('/', '|')}:{describe(e)}" for r, t, e in LIST_QUERIES],
)
def test_list_queries(world: World, reader: str, template: str, expected: int) -> None:
    collection = world.path(template)
    assert outcome(world[reader].list(collection)) == expected, f"{reader} listing {collection}"


def test_the_managers_list_is_read_live(fresh_world: World, trigger_client: firestore.Client) -> None:
    """Removing a manager from the list (whatever the profile's role) takes effect on the next request."""
    world, mona = fresh_world, fresh_world["mona"]
    org_a = trigger_client.document(world.path("organisations/{org_a}"))
    snapshot, shard = world.path("users/{alice}/snapshots/{day}"), world.path("organisations/{org_a}/people/{alice}")
    assert outcome(mona.read(snapshot)) == ALLOWED
    org_a.update({"managers": ArrayRemove([world.uid("mona")])})
    assert outcome(mona.read(snapshot)) == DENIED  # her profile still says role: manager
    assert outcome(mona.read(shard)) == DENIED
    org_a.update({"managers": ArrayUnion([world.uid("max")])})
    assert outcome(world["max"].read(snapshot)) == ALLOWED


def test_moves_take_effect_on_the_next_request(fresh_world: World, trigger_client: firestore.Client) -> None:
    """A member who moves to another organisation leaves the old manager's reach at once."""
    world, mona, bea = fresh_world, fresh_world["mona"], fresh_world["bea"]
    snapshot = world.path("users/{alice}/snapshots/{day}")
    assert (outcome(mona.read(snapshot)), outcome(bea.read(snapshot))) == (ALLOWED, DENIED)
    trigger_client.document(world.path("users/{alice}")).update({"org_id": world.orgs["B"]})
    assert (outcome(mona.read(snapshot)), outcome(bea.read(snapshot))) == (DENIED, ALLOWED)


# --- Link records, mail, anything unlisted ------------------------------------------------------

CLOSED = {
    "resume link": "resume_links/{link}",
    "mail": "mail/{mail}",
    "unlisted": "unlisted/{misc}",
    "lift request": "users/{alice}/conversations/{session}/lifts/{turn}",  # server-only, the owner's too
}


@pytest.mark.parametrize("reader", ["alice", "mona", "bob", "max", "newcomer", "signed-out"])
@pytest.mark.parametrize("template", CLOSED.values(), ids=CLOSED.keys())
def test_links_mail_and_everything_unlisted_are_unreadable(world: World, template: str, reader: str) -> None:
    path = world.path(template)
    assert outcome(world[reader].read(path)) == DENIED, f"{reader} reading {path}"


# --- One turn-text limit: the rules accept exactly what the pipeline accepts ------------------------

TEXTS = {
    "ascii at the limit": "x" * MAX_TEXT,
    "ascii over": "x" * (MAX_TEXT + 1),
    "accented at the limit": "é" * MAX_TEXT,
    "accented over": "é" * (MAX_TEXT + 1),
    "CJK at the limit": "中" * MAX_TEXT,
    "CJK over": "中" * (MAX_TEXT + 1),
    "5,000 accented": "é" * 5000,
    "8,000 CJK": "中" * 8000,
    "emoji at the limit (2 units each)": "🙂" * (MAX_TEXT // 2),
    "emoji over": "🙂" * (MAX_TEXT // 2 + 1),
    "emoji as many as the limit": "🙂" * MAX_TEXT,
    "spaces": "   ",
    "mixed whitespace": "\t\n \r\n\f",
    "a word in whitespace": "\n  yes \n",
    "ideographic space": "\u3000",
}


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
def test_rules_and_pipeline_agree_on_turn_text(world: World, text: str, admin_read: AdminRead) -> None:
    path = world.path(OWN)
    expected = ALLOWED if turn_text_problem(text) is None else DENIED
    got = outcome(world["alice"].create(path, turn(text=text), server_time=["created_at"]))
    assert got == expected, f"rules {describe(got)}, pipeline {describe(expected)}: {turn_text_problem(text)}"
