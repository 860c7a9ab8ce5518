"""The Django admin of registered inference endpoints. The encrypted API key is not a form field and is never shown:
the list says only whether a key is set; keys are entered on the Endpoints page or through the API."""

from django.contrib import admin

from benchmarks_app.models import Endpoint


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    list_display = ("name", "organisation", "kind", "model_name", "base_url", "api_key_set", "updated_at")
    list_filter = ("kind",)
    search_fields = ("name", "model_name", "base_url")
    exclude = ("api_key_encrypted",)
    readonly_fields = ("api_key_set", "created_by", "created_at", "updated_at")

    @admin.display(boolean=True, description="API key set")
    def api_key_set(self, obj: Endpoint) -> bool:
        return obj.has_api_key
