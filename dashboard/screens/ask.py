from dashboard import brand
from dashboard.views import ask_why

brand.set_page("Ask why")
ask_why.render()
