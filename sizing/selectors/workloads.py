"""Reads of workload profiles: an organisation sees its own profiles and the shipped samples, nobody else's."""

from __future__ import annotations

from django.db.models import F, Q, QuerySet

from sizing.models import Organisation, WorkloadProfile


def workload_profile_list_for_organisation(*, organisation: Organisation) -> QuerySet[WorkloadProfile]:
    """The shipped samples first, then the organisation's own profiles, each group by name."""
    return (
        WorkloadProfile.objects.filter(Q(organisation__isnull=True) | Q(organisation=organisation))
        .select_related("created_by")
        .order_by(F("organisation").asc(nulls_first=True), "name", "pk")
    )


def workload_profile_get_for_organisation(
    *, organisation: Organisation, workload_profile_id: int
) -> WorkloadProfile | None:
    """One of the organisation's profiles or a sample; None for another organisation's (the API answers 404)."""
    return workload_profile_list_for_organisation(organisation=organisation).filter(pk=workload_profile_id).first()
