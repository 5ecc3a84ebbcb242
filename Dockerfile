# The dashboard's container, for Cloud Run (`make deploy-dashboard` builds it from this source with
# Cloud Build). The domain package comes from the project itself (`pip install .[dashboard]`), the same
# code the functions run; the functions themselves deploy with `firebase deploy`.
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app

COPY pyproject.toml README.md ./
COPY functions/factor_journal functions/factor_journal
RUN pip install ".[dashboard]"

COPY .streamlit .streamlit
COPY dashboard dashboard

# Cloud Run sends traffic to $PORT; the app's own settings come from FJ_* variables and FJ_LINK_SECRET.
# dashboard.serve: `streamlit run dashboard/app.py` with the app's modules and its Firestore client loaded first
CMD ["sh", "-c", "exec python -m dashboard.serve --server.port=${PORT:-8080} --server.address=0.0.0.0 --server.headless=true --browser.gatherUsageStats=false"]
