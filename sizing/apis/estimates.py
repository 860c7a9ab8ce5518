"""Thin DRF APIs: validate input, call a service or selector, serialize the result."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from sizing.estimator.dtypes import KV_CACHE_DTYPES
from sizing.estimator.engines import ENGINE_CHOICES
from sizing.estimator.errors import SizingError
from sizing.estimator.formats import WEIGHT_FORMAT_CHOICES
from sizing.estimator.launch import ENGINE_MODES, INSTALLS, USAGE_CONTEXTS
from sizing.estimator.versions import ACCEPTED_FORM, resolve_engine_version
from sizing.fingerprint.environment import MeasuredEnvironment
from sizing.kernel import json_limits
from sizing.kernel.api_lists import ListApiMixin, bool_filter, choice_filter, filter_parameter, list_schema
from sizing.kernel.uploads import field_upload_read
from sizing.models import Calibration, Estimate, Fingerprint, Gpu, LlmModel
from sizing.selectors.deployments import fingerprint_get_for_organisation
from sizing.selectors.estimates import (
    calibration_list_for_organisation,
    estimate_get_for_organisation,
    gpu_get,
    gpu_list,
    model_get_for_organisation,
    model_list_for_organisation,
)
from sizing.services.deployments import fingerprint_estimate_environment, fingerprint_parameters
from sizing.services.estimates import (
    SOLVER_TARGETS,
    bootlog_analyse,
    estimate_colocated_report,
    estimate_create,
    estimate_report,
    estimate_solve,
    model_checkpoint_attach,
    model_create,
    organisation_for_user,
    parameters_with_draft,
)
from sizing.texts.findings import finding_text


class HealthApi(APIView):
    authentication_classes: list[type] = []
    permission_classes = [AllowAny]

    @extend_schema(responses=inline_serializer("Health", {"status": serializers.CharField()}))
    def get(self, request: Request) -> Response:
        return Response({"status": "ok"})


class GpuOutputSerializer(serializers.ModelSerializer):
    memory_bytes = serializers.IntegerField(read_only=True)

    class Meta:
        model = Gpu
        fields = [
            "slug",
            "vendor",
            "name",
            "architecture",
            "form_factor",
            "marketed_memory_gb",
            "memory_type",
            "nvidia_smi_memory_bytes",
            "memory_bytes",
            "cuda_total_bytes",
            "sm_count",
            "compute_capability",
            "nvswitch",
            "memory_bandwidth_bytes_per_s",
            "tflops_dense",
            "interconnect",
            "pcie_generation",
            "tdp_w",
            "price_per_hour_usd",
            "sources",
            "notes",
        ]


class GpuListApi(ListApiMixin, APIView):
    ordering_fields = {
        "slug": "slug",
        "vendor": "vendor",
        "name": "name",
        "memory_bytes": "memory_bytes",
        "price_per_hour_usd": "price_per_hour_usd",
    }

    @list_schema(
        GpuOutputSerializer,
        ordering=ordering_fields,
        filters=[filter_parameter("vendor", description="e.g. nvidia, amd")],
    )
    def get(self, request: Request) -> Response:
        rows = gpu_list()
        if request.query_params.get("vendor"):
            rows = rows.filter(vendor=request.query_params["vendor"])
        return self.list_response(request, rows, GpuOutputSerializer)


class ModelOutputSerializer(serializers.ModelSerializer):
    catalog = serializers.SerializerMethodField()

    class Meta:
        model = LlmModel
        fields = [
            "slug",
            "model_type",
            "catalog",
            "parameters_total",
            "supported",
            "unsupported_reason",
            "architecture",
            "source",
            "checkpoint",
        ]

    def get_catalog(self, obj: LlmModel) -> bool:
        return obj.organisation_id is None


class ModelListApi(ListApiMixin, APIView):
    ordering_fields = {"slug": "slug", "model_type": "model_type", "parameters_total": "parameters_total"}

    class ModelUploadInputSerializer(serializers.Serializer):
        slug = serializers.RegexField(
            r"^[A-Za-z0-9][A-Za-z0-9._\-]*(/[A-Za-z0-9._\-]+)?$",
            max_length=200,
            help_text="A name for the model, e.g. my-org/my-finetune",
        )
        config = serializers.JSONField(required=False, help_text="config.json as a JSON object")
        config_file = serializers.FileField(required=False, help_text="config.json as an uploaded file")

        def validate_config_file(self, value: Any) -> Any:
            return _json_file_value(
                field_upload_read(
                    value, limit_bytes=settings.SIZING_MAX_CONFIG_BYTES, subject="config.json", grouped=False
                )
            )

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            config = attrs.get("config_file", attrs.get("config"))
            if config is None:
                raise serializers.ValidationError({"config": ["give config (JSON) or config_file (upload)"]})
            if not isinstance(config, dict):
                raise serializers.ValidationError({"config": ["config.json must be a JSON object"]})
            attrs["config"] = config
            return attrs

    @list_schema(
        ModelOutputSerializer,
        ordering=ordering_fields,
        filters=[
            filter_parameter("model_type", description="config.json's model_type, e.g. llama"),
            filter_parameter("catalog", bool, description="true: the shipped catalog only; false: your uploads only"),
        ],
    )
    def get(self, request: Request) -> Response:
        organisation = organisation_for_user(user=request.user)
        models = model_list_for_organisation(organisation=organisation)
        query = request.query_params
        if query.get("model_type"):
            models = models.filter(model_type=query["model_type"])
        catalog = bool_filter(request, "catalog")
        if catalog is not None:
            models = models.filter(organisation__isnull=catalog)
        return self.list_response(request, models, ModelOutputSerializer)

    @extend_schema(request=ModelUploadInputSerializer, responses={201: ModelOutputSerializer})
    def post(self, request: Request) -> Response:
        serializer = self.ModelUploadInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        organisation = organisation_for_user(user=request.user)
        model = model_create(
            organisation=organisation,
            slug=serializer.validated_data["slug"],
            config=serializer.validated_data["config"],
        )
        return Response(ModelOutputSerializer(model).data, status=status.HTTP_201_CREATED)


class EstimateParametersSerializer(serializers.Serializer):
    """The knobs of an estimate; the same names as the CLI's flags (with underscores)."""

    gpu = serializers.SlugField(help_text="GPU slug from GET /api/v1/gpus/")
    gpus = serializers.IntegerField(required=False, min_value=1, max_value=1024)
    tp = serializers.IntegerField(required=False, min_value=1, max_value=64)
    pp = serializers.IntegerField(required=False, min_value=1, max_value=64)
    dp = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=64,
        help_text="data-parallel attention ranks in one server (with expert_parallel)",
    )
    expert_parallel = serializers.BooleanField(required=False, help_text="spread MoE experts over TP x DP ranks")
    weights = serializers.ChoiceField(choices=WEIGHT_FORMAT_CHOICES, required=False)
    kv_dtype = serializers.ChoiceField(choices=KV_CACHE_DTYPES, required=False)
    engine = serializers.ChoiceField(choices=ENGINE_CHOICES, required=False)
    engine_version = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=60,
        help_text=f"the engine release the estimate holds for: {ACCEPTED_FORM} (empty or absent: latest, the newest "
        "release modelled; a newer one is estimated with the newest rules and a warning; one older than the "
        "oldest modelled is refused)",
    )
    usage_context = serializers.ChoiceField(
        choices=USAGE_CONTEXTS,
        required=False,
        help_text="vLLM: serve (`vllm serve`, the OpenAI server; default) or llm (Python `LLM(...)`): their batch "
        "defaults differ",
    )
    engine_mode = serializers.ChoiceField(
        choices=ENGINE_MODES,
        required=False,
        help_text="vLLM 0.8-0.10: auto (vLLM's own choice between V1 and its V0 fallback; default), v0 or v1",
    )
    install = serializers.ChoiceField(
        choices=INSTALLS,
        required=False,
        help_text="pip (default) or docker (the official image: vLLM 0.8-0.11's ships FlashInfer)",
    )
    flashinfer_sampler = serializers.BooleanField(
        required=False, allow_null=True, help_text="VLLM_USE_FLASHINFER_SAMPLER; null or absent: the version's default"
    )
    estimate_cudagraphs = serializers.BooleanField(
        required=False,
        allow_null=True,
        help_text="VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS; null or absent: the version's default",
    )
    nccl_nvls = serializers.BooleanField(
        required=False,
        allow_null=True,
        help_text="NCCL_NVLS_ENABLE; null or absent: NCCL's default (NVLS on NVSwitch boards)",
    )
    enable_chunked_prefill = serializers.BooleanField(
        required=False, allow_null=True, help_text="null or absent: the engine's default for the version and context"
    )
    kv_cache_memory_bytes = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="vLLM 0.11+ --kv-cache-memory-bytes: the KV cache per GPU exactly (profiling still runs)",
    )
    gpu_memory_utilization = serializers.FloatField(
        required=False,
        min_value=0.01,
        max_value=1.0,
        help_text="default: the engine version's (vLLM 0.90, 0.92 from 0.20.0)",
    )
    gpu_memory_bytes = serializers.IntegerField(required=False, min_value=1)
    gpu_cuda_total_bytes = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="measured CUDA-visible total per GPU (cudaMemGetInfo; a vLLM boot log's total_gpu_memory), what "
        "vLLM multiplies by gpu_memory_utilization; default: gpu_memory_bytes less the catalog's driver "
        "reservation, else the catalog's cuda_total_bytes",
    )
    max_model_len = serializers.IntegerField(required=False, min_value=1, max_value=16_777_216)
    max_num_seqs = serializers.IntegerField(required=False, min_value=1, max_value=1_000_000)
    max_num_batched_tokens = serializers.IntegerField(required=False, min_value=1, max_value=16_777_216)
    block_size = serializers.IntegerField(required=False, min_value=1, max_value=1024)
    concurrency = serializers.IntegerField(required=False, min_value=1, max_value=1_000_000)
    tokens_per_request = serializers.IntegerField(required=False, min_value=1, max_value=16_777_216)
    mem_fraction_static = serializers.FloatField(
        required=False, min_value=0.05, max_value=1.0, help_text="SGLang; default: SGLang's automatic choice"
    )
    kv_cache_free_gpu_mem_fraction = serializers.FloatField(
        required=False, min_value=0.01, max_value=1.0, help_text="TensorRT-LLM; default 0.9"
    )
    enforce_eager = serializers.BooleanField(required=False, help_text="no CUDA graphs")
    runtime_reserve_bytes = serializers.IntegerField(
        required=False, min_value=0, help_text="measured non-torch/runtime memory per GPU"
    )
    cuda_graph_bytes = serializers.IntegerField(
        required=False, min_value=0, help_text="measured CUDA-graph memory per GPU"
    )
    activation_peak_bytes = serializers.IntegerField(
        required=False, min_value=0, help_text="measured activation peak per GPU"
    )
    weight_overhead = serializers.FloatField(
        required=False,
        min_value=1.0,
        max_value=2.0,
        help_text="idealized engine: weights multiplier (field calculators: 1.05)",
    )
    shared_prefix_tokens = serializers.IntegerField(
        required=False, min_value=0, max_value=16_777_216, help_text="a prompt prefix all requests share, cached once"
    )
    prefix_caching = serializers.BooleanField(required=False, help_text="default true (vLLM V1, SGLang)")
    parallel_samples = serializers.IntegerField(
        required=False, min_value=1, max_value=64, help_text="n / beam width: sequences decoded per request"
    )
    output_tokens = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=16_777_216,
        help_text="the decoded part of tokens_per_request (needed with n > 1)",
    )
    draft_model = serializers.CharField(
        required=False, max_length=200, help_text="a speculative-decoding draft model (slug) served beside the model"
    )
    num_speculative_tokens = serializers.IntegerField(required=False, min_value=0, max_value=64)
    use_calibration = serializers.BooleanField(
        required=False,
        help_text="apply the newest saved boot-log calibration of this model, GPU, engine and TP (default true)",
    )
    fingerprint = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="size on a measured machine (GET /api/v1/fingerprints/): its memory "
        "per GPU as the driver reports it replaces the catalog's",
    )

    def validate_gpu(self, value: str) -> Gpu:
        gpu = gpu_get(slug=value)
        if gpu is None:
            raise serializers.ValidationError(f"unknown GPU {value!r}; see GET /api/v1/gpus/")
        return gpu

    def validate_engine_version(self, value: str) -> str:
        """A version of the form X.Y.Z (or latest) within the bands modelled for the chosen engine."""
        data = self.initial_data if hasattr(self.initial_data, "get") else {}
        engine = data.get("engine")
        try:
            resolve_engine_version(engine if engine in ENGINE_CHOICES else "vllm", value)
        except SizingError as error:
            raise serializers.ValidationError(error.message) from None
        return value.strip()


def _on_measured_machine(
    request: Request, data: dict[str, Any]
) -> tuple[dict[str, Any], Fingerprint | None, MeasuredEnvironment | None]:
    """`data` with the measured memory per GPU of the `fingerprint` it names (none: unchanged)."""
    fingerprint_id = data.pop("fingerprint", None)
    if fingerprint_id is None:
        return data, None, None
    fingerprint = fingerprint_get_for_organisation(
        organisation=organisation_for_user(user=request.user), fingerprint_id=fingerprint_id
    )
    if fingerprint is None:
        raise serializers.ValidationError(
            {"fingerprint": [f"unknown fingerprint {fingerprint_id}; see GET /api/v1/fingerprints/"]}
        )
    data, environment = fingerprint_parameters(fingerprint=fingerprint, parameters=data)
    return data, fingerprint, environment


def _resolve_model(request: Request, slug: str) -> LlmModel:
    model = model_get_for_organisation(organisation=organisation_for_user(user=request.user), slug=slug)
    if model is None:
        raise serializers.ValidationError({"model": [f"unknown model {slug!r}; see GET /api/v1/models/"]})
    return model


class EstimateQuickApi(APIView):
    class QuickEstimateInputSerializer(EstimateParametersSerializer):
        model = serializers.CharField(required=False, max_length=200, help_text="model slug (Hugging Face id)")
        config = serializers.JSONField(required=False, help_text="a config.json object instead of a model slug")

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if ("model" in attrs) == ("config" in attrs):
                raise serializers.ValidationError({"model": ["give exactly one of model or config"]})
            if "config" in attrs and not isinstance(attrs["config"], dict):
                raise serializers.ValidationError({"config": ["config.json must be a JSON object"]})
            return attrs

    @extend_schema(
        request=QuickEstimateInputSerializer,
        responses=inline_serializer(
            "QuickEstimate",
            {
                "parameters_total": serializers.IntegerField(),
                "parameters_active": serializers.IntegerField(),
                "parameters_active_compute": serializers.IntegerField(),
                "weight_bytes_per_gpu": serializers.IntegerField(),
                "kv_bytes_per_token": serializers.IntegerField(),
                "kv_capacity_tokens": serializers.IntegerField(),
                "memory_per_gpu": serializers.DictField(child=serializers.IntegerField()),
                "required_bytes_per_gpu": serializers.IntegerField(),
                "usable_bytes_per_gpu": serializers.IntegerField(),
                "fits": serializers.BooleanField(),
                "per_gpu": serializers.ListField(child=serializers.DictField()),
                "concurrency_curve": serializers.DictField(),
                "warnings": serializers.ListField(child=serializers.CharField()),
                "problems": serializers.ListField(child=serializers.CharField()),
                "remedies": serializers.ListField(child=serializers.DictField()),
                "checkpoint": serializers.DictField(allow_null=True),
                "figure_sources": serializers.DictField(child=serializers.CharField()),
                "engine_version": serializers.CharField(
                    help_text='the release whose rules the bill follows ("0.33.0"); '
                    "empty for engines without version rules"
                ),
                "engine_version_requested": serializers.CharField(help_text="what was asked for (latest, 0.40.1)"),
                "defaults_assumed": serializers.DictField(
                    help_text="flags left empty, resolved to the engine version's defaults"
                ),
                "term_sources": serializers.DictField(
                    child=serializers.CharField(), help_text="bill line -> the version band or rule behind it"
                ),
                "launch_command": serializers.CharField(),
                "launch_args": serializers.ListField(child=serializers.CharField()),
                "environment": serializers.DictField(
                    allow_null=True, help_text="with a fingerprint: the measured machine and the plan's findings"
                ),
            },
        ),
    )
    def post(self, request: Request) -> Response:
        serializer = self.QuickEstimateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        gpu = data.pop("gpu")
        model = _resolve_model(request, data.pop("model")) if "model" in data else None
        organisation = organisation_for_user(user=request.user)
        data = parameters_with_draft(parameters=data, organisation=organisation)
        data, fingerprint, environment = _on_measured_machine(request, data)
        payload = estimate_report(
            gpu=gpu, model=model, config=data.pop("config", None), parameters=data, organisation=organisation
        )
        payload["model"] = model.slug if model else None
        payload["gpu_name"] = gpu.name
        payload["environment"] = None
        if fingerprint is not None and environment is not None:
            payload["environment"] = fingerprint_estimate_environment(
                fingerprint=fingerprint,
                environment=environment,
                estimate=payload,
                gpu=gpu,
                engine=data.get("engine") or "vllm",
            )
            for finding in payload["environment"]["findings"]:
                finding["text"] = finding_text(finding)
        return Response(payload)


class EstimateOutputSerializer(serializers.ModelSerializer):
    model = serializers.CharField(source="model.slug")
    gpu = serializers.CharField(source="gpu.slug")

    class Meta:
        model = Estimate
        fields = ["id", "model", "gpu", "inputs", "status", "result", "error", "created_at", "finished_at"]


class EstimateCreateApi(APIView):
    class EstimateCreateInputSerializer(EstimateParametersSerializer):
        model = serializers.CharField(max_length=200)

    @extend_schema(request=EstimateCreateInputSerializer, responses={202: EstimateOutputSerializer})
    def post(self, request: Request) -> Response:
        serializer = self.EstimateCreateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        gpu = data.pop("gpu")
        model = _resolve_model(request, data.pop("model"))
        data, fingerprint, _environment = _on_measured_machine(request, data)
        if fingerprint is not None:
            data["fingerprint"] = fingerprint.pk  # kept with the inputs: which machine the memory came from
        estimate = estimate_create(
            organisation=organisation_for_user(user=request.user),
            requested_by=request.user,
            model=model,
            gpu=gpu,
            inputs=data,
        )
        return Response(EstimateOutputSerializer(estimate).data, status=status.HTTP_202_ACCEPTED)


class EstimateDetailApi(APIView):
    @extend_schema(responses=EstimateOutputSerializer)
    def get(self, request: Request, estimate_id: int) -> Response:
        estimate = estimate_get_for_organisation(
            organisation=organisation_for_user(user=request.user), estimate_id=estimate_id
        )
        if estimate is None:
            return Response(
                {"code": "not_found", "message": f"no estimate {estimate_id}", "extra": {}},
                status=status.HTTP_404_NOT_FOUND,
            )
        return Response(EstimateOutputSerializer(estimate).data)


class EstimateSolveApi(APIView):
    class EstimateSolveInputSerializer(EstimateQuickApi.QuickEstimateInputSerializer):
        target = serializers.ChoiceField(choices=SOLVER_TARGETS)

    @extend_schema(
        request=EstimateSolveInputSerializer,
        responses=inline_serializer(
            "SolverResult",
            {
                "target": serializers.CharField(),
                "value": serializers.IntegerField(),
                "stops_because": serializers.CharField(),
                "estimate": serializers.DictField(allow_null=True),
            },
        ),
    )
    def post(self, request: Request) -> Response:
        serializer = self.EstimateSolveInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        gpu, target = data.pop("gpu"), data.pop("target")
        model = _resolve_model(request, data.pop("model")) if "model" in data else None
        data = parameters_with_draft(parameters=data, organisation=organisation_for_user(user=request.user))
        data, fingerprint, _environment = _on_measured_machine(request, data)
        solved = estimate_solve(gpu=gpu, model=model, config=data.pop("config", None), parameters=data, target=target)
        solved["fingerprint"] = fingerprint.pk if fingerprint else None
        return Response(solved)


def _json_file_value(data: bytes) -> Any:
    """An uploaded JSON file's value: decoded by its BOM (UTF-8 else), within JSON_MAX_DEPTH, with no NUL."""
    try:
        value = json_limits.loads(data)
    except json_limits.JsonTooDeep as error:
        raise serializers.ValidationError(
            f"not valid JSON: {error.msg}: JSON_MAX_DEPTH is {json_limits.JSON_MAX_DEPTH}"
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise serializers.ValidationError(f"not valid JSON: {error}") from None
    where = json_limits.nul_path(value)
    if where is not None:
        raise serializers.ValidationError(f"{where} holds a NUL character (\\u0000), which cannot be stored")
    return value


def _json_upload(value: Any, *, limit: int) -> Any:
    return _json_file_value(field_upload_read(value, limit_bytes=limit, grouped=False))


class ModelCheckpointApi(APIView):
    class ModelCheckpointInputSerializer(serializers.Serializer):
        model = serializers.CharField(max_length=200, help_text="the organisation's model (an upload)")
        index = serializers.FileField(required=False, help_text="model.safetensors.index.json")
        headers = serializers.FileField(required=False, help_text="the JSON written by safetensors_headers.py")

        def validate_index(self, value: Any) -> Any:
            return _json_upload(value, limit=settings.SIZING_MAX_INDEX_BYTES)

        def validate_headers(self, value: Any) -> Any:
            return _json_upload(value, limit=settings.SIZING_MAX_INDEX_BYTES)

    @extend_schema(request=ModelCheckpointInputSerializer, responses={200: ModelOutputSerializer})
    def post(self, request: Request) -> Response:
        serializer = self.ModelCheckpointInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        model = _resolve_model(request, data["model"])
        if model.organisation_id is None:
            # catalog rows are shared: attach the facts to the organisation's own copy
            model = model_create(
                organisation=organisation_for_user(user=request.user), slug=model.slug, config=model.config
            )
        model = model_checkpoint_attach(model=model, index=data.get("index"), headers=data.get("headers"))
        return Response(ModelOutputSerializer(model).data)


class BootLogCompareApi(APIView):
    class BootLogInputSerializer(EstimateParametersSerializer):
        model = serializers.CharField(
            required=False, max_length=200, help_text="model slug; default: the model the log names, if in the catalog"
        )
        config = serializers.JSONField(required=False)
        text = serializers.CharField(
            required=False, trim_whitespace=False, max_length=2_000_000, help_text="the startup log as pasted"
        )
        file = serializers.FileField(required=False, help_text="the startup log as a file")
        save = serializers.BooleanField(
            required=False, default=False, help_text="keep the measured terms as a calibration for later estimates"
        )

        def validate_file(self, value: Any) -> str:
            data = field_upload_read(
                value, limit_bytes=settings.SIZING_MAX_BOOTLOG_BYTES, subject="the log", grouped=False
            )
            text = data.decode(json_limits.text_encoding(data), errors="replace")
            if "\x00" in text:
                raise serializers.ValidationError(
                    f"{value.name}: the log holds a NUL character, which cannot be stored: upload the text log"
                )
            return text

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if not attrs.get("text") and not attrs.get("file"):
                raise serializers.ValidationError({"text": ["paste the startup log or upload it as a file"]})
            if "model" in attrs and "config" in attrs:
                raise serializers.ValidationError({"model": ["give model or config, not both"]})
            return attrs

    @extend_schema(
        request=BootLogInputSerializer,
        responses=inline_serializer(
            "BootLogComparison",
            {
                "release": serializers.DictField(
                    help_text="the engine release the log prints (log), the one its V0 "
                    "wording dates it to (inferred), its engine (engine_mode: "
                    "v0/v1) and the release the estimate follows "
                    "(estimated_as)"
                ),
                "warnings": serializers.ListField(child=serializers.CharField()),
                "log": serializers.DictField(),
                "parameters": serializers.DictField(),
                "comparison": serializers.ListField(child=serializers.DictField()),
                "calibration": serializers.DictField(),
                "estimate": serializers.DictField(),
                "calibrated_estimate": serializers.DictField(allow_null=True),
            },
        ),
    )
    def post(self, request: Request) -> Response:
        serializer = self.BootLogInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        text = data.pop("file", None) or data.pop("text", "")
        data.pop("text", None)
        gpu = data.pop("gpu")
        config = data.pop("config", None)
        slug = data.pop("model", None)
        organisation = organisation_for_user(user=request.user)
        save = data.pop("save", False)
        data, _fingerprint, _environment = _on_measured_machine(request, data)  # another organisation's: refused
        return Response(
            bootlog_analyse(
                text=text,
                gpu=gpu,
                organisation=organisation,
                model_slug=slug,
                config=config,
                parameters=data,
                save=save,
                user=request.user,
            )
        )


class EstimateColocatedApi(APIView):
    class EstimateColocatedInputSerializer(serializers.Serializer):
        gpu = serializers.SlugField()
        deployments = serializers.ListField(
            child=serializers.DictField(),
            min_length=2,
            max_length=8,
            help_text="each: model (slug) or config, and the parameters of estimates/quick (gpu excepted)",
        )

    @extend_schema(
        request=EstimateColocatedInputSerializer,
        responses=inline_serializer(
            "ColocatedEstimate",
            {
                "deployments": serializers.ListField(child=serializers.DictField()),
                "memory_per_gpu": serializers.DictField(child=serializers.IntegerField()),
                "required_bytes_per_gpu": serializers.IntegerField(),
                "fits": serializers.BooleanField(),
                "problems": serializers.ListField(child=serializers.CharField()),
            },
        ),
    )
    def post(self, request: Request) -> Response:
        serializer = self.EstimateColocatedInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        gpu_slug = serializer.validated_data["gpu"]
        items: list[dict[str, Any]] = []
        errors: dict[str, Any] = {}
        for index, raw in enumerate(serializer.validated_data["deployments"]):
            item = EstimateQuickApi.QuickEstimateInputSerializer(data={**raw, "gpu": gpu_slug})
            if not item.is_valid():
                errors[f"deployments[{index}]"] = item.errors
                continue
            data = dict(item.validated_data)
            data.pop("gpu")
            try:
                model = _resolve_model(request, data.pop("model")) if "model" in data else None
                data = parameters_with_draft(parameters=data, organisation=organisation_for_user(user=request.user))
            except serializers.ValidationError as error:
                errors[f"deployments[{index}]"] = error.detail
                continue
            except SizingError as error:
                errors[f"deployments[{index}]"] = error.extra.get("fields", {"non_field_errors": [error.message]})
                continue
            items.append({"model": model, "config": data.pop("config", None), "parameters": data})
        if errors:
            raise serializers.ValidationError(errors)
        gpu = gpu_get(slug=gpu_slug)
        return Response(estimate_colocated_report(gpu=gpu, deployments=items))


class CalibrationOutputSerializer(serializers.ModelSerializer):
    model = serializers.CharField(source="model.slug")
    gpu = serializers.CharField(source="gpu.slug")

    class Meta:
        model = Calibration
        fields = ["id", "model", "gpu", "engine", "engine_version", "tp", "terms", "evidence", "created_at"]


class CalibrationListApi(ListApiMixin, APIView):
    ordering_fields = {
        "created_at": "created_at",
        "model": "model__slug",
        "gpu": "gpu__slug",
        "engine": "engine",
        "tp": "tp",
    }

    @list_schema(
        CalibrationOutputSerializer,
        ordering=ordering_fields,
        filters=[
            filter_parameter("model", description="model slug"),
            filter_parameter("gpu", description="GPU slug"),
            filter_parameter("engine", enum=list(ENGINE_CHOICES)),
        ],
    )
    def get(self, request: Request) -> Response:
        calibrations = calibration_list_for_organisation(organisation=organisation_for_user(user=request.user))
        query = request.query_params
        if query.get("model"):
            calibrations = calibrations.filter(model__slug=query["model"])
        if query.get("gpu"):
            calibrations = calibrations.filter(gpu__slug=query["gpu"])
        if engine := choice_filter(request, "engine", ENGINE_CHOICES):
            calibrations = calibrations.filter(engine=engine)
        return self.list_response(request, calibrations, CalibrationOutputSerializer)
