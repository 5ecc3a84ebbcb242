from dashboard.views import review

review.render()
