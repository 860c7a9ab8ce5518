"""The signed-in user's own API keys and who they are."""

from django.urls import path

from sizing.apis.accounts import ApiKeyDetailApi, ApiKeyListApi, MeApi

app_name = "accounts"
urlpatterns = [
    path("me/", MeApi.as_view(), name="me"),
    path("api-keys/", ApiKeyListApi.as_view(), name="api-key-list"),
    path("api-keys/<id:key_id>/", ApiKeyDetailApi.as_view(), name="api-key-detail"),
]
