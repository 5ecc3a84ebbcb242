from dashboard import brand
from dashboard.views import capabilities

brand.set_page("Capabilities")
capabilities.render()
