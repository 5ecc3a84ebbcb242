from dashboard.views import capabilities

capabilities.render()
