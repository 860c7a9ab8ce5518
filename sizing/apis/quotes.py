"""Thin DRF APIs of quotes for sales tooling: POST a model, traffic, SLOs and the GPU types allowed (202 with the
quote's URL: a worker runs the deployment search); GET the quote: status, progress, and when done the cheapest
deployments meeting the SLOs with their costs, the cheapest that do not and why, and the assumptions."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sizing.apis.simulations import SloSerializer
from sizing.estimator.engines import ENGINE_CHOICES
from sizing.estimator.formats import WEIGHT_FORMAT_CHOICES
from sizing.kernel.api_lists import ListApiMixin, list_schema
from sizing.kernel.job_budgets import MAX_CONTEXT_TOKENS
from sizing.models import SimulationJob
from sizing.services.estimates import organisation_for_user
from sizing.services.quotes import (
    QUOTE_DEFAULT_MAX_GPUS,
    QUOTE_DEFAULT_TOP,
    QUOTE_MAX_GPUS,
    QUOTE_MAX_TOP,
    quote_create,
    quote_get_for_organisation,
    quote_list_for_organisation,
    quote_result,
    quote_summary,
)


class QuoteSloSerializer(SloSerializer):
    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if all(attrs.get(key) is None for key in ("ttft_s", "tpot_s", "e2e_s")):
            raise serializers.ValidationError("give at least one limit: ttft_s, tpot_s or e2e_s (seconds)")
        return attrs


class QuoteInputSerializer(serializers.Serializer):
    model = serializers.CharField(max_length=200, help_text="model slug from GET /api/v1/models/")
    profile = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="a workload profile id (yours or a shipped sample); or give input_tokens and output_tokens",
    )
    input_tokens = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_CONTEXT_TOKENS,
        help_text="prompt tokens per request (with output_tokens)",
    )
    output_tokens = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_CONTEXT_TOKENS,
        help_text="generated tokens per request (with input_tokens)",
    )
    rate = serializers.FloatField(
        min_value=0.0001, max_value=1_000_000, help_text="the load: requests per second arriving at random (open loop)"
    )
    concurrency = serializers.IntegerField(
        required=False, min_value=1, help_text="not supported: a quote simulates a rate; give rate"
    )
    slo = QuoteSloSerializer(help_text="limits in seconds at a percentile (default P95); at least one")
    gpus = serializers.ListField(
        child=serializers.SlugField(),
        required=False,
        max_length=50,
        help_text="allowed GPU slugs (default: every catalog GPU with a list price)",
    )
    max_gpus = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=QUOTE_MAX_GPUS,
        default=QUOTE_DEFAULT_MAX_GPUS,
        help_text="the most GPUs a deployment may use (every count from 1 is tried)",
    )
    engines = serializers.ListField(
        child=serializers.ChoiceField(choices=ENGINE_CHOICES), required=False, max_length=7, help_text="default: vllm"
    )
    weights = serializers.ListField(
        child=serializers.ChoiceField(choices=WEIGHT_FORMAT_CHOICES),
        required=False,
        max_length=10,
        help_text="weight formats; default: auto (the model's own)",
    )
    top = serializers.IntegerField(
        required=False, min_value=1, max_value=QUOTE_MAX_TOP, default=QUOTE_DEFAULT_TOP, help_text="how many offers"
    )
    requests = serializers.IntegerField(
        required=False, min_value=20, max_value=5000, help_text="requests simulated per candidate (default 300)"
    )
    max_model_len = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_CONTEXT_TOKENS,
        help_text="the context the engine is started with (default: the model's)",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "concurrency" in attrs:
            raise serializers.ValidationError(
                {
                    "concurrency": [
                        "a quote simulates requests arriving at a rate (open loop); give rate in requests per second"
                    ]
                }
            )
        lengths = [key for key in ("input_tokens", "output_tokens") if key in attrs]
        if "profile" in attrs and lengths:
            raise serializers.ValidationError(
                {"profile": ["give either a workload profile or input_tokens and output_tokens, not both"]}
            )
        if "profile" not in attrs and len(lengths) != 2:
            field = "profile" if not lengths else ("output_tokens" if lengths == ["input_tokens"] else "input_tokens")
            raise serializers.ValidationError(
                {
                    field: [
                        "give the traffic: a workload profile, or input_tokens and output_tokens (tokens per request)"
                    ]
                }
            )
        return attrs


class QuoteDeploymentSerializer(serializers.Serializer):
    gpu = serializers.CharField(help_text="GPU slug")
    gpu_name = serializers.CharField()
    gpus = serializers.IntegerField(help_text="GPU count")
    tp = serializers.IntegerField(help_text="tensor parallelism")
    replicas = serializers.IntegerField()
    engine = serializers.CharField()
    weights = serializers.CharField()
    kv_dtype = serializers.CharField()
    max_num_seqs = serializers.IntegerField(allow_null=True)
    label = serializers.CharField()
    cost_per_hour_usd = serializers.FloatField(allow_null=True, help_text="list price × GPU count")
    memory_per_gpu_bytes = serializers.IntegerField(allow_null=True, help_text="memory required per GPU")
    memory_per_gpu_gib = serializers.FloatField(allow_null=True)


class QuoteOfferSerializer(QuoteDeploymentSerializer):
    rank = serializers.IntegerField()
    price_per_gpu_hour_usd = serializers.FloatField()
    cost_per_million_output_tokens_usd = serializers.FloatField(
        allow_null=True, help_text="cost per hour ÷ the output tokens simulated in an hour at the rate"
    )
    cost_per_million_tokens_usd = serializers.FloatField(
        allow_null=True, help_text="cost per hour ÷ (rate × 3600 × (mean input + mean output tokens) ÷ 1e6)"
    )
    percentile = serializers.IntegerField(help_text="the SLO's percentile the latencies are read at")
    ttft_ms = serializers.FloatField(allow_null=True)
    tpot_ms = serializers.FloatField(allow_null=True)
    e2e_ms = serializers.FloatField(allow_null=True)
    output_tokens_per_s = serializers.FloatField(allow_null=True)
    kv_capacity_tokens = serializers.IntegerField(allow_null=True, help_text="KV cache per replica, in tokens")


class QuoteRejectedSerializer(QuoteDeploymentSerializer):
    fits = serializers.BooleanField(help_text="false: the model does not fit (or cannot run) on it")
    reason = serializers.CharField(help_text="why it is not offered, in English")
    verdict = serializers.DictField(
        allow_null=True,
        help_text="the reason as data: code met | slo | rejected | does_not_fit | cannot_run, and its numbers",
    )
    cheaper_than_best_offer = serializers.BooleanField()


class QuoteSummarySerializer(serializers.Serializer):
    candidates = serializers.IntegerField(help_text="deployments sized")
    meeting_slo = serializers.IntegerField()
    fitting = serializers.IntegerField()
    offers = serializers.IntegerField()


class QuoteTrafficSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["profile", "lengths"])
    profile = serializers.IntegerField(allow_null=True)
    profile_name = serializers.CharField(allow_null=True)
    rate_per_s = serializers.FloatField()
    hour = serializers.IntegerField(help_text="the profile's busiest hour, whose mix is simulated")
    mean_input_tokens = serializers.FloatField()
    mean_output_tokens = serializers.FloatField()
    tokens_per_hour = serializers.FloatField(help_text="input and output tokens per hour at the rate")


class QuoteAssumptionsSerializer(serializers.Serializer):
    prices = serializers.CharField()
    currency = serializers.CharField()
    price_unit = serializers.CharField()
    gpu_prices_usd_per_hour = serializers.DictField(child=serializers.FloatField())
    requests_simulated = serializers.IntegerField(help_text="requests simulated per candidate")
    traffic = QuoteTrafficSerializer()
    slo = serializers.DictField()
    gpu_counts = serializers.ListField(child=serializers.IntegerField())
    tps = serializers.ListField(child=serializers.IntegerField())
    cost_per_million_tokens = serializers.CharField(help_text="the formula")


class QuoteOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField()
    status = serializers.ChoiceField(choices=SimulationJob.Status.choices)
    progress = serializers.FloatField()
    progress_message = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    inputs = serializers.DictField(help_text="the request as stored, with its defaults")
    error = serializers.DictField(allow_null=True, help_text="{code, message, extra} when the quote failed")
    offers = QuoteOfferSerializer(many=True, allow_null=True, help_text="cheapest first; null until done")
    rejected = QuoteRejectedSerializer(
        many=True, allow_null=True, help_text="the cheapest deployments not offered, with the reason"
    )
    summary = QuoteSummarySerializer(allow_null=True)
    assumptions = QuoteAssumptionsSerializer()


class _QuoteSummaries(serializers.ListSerializer):
    """Quotes (jobs) in a list, each read as its summary."""

    def to_representation(self, data: Any) -> list[Any]:
        return [self.child.to_representation(quote_summary(job)) for job in data]


class QuoteListItemSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField()
    status = serializers.ChoiceField(choices=SimulationJob.Status.choices)
    progress = serializers.FloatField()
    progress_message = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    inputs = serializers.DictField()
    error = serializers.DictField(allow_null=True)
    summary = QuoteSummarySerializer(allow_null=True)
    cheapest = QuoteOfferSerializer(allow_null=True, help_text="the cheapest offer, when done")

    class Meta:
        list_serializer_class = _QuoteSummaries


REQUEST_EXAMPLE = OpenApiExample(
    "Llama 3 8B at 2 requests/s on L40S or H100",
    request_only=True,
    value={
        "model": "meta-llama/Meta-Llama-3-8B",
        "input_tokens": 1000,
        "output_tokens": 200,
        "rate": 2.0,
        "slo": {"ttft_s": 2.0, "tpot_s": 0.1, "percentile": 95},
        "gpus": ["nvidia-l40s-48gb", "nvidia-h100-sxm-80gb"],
        "max_gpus": 8,
        "top": 3,
    },
)

_EXAMPLE_ASSUMPTIONS = {
    "prices": "List prices from the GPU catalog, in USD per GPU-hour: no discounts, no host, network, storage or "
    "staff costs.",
    "currency": "USD",
    "price_unit": "per GPU-hour",
    "gpu_prices_usd_per_hour": {"nvidia-l40s-48gb": 0.86, "nvidia-h100-sxm-80gb": 2.99},
    "requests_simulated": 300,
    "traffic": {
        "kind": "lengths",
        "profile": None,
        "profile_name": None,
        "rate_per_s": 2.0,
        "hour": 0,
        "mean_input_tokens": 1000.0,
        "mean_output_tokens": 200.0,
        "tokens_per_hour": 8640000.0,
    },
    "slo": {"ttft_s": 2.0, "tpot_s": 0.1, "percentile": 95},
    "gpu_counts": [1, 2, 3, 4, 5, 6, 7, 8],
    "tps": [1, 2, 4, 8],
    "cost_per_million_tokens": "cost per hour ÷ (rate × 3600 × (mean input + mean output tokens) ÷ 1e6)",
}
_EXAMPLE_OFFER = {
    "rank": 1,
    "gpu": "nvidia-l40s-48gb",
    "gpu_name": "NVIDIA L40S 48GB",
    "gpus": 2,
    "tp": 1,
    "replicas": 2,
    "engine": "vllm",
    "weights": "auto",
    "kv_dtype": "auto",
    "max_num_seqs": None,
    "label": "2 x NVIDIA L40S 48GB (TP 1 x 2 replica(s)), vllm, weights auto, KV auto",
    "cost_per_hour_usd": 1.72,
    "price_per_gpu_hour_usd": 0.86,
    "cost_per_million_output_tokens_usd": 1.19,
    "cost_per_million_tokens_usd": 0.199,
    "percentile": 95,
    "ttft_ms": 143.0,
    "tpot_ms": 31.5,
    "e2e_ms": 6420.0,
    "output_tokens_per_s": 401.0,
    "kv_capacity_tokens": 182000,
    "memory_per_gpu_bytes": 41600000000,
    "memory_per_gpu_gib": 38.74,
}
RESULT_EXAMPLE = OpenApiExample(
    "A finished quote",
    response_only=True,
    status_codes=["200"],
    value={
        "id": 42,
        "url": "/api/v1/quotes/42/",
        "status": "done",
        "progress": 1.0,
        "progress_message": "done",
        "created_at": "2026-11-30T10:00:00Z",
        "started_at": "2026-11-30T10:00:01Z",
        "finished_at": "2026-11-30T10:00:04Z",
        "inputs": {
            "model": "meta-llama/Meta-Llama-3-8B",
            "input_tokens": 1000,
            "output_tokens": 200,
            "rate": 2.0,
            "slo": {"ttft_s": 2.0, "tpot_s": 0.1, "percentile": 95},
            "gpus": ["nvidia-l40s-48gb", "nvidia-h100-sxm-80gb"],
            "max_gpus": 8,
            "engines": ["vllm"],
            "weights": ["auto"],
            "top": 3,
            "requests": 300,
        },
        "error": None,
        "offers": [_EXAMPLE_OFFER],
        "rejected": [
            {
                "gpu": "nvidia-l40s-48gb",
                "gpu_name": "NVIDIA L40S 48GB",
                "gpus": 1,
                "tp": 1,
                "replicas": 1,
                "engine": "vllm",
                "weights": "auto",
                "kv_dtype": "auto",
                "max_num_seqs": None,
                "label": "1 x NVIDIA L40S 48GB (TP 1 x 1 replica(s)), vllm, weights auto, KV auto",
                "cost_per_hour_usd": 0.86,
                "memory_per_gpu_bytes": 41600000000,
                "memory_per_gpu_gib": 38.74,
                "fits": True,
                "reason": "TTFT P95 3.2 s > 2 s",
                "cheaper_than_best_offer": True,
                "verdict": {
                    "met": False,
                    "code": "slo",
                    "metric": "TTFT",
                    "percentile": 95,
                    "value_s": 3.2,
                    "limit_s": 2.0,
                },
            }
        ],
        "summary": {"candidates": 30, "meeting_slo": 21, "fitting": 30, "offers": 3},
        "assumptions": _EXAMPLE_ASSUMPTIONS,
    },
)


def _not_found(quote_id: int) -> Response:
    return Response(
        {"code": "not_found", "message": f"no quote {quote_id}", "extra": {}}, status=status.HTTP_404_NOT_FOUND
    )


class QuoteListApi(ListApiMixin, APIView):
    ordering_fields = {"created_at": "created_at"}

    @list_schema(QuoteListItemSerializer, ordering=ordering_fields)
    def get(self, request: Request) -> Response:
        rows = quote_list_for_organisation(organisation=organisation_for_user(user=request.user))
        return self.list_response(request, rows, QuoteListItemSerializer)

    @extend_schema(request=QuoteInputSerializer, responses={202: QuoteOutputSerializer}, examples=[REQUEST_EXAMPLE])
    def post(self, request: Request) -> Response:
        serializer = QuoteInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        job = quote_create(
            organisation=organisation_for_user(user=request.user),
            user=request.user,
            inputs=dict(serializer.validated_data),
        )
        body = QuoteOutputSerializer(quote_result(job)).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


class QuoteDetailApi(APIView):
    @extend_schema(responses=QuoteOutputSerializer, examples=[RESULT_EXAMPLE])
    def get(self, request: Request, quote_id: int) -> Response:
        job = quote_get_for_organisation(organisation=organisation_for_user(user=request.user), quote_id=quote_id)
        if job is None:
            return _not_found(quote_id)
        return Response(QuoteOutputSerializer(quote_result(job)).data)
