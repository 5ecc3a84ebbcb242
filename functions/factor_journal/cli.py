"""Command line: ``python -m factor_journal <command>`` (also installed as ``factor-journal``).

reprocess --user U [--failed-only]   replay a user's turns through the pipeline (idempotent)
rebuild-summary --user U             recompute a summary from the factor documents (repair)
link --user U [--session S] [--days N] [--manager]   print a signed resume (or manager) link
revoke-link TOKEN_OR_ID              withdraw a link
daily [--inline]                     start the nightly run now (enqueue its tasks; --inline: do them here)
refresh-rows [--org ORG]             rebuild roll-up rows and summaries after a catalog change, check figures
recover                              retry the turns whose retry time has come (the sweeper's job)
export --user U [--out FILE]         everything held about a person, as JSON (stdout or FILE)
erase --user U --yes                 erase everything held about a person (resumable: run it again
                                     to finish an interrupted erasure); prints document counts only
set-aside [--user U]                 the damaged documents set aside (never deleted), oldest first: when found, what
                                     kind, whose, where, what does not read (factor_journal.setaside)
reembed [--user U] [--after U] [--check]   bring every journal entry's and answer's vector to the running embedding
                                     model (FJ_EMBEDDER): embeds entries and answers whose vector is missing, of
                                     another model or dimension, or of another text, removes vectors whose entry
                                     or answer is gone; idempotent and resumable (a second run writes nothing;
                                     --after resumes after a user id); --check only counts and exits 1 if
                                     anything is stale
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from tqdm import tqdm

from factor_journal import runtime
from factor_journal.documents import ExtractionOutcome, TurnStatus
from factor_journal.errors import FactorJournalError
from factor_journal.links import DEFAULT_TTL, LinkSigner, link_url
from factor_journal.pipeline import TurnProcessor


def reprocess(user_id: str, failed_only: bool, extractor: str | None) -> Counter[str]:
    """Replay the user's user-role turns, oldest first; done turns are skipped, so re-running is safe.

    ``failed_only`` takes the turns not settled: failed, needing attention, rate limited, claimed by an
    instance whose lease ran out, and turns never analysed at all (a crash before the first claim)."""
    store = runtime.store()
    processor = TurnProcessor(store, runtime.make_extractor(extractor))
    now = datetime.now(UTC)
    work = []
    for ref, data in store.ledger.of_person(user_id):
        outcome = ExtractionOutcome.of(data)
        if data.get("role") != "user" or (failed_only and not _unsettled(outcome, now)):
            continue
        work.append(ref)
    outcomes: Counter[str] = Counter()
    for ref in tqdm(work, desc=f"reprocess {user_id}", unit="turn", file=sys.stderr):
        outcomes[processor.process(ref.user_id, ref.session_id, ref.turn_id, force=True).status] += 1
    return outcomes


def _unsettled(outcome: ExtractionOutcome | None, now: datetime) -> bool:
    if outcome is None:
        return True
    if outcome.status == TurnStatus.processing:
        return outcome.lease_expired(now)
    return outcome.status in (TurnStatus.failed, TurnStatus.needs_attention, TurnStatus.rate_limited)


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command; domain errors are printed as one readable line (exit status 2)."""
    try:
        return _main(argv)
    except FactorJournalError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _main(argv: Sequence[str] | None) -> int:
    parser = argparse.ArgumentParser(
        prog="factor-journal", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    replay = commands.add_parser("reprocess", help="replay a user's turns through the extraction pipeline")
    replay.add_argument("--user", required=True)
    replay.add_argument("--failed-only", action="store_true", help="only turns whose extraction failed")
    replay.add_argument("--extractor", choices=["offline", "gemini"], help="default: FJ_EXTRACTOR or offline")
    rebuild = commands.add_parser("rebuild-summary", help="recompute a user's summary by scanning factors")
    rebuild.add_argument("--user", required=True)
    link = commands.add_parser("link", help="print a signed link into the app")
    link.add_argument("--user", required=True)
    link.add_argument("--session")
    link.add_argument("--days", type=float, default=14)
    link.add_argument("--manager", action="store_true", help="a manager link for the user's organisation")
    revoke = commands.add_parser("revoke-link", help="withdraw a link")
    revoke.add_argument("token")
    daily = commands.add_parser("daily", help="start the nightly roll-ups and reminders now")
    daily.add_argument("--inline", action="store_true", help="run every task in this process instead of enqueueing")
    commands.add_parser("recover", help="retry every turn whose retry time has come (what the sweeper runs)")
    refresh = commands.add_parser(
        "refresh-rows", help="after a catalog or freshness change: rebuild roll-up rows and summaries, check figures"
    )
    refresh.add_argument("--org", help="one organisation (default: every one whose rows were built for another)")
    export = commands.add_parser("export", help="everything held about a person, as JSON")
    export.add_argument("--user", required=True)
    export.add_argument("--out", help="write to this file instead of standard output")
    erase = commands.add_parser("erase", help="erase everything held about a person (resumable)")
    erase.add_argument("--user", required=True)
    erase.add_argument("--yes", action="store_true", help="confirm: this cannot be undone")
    aside = commands.add_parser("set-aside", help="list the damaged documents set aside (never deleted)")
    aside.add_argument("--user", help="one person (default: everyone)")
    reembed_ = commands.add_parser("reembed", help="bring journal and answer vectors to the running embedding model")
    reembed_.add_argument("--user", help="one person (default: everyone)")
    reembed_.add_argument("--after", help="resume: only people whose id sorts after this one")
    reembed_.add_argument("--check", action="store_true", help="only count stale, missing and orphan vectors")
    reembed_.add_argument("--embedder", choices=["local", "gemini"], help="default: FJ_EMBEDDER")
    args = parser.parse_args(argv)

    if args.command == "reembed":
        return _reembed(args)
    if args.command == "set-aside":
        return _set_aside(args.user)
    if args.command == "reprocess":
        outcomes = reprocess(args.user, args.failed_only, args.extractor)
        print(", ".join(f"{status}: {count}" for status, count in sorted(outcomes.items())) or "no turns to replay")
        return 1 if outcomes.get("failed") or outcomes.get("needs_attention") else 0
    if args.command == "rebuild-summary":
        summary = runtime.store().rebuild_summary_by_scan(args.user, write=True)
        print(
            f"{args.user}: {summary.overall.total_factors_assessed} factors assessed, "
            f"tier {summary.overall.decision_tier}"
        )
        return 0
    if args.command == "link":
        print(issue_link(args.user, args.session, timedelta(days=args.days), manager=args.manager))
        return 0
    if args.command == "revoke-link":
        LinkSigner(runtime.store().links).revoke(args.token)
        print("revoked")
        return 0
    if args.command == "recover":
        counts = runtime.recover_turns()
        print(", ".join(f"{status}: {count}" for status, count in sorted(counts.items())) or "no turns due")
        return 0
    if args.command in ("export", "erase"):
        return _privacy(args)
    if args.command == "refresh-rows":
        return _refresh_rows(args.org)
    if args.command == "daily":
        if args.inline:
            result: dict[str, Any] = runtime.daily_jobs_inline()
            done = result["progress"]
            print(
                f"run {result['run_id']}: {result['tasks']} tasks, {done['organisations']} organisations recorded, "
                f"{done['reminders_sent']} reminders queued"
            )
            for org_id, reason in sorted(done["skipped_organisations"].items()):
                print(f"organisation {org_id} skipped: its document is damaged ({reason})")
            return 0
        started: dict[str, Any] = runtime.daily_jobs()
        result = started
        print(f"run {result['run_id']}: enqueued {', '.join(result['enqueued']) or 'nothing (already started)'}")
        return 0
    return 2


def _set_aside(user_id: str | None) -> int:
    """Print the documents set aside, one per line (when found, kind, person, where, what does not read), and how
    many there are."""
    records = runtime.store().set_aside.listed(user_id)
    for record in records:
        print(f"{record.found_at:%Y-%m-%d %H:%M:%S}  {record.kind}  {record.user_id}  {record.path}  {record.error}")
    print(f"{len(records)} document(s) set aside" if records else "nothing set aside", file=sys.stderr)
    return 0


def _refresh_rows(org_id: str | None) -> int:
    """Rebuild the rows (and summaries) of every organisation whose rows were built for another catalog, or of
    ``org_id``, then check its figures: what the nightly job does, at once (run after a deploy that changes the
    catalog or its freshness; run again, it rebuilds nothing)."""
    from factor_journal.organisation import DamagedOrganisationError, OrganisationDirectory
    from factor_journal.upkeep import RowUpkeep

    store = runtime.store()
    directory, upkeep = OrganisationDirectory(store), RowUpkeep(store)
    for org in [org_id] if org_id else directory.organisation_ids():
        try:
            organisation = directory.get(org)
        except DamagedOrganisationError as damage:  # one damaged organisation never stops the others
            print(f"{org}: skipped, its document is damaged ({damage.reason})", file=sys.stderr)
            if org_id:
                return 2
            continue
        if organisation is None:
            print(f"error: no organisation {org!r}", file=sys.stderr)
            return 2
        rebuilt = upkeep.refresh(org) if org_id or upkeep.needs_refresh(organisation.rows_stamp) else 0
        repaired = upkeep.check(org).repaired
        print(f"{org}: {rebuilt} rows rebuilt for {upkeep.stamp}; figures {'repaired' if repaired else 'agree'}")
    return 0


def _reembed(args: argparse.Namespace) -> int:
    from factor_journal.embedding import default_embedder, embedder_named
    from factor_journal.repositories.vectors import ReembedReport

    embedder = embedder_named(args.embedder) if args.embedder else default_embedder()
    if embedder is None:
        print("error: FJ_EMBEDDER=none: no embedding model to re-embed with", file=sys.stderr)
        return 2
    vectors = runtime.store().vectors
    report = ReembedReport()
    people = [args.user] if args.user else vectors.user_ids(after=args.after)
    for user_id in people:
        vectors.reembed_user(user_id, embedder, report, dry_run=args.check)
        if report.people % 100 == 0:
            print(f"... {report.people} people, through {user_id} (resume with --after {user_id})", file=sys.stderr)
    models = ", ".join(f"{model}: {count}" for model, count in sorted(report.models.items())) or "none"
    answers = report.answers
    print(
        f"model {embedder.model_id}: {report.people} people, {report.entries} entries with words; "
        f"{report.current} current, {report.stale} stale, {report.missing} missing, {report.orphans} orphaned; "
        f"{report.written} written, {report.removed} removed (vectors found before: {models}); "
        f"answers: {answers.answers} ({answers.current} current, {answers.stale} stale, {answers.missing} missing, "
        f"{answers.orphans} orphaned), {answers.written} answer vectors written, {answers.removed} removed"
    )
    return 1 if args.check and report.needs_work else 0


def _privacy(args: argparse.Namespace) -> int:
    data = runtime.store().personal_data
    if args.command == "export":
        text = data.export_json(args.user)
        if args.out:
            with open(args.out, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
            print(f"written to {args.out}", file=sys.stderr)
        else:
            print(text)
        return 0
    if not args.yes:
        print("error: erasure cannot be undone; add --yes to confirm", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    report = data.erase(args.user)
    counts = ", ".join(f"{step}: {count}" for step, count in report.deleted.items())
    print(f"erased subject {report.subject}: {report.total} documents ({counts})")
    return 0


def issue_link(
    user_id: str, session_id: str | None = None, ttl: timedelta = DEFAULT_TTL, *, manager: bool = False
) -> str:
    """A signed link into the app for the user (a manager link opens their organisation)."""
    signer = LinkSigner(runtime.store().links)
    org_id = None
    if manager:
        profile = runtime.store().get_user(user_id)
        org_id = profile.org_id if profile else None
    token = signer.issue(user_id, session_id, kind="manager" if manager else "resume", ttl=ttl, org_id=org_id)
    return link_url(runtime.app_url(), token)


if __name__ == "__main__":
    sys.exit(main())
