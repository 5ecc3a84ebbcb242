#!/usr/bin/env bash
# Runs a command inside the Firebase Emulator Suite (Firestore, Auth, Functions),
# with the project's toolchain installed and its environment exported; the
# emulators stop when the command ends, and its exit code is returned.
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
exec firebase emulators:exec --config "$CONFIG" --only firestore,auth,functions --project demo-factor-journal "$*"
