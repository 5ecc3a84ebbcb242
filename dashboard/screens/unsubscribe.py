from dashboard import brand
from dashboard.views import unsubscribe

brand.set_page("Reminder emails")
unsubscribe.render()
