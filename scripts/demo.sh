#!/usr/bin/env bash
# The main job, run inside the emulators by `make demo`: seed the demo organisation
# through the real trigger, then serve the dashboard until Ctrl-C.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
.venv/bin/python -m demo.seed
if [[ -f dashboard/app.py ]]; then
  exec .venv/bin/streamlit run dashboard/app.py --server.headless true --server.port "${FJ_DASHBOARD_PORT:-8501}" \
    --browser.gatherUsageStats false
fi
echo "Demo data seeded. Emulators keep running until Ctrl-C."
while true; do sleep 3600; done
