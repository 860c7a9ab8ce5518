"""Thin DRF APIs of latency and throughput jobs: simulate at a load, sweep loads, find the largest load meeting the
SLOs, search deployments, calibrate efficiencies. POST answers 202 with the job's URL; GET gives its state,
progress and result."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sizing.apis.estimates import EstimateParametersSerializer
from sizing.estimator.dtypes import KV_CACHE_DTYPES
from sizing.estimator.engines import ENGINE_CHOICES
from sizing.estimator.formats import WEIGHT_FORMAT_CHOICES
from sizing.kernel.api_lists import ListApiMixin, choice_filter, filter_parameter, list_schema
from sizing.kernel.job_budgets import MAX_CONTEXT_TOKENS
from sizing.models import PerfCalibration, SimulationJob
from sizing.selectors.simulations import (
    perf_calibration_list_for_organisation,
    simulation_job_get_for_organisation,
    simulation_job_list_for_organisation,
)
from sizing.services.estimates import organisation_for_user
from sizing.services.simulations import SIMULATION_KINDS, SIMULATION_MAX_REQUESTS, simulation_job_create


class SloSerializer(serializers.Serializer):
    ttft_s = serializers.FloatField(required=False, min_value=0.001, help_text="TTFT limit in seconds")
    tpot_s = serializers.FloatField(required=False, min_value=0.0001, help_text="TPOT limit in seconds")
    e2e_s = serializers.FloatField(required=False, min_value=0.001, help_text="end-to-end limit in seconds")
    percentile = serializers.ChoiceField(choices=[50, 90, 95, 99], required=False, default=95)


class SweepSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["rate", "concurrency"], required=False, default="rate")
    loads = serializers.ListField(
        child=serializers.FloatField(min_value=0.0001),
        required=False,
        max_length=40,
        help_text="the loads to run; default: 10%–130% of the offline saturation rate",
    )
    points = serializers.IntegerField(required=False, min_value=2, max_value=40, default=8)


class SearchSerializer(serializers.Serializer):
    gpus = serializers.ListField(
        child=serializers.SlugField(),
        required=False,
        max_length=50,
        help_text="GPU slugs to consider (default: the job's gpu)",
    )
    counts = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=1024), required=False, max_length=16
    )
    tps = serializers.ListField(child=serializers.IntegerField(min_value=1, max_value=64), required=False, max_length=8)
    weights = serializers.ListField(
        child=serializers.ChoiceField(choices=WEIGHT_FORMAT_CHOICES), required=False, max_length=10
    )
    kv_dtypes = serializers.ListField(
        child=serializers.ChoiceField(choices=KV_CACHE_DTYPES), required=False, max_length=5
    )
    engines = serializers.ListField(child=serializers.ChoiceField(choices=ENGINE_CHOICES), required=False, max_length=7)
    max_num_seqs = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=100_000), required=False, max_length=8
    )
    requests = serializers.IntegerField(
        required=False, min_value=20, max_value=5000, help_text="requests simulated per candidate (default 300)"
    )


class MeasurementSerializer(serializers.Serializer):
    label = serializers.CharField(required=False, max_length=200, allow_blank=True)
    input_tokens = serializers.IntegerField(min_value=1, max_value=MAX_CONTEXT_TOKENS)
    output_tokens = serializers.IntegerField(min_value=1, max_value=MAX_CONTEXT_TOKENS)
    load = serializers.ChoiceField(choices=["rate", "concurrency", "offline"])
    rate = serializers.FloatField(required=False, min_value=0.0001)
    concurrency = serializers.IntegerField(required=False, min_value=1, max_value=100_000)
    requests = serializers.IntegerField(required=False, min_value=10, max_value=5000)
    output_tokens_per_s = serializers.FloatField(required=False, min_value=0.0001)
    ttft_ms = serializers.FloatField(required=False, min_value=0.0001)
    tpot_ms = serializers.FloatField(required=False, min_value=0.0001)


class SimulationJobOutputSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()

    class Meta:
        model = SimulationJob
        fields = [
            "id",
            "url",
            "kind",
            "status",
            "progress",
            "progress_message",
            "inputs",
            "result",
            "error",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def get_url(self, job: SimulationJob) -> str:
        return reverse("sizing:simulation-detail", kwargs={"job_id": job.pk})


class SimulationJobListOutputSerializer(SimulationJobOutputSerializer):
    class Meta(SimulationJobOutputSerializer.Meta):
        fields = [
            "id",
            "url",
            "kind",
            "status",
            "progress",
            "progress_message",
            "inputs",
            "error",
            "created_at",
            "finished_at",
        ]


EXAMPLE = OpenApiExample(
    "Sweep the sample profile",
    request_only=True,
    value={
        "kind": "sweep",
        "model": "meta-llama/Meta-Llama-3-8B",
        "gpu": "nvidia-l40s-48gb",
        "profile": 1,
        "slo": {"ttft_s": 2.0, "tpot_s": 0.1},
        "sweep": {"points": 8},
        "requests": 1000,
    },
)


class SimulationListApi(ListApiMixin, APIView):
    ordering_fields = {"created_at": "created_at", "kind": "kind", "status": "status"}

    class SimulationInputSerializer(EstimateParametersSerializer):
        kind = serializers.ChoiceField(choices=SIMULATION_KINDS)
        model = serializers.CharField(max_length=200, help_text="model slug from GET /api/v1/models/")
        profile = serializers.IntegerField(required=False, min_value=1, help_text="a workload profile id")
        profile_json = serializers.JSONField(required=False, help_text="a workload profile given inline")
        input_tokens = serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=MAX_CONTEXT_TOKENS,
            help_text="prompt tokens per request; with output_tokens, at most the model's context",
        )
        output_tokens = serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=MAX_CONTEXT_TOKENS,
            help_text="generated tokens per request (with input_tokens)",
        )
        load = serializers.ChoiceField(choices=["rate", "concurrency", "offline"], required=False, default="rate")
        rate = serializers.FloatField(
            required=False,
            min_value=0.0001,
            max_value=1_000_000,
            help_text="requests per second (open loop; also the search's load)",
        )
        requests = serializers.IntegerField(required=False, min_value=10, max_value=SIMULATION_MAX_REQUESTS)
        seed = serializers.IntegerField(required=False, min_value=0, max_value=2**31 - 1)
        hour = serializers.IntegerField(
            required=False,
            min_value=0,
            max_value=23,
            help_text="simulate the profile's mix at this hour (default: the busiest)",
        )
        slo = SloSerializer(required=False)
        sweep = SweepSerializer(required=False)
        search = SearchSerializer(required=False)
        measurements = MeasurementSerializer(many=True, required=False)
        max_queue = serializers.IntegerField(required=False, min_value=0, max_value=1_000_000)
        link = serializers.ChoiceField(choices=["nvlink", "pcie", "xgmi"], required=False)
        save = serializers.BooleanField(
            required=False,
            default=False,
            help_text="calibrate: keep the fitted efficiencies for this GPU and engine; "
            "later simulations use them (use_calibration: false to not)",
        )

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            sources = [key for key in ("profile", "profile_json", "input_tokens") if key in attrs]
            if attrs.get("kind") == "calibrate" and not sources:
                return attrs  # calibration simulates each measured run's own lengths
            if len(sources) != 1:
                raise serializers.ValidationError(
                    {
                        "profile": [
                            "give exactly one of profile (an id), profile_json, or input_tokens with output_tokens"
                        ]
                    }
                )
            if "input_tokens" in attrs and "output_tokens" not in attrs:
                raise serializers.ValidationError({"output_tokens": ["give output_tokens with input_tokens"]})
            if "profile_json" in attrs and not isinstance(attrs["profile_json"], dict):
                raise serializers.ValidationError({"profile_json": ["a profile must be a JSON object"]})
            return attrs

    @list_schema(
        SimulationJobListOutputSerializer,
        ordering=ordering_fields,
        filters=[
            filter_parameter("kind", enum=SimulationJob.Kind.values),
            filter_parameter("status", enum=SimulationJob.Status.values),
        ],
    )
    def get(self, request: Request) -> Response:
        jobs = simulation_job_list_for_organisation(organisation=organisation_for_user(user=request.user))
        if kind := choice_filter(request, "kind", SimulationJob.Kind.choices):
            jobs = jobs.filter(kind=kind)
        if job_status := choice_filter(request, "status", SimulationJob.Status.choices):
            jobs = jobs.filter(status=job_status)
        return self.list_response(request, jobs, SimulationJobListOutputSerializer)

    @extend_schema(
        request=SimulationInputSerializer, responses={202: SimulationJobOutputSerializer}, examples=[EXAMPLE]
    )
    def post(self, request: Request) -> Response:
        serializer = self.SimulationInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        inputs = dict(serializer.validated_data)
        inputs["gpu"] = inputs["gpu"].slug
        job = simulation_job_create(
            organisation=organisation_for_user(user=request.user), user=request.user, inputs=inputs
        )
        return Response(SimulationJobOutputSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class SimulationDetailApi(APIView):
    @extend_schema(responses=SimulationJobOutputSerializer)
    def get(self, request: Request, job_id: int) -> Response:
        job = simulation_job_get_for_organisation(organisation=organisation_for_user(user=request.user), job_id=job_id)
        if job is None:
            return Response(
                {"code": "not_found", "message": f"no simulation job {job_id}", "extra": {}},
                status=status.HTTP_404_NOT_FOUND,
            )
        return Response(SimulationJobOutputSerializer(job).data)


class PerfCalibrationOutputSerializer(serializers.ModelSerializer):
    gpu = serializers.CharField(source="gpu.slug")

    class Meta:
        model = PerfCalibration
        fields = [
            "id",
            "gpu",
            "engine",
            "efficiencies",
            "default_rms_log_error",
            "calibrated_rms_log_error",
            "measurements",
            "job",
            "created_at",
        ]


class PerfCalibrationListApi(ListApiMixin, APIView):
    ordering_fields = {"created_at": "created_at", "gpu": "gpu__slug", "engine": "engine"}

    @list_schema(
        PerfCalibrationOutputSerializer,
        ordering=ordering_fields,
        filters=[
            filter_parameter("gpu", description="GPU slug"),
            filter_parameter("engine", enum=list(ENGINE_CHOICES)),
        ],
    )
    def get(self, request: Request) -> Response:
        rows = perf_calibration_list_for_organisation(organisation=organisation_for_user(user=request.user))
        if request.query_params.get("gpu"):
            rows = rows.filter(gpu__slug=request.query_params["gpu"])
        if engine := choice_filter(request, "engine", ENGINE_CHOICES):
            rows = rows.filter(engine=engine)
        return self.list_response(request, rows, PerfCalibrationOutputSerializer)
