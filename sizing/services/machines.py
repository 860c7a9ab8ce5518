"""Writes of a deployment's hosts and machines: which host an upload is a version of, a person's merge of two hosts
that are one machine, and the choice of the machines the deployment runs on (one fingerprint version per host).

Refusals are SizingError INVALID_ARGUMENT (the API's 400) with the field's message under `extra.fields` and nothing
written: a merge of two hosts whose GPUs' UUIDs differ (two machines), a chosen fingerprint of another deployment or
organisation, two versions of one host.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction

from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.fingerprint.identity import (
    HostChoice,
    HostIdentity,
    KnownHost,
    host_for,
    merge_conflict,
    row_host_key,
)
from sizing.models import Deployment, DeploymentMachine, Fingerprint


def _invalid(field: str, message: str, **extra: Any) -> SizingError:
    return SizingError(
        code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={**extra, "fields": {field: [message]}}
    )


def _row_identity(row: Fingerprint) -> HostIdentity:
    """A stored version's identity from its stored fields (its name counts only when the file or the uploader gave
    it, or a person merged it into a named host)."""
    return HostIdentity(
        hostname=row.host if row.host_named else None, gpu_uuids=tuple(str(uuid) for uuid in row.gpu_uuids or ())
    )


def known_hosts(*, deployment: Deployment, exclude_pk: int | None = None) -> list[KnownHost]:
    """The deployment's hosts, the one with the newest capture first, each with its versions' identities and the
    newest version's name."""
    rows = (
        Fingerprint.objects.filter(deployment=deployment)
        .exclude(pk=exclude_pk)
        .only("pk", "host", "host_key", "host_named", "gpu_uuids", "captured_at")
        .order_by("-captured_at", "-pk")
    )
    hosts: dict[str, dict[str, Any]] = {}
    for row in rows:
        host = hosts.setdefault(
            row_host_key(row.host_key, row.host), {"name": row.host, "named": row.host_named, "identities": []}
        )
        host["identities"].append(_row_identity(row))
    return [
        KnownHost(key=key, name=host["name"], named=host["named"], identities=tuple(host["identities"]))
        for key, host in hosts.items()
    ]


def fingerprint_host_choose(
    *, deployment: Deployment, facts: Mapping[str, Any], identity: HostIdentity, upload_sha256: str
) -> HostChoice:
    """The host a new upload of `deployment` is a version of (sizing.fingerprint.identity.host_for)."""
    return host_for(facts, identity, upload_sha256=upload_sha256, known=known_hosts(deployment=deployment))


def _host_rows(deployment: Deployment, key: str) -> list[Fingerprint]:
    rows = Fingerprint.objects.filter(deployment=deployment).defer("raw", "facts").order_by("captured_at", "pk")
    return [row for row in rows if row_host_key(row.host_key, row.host) == key]


def _uuid_set(rows: Sequence[Fingerprint]) -> frozenset[str]:
    return next(
        (frozenset(str(uuid).casefold() for uuid in row.gpu_uuids) for row in reversed(rows) if row.gpu_uuids),
        frozenset(),
    )


@transaction.atomic
def fingerprint_host_merge(*, deployment: Deployment, host_key: str, into_host_key: str) -> list[Fingerprint]:
    """Make the versions of host `host_key` versions of host `into_host_key` (a person says they are one machine):
    they take its key and name, and a chosen version follows. Refused (a 400, nothing saved) when either host is
    not the deployment's, when they are the same host, when both show GPU UUIDs and these differ (two machines), or
    when each has a chosen version (one host has one chosen version: unchoose one first). Returns the merged host's
    versions, oldest first."""
    if host_key == into_host_key:
        raise _invalid("into", "a host cannot be merged into itself: choose another host", reason="same_host")
    source = _host_rows(deployment, host_key)
    if not source:
        raise _invalid("host", f"the deployment has no host {host_key!r}", reason="unknown_host")
    target = _host_rows(deployment, into_host_key)
    if not target:
        raise _invalid("into", f"the deployment has no host {into_host_key!r}", reason="unknown_host")
    source_name, target_name = source[-1].host, target[-1].host
    conflict = merge_conflict(_uuid_set(source), _uuid_set(target))
    if conflict is not None:
        spelled = {str(uuid).casefold(): str(uuid) for row in [*source, *target] for uuid in row.gpu_uuids}
        only_source, only_target = ([spelled.get(uuid, uuid) for uuid in side] for side in conflict)
        raise _invalid(
            "into",
            f"{source_name} and {target_name} are two machines: their GPUs' UUIDs differ ({source_name} has "
            f"{', '.join(only_source)}; {target_name} has {', '.join(only_target)}); nothing was merged",
            reason="uuids_differ",
            host=source_name,
            into=target_name,
            host_uuids=only_source,
            into_uuids=only_target,
        )
    chosen = DeploymentMachine.objects.filter(deployment=deployment, host_key__in=[host_key, into_host_key])
    if chosen.count() > 1:
        raise _invalid(
            "into",
            f"both {source_name} and {target_name} have a chosen version, and one host has one: "
            "unchoose one of them first; nothing was merged",
            reason="both_chosen",
            host=source_name,
            into=target_name,
        )
    target_key = target[-1].host_key or into_host_key
    named = target[-1].host_named
    for row in [*source, *target]:
        row.host_key, row.host, row.host_named = target_key, target_name, named
        row.save(update_fields=["host_key", "host", "host_named"])
    chosen.update(host_key=target_key)
    return [*sorted([*source, *target], key=lambda row: (row.captured_at, row.pk))]


@transaction.atomic
def deployment_machines_set(
    *, deployment: Deployment, fingerprint_ids: Sequence[int], user: Any
) -> list[DeploymentMachine]:
    """The machines the deployment runs on become exactly these fingerprint versions (an empty list: none chosen).
    Each must be an upload of this deployment and name a host once; a refusal (a 400 on `fingerprints`) changes
    nothing."""
    seen: set[int] = set()
    for fingerprint_id in fingerprint_ids:
        if fingerprint_id in seen:
            raise _invalid(
                "fingerprints",
                f"fingerprint {fingerprint_id} is listed twice",
                reason="listed_twice",
                fingerprints=[fingerprint_id],
            )
        seen.add(fingerprint_id)
    rows = {
        row.pk: row
        for row in Fingerprint.objects.filter(deployment=deployment, pk__in=list(seen)).defer("raw", "facts")
    }
    missing = [fingerprint_id for fingerprint_id in fingerprint_ids if fingerprint_id not in rows]
    if missing:
        raise _invalid(
            "fingerprints",
            f"fingerprint {', '.join(map(str, missing))} is not an upload of this "
            "deployment: choose among its hosts' versions",
            fingerprints=missing,
            reason="not_this_deployment",
        )
    by_host: dict[str, Fingerprint] = {}
    for fingerprint_id in fingerprint_ids:
        row = rows[fingerprint_id]
        key = row_host_key(row.host_key, row.host)
        if key in by_host:
            raise _invalid(
                "fingerprints",
                f"fingerprints {by_host[key].pk} and {row.pk} are two versions of one host "
                f"({row.host}): choose one version per host",
                fingerprints=[by_host[key].pk, row.pk],
                host=row.host,
                reason="two_versions",
            )
        by_host[key] = row
    DeploymentMachine.objects.filter(deployment=deployment).delete()
    return [
        DeploymentMachine.objects.create(deployment=deployment, fingerprint=row, host_key=key, chosen_by=user)
        for key, row in by_host.items()
    ]
