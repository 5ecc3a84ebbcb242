"""Every Firestore path the product uses, in one place.

Per user (nothing is shared between users)::

    users/{uid}                                           profile
    users/{uid}/factors/{factor_id}                       factor state
    users/{uid}/factors/{factor_id}/journal/{entry_id}    journal entry
    users/{uid}/metadata/assessment                       {"assessment_summary": ...}
    users/{uid}/conversations/{session_id}                session ("where were we")
    users/{uid}/conversations/{session_id}/turns/{tid}    turn (+ its extraction outcome)
    users/{uid}/conversations/{session_id}/lifts/{tid}    a request to read a turn again, its screen lifted
    users/{uid}/snapshots/{YYYY-MM-DD}                    daily snapshot of the summary
    users/{uid}/locks/commit                              the user's commit lease (short-lived)
    users/{uid}/rate/{YYYY-MM-DD}                         turn counters for the rate limit
    users/{uid}/journal_vectors/{entry_id}                an entry's embedding (server-only, see vectors.py)
    users/{uid}/answer_vectors/{answer_id}                an answer's embedding, understood or not (server-only,
                                                          see answer_vectors.py)
    users/{uid}/set_aside/{record_id}                     a damaged document set aside (server-only, setaside.py)

Per organisation::

    organisations/{org}                                   organisation (name, managers)
    organisations/{org}/people/{uid}                      a person's roll-up row (the team table's rows)
    organisations/{org}/figures/shard-NN                  the organisation's figures as sharded counters
    organisations/{org}/daily/{YYYY-MM-DD}                daily figures
    organisations/{org}/rollup/shard-NN                   rows of the earlier format (removed by the nightly job)

Shared: ``resume_links/{link_id}``, ``mail/{id}``, ``nightly_runs/{run}``, ``privacy_log/{subject}``.
"""

from __future__ import annotations

from google.cloud import firestore

USERS = "users"
ORGANISATIONS = "organisations"
SUMMARY_DOCUMENT = ("metadata", "assessment")
SUMMARY_FIELD = "assessment_summary"
TURNS = "turns"
LIFTS = "lifts"  # users/{uid}/conversations/{sid}/lifts/{tid}: created to have the turn read again (a trigger)
# A person's turn carries this mark (true) from its creation until its first claim: the recovery sweep's query
AWAITING_ANALYSIS = "awaiting_analysis"
LINK_COLLECTION = "resume_links"  # resume_links/{link_id}: link records
MAIL_COLLECTION = "mail"  # mail/{id}: the Trigger Email extension's queue
RUNS_COLLECTION = "nightly_runs"  # nightly_runs/{run}/tasks/{key}: nightly runs and their finished tasks
VECTORS = "journal_vectors"  # users/{uid}/journal_vectors/{entry_id}: embeddings of what was said (server-only)
ANSWER_VECTORS = "answer_vectors"  # users/{uid}/answer_vectors/{answer_id}: embeddings of answers (server-only)
PERSON_ROWS = "people"  # organisations/{org}/people/{uid}: roll-up rows
FIGURES = "figures"  # organisations/{org}/figures/shard-NN: the figures' counters (field ``c``)
PRIVACY_LOG = "privacy_log"  # privacy_log/{subject}: erasures, by pseudonym
SET_ASIDE = "set_aside"  # users/{uid}/set_aside/{record_id}: damaged documents set aside (server-only)


class Paths:
    """Document and collection references for one client."""

    def __init__(self, client: firestore.Client) -> None:
        self.client = client

    def user(self, user_id: str) -> firestore.DocumentReference:
        return self.client.collection(USERS).document(user_id)

    def summary(self, user_id: str) -> firestore.DocumentReference:
        return self.user(user_id).collection(SUMMARY_DOCUMENT[0]).document(SUMMARY_DOCUMENT[1])

    def factors(self, user_id: str) -> firestore.CollectionReference:
        return self.user(user_id).collection("factors")

    def factor(self, user_id: str, factor_id: str) -> firestore.DocumentReference:
        return self.factors(user_id).document(factor_id)

    def journal(self, user_id: str, factor_id: str) -> firestore.CollectionReference:
        return self.factor(user_id, factor_id).collection("journal")

    def sessions(self, user_id: str) -> firestore.CollectionReference:
        return self.user(user_id).collection("conversations")

    def session(self, user_id: str, session_id: str) -> firestore.DocumentReference:
        return self.sessions(user_id).document(session_id)

    def turns(self, user_id: str, session_id: str) -> firestore.CollectionReference:
        return self.session(user_id, session_id).collection(TURNS)

    def turn(self, user_id: str, session_id: str, turn_id: str) -> firestore.DocumentReference:
        return self.turns(user_id, session_id).document(turn_id)

    def lift(self, user_id: str, session_id: str, turn_id: str) -> firestore.DocumentReference:
        """The request to read a turn again with its screen lifted: its creation triggers the reading."""
        return self.session(user_id, session_id).collection(LIFTS).document(turn_id)

    def snapshot(self, user_id: str, day: str) -> firestore.DocumentReference:
        return self.user(user_id).collection("snapshots").document(day)

    def commit_lease(self, user_id: str) -> firestore.DocumentReference:
        return self.user(user_id).collection("locks").document("commit")

    def rate(self, user_id: str, day: str) -> firestore.DocumentReference:
        return self.user(user_id).collection("rate").document(day)

    def vectors(self, user_id: str) -> firestore.CollectionReference:
        return self.user(user_id).collection(VECTORS)

    def vector(self, user_id: str, entry_id: str) -> firestore.DocumentReference:
        return self.vectors(user_id).document(entry_id)

    def answer_vectors(self, user_id: str) -> firestore.CollectionReference:
        return self.user(user_id).collection(ANSWER_VECTORS)

    def answer_vector(self, user_id: str, answer_id: str) -> firestore.DocumentReference:
        return self.answer_vectors(user_id).document(answer_id)

    def set_aside(self, user_id: str) -> firestore.CollectionReference:
        return self.user(user_id).collection(SET_ASIDE)

    def organisation(self, org_id: str) -> firestore.DocumentReference:
        return self.client.collection(ORGANISATIONS).document(org_id)

    def person_rows(self, org_id: str) -> firestore.CollectionReference:
        return self.organisation(org_id).collection(PERSON_ROWS)

    def person_row(self, org_id: str, user_id: str) -> firestore.DocumentReference:
        return self.person_rows(org_id).document(user_id)

    def figures(self, org_id: str) -> firestore.CollectionReference:
        return self.organisation(org_id).collection(FIGURES)

    def figures_shard(self, org_id: str, shard: str) -> firestore.DocumentReference:
        return self.figures(org_id).document(shard)

    def legacy_rollup(self, org_id: str) -> firestore.CollectionReference:
        """The roll-up shards of row format 1 (every row of a shard in one document)."""
        return self.organisation(org_id).collection("rollup")
