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
from benchmarks_app.results.detect import MAX_BYTES
from benchmarks_app.selectors.runs import (
    benchmark_requests,
    benchmark_run_get_for_organisation,
    benchmark_run_list_for_organisation,
    benchmark_series_get_for_organisation,
)
from benchmarks_app.services.analysis import (
    SLO_KEYS,
    benchmark_run_goodput,
    benchmark_run_update,
    benchmark_series_report,
    run_slo,
)
from benchmarks_app.services.comparisons import benchmark_run_compare, benchmark_runs_calibrate
from benchmarks_app.services.runs import (
    BENCHMARK_SIZE_NOTE,
    EXPORT_FORMATS,
    benchmark_import,
    benchmark_run_delete,
    benchmark_run_export,
)
from benchmarks_app.tasks import benchmark_requests_store_task
from sizing.estimator.engines import ENGINE_CHOICES
from sizing.kernel.api_lists import ListApiMixin, filter_parameter, id_filter, list_schema
from sizing.kernel.uploads import upload_size_check
from sizing.selectors.deployments import deployment_get_for_organisation
from sizing.selectors.estimates import gpu_get, model_get_for_organisation
from sizing.services.estimates import organisation_for_user

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
        fields = [
            "id",
            "url",
            "name",
            "status",
            "progress",
            "progress_message",
            "error",
            "deployment",
            "series",
            "series_index",
            "model",
            "model_name",
            "gpu",
            "gpu_count",
            "tp",
            "engine",
            "engine_version",
            "format",
            "tool",
            "tool_version",
            "label",
            "backend",
            "started_at",
            "duration_s",
            "load",
            "settings",
            "completed",
            "failed",
            "incomplete",
            "metrics",
            "reported",
            "notes",
            "output_tokens_per_s",
            "requests_per_s",
            "total_tokens_per_s",
            "request_count",
            "file_name",
            "verdict",
            "server_series",
            "created_at",
            "finished_at",
        ]

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
    return Response(
        {"code": "not_found", "message": f"no benchmark run {run_id}", "extra": {}}, status=status.HTTP_404_NOT_FOUND
    )


class BenchmarkRunListApi(ListApiMixin, APIView):
    ordering_fields = {"created_at": "created_at", "name": "name", "tool": "tool", "engine": "engine"}
    parser_classes = [MultiPartParser, FormParser]
    publishes_jobs = True  # an upload queues the storing of its records: 503 when the broker is down

    class BenchmarkUploadInputSerializer(serializers.Serializer):
        file = serializers.FileField(
            help_text="a result file of vllm bench serve, SGLang bench_serving, GuideLLM, "
            "AIPerf/GenAI-Perf, llmperf, inference-perf or our load generator; "
            "at most 50 MiB"
        )
        deployment = serializers.IntegerField(required=False, min_value=1)
        model = serializers.CharField(
            required=False, max_length=200, help_text="model slug (default: the file's model, matched to the catalog)"
        )
        gpu = serializers.CharField(required=False, max_length=80)
        gpu_count = serializers.IntegerField(required=False, min_value=1, max_value=1024)
        tp = serializers.IntegerField(required=False, min_value=1, max_value=64)
        engine = serializers.ChoiceField(choices=ENGINE_CHOICES, required=False)
        engine_version = serializers.CharField(required=False, max_length=60, allow_blank=True)

    @list_schema(
        BenchmarkRunListOutputSerializer,
        ordering=ordering_fields,
        filters=[
            filter_parameter("deployment", int, description="linked to this deployment"),
            filter_parameter("model", description="model slug"),
            filter_parameter("gpu", description="GPU slug"),
            filter_parameter("engine", description="e.g. vllm, sglang"),
            filter_parameter("tool", description="the benchmark tool that wrote the file"),
        ],
    )
    def get(self, request: Request) -> Response:
        query = request.query_params
        rows = benchmark_run_list_for_organisation(
            organisation=organisation_for_user(user=request.user),
            deployment=id_filter(request, "deployment"),
            model=query.get("model"),
            gpu=query.get("gpu"),
            engine=query.get("engine"),
            tool=query.get("tool"),
        )
        return self.list_response(request, rows, BenchmarkRunListOutputSerializer)

    @extend_schema(
        request={"multipart/form-data": BenchmarkUploadInputSerializer},
        responses={201: BenchmarkRunOutputSerializer(many=True)},
        description="Import a result file; its runs (several for a sweep) are answered at once, their "
        "per-request records stored by a worker (status importing, then done).",
    )
    def post(self, request: Request) -> Response:
        upload = request.FILES.get("file")
        if upload is not None:  # before reading it
            upload_size_check(
                upload.size, limit_bytes=MAX_BYTES, field="file", name=upload.name, note=BENCHMARK_SIZE_NOTE
            )
        serializer = self.BenchmarkUploadInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        values = serializer.validated_data
        organisation = organisation_for_user(user=request.user)
        links: dict[str, Any] = {}
        if "deployment" in values:
            links["deployment"] = deployment_get_for_organisation(
                organisation=organisation, deployment_id=values["deployment"]
            )
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
            organisation=organisation,
            user=request.user,
            name=str(file.name),
            data=file.read(MAX_BYTES + 1),
            gpu_count=values.get("gpu_count"),
            tp=values.get("tp"),
            engine=values.get("engine", ""),
            engine_version=values.get("engine_version", ""),
            store_requests=benchmark_requests_store_task.delay,
            **links,
        )
        return Response(BenchmarkRunOutputSerializer(runs, many=True).data, status=status.HTTP_201_CREATED)


class BenchmarkRunDetailApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "requests_page", int, required=False, description=f"per-request records, {REQUESTS_PAGE} a page"
            )
        ],
        responses={200: OpenApiResponse(description="the run; with requests_page, its records")},
    )
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
            payload["requests"] = list(
                benchmark_requests(run=run)[start : start + REQUESTS_PAGE].values(
                    "index",
                    "status",
                    "error",
                    "start_s",
                    "ttft_ms",
                    "e2e_ms",
                    "tpot_ms",
                    "itl_ms",
                    "input_tokens",
                    "output_tokens",
                )
            )
        return Response(payload)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, run_id: int) -> Response:
        run = benchmark_run_get_for_organisation(organisation=organisation_for_user(user=request.user), run_id=run_id)
        if run is None:
            return _not_found(run_id)
        benchmark_run_delete(run=run)
        return Response(status=status.HTTP_204_NO_CONTENT)


class BenchmarkRunUpdateInputSerializer(serializers.Serializer):
    name = serializers.CharField(required=False, max_length=255)
    deployment = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    model = serializers.CharField(required=False, allow_null=True, max_length=200)
    gpu = serializers.CharField(required=False, allow_null=True, max_length=80)
    gpu_count = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=1024)
    tp = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=64)
    engine = serializers.ChoiceField(choices=ENGINE_CHOICES, required=False, allow_blank=True)
    engine_version = serializers.CharField(required=False, allow_blank=True, max_length=60)


def _links(request: Request, values: dict[str, Any]) -> dict[str, Any]:
    """Slugs and ids of the input resolved to the organisation's rows (a 400 naming the field when unknown)."""
    organisation = organisation_for_user(user=request.user)
    resolved = dict(values)
    if values.get("deployment") is not None:
        resolved["deployment"] = deployment_get_for_organisation(
            organisation=organisation, deployment_id=values["deployment"]
        )
        if resolved["deployment"] is None:
            raise serializers.ValidationError({"deployment": [f"unknown deployment {values['deployment']}"]})
    if values.get("model") is not None:
        resolved["model"] = model_get_for_organisation(organisation=organisation, slug=values["model"])
        if resolved["model"] is None:
            raise serializers.ValidationError({"model": [f"unknown model {values['model']!r}"]})
    if values.get("gpu") is not None:
        resolved["gpu"] = gpu_get(slug=values["gpu"])
        if resolved["gpu"] is None:
            raise serializers.ValidationError({"gpu": [f"unknown GPU {values['gpu']!r}"]})
    return resolved


class BenchmarkRunLinksApi(APIView):
    @extend_schema(
        request=BenchmarkRunUpdateInputSerializer,
        responses=BenchmarkRunOutputSerializer,
        description="Set what the run ran on (deployment, model, GPU, TP, engine) when the file did not "
        "say; measured-versus-estimated and calibration need the model and the GPU.",
    )
    def patch(self, request: Request, run_id: int) -> Response:
        run = benchmark_run_get_for_organisation(organisation=organisation_for_user(user=request.user), run_id=run_id)
        if run is None:
            return _not_found(run_id)
        serializer = BenchmarkRunUpdateInputSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        updated = benchmark_run_update(run=run, data=_links(request, dict(serializer.validated_data)))
        return Response(BenchmarkRunOutputSerializer(updated).data)


class BenchmarkRunAnalysisApi(APIView):
    @extend_schema(
        parameters=[
            *(OpenApiParameter(f"slo_{key}", float, required=False) for key in SLO_KEYS),
            OpenApiParameter(
                "compare", bool, required=False, description="false: leave out measured against estimated"
            ),
        ],
        responses={200: OpenApiResponse(description="{distributions, goodput, compare}")},
        description="The run's latency CDFs, its goodput under the SLOs given (default: its "
        "deployment's), and what the performance model predicts for the same settings.",
    )
    def get(self, request: Request, run_id: int) -> Response:
        run = benchmark_run_get_for_organisation(organisation=organisation_for_user(user=request.user), run_id=run_id)
        if run is None:
            return _not_found(run_id)
        given = {}
        for key in SLO_KEYS:
            raw = request.query_params.get(f"slo_{key}")
            if raw:
                try:
                    given[key] = float(raw)
                except ValueError:
                    raise serializers.ValidationError({f"slo_{key}": ["a number of milliseconds"]}) from None
        slo = run_slo(run, given)
        skip_compare = request.query_params.get("compare") in ("0", "false")
        return Response(
            {
                "distributions": run.distributions,
                "slo": slo,
                "goodput": benchmark_run_goodput(run=run, slo=slo),
                "compare": None if skip_compare else benchmark_run_compare(run=run),
            }
        )


class BenchmarkSeriesDetailApi(APIView):
    @extend_schema(responses={200: OpenApiResponse(description="{axis, points, knee}")})
    def get(self, request: Request, series_id: int) -> Response:
        series = benchmark_series_get_for_organisation(
            organisation=organisation_for_user(user=request.user), series_id=series_id
        )
        if series is None:
            return Response(
                {"code": "not_found", "message": f"no benchmark series {series_id}", "extra": {}},
                status=status.HTTP_404_NOT_FOUND,
            )
        return Response(benchmark_series_report(series=series))


class BenchmarkCalibrateApi(APIView):
    class BenchmarkCalibrateInputSerializer(serializers.Serializer):
        runs = serializers.ListField(child=serializers.IntegerField(min_value=1), min_length=1, max_length=50)
        save = serializers.BooleanField(
            required=False, default=False, help_text="keep the fitted efficiencies for this GPU and engine"
        )

    @extend_schema(
        request=BenchmarkCalibrateInputSerializer,
        responses={202: OpenApiResponse(description="the calibrate job (GET /api/v1/simulations/ID/ for its result)")},
    )
    def post(self, request: Request) -> Response:
        serializer = self.BenchmarkCalibrateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        organisation = organisation_for_user(user=request.user)
        runs = []
        for run_id in serializer.validated_data["runs"]:
            run = benchmark_run_get_for_organisation(organisation=organisation, run_id=run_id)
            if run is None:
                raise serializers.ValidationError({"runs": [f"unknown benchmark run {run_id}"]})
            runs.append(run)
        job = benchmark_runs_calibrate(
            organisation=organisation, user=request.user, runs=runs, save=serializer.validated_data["save"]
        )
        return Response(
            {"id": job.pk, "url": f"/api/v1/simulations/{job.pk}/", "kind": job.kind, "status": job.status},
            status=status.HTTP_202_ACCEPTED,
        )


class BenchmarkRunExportApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "kind",
                str,
                enum=list(EXPORT_FORMATS),
                required=False,
                description="ours (default: our load generator's JSON, which "
                "re-imports) or llm-d (Benchmark Report v0.2)",
            )
        ],
        responses={200: OpenApiResponse(description="the run as a JSON file to download")},
    )
    def get(self, request: Request, run_id: int) -> Response:
        run = benchmark_run_get_for_organisation(organisation=organisation_for_user(user=request.user), run_id=run_id)
        if run is None:
            return _not_found(run_id)
        kind = request.query_params.get("kind", "ours")  # not "format": DRF reads that one for its renderers
        response = Response(benchmark_run_export(run=run, kind=kind))
        response["Content-Disposition"] = f'attachment; filename="benchmark-run-{run.pk}-{kind}.json"'
        return response
