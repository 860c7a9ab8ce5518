"""Thin APIs of benchmark runs: upload a result file (every importer tried; a refusal is a 400 naming each
format's reason and nothing is stored), list and filter runs, read one with its per-request records."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks_app.models import BenchmarkRun
from benchmarks_app.selectors import (
    benchmark_requests,
    benchmark_run_get_for_organisation,
    benchmark_run_list_for_organisation,
)
from benchmarks_app.services import benchmark_import, benchmark_run_delete
from benchmarks_app.tasks import benchmark_requests_store_task
from sizing.benchmarks.detect import MAX_BYTES
from sizing.deployment_selectors import deployment_get_for_organisation
from sizing.estimator.engines import ENGINE_CHOICES
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.selectors import gpu_get, model_get_for_organisation
from sizing.services import organisation_for_user

REQUESTS_PAGE = 1000  # per-request records per page of the detail


class BenchmarkRunOutputSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    deployment = serializers.IntegerField(source="deployment_id", allow_null=True)
    series = serializers.IntegerField(source="series_id", allow_null=True)
    model = serializers.SerializerMethodField()
    gpu = serializers.SerializerMethodField()
    file_name = serializers.SerializerMethodField()

    class Meta:
        model = BenchmarkRun
        fields = ["id", "url", "name", "status", "progress", "progress_message", "error", "deployment", "series",
                  "series_index", "model", "model_name", "gpu", "gpu_count", "tp", "engine", "engine_version",
                  "format", "tool", "tool_version", "label", "backend", "started_at", "duration_s", "load",
                  "settings", "completed", "failed", "incomplete", "metrics", "reported", "notes",
                  "output_tokens_per_s", "requests_per_s", "total_tokens_per_s", "request_count", "file_name",
                  "created_at", "finished_at"]

    def get_url(self, obj: BenchmarkRun) -> str:
        return f"/api/v1/benchmark-runs/{obj.pk}/"

    def get_model(self, obj: BenchmarkRun) -> str | None:
        return obj.model.slug if obj.model else None

    def get_gpu(self, obj: BenchmarkRun) -> str | None:
        return obj.gpu.slug if obj.gpu else None

    def get_file_name(self, obj: BenchmarkRun) -> str | None:
        return obj.file.name if obj.file_id else None


class BenchmarkRunListOutputSerializer(BenchmarkRunOutputSerializer):
    """The list leaves out the tool's raw summary and settings."""

    class Meta(BenchmarkRunOutputSerializer.Meta):
        fields = [f for f in BenchmarkRunOutputSerializer.Meta.fields if f not in ("reported", "settings")]


def _not_found(run_id: int) -> Response:
    return Response({"code": "not_found", "message": f"no benchmark run {run_id}", "extra": {}},
                    status=status.HTTP_404_NOT_FOUND)


class BenchmarkRunListApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    class BenchmarkUploadInputSerializer(serializers.Serializer):
        file = serializers.FileField(help_text="a result file of vllm bench serve, SGLang bench_serving, GuideLLM, "
                                               "AIPerf/GenAI-Perf, llmperf, inference-perf or our load generator; "
                                               "at most 50 MiB")
        deployment = serializers.IntegerField(required=False, min_value=1)
        model = serializers.CharField(required=False, max_length=200, help_text="model slug (default: the file's "
                                                                                "model, matched to the catalog)")
        gpu = serializers.CharField(required=False, max_length=80)
        gpu_count = serializers.IntegerField(required=False, min_value=1, max_value=1024)
        tp = serializers.IntegerField(required=False, min_value=1, max_value=64)
        engine = serializers.ChoiceField(choices=ENGINE_CHOICES, required=False)
        engine_version = serializers.CharField(required=False, max_length=60, allow_blank=True)

    @extend_schema(parameters=[OpenApiParameter(name, str, required=False) for name in
                               ("deployment", "model", "gpu", "engine", "tool")],
                   responses=BenchmarkRunListOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        query = request.query_params
        deployment = query.get("deployment")
        if deployment and not deployment.isdigit():
            raise serializers.ValidationError({"deployment": ["a deployment id"]})
        rows = benchmark_run_list_for_organisation(
            organisation=organisation_for_user(user=request.user), deployment=int(deployment) if deployment else None,
            model=query.get("model"), gpu=query.get("gpu"), engine=query.get("engine"), tool=query.get("tool"))
        return Response(BenchmarkRunListOutputSerializer(rows[:500], many=True).data)

    @extend_schema(request={"multipart/form-data": BenchmarkUploadInputSerializer},
                   responses={201: BenchmarkRunOutputSerializer(many=True)},
                   description="Import a result file; its runs (several for a sweep) are answered at once, their "
                               "per-request records stored by a worker (status importing, then done).")
    def post(self, request: Request) -> Response:
        upload = request.FILES.get("file")
        if upload is not None and upload.size > MAX_BYTES:  # before reading it
            message = (f"{upload.name}: the file is {upload.size:,} bytes; the limit is {MAX_BYTES:,} bytes (50 MiB):"
                       " split the run, or upload the summary without per-request details")
            raise SizingError(code=SizingErrorCode.INVALID_ARGUMENT, message=message,
                              extra={"size_bytes": upload.size, "limit_bytes": MAX_BYTES,
                                     "fields": {"file": [message]}})
        serializer = self.BenchmarkUploadInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        values = serializer.validated_data
        organisation = organisation_for_user(user=request.user)
        links: dict[str, Any] = {}
        if "deployment" in values:
            links["deployment"] = deployment_get_for_organisation(organisation=organisation,
                                                                  deployment_id=values["deployment"])
            if links["deployment"] is None:
                raise serializers.ValidationError({"deployment": [f"unknown deployment {values['deployment']}"]})
        if "model" in values:
            links["model"] = model_get_for_organisation(organisation=organisation, slug=values["model"])
            if links["model"] is None:
                raise serializers.ValidationError({"model": [f"unknown model {values['model']!r}"]})
        if "gpu" in values:
            links["gpu"] = gpu_get(slug=values["gpu"])
            if links["gpu"] is None:
                raise serializers.ValidationError({"gpu": [f"unknown GPU {values['gpu']!r}"]})
        file = values["file"]
        runs = benchmark_import(
            organisation=organisation, user=request.user, name=str(file.name), data=file.read(MAX_BYTES + 1),
            gpu_count=values.get("gpu_count"), tp=values.get("tp"), engine=values.get("engine", ""),
            engine_version=values.get("engine_version", ""), store_requests=benchmark_requests_store_task.delay,
            **links)
        return Response(BenchmarkRunOutputSerializer(runs, many=True).data, status=status.HTTP_201_CREATED)


class BenchmarkRunDetailApi(APIView):
    @extend_schema(parameters=[OpenApiParameter("requests_page", int, required=False,
                                                description=f"per-request records, {REQUESTS_PAGE} a page")],
                   responses={200: OpenApiResponse(description="the run; with requests_page, its records")})
    def get(self, request: Request, run_id: int) -> Response:
        run = benchmark_run_get_for_organisation(organisation=organisation_for_user(user=request.user), run_id=run_id)
        if run is None:
            return _not_found(run_id)
        payload = dict(BenchmarkRunOutputSerializer(run).data)
        page = request.query_params.get("requests_page")
        if page is not None:
            if not page.isdigit():
                raise serializers.ValidationError({"requests_page": ["a page number from 0"]})
            start = int(page) * REQUESTS_PAGE
            payload["requests"] = list(benchmark_requests(run=run)[start:start + REQUESTS_PAGE].values(
                "index", "status", "error", "start_s", "ttft_ms", "e2e_ms", "tpot_ms", "itl_ms", "input_tokens",
                "output_tokens"))
        return Response(payload)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, run_id: int) -> Response:
        run = benchmark_run_get_for_organisation(organisation=organisation_for_user(user=request.user), run_id=run_id)
        if run is None:
            return _not_found(run_id)
        benchmark_run_delete(run=run)
        return Response(status=status.HTTP_204_NO_CONTENT)
