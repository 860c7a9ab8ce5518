"""Thin APIs of load tests: start one (202 with its URL: a worker on the `loadtests` queue runs it), follow its
progress, cancel it, read its verdict, export its plan for the air-gapped agent, delete it when it has ended."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks_app.loadtests.scenarios import SCENARIOS
from benchmarks_app.models import LoadTest
from benchmarks_app.selectors.loadtests import (
    loadtest_get_for_organisation,
    loadtest_list_for_organisation,
    loadtest_progress,
)
from benchmarks_app.services.loadtests import (
    deployment_defaults,
    loadtest_cancel,
    loadtest_create,
    loadtest_delete,
    requests_spec,
    tokens_per_request,
)
from sizing.kernel.api_errors import ApiErrorSerializer
from sizing.kernel.api_lists import ListApiMixin, choice_filter, filter_parameter, id_filter, list_schema
from sizing.selectors.deployments import deployment_get_for_organisation
from sizing.services.estimates import organisation_for_user


class LoadTestShardSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    status = serializers.CharField()
    worker = serializers.CharField()
    heartbeat_at = serializers.DateTimeField(allow_null=True)
    started_at = serializers.DateTimeField(allow_null=True)
    stored = serializers.IntegerField(help_text="requests stored into the run so far")
    error = serializers.CharField()


class LoadTestOutputSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    endpoint = serializers.IntegerField(source="endpoint_id", allow_null=True)
    deployment = serializers.IntegerField(source="deployment_id", allow_null=True)
    run = serializers.IntegerField(source="run_id", allow_null=True, help_text="the benchmark run it streams into")
    run_url = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    shards = serializers.SerializerMethodField()
    created_by = serializers.SerializerMethodField()

    class Meta:
        model = LoadTest
        fields = [
            "id",
            "url",
            "name",
            "scenario",
            "status",
            "cancel_requested",
            "progress",
            "endpoint",
            "endpoint_name",
            "deployment",
            "workers",
            "peak_concurrency",
            "slo",
            "committed_bytes_per_gpu",
            "run",
            "run_url",
            "verdict",
            "error",
            "shards",
            "created_by",
            "created_at",
            "start_at",
            "started_at",
            "finished_at",
        ]

    def get_url(self, obj: LoadTest) -> str:
        return f"/api/v1/load-tests/{obj.pk}/"

    def get_run_url(self, obj: LoadTest) -> str | None:
        return f"/api/v1/benchmark-runs/{obj.run_id}/" if obj.run_id else None

    def get_progress(self, obj: LoadTest) -> dict[str, Any]:
        return loadtest_progress(job=obj)

    def get_shards(self, obj: LoadTest) -> list[dict[str, Any]]:
        return [LoadTestShardSerializer(shard).data for shard in obj.shards.all()]

    def get_created_by(self, obj: LoadTest) -> str | None:
        return obj.created_by.get_username() if obj.created_by else None


class LoadTestSloSerializer(serializers.Serializer):
    ttft_ms = serializers.FloatField(required=False, min_value=0.001)
    tpot_ms = serializers.FloatField(required=False, min_value=0.001)
    e2e_ms = serializers.FloatField(required=False, min_value=0.001)


class LoadTestInputSerializer(serializers.Serializer):
    endpoint = serializers.IntegerField(min_value=1, help_text="a registered endpoint of your organisation")
    scenario = serializers.ChoiceField(choices=LoadTest.Scenario.choices)
    deployment = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text=("the deployment tested: its SLOs, peak concurrency and memory commitment are the defaults"),
    )
    name = serializers.CharField(required=False, allow_blank=True, max_length=255)
    peak_concurrency = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=1_000_000,
        help_text="the promised peak; pulse loads 50% of it, long tail 10%",
    )
    slo = LoadTestSloSerializer(required=False, help_text="default: the deployment's")
    committed_bytes_per_gpu = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    workers = serializers.IntegerField(
        required=False, min_value=1, max_value=1024, help_text="Celery workers sharing the load (one shard each)"
    )
    scale = serializers.FloatField(
        required=False,
        min_value=0.001,
        max_value=1.0,
        help_text="multiplies every duration of the scenario (1 = the field's)",
    )
    duration_s = serializers.FloatField(required=False, allow_null=True, min_value=1)
    max_requests = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    input_tokens = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    output_tokens = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    workload = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, help_text="a workload profile instead of fixed lengths"
    )
    api = serializers.ChoiceField(choices=[("completions", "completions"), ("chat", "chat")], required=False)
    attainment = serializers.FloatField(
        required=False,
        min_value=0.5,
        max_value=1.0,
        help_text="share of requests that must meet the SLOs (default 0.99)",
    )
    recovery_s = serializers.FloatField(required=False, min_value=1, help_text="failure: the longest recovery")
    concurrency = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, help_text="custom: closed loop with this many clients"
    )
    rate = serializers.FloatField(
        required=False, allow_null=True, min_value=0.001, help_text="custom: open loop at this many requests per second"
    )
    ramp_up_s = serializers.FloatField(required=False, allow_null=True, min_value=0)
    seed = serializers.IntegerField(required=False, min_value=0)


def _not_found(job_id: int) -> Response:
    return Response(
        {"code": "not_found", "message": f"no load test {job_id}", "extra": {}}, status=status.HTTP_404_NOT_FOUND
    )


class LoadTestListApi(ListApiMixin, APIView):
    ordering_fields = {"created_at": "created_at", "name": "name", "status": "status", "scenario": "scenario"}

    @list_schema(
        LoadTestOutputSerializer,
        ordering=ordering_fields,
        filters=[
            filter_parameter("deployment", int, description="for this deployment"),
            filter_parameter("endpoint", int, description="against this endpoint"),
            filter_parameter("status", enum=LoadTest.Status.values),
            filter_parameter("scenario", enum=LoadTest.Scenario.values),
        ],
        description="The organisation's load tests.",
    )
    def get(self, request: Request) -> Response:
        rows = loadtest_list_for_organisation(organisation=organisation_for_user(user=request.user))
        if (deployment := id_filter(request, "deployment")) is not None:
            rows = rows.filter(deployment_id=deployment)
        if (endpoint := id_filter(request, "endpoint")) is not None:
            rows = rows.filter(endpoint_id=endpoint)
        if job_status := choice_filter(request, "status", LoadTest.Status.choices):
            rows = rows.filter(status=job_status)
        if scenario := choice_filter(request, "scenario", LoadTest.Scenario.choices):
            rows = rows.filter(scenario=scenario)
        return self.list_response(request, rows, LoadTestOutputSerializer)

    @extend_schema(
        request=LoadTestInputSerializer,
        responses={202: LoadTestOutputSerializer},
        description="Start a load test against a registered endpoint: queued at once (202), run by a worker on the "
        "loadtests queue; follow `url` for progress and the verdict.",
        examples=[
            OpenApiExample(
                "pulse",
                request_only=True,
                value={"endpoint": 1, "scenario": "pulse", "deployment": 1, "peak_concurrency": 64, "workers": 1},
            )
        ],
    )
    def post(self, request: Request) -> Response:
        serializer = LoadTestInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        job = loadtest_create(
            organisation=organisation_for_user(user=request.user),
            user=request.user,
            data=dict(serializer.validated_data),
        )
        body = LoadTestOutputSerializer(job).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


class LoadTestDetailApi(APIView):
    @extend_schema(responses=LoadTestOutputSerializer)
    def get(self, request: Request, job_id: int) -> Response:
        job = loadtest_get_for_organisation(organisation=organisation_for_user(user=request.user), job_id=job_id)
        return _not_found(job_id) if job is None else Response(LoadTestOutputSerializer(job).data)

    @extend_schema(responses={204: None}, description="Delete a test that has ended, with its benchmark run.")
    def delete(self, request: Request, job_id: int) -> Response:
        job = loadtest_get_for_organisation(organisation=organisation_for_user(user=request.user), job_id=job_id)
        if job is None:
            return _not_found(job_id)
        loadtest_delete(job=job)
        return Response(status=status.HTTP_204_NO_CONTENT)


class LoadTestCancelApi(APIView):
    @extend_schema(
        request=None, responses=LoadTestOutputSerializer, description="Stop the test; what was measured is kept."
    )
    def post(self, request: Request, job_id: int) -> Response:
        job = loadtest_get_for_organisation(organisation=organisation_for_user(user=request.user), job_id=job_id)
        if job is None:
            return _not_found(job_id)
        return Response(LoadTestOutputSerializer(loadtest_cancel(job=job)).data)


class LoadTestPlanApi(APIView):
    @extend_schema(
        responses={200: OpenApiResponse(description="the plan JSON (docs/loadgen-plan.md)")},
        description="The test's plan as a file, to run with `python -m llm_sizing_loadgen run "
        "plan.json --out result.json` inside a network the service cannot reach (set the "
        "API key's environment variable there); upload the result as a benchmark run.",
    )
    def get(self, request: Request, job_id: int) -> HttpResponse | Response:
        job = loadtest_get_for_organisation(organisation=organisation_for_user(user=request.user), job_id=job_id)
        if job is None:
            return _not_found(job_id)
        plan = dict(job.plan)
        endpoint = dict(plan.get("endpoint") or {})
        if job.endpoint is not None and job.endpoint.has_api_key:
            endpoint["api_key_env"] = "LLM_API_KEY"  # the key itself never leaves the service
        plan["endpoint"] = endpoint
        response = HttpResponse(json.dumps(plan, indent=1, ensure_ascii=False), content_type="application/json")
        response["Content-Disposition"] = f'attachment; filename="load-test-{job.pk}-plan.json"'
        return response


class LoadTestDefaultsApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("deployment", int, required=False),
            OpenApiParameter("input_tokens", int, required=False, description="default 512"),
            OpenApiParameter("output_tokens", int, required=False, description="default 128"),
            OpenApiParameter("workload", int, required=False),
        ],
        responses={
            200: OpenApiResponse(
                description="scenarios, and a deployment's SLOs, peak "
                "concurrency at these lengths and committed memory "
                "per GPU"
            ),
            404: OpenApiResponse(ApiErrorSerializer, description="no such deployment"),
        },
    )
    def get(self, request: Request) -> Response:
        organisation = organisation_for_user(user=request.user)
        raw = id_filter(request, "deployment")
        lengths = {key: request.query_params.get(key) for key in ("input_tokens", "output_tokens", "workload")}
        spec = requests_spec(organisation, {key: value for key, value in lengths.items() if value})
        defaults: dict[str, Any] = {}
        if raw is not None:
            deployment = deployment_get_for_organisation(organisation=organisation, deployment_id=raw)
            if deployment is None:
                return Response(
                    {"code": "not_found", "message": f"no deployment {raw}", "extra": {}},
                    status=status.HTTP_404_NOT_FOUND,
                )
            defaults = deployment_defaults(deployment, tokens_per_request=tokens_per_request(spec))
        return Response({"scenarios": SCENARIOS, "defaults": defaults})
