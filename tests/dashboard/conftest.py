"""Fixtures shared by the app tests (defined in test_app.py, where the first app tests live)."""

from test_app import app_database, assessed_user, signer  # noqa: F401
