"""Reads of deployments and their fingerprints: an organisation sees its own, nobody else's."""

from __future__ import annotations

from django.db.models import Count, QuerySet

from sizing.models import Deployment, Fingerprint, Organisation


def deployment_list_for_organisation(*, organisation: Organisation) -> QuerySet[Deployment]:
    return (Deployment.objects.filter(organisation=organisation).select_related("model", "gpu")
            .annotate(fingerprint_count=Count("fingerprints")).order_by("name", "pk"))


def deployment_get_for_organisation(*, organisation: Organisation, deployment_id: int) -> Deployment | None:
    return deployment_list_for_organisation(organisation=organisation).filter(pk=deployment_id).first()


def fingerprint_list_for_organisation(*, organisation: Organisation,
                                      deployment: Deployment | None = None) -> QuerySet[Fingerprint]:
    """Newest capture first; `deployment` narrows to one deployment's machines. The raw texts are left out."""
    rows = (Fingerprint.objects.filter(deployment__organisation=organisation)
            .select_related("deployment", "deployment__gpu", "deployment__model", "created_by").defer("raw"))
    if deployment is not None:
        rows = rows.filter(deployment=deployment)
    return rows.order_by("-captured_at", "-pk")


def fingerprint_get_for_organisation(*, organisation: Organisation, fingerprint_id: int) -> Fingerprint | None:
    return (Fingerprint.objects.filter(deployment__organisation=organisation, pk=fingerprint_id)
            .select_related("deployment", "deployment__gpu", "deployment__model", "deployment__organisation",
                            "created_by").first())


def fingerprint_versions(*, fingerprint: Fingerprint) -> list[Fingerprint]:
    """The same host's fingerprints in the same deployment, oldest first (version 1, 2, ...)."""
    return list(Fingerprint.objects.filter(deployment=fingerprint.deployment, host=fingerprint.host)
                .defer("raw", "facts").order_by("captured_at", "pk"))
