from dashboard.views import history

history.render()
