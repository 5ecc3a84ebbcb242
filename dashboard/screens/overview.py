from dashboard import brand
from dashboard.views import where_are_we

brand.set_page("Where are we")
where_are_we.render()
