from dashboard import brand
from dashboard.views import manager

brand.set_page("Blockers")
manager.organisation_blockers()
