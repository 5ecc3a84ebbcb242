"""Command line: ``python -m factor_journal <command>`` (also installed as ``factor-journal``).

  reprocess --user U [--failed-only]   replay a user's turns through the pipeline (idempotent)
  rebuild-summary --user U             recompute a summary from the factor documents (repair)
  link --user U [--session S] [--days N] [--manager]   print a signed resume (or manager) link
  revoke-link TOKEN_OR_ID              withdraw a link
  daily [--inline]                     start the nightly run now (enqueue its tasks; --inline: do them here)
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from datetime import timedelta

from tqdm import tqdm

from factor_journal import runtime
from factor_journal.errors import FactorJournalError
from factor_journal.links import DEFAULT_TTL, LinkSigner, link_url
from factor_journal.pipeline import TurnProcessor


def reprocess(user_id: str, failed_only: bool, extractor: str | None) -> Counter[str]:
    """Replay the user's user-role turns, oldest first; done turns are skipped, so re-running is safe."""
    store = runtime.store()
    processor = TurnProcessor(store, runtime.make_extractor(extractor))
    work = []
    for session_id in store.session_ids(user_id):
        for turn_id, data in store.session_turns(user_id, session_id):
            status = (data.get("extraction") or {}).get("status")
            if data.get("role") != "user" or (failed_only and status != "failed"):
                continue
            work.append((session_id, turn_id, data))
    outcomes: Counter[str] = Counter()
    for session_id, turn_id, data in tqdm(work, desc=f"reprocess {user_id}", unit="turn", file=sys.stderr):
        outcomes[processor.process(user_id, session_id, turn_id, data).status] += 1
    return outcomes


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command; domain errors are printed as one readable line (exit status 2)."""
    try:
        return _main(argv)
    except FactorJournalError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _main(argv: Sequence[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="factor-journal", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    args = parser.parse_args(argv)

    if args.command == "reprocess":
        outcomes = reprocess(args.user, args.failed_only, args.extractor)
        print(", ".join(f"{status}: {count}" for status, count in sorted(outcomes.items())) or "no turns to replay")
        return 1 if outcomes.get("failed") else 0
    if args.command == "rebuild-summary":
        summary = runtime.store().rebuild_summary_by_scan(args.user, write=True)
        print(f"{args.user}: {summary.overall.total_factors_assessed} factors assessed, tier {summary.overall.decision_tier}")
        return 0
    if args.command == "link":
        print(issue_link(args.user, args.session, timedelta(days=args.days), manager=args.manager))
        return 0
    if args.command == "revoke-link":
        LinkSigner(runtime.firestore_client()).revoke(args.token)
        print("revoked")
        return 0
    if args.command == "daily":
        if args.inline:
            result = runtime.daily_jobs_inline()
            done = result["progress"]
            print(f"run {result['run_id']}: {result['tasks']} tasks, {done['organisations']} organisations recorded, "
                  f"{done['reminders_sent']} reminders queued")  # fmt: skip
            return 0
        result = runtime.daily_jobs()
        print(f"run {result['run_id']}: enqueued {', '.join(result['enqueued']) or 'nothing (already started)'}")
        return 0
    return 2


def issue_link(user_id: str, session_id: str | None = None, ttl: timedelta = DEFAULT_TTL, *, manager: bool = False) -> str:
    """A signed link into the app for the user (a manager link opens their organisation)."""
    signer = LinkSigner(runtime.firestore_client())
    org_id = None
    if manager:
        profile = runtime.store().get_user(user_id)
        org_id = profile.org_id if profile else None
    token = signer.issue(user_id, session_id, kind="manager" if manager else "resume", ttl=ttl, org_id=org_id)
    return link_url(runtime.app_url(), token)


if __name__ == "__main__":
    sys.exit(main())
