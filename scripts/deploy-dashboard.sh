#!/usr/bin/env bash
# Deploys the dashboard to Cloud Run from this source: Cloud Build builds the Dockerfile (only what
# .gcloudignore lets through is uploaded) and Cloud Run serves it. The functions, rules and indexes
# deploy with `firebase deploy`; this is the one part that does not.
#   scripts/deploy-dashboard.sh [SERVICE]      (default service name: factor-journal-app)
# Environment: GCLOUD_PROJECT (else gcloud's configured project), FJ_REGION (default europe-west1, the
# functions' region). FJ_* settings in functions/.env (the functions' configuration) are passed on, so
# both sides agree on FJ_APP_URL and FJ_FIRESTORE_DATABASE. FJ_LINK_SECRET comes from Secret Manager.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PROJECT="${GCLOUD_PROJECT:-$(gcloud config get-value project 2>/dev/null || true)}"
if [ -z "$PROJECT" ]; then
  echo "deploy-dashboard: set GCLOUD_PROJECT or run 'gcloud config set project ID' first" >&2
  exit 2
fi
SETTINGS="GCLOUD_PROJECT=$PROJECT"
if [ -f functions/.env ]; then
  while IFS= read -r line; do
    case "$line" in FJ_*=*) SETTINGS="$SETTINGS,$line" ;; esac
  done < functions/.env
fi
# Public: the app's own authorisation is the signed link in every address (see docs/security.md).
exec gcloud run deploy "${1:-factor-journal-app}" --source . --project "$PROJECT" \
  --region "${FJ_REGION:-europe-west1}" --allow-unauthenticated --memory 1Gi \
  --set-secrets FJ_LINK_SECRET=FJ_LINK_SECRET:latest --set-env-vars "$SETTINGS"
