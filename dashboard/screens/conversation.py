from dashboard import brand
from dashboard.views import conversation

brand.set_page("Continue the conversation")
conversation.render()
