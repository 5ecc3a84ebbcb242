#!/usr/bin/env bash
# The main job, run inside the emulators by `make demo`: seed the demo organisation, its answers read as
# production reads them (through the Gemini path, replaying the recorded answers of a language model in Gemini's
# seat, eval/seat/answers/demo.jsonl; the configured reader where the seat has no answer: demo/seed.py), with the
# trigger switched off meanwhile and on again after, print the resume and manager links, then serve the
# dashboard until Ctrl-C; answers typed in the dashboard are read by the trigger with the configured reader.
# The Emulator Suite has no Cloud Scheduler: scripts/scheduler.py calls the scheduled functions (the
# recovery sweep every 5 minutes, the nightly run at 07:00 Berlin time) in the Functions emulator on their
# schedules, in the background; supervise.py stops it with everything else.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PORT="${FJ_DASHBOARD_PORT:-8501}"
export FJ_APP_URL="${FJ_APP_URL:-http://localhost:$PORT}"  # the printed links open the dashboard this run serves
.venv/bin/python -W ignore::UserWarning -m demo.seed
.venv/bin/python scripts/scheduler.py run &
echo
echo "Dashboard: http://localhost:$PORT  (open it through one of the links above; Ctrl-C stops everything)"
exec .venv/bin/python -m dashboard.serve --server.headless true --server.port "$PORT" \
  --browser.gatherUsageStats false
