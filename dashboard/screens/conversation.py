from dashboard.views import conversation

conversation.render()
