#!/usr/bin/env bash
# The main job, run inside the emulators by `make demo`: seed the demo organisation through the
# real trigger, print the resume and manager links, then serve the dashboard until Ctrl-C.
# The emulators run no scheduled functions, so the recovery sweep the deployment runs every 5 minutes
# (retrying failed turns, taking over claims whose holder died) runs here every minute in the
# background; supervise.py stops it with everything else.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
.venv/bin/python -W ignore::UserWarning -m demo.seed
( while sleep 60; do .venv/bin/python -W ignore -m factor_journal recover >/dev/null 2>&1 || true; done ) &
echo
echo "Dashboard: http://localhost:${FJ_DASHBOARD_PORT:-8501}  (open it through one of the links above; Ctrl-C stops everything)"
exec .venv/bin/streamlit run dashboard/app.py --server.headless true --server.port "${FJ_DASHBOARD_PORT:-8501}" \
  --browser.gatherUsageStats false
