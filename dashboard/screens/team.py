from dashboard.views import manager

manager.team_progress()
