"""Reads of deployments and their fingerprints: an organisation sees its own, nobody else's."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, QuerySet

from sizing.fingerprint.identity import row_host_key
from sizing.models import Deployment, DeploymentMachine, Fingerprint, Organisation


def deployment_list_for_organisation(*, organisation: Organisation) -> QuerySet[Deployment]:
    return (
        Deployment.objects.filter(organisation=organisation)
        .select_related("model", "gpu")
        .annotate(fingerprint_count=Count("fingerprints"))
        .order_by("name", "pk")
    )


def deployment_get_for_organisation(*, organisation: Organisation, deployment_id: int) -> Deployment | None:
    return deployment_list_for_organisation(organisation=organisation).filter(pk=deployment_id).first()


def fingerprint_list_for_organisation(
    *, organisation: Organisation, deployment: Deployment | None = None
) -> QuerySet[Fingerprint]:
    """Newest capture first; `deployment` narrows to one deployment's machines. The raw texts are left out."""
    rows = (
        Fingerprint.objects.filter(deployment__organisation=organisation)
        .select_related("deployment", "deployment__gpu", "deployment__model", "created_by")
        .defer("raw")
    )
    if deployment is not None:
        rows = rows.filter(deployment=deployment)
    return rows.order_by("-captured_at", "-pk")


def fingerprint_get_for_organisation(*, organisation: Organisation, fingerprint_id: int) -> Fingerprint | None:
    return (
        Fingerprint.objects.filter(deployment__organisation=organisation, pk=fingerprint_id)
        .select_related("deployment", "deployment__gpu", "deployment__model", "deployment__organisation", "created_by")
        .first()
    )


def fingerprint_versions(*, fingerprint: Fingerprint) -> list[Fingerprint]:
    """The same host's fingerprints in the same deployment, oldest first (version 1, 2, ...). A host is its
    `host_key` (sizing.fingerprint.identity); a row stored without one is keyed by its name."""
    rows = Fingerprint.objects.filter(deployment_id=fingerprint.deployment_id)
    rows = (
        rows.filter(host_key=fingerprint.host_key)
        if fingerprint.host_key
        else rows.filter(host_key="", host=fingerprint.host)
    )
    return list(rows.defer("raw", "facts").order_by("captured_at", "pk"))


@dataclass(frozen=True, kw_only=True)
class Host:
    """One machine of a deployment: its key, its name (the newest version's), the GPUs' UUIDs, its versions oldest
    first (version 1, 2, ...) and the version chosen as one of the deployment's machines (None: not chosen)."""

    key: str
    name: str
    named: bool
    gpu_uuids: tuple[str, ...]
    versions: tuple[Fingerprint, ...]
    chosen: Fingerprint | None

    def version_of(self, fingerprint: Fingerprint) -> int | None:
        return next((n for n, row in enumerate(self.versions, start=1) if row.pk == fingerprint.pk), None)


def deployment_hosts(*, deployment: Deployment) -> list[Host]:
    """The deployment's hosts, the one with the newest capture first, each with its versions and chosen version.
    The facts are loaded (the pages show each version's GPUs); the raw texts are not."""
    rows = list(Fingerprint.objects.filter(deployment=deployment).defer("raw").order_by("captured_at", "pk"))
    chosen = dict(DeploymentMachine.objects.filter(deployment=deployment).values_list("host_key", "fingerprint_id"))
    groups: dict[str, list[Fingerprint]] = {}
    for row in rows:
        groups.setdefault(row_host_key(row.host_key, row.host), []).append(row)
    hosts = []
    for key, versions in groups.items():
        newest = versions[-1]
        uuids = next((tuple(row.gpu_uuids) for row in reversed(versions) if row.gpu_uuids), ())
        hosts.append(
            Host(
                key=key,
                name=newest.host,
                named=newest.host_named,
                gpu_uuids=uuids,
                versions=tuple(versions),
                chosen=next((row for row in versions if row.pk == chosen.get(key)), None),
            )
        )
    return sorted(hosts, key=lambda host: (host.versions[-1].captured_at, host.versions[-1].pk), reverse=True)


def chosen_machines(deployment: Deployment) -> list[Fingerprint]:
    """The fingerprint versions chosen as the deployment's machines (one per host), ordered by host name (then
    key); [] when none is chosen: never the newest upload in their place."""
    rows = Fingerprint.objects.filter(machine_choices__deployment=deployment, deployment=deployment).select_related(
        "deployment", "deployment__gpu", "deployment__model", "deployment__organisation"
    )
    return sorted(rows, key=lambda row: (row.host.casefold(), row.host_key, row.pk))
