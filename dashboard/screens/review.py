from dashboard import brand
from dashboard.views import review

brand.set_page("Review")
review.render()
