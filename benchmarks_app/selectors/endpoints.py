"""Reads of registered inference endpoints: an organisation sees its own, nobody else's."""

from __future__ import annotations

from django.db.models import QuerySet

from benchmarks_app.models import Endpoint
from sizing.models import Organisation


def endpoint_list_for_organisation(*, organisation: Organisation) -> QuerySet[Endpoint]:
    return Endpoint.objects.filter(organisation=organisation).select_related("created_by").order_by("name", "pk")


def endpoint_get_for_organisation(*, organisation: Organisation, endpoint_id: int) -> Endpoint | None:
    return (
        Endpoint.objects.filter(organisation=organisation, pk=endpoint_id)
        .select_related("organisation", "created_by")
        .first()
    )
