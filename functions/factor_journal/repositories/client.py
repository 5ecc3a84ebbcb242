"""The one Firestore client every repository uses, with honest operation counts.

``CountedClient`` is a ``google.cloud.firestore.Client`` whose RPC layer counts
what Firestore bills: each document a lookup or query returns (a lookup of a
missing document and a query returning nothing count one read, as Firestore
bills them) and each write a commit or batch write carries.  No caller keeps
counts by hand, so a read nobody meant to make still shows in the figures the
benchmarks and tests rely on.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from google.api_core import exceptions as api_exceptions
from google.api_core import retry as api_retry
from google.cloud import firestore

from factor_journal.repositories.paths import Paths

T = TypeVar("T")
TRANSACTION_ATTEMPTS = 5

# The Firestore types the rest of the package may name (it never imports google.cloud.firestore itself).
FirestoreClient = firestore.Client
DocumentReference = firestore.DocumentReference
CollectionReference = firestore.CollectionReference
Transaction = firestore.Transaction


@dataclass
class OpStats:
    """Document reads and writes a client has issued (retried attempts included)."""

    reads: int = 0
    writes: int = 0
    transactions: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, *, reads: int = 0, writes: int = 0, transactions: int = 0) -> None:
        with self._lock:
            self.reads += reads
            self.writes += writes
            self.transactions += transactions

    def reset(self) -> None:
        with self._lock:
            self.reads = self.writes = self.transactions = 0


def _field(request: Any, name: str) -> Any:
    if isinstance(request, dict):
        return request.get(name)
    return getattr(request, name, None)


class _CountingApi:
    """Wraps the GAPIC Firestore API: every RPC that reads or writes documents is counted."""

    def __init__(self, inner: Any, stats: OpStats) -> None:
        self._inner = inner
        self._stats = stats

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def batch_get_documents(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        for response in self._inner.batch_get_documents(*args, **kwargs):
            if _field(response, "found") or _field(response, "missing"):
                self._stats.add(reads=1)
            yield response

    def run_query(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        returned = 0
        try:
            for response in self._inner.run_query(*args, **kwargs):
                document = getattr(response, "document", None)
                if document is not None and bool(getattr(document, "name", None)):
                    returned += 1
                    self._stats.add(reads=1)
                yield response
        finally:
            if returned == 0:
                self._stats.add(reads=1)  # an empty query is billed one read

    def run_aggregation_query(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        self._stats.add(reads=1)
        yield from self._inner.run_aggregation_query(*args, **kwargs)

    def commit(self, *args: Any, **kwargs: Any) -> Any:
        request = kwargs.get("request", args[0] if args else None)
        writes = _field(request, "writes") or []
        self._stats.add(writes=len(writes))
        return self._inner.commit(*args, **kwargs)

    def batch_write(self, *args: Any, **kwargs: Any) -> Any:
        request = kwargs.get("request", args[0] if args else None)
        self._stats.add(writes=len(_field(request, "writes") or []))
        return self._inner.batch_write(*args, **kwargs)


class CountedClient(firestore.Client):
    """A Firestore client that counts its reads and writes in ``stats``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stats = OpStats()
        self._counting_api: _CountingApi | None = None

    @classmethod
    def like(cls, client: firestore.Client) -> CountedClient:
        """A counted client for the same project and database as ``client`` (its own counts)."""
        if isinstance(client, CountedClient):
            return client
        return cls(project=client.project, database=client._database, credentials=client._credentials)

    @property
    def _firestore_api(self) -> Any:
        inner = super()._firestore_api
        if self._counting_api is None or self._counting_api._inner is not inner:
            self._counting_api = _CountingApi(inner, self.stats)
        return self._counting_api


def connect(project: str, database: str = "(default)") -> CountedClient:
    """A counted client for the project's database: the emulator's when FIRESTORE_EMULATOR_HOST is set,
    otherwise production with the runtime's default credentials."""
    return CountedClient(project=project, database=database)


def is_contention(error: BaseException) -> bool:
    """An aborted transaction (or the client's 'attempts exhausted' wrapper around one)."""
    return isinstance(error, api_exceptions.Aborted) or (
        type(error) is ValueError and isinstance(error.__cause__, api_exceptions.Aborted)
    )


def run_transaction(
    client: CountedClient, function: Callable[[firestore.Transaction], T], *, timeout: float = 120.0
) -> T:
    """Run a ``@firestore.transactional`` function; contention is retried with jittered backoff
    until ``timeout`` seconds have passed (then the last error is raised)."""
    client.stats.add(transactions=1)
    retry = api_retry.Retry(predicate=is_contention, initial=0.02, maximum=1.0, multiplier=2.0, timeout=timeout)
    return retry(lambda: function(client.transaction(max_attempts=TRANSACTION_ATTEMPTS)))()


def jittered_sleep(attempt: int, base: float = 0.01, cap: float = 0.2) -> None:
    """Full-jitter exponential pause before retry number ``attempt`` (1-based)."""
    time.sleep(random.uniform(0, min(cap, base * 2 ** min(attempt, 10))))


class Repository:
    """What every repository of a user's data holds: the counted client, its paths, the catalog and graph
    the documents are read against, and how long a transaction may retry contention."""

    def __init__(self, client: CountedClient, catalog: Any, graph: Any, *, contention_timeout: float = 120.0) -> None:

        self.client = client
        self.paths = Paths(client)
        self.catalog = catalog
        self.graph = graph
        self.contention_timeout = contention_timeout
