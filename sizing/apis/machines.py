"""Thin APIs of a deployment's hosts and machines: its hosts with their versions, the merge of two hosts a person
says are one machine, and the machines chosen for the deployment (one fingerprint version per host) with the
plan's contradictions against them."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sizing.fingerprint.identity import gpu_summary
from sizing.models import Deployment, Fingerprint
from sizing.selectors.deployments import (
    Host,
    chosen_machines,
    deployment_get_for_organisation,
    deployment_hosts,
)
from sizing.services.estimates import organisation_for_user
from sizing.services.machine_checks import machine_contradictions
from sizing.services.machines import deployment_machines_set, fingerprint_host_merge

MAX_MACHINES = 64
MAX_ID = 10**18 - 1  # a row id within the database's bigint (the id converter's 18 digits)


def _not_found(deployment_id: int) -> Response:
    return Response(
        {"code": "not_found", "message": f"no deployment {deployment_id}", "extra": {}},
        status=status.HTTP_404_NOT_FOUND,
    )


class HostVersionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    version = serializers.IntegerField(help_text="1 for the host's oldest capture")
    captured_at = serializers.DateTimeField()
    label = serializers.CharField()
    gpus = serializers.CharField(help_text='e.g. "8× NVIDIA H100 80GB HBM3"')
    chosen = serializers.BooleanField()


class HostSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="the host's key within the deployment (merge takes it)")
    name = serializers.CharField()
    named = serializers.BooleanField(help_text="false: the name is derived from the GPUs (the file names no host)")
    gpu_uuids = serializers.ListField(child=serializers.CharField())
    versions = HostVersionSerializer(many=True)


class MachineSerializer(serializers.Serializer):
    fingerprint = serializers.IntegerField()
    host = serializers.CharField()
    host_key = serializers.CharField()
    version = serializers.IntegerField()
    captured_at = serializers.DateTimeField()
    gpus = serializers.CharField()


class ContradictionSerializer(serializers.Serializer):
    code = serializers.CharField()
    host = serializers.CharField()
    text = serializers.CharField(help_text="in the request's language")


class MachinesOutputSerializer(serializers.Serializer):
    machines = MachineSerializer(many=True)
    contradictions = ContradictionSerializer(many=True)


def _host_data(host: Host) -> dict[str, Any]:
    return {
        "key": host.key,
        "name": host.name,
        "named": host.named,
        "gpu_uuids": list(host.gpu_uuids),
        "versions": [
            {
                "id": row.pk,
                "version": number,
                "captured_at": row.captured_at,
                "label": row.label,
                "gpus": gpu_summary(row.facts or {}),
                "chosen": host.chosen is not None and host.chosen.pk == row.pk,
            }
            for number, row in enumerate(host.versions, start=1)
        ],
    }


def _machines_data(deployment: Deployment) -> dict[str, Any]:
    machines: list[Fingerprint] = chosen_machines(deployment)
    hosts = {host.key: host for host in deployment_hosts(deployment=deployment)}
    rows = []
    for machine in machines:
        host = next((h for h in hosts.values() if h.chosen is not None and h.chosen.pk == machine.pk), None)
        rows.append(
            {
                "fingerprint": machine.pk,
                "host": machine.host,
                "host_key": host.key if host else "",
                "version": host.version_of(machine) if host else 1,
                "captured_at": machine.captured_at,
                "gpus": gpu_summary(machine.facts or {}),
            }
        )
    return {"machines": rows, "contradictions": machine_contradictions(deployment, machines)}


class DeploymentHostListApi(APIView):
    @extend_schema(
        responses=HostSerializer(many=True),
        description="The deployment's hosts (newest capture first), each with its versions oldest first. "
        "Uploads are versions of one host when their GPUs' UUIDs match, else their host names; "
        "an upload naming neither is a host of its own until merged.",
    )
    def get(self, request: Request, deployment_id: int) -> Response:
        deployment = deployment_get_for_organisation(
            organisation=organisation_for_user(user=request.user), deployment_id=deployment_id
        )
        if deployment is None:
            return _not_found(deployment_id)
        return Response([_host_data(host) for host in deployment_hosts(deployment=deployment)])


class DeploymentHostMergeApi(APIView):
    class DeploymentHostMergeInputSerializer(serializers.Serializer):
        host = serializers.CharField(max_length=64, help_text="the key of the host whose versions move")
        into = serializers.CharField(max_length=64, help_text="the key of the host they join (its name stays)")

    @extend_schema(
        request=DeploymentHostMergeInputSerializer,
        responses=HostSerializer,
        description="Two hosts are one machine: `host`'s versions become versions of `into`. A 400 naming "
        "the problem, nothing saved, when their GPUs' UUIDs differ (two machines) or each "
        "has a chosen version.",
    )
    def post(self, request: Request, deployment_id: int) -> Response:
        deployment = deployment_get_for_organisation(
            organisation=organisation_for_user(user=request.user), deployment_id=deployment_id
        )
        if deployment is None:
            return _not_found(deployment_id)
        serializer = self.DeploymentHostMergeInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        merged = fingerprint_host_merge(
            deployment=deployment,
            host_key=serializer.validated_data["host"],
            into_host_key=serializer.validated_data["into"],
        )
        key = merged[-1].host_key
        host = next(host for host in deployment_hosts(deployment=deployment) if host.key == key)
        return Response(_host_data(host))


class DeploymentMachinesApi(APIView):
    class DeploymentMachinesInputSerializer(serializers.Serializer):
        fingerprints = serializers.ListField(
            child=serializers.IntegerField(min_value=1, max_value=MAX_ID),
            max_length=MAX_MACHINES,
            allow_empty=True,
            help_text="one fingerprint version per host (ids from hosts/); [] chooses none",
        )

    @extend_schema(
        responses=MachinesOutputSerializer,
        description="The machines chosen for the deployment (by host name) and the plan's contradictions against them.",
    )
    def get(self, request: Request, deployment_id: int) -> Response:
        deployment = deployment_get_for_organisation(
            organisation=organisation_for_user(user=request.user), deployment_id=deployment_id
        )
        if deployment is None:
            return _not_found(deployment_id)
        return Response(MachinesOutputSerializer(_machines_data(deployment)).data)

    @extend_schema(
        request=DeploymentMachinesInputSerializer,
        responses=MachinesOutputSerializer,
        description="Choose the deployment's machines: exactly these fingerprint versions. A 400 on "
        "`fingerprints`, nothing changed, for a fingerprint of another deployment or two "
        "versions of one host.",
    )
    def put(self, request: Request, deployment_id: int) -> Response:
        deployment = deployment_get_for_organisation(
            organisation=organisation_for_user(user=request.user), deployment_id=deployment_id
        )
        if deployment is None:
            return _not_found(deployment_id)
        serializer = self.DeploymentMachinesInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        deployment_machines_set(
            deployment=deployment, fingerprint_ids=serializer.validated_data["fingerprints"], user=request.user
        )
        return Response(MachinesOutputSerializer(_machines_data(deployment)).data)
