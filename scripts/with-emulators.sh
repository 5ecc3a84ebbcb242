#!/usr/bin/env bash
# Runs a command inside the Firebase Emulator Suite (Firestore, Auth, Functions, Pub/Sub; the Functions
# emulator brings the Eventarc and Cloud Tasks emulators), with the project's toolchain installed
# and its environment exported; the emulators stop when the command ends, and its exit code is
# returned.  scripts/supervise.py then stops whatever the run left running (firebase-tools leaves
# the Functions emulator's Python worker behind) -- by process group and a per-run environment
# tag, never by name -- and fails the run if a process of it is still alive or an emulator port of
# this configuration is still bound.
#   scripts/with-emulators.sh COMMAND [ARGS...]   (joined into one shell command line)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=toolchain.sh
source "$ROOT/scripts/toolchain.sh"
cd "$ROOT"

# The Functions emulator's secrets (FJ_LINK_SECRET): the committed demo value unless a local one exists.
[ -f functions/.secret.local ] || cp functions/.secret.local.example functions/.secret.local

# FJ_EMULATOR_PORT_OFFSET=N moves every emulator port by N (parallel checkouts on one machine).
CONFIG="$(.venv/bin/python scripts/firebase_config.py)"
# Reminder mails written under the emulators (make demo's nightly run, tests) name the Functions emulator's
# `unsubscribe` function as their one-click address, not the deployed one, unless FJ_UNSUBSCRIBE_URL is set;
# the emulators and the command inherit it (the Functions emulator's worker too).
FJ_UNSUBSCRIBE_URL="${FJ_UNSUBSCRIBE_URL:-$(.venv/bin/python scripts/firebase_config.py --function-url unsubscribe demo-factor-journal)}"
export FJ_UNSUBSCRIBE_URL
exec .venv/bin/python scripts/supervise.py --config "$CONFIG" -- \
  firebase emulators:exec --config "$CONFIG" --only "$FJ_EMULATORS" --project demo-factor-journal "$*"
