from dashboard import brand
from dashboard.views import history

brand.set_page("Factor history")
history.render()
