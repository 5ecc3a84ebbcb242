"""The domain's words for an inference status: one table, read by every page and by Ask."""

from factor_journal.models import InferenceStatus, status_words


def test_every_status_has_its_words_and_an_unknown_one_reads_without_underscores():
    assert {status: status_words(status) for status in InferenceStatus} == {
        InferenceStatus.unassessed: "not assessed",
        InferenceStatus.unconfirmed: "unconfirmed",
        InferenceStatus.confirmed: "confirmed",
        InferenceStatus.user_provided: "yours",
    }
    assert status_words("user_provided") == "yours"  # as stored: a plain string
    assert status_words("held_for_review") == "held for review"
