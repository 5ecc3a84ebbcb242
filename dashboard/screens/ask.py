from dashboard.views import ask_why

ask_why.render()
