"""The quote API for sales tooling: POST quotes/ (202 and the quote's URL), GET quotes/, GET quotes/ID/."""

from django.urls import path

from sizing.apis.quotes import QuoteDetailApi, QuoteListApi

app_name = "quotes"
urlpatterns = [
    path("quotes/", QuoteListApi.as_view(), name="quote-list"),
    path("quotes/<id:quote_id>/", QuoteDetailApi.as_view(), name="quote-detail"),
]
