from dashboard.views import where_are_we

where_are_we.render()
