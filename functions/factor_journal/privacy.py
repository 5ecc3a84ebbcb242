"""A person's right to their data: export everything held about them, and erase it.

The work is Firestore-wide, so it lives with the repositories
(``factor_journal.repositories.personal_data``, which says where a person's data lives and what
export and erasure promise); this module is the domain's name for it.  The services and the app reach it
through the store, ``FactorJournalStore.personal_data``.
"""

from factor_journal.repositories.personal_data import (
    EXPORT_FORMAT,
    MAIL_COLLECTION,
    PRIVACY_LOG,
    ErasureReport,
    PersonalData,
    subject_of,
)

__all__ = ["EXPORT_FORMAT", "MAIL_COLLECTION", "PRIVACY_LOG", "ErasureReport", "PersonalData", "subject_of"]
