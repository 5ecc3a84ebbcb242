from dashboard import brand
from dashboard.views import manager

brand.set_page("Team progress")
manager.team_progress()
