"""The quote API for sales tooling (filled in by the quote work)."""

app_name = "quotes"
urlpatterns: list = []
