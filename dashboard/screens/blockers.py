from dashboard.views import manager

manager.organisation_blockers()
