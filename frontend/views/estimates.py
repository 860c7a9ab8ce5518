"""Server-rendered pages. The sizing and boot-log pages render the catalogs; their scripts call the REST API."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.mixins import LoginRequiredMixin
from django.db.models.functions import Lower
from django.utils.translation import gettext as _
from django.views.generic import TemplateView

from frontend.forms import SizingVersionForm
from frontend.presenters.labels import length_kind_labels, page_labels
from llm_sizing_loadgen.workload import ArrivalKind, LengthKind
from sizing.estimator.dtypes import KV_CACHE_DTYPES
from sizing.estimator.engines import ENGINE_CHOICES
from sizing.estimator.formats import FORMATS, WEIGHT_FORMAT_CHOICES
from sizing.estimator.version_choices import (
    INSTALL_CHOICES,
    USAGE_CONTEXT_CHOICES,
    VLLM_RELEASE_CHOICES,
    latest_vllm_release,
)
from sizing.selectors.deployments import fingerprint_list_for_organisation
from sizing.selectors.estimates import gpu_list, model_list_for_organisation
from sizing.selectors.workloads import workload_profile_list_for_organisation
from sizing.services.estimates import organisation_for_user

DEFAULT_GPU_MEMORY_UTILIZATION = 0.9  # vLLM's default for --gpu-memory-utilization
COLOCATED_GPU_MEMORY_UTILIZATION = 0.45  # two vLLM instances sharing a card, each at 0.45
COLOCATED_MIN_DEPLOYMENTS = 2  # the bounds of POST /api/v1/estimates/colocated
COLOCATED_MAX_DEPLOYMENTS = 8
# Engines whose memory follows --gpu-memory-utilization (or its equivalent); the form shows the input for these.
UTILIZATION_ENGINES = "vllm tgi llamacpp transformers idealized"


def _weight_format_labels() -> dict[str, str]:
    return {
        "auto": _("Auto (from the model config)"),
        "fp32": "FP32",
        "fp16": "FP16",
        "bf16": "BF16",
        "fp8": _("FP8 (per-tensor scales)"),
        "fp8-block": _("FP8 (128×128 block scales)"),
        "int8": _("INT8 (per-channel scales)"),
        "int4": _("INT4 (AWQ/GPTQ, group 128)"),
    }


def _kv_dtype_labels() -> dict[str, str]:
    return {
        "auto": _("Auto (same as the model)"),
        "bf16": "BF16",
        "fp16": "FP16",
        "fp8": "FP8",
        "fp8_e4m3": "FP8 E4M3",
        "fp8_e5m2": "FP8 E5M2",
        "fp32": "FP32",
    }


def engine_label_map() -> dict[str, str]:
    return {
        "vllm": "vLLM",
        "sglang": "SGLang",
        "trtllm": "TensorRT-LLM",
        "tgi": _("TGI (Text Generation Inference)"),
        "llamacpp": "llama.cpp",
        "transformers": _("Hugging Face transformers (generate)"),
        "idealized": _("Idealized (weights + KV cache + fixed reserve)"),
    }


def select_choices(
    values: tuple[str, ...], labels: dict[str, str], fallback: dict[str, str] | None = None
) -> list[dict[str, str]]:
    """Pair the estimator's choice values with translated labels; a value added later shows with the
    estimator's own label (`fallback`), or as itself."""
    fallback = fallback or {}
    return [{"value": value, "label": labels.get(value) or fallback.get(value) or value.upper()} for value in values]


def _vllm_release_labels() -> dict[str, str]:
    """The vLLM releases the sizing page offers, each with what changes in the memory rules at it."""
    notes = {
        "latest": _("the newest release modelled"),
        "0.33.0": _(
            "profiling counts start-up buffers (from 0.27); cards of 160 GiB or more get the big batch "
            "defaults (from 0.29); the FlashInfer sampler is on again (from 0.21)"
        ),
        "0.20.0": _("gpu_memory_utilization 0.92 by default; CUDA graphs are measured inside the budget"),
        "0.19.0": _("the last release with gpu_memory_utilization 0.90 and CUDA graphs outside the budget"),
        "0.17.0": _("the Triton top-k/top-p sampler: a smaller sampling peak"),
        "0.11.0": _("V1 only; NCCL's NVLS buffers on NVSwitch boards (about 2 GiB at TP > 1)"),
        "0.10.2": _("V1 on every GPU (no V0 fallback below compute capability 8.0)"),
        "0.9.2": _(
            "the hidden states stay alive while sampling; the CUDA context is no longer subtracted (from 0.9.1)"
        ),
        "0.9.0": _("the A100-80GB leaves the big-card batch defaults; profiling subtracts the CUDA context"),
        "0.8.5": _("V1 by default (V0 fallback on older GPUs); profiling subtracts the CUDA context"),
        "0.7.3": _("V0; profiling leaves the CUDA context and fragmentation out"),
        "0.6.6": _("V0; allocator fragmentation lands in non-torch memory (0.6.5-0.6.6)"),
        "0.6.4": _("V0; profiling subtracts the CUDA context"),
    }
    labels = {}
    for value, note in VLLM_RELEASE_CHOICES:
        name = _("latest (%(version)s)") % {"version": latest_vllm_release()} if value == "latest" else value
        labels[value] = f"{name} · {notes.get(value, note)}"
    return labels


def usage_context_label_map() -> dict[str, str]:
    labels = {"serve": _("vllm serve (the OpenAI-compatible server)"), "llm": _("Python LLM(...) (offline batches)")}
    return {value: labels.get(value, value) for value in USAGE_CONTEXT_CHOICES}


def install_label_map() -> dict[str, str]:
    labels = {"pip": _("pip (the PyPI wheel)"), "docker": _("Docker (the official vllm/vllm-openai image)")}
    return {value: labels.get(value, value) for value in INSTALL_CHOICES}


def model_option_groups(user: Any) -> tuple[list[Any], list[Any], list[str]]:
    """(catalog models, the organisation's uploads, slugs of the supported ones, uploads first). Each model
    carries `is_moe` for the templates, from its stored architecture summary."""
    organisation = organisation_for_user(user=user)
    catalog_models: dict[str, Any] = {}
    own_models: dict[str, Any] = {}
    for model in model_list_for_organisation(organisation=organisation).order_by(Lower("slug")):
        model.is_moe = bool(model.architecture.get("moe"))
        (catalog_models if model.organisation_id is None else own_models)[model.slug] = model
    # An upload shadows the catalog model of the same slug (as the API resolves it), so list it once.
    catalog = [model for slug, model in catalog_models.items() if slug not in own_models]
    own = list(own_models.values())
    supported = [m.slug for m in [*own, *catalog] if m.supported]
    return catalog, own, supported


def gpu_options() -> list[Any]:
    return list(gpu_list().order_by("vendor", "marketed_memory_gb", "name"))


def _default_model(own: list[Any], supported: list[str]) -> str:
    """The organisation's newest supported upload, else the configured default, else the first supported."""
    preferred = settings.SIZING_DEFAULT_MODEL
    return (
        own[0].slug
        if own and own[0].supported
        else (preferred if preferred in supported else next(iter(supported), ""))
    )


def sizing_form_context(user: Any, *, models_default: bool = True) -> dict[str, Any]:
    """What the pages' model and GPU selects need: the model groups, the preselected model (none when
    `models_default` is false) and the GPUs."""
    catalog, own, supported = model_option_groups(user)
    return {
        "catalog_models": catalog,
        "own_models": own,
        "default_model": _default_model(own, supported) if models_default else "",
        "gpus": gpu_options(),
    }


def weight_format_choices() -> list[dict[str, str]]:
    return select_choices(
        WEIGHT_FORMAT_CHOICES, _weight_format_labels(), {slug: fmt.label for slug, fmt in FORMATS.items()}
    )


class SizingPageView(LoginRequiredMixin, TemplateView):
    """The sizing page. gpu_memory_utilization, max_num_seqs and max_num_batched_tokens start empty: the chosen
    engine release's own defaults resolve them, and the answer lists the defaults it assumed."""

    template_name = "frontend/sizing.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        names = ("engine_version", "usage_context", "install")
        address = {name: self.request.GET[name] for name in names if self.request.GET.get(name)}
        version_form = SizingVersionForm(
            address or None,
            version_labels=_vllm_release_labels(),
            usage_labels=usage_context_label_map(),
            install_labels=install_label_map(),
        )
        version_form.is_valid()
        selects = sizing_form_context(self.request.user)
        context.update(
            selects,
            fingerprint_choices=_fingerprint_choices(organisation_for_user(user=self.request.user)),
            weight_choices=weight_format_choices(),
            kv_dtype_choices=select_choices(KV_CACHE_DTYPES, _kv_dtype_labels()),
            engine_choices=select_choices(ENGINE_CHOICES, engine_label_map()),
            utilization_engines=UTILIZATION_ENGINES,
            gpu_memory={gpu.slug: gpu.memory_bytes for gpu in selects["gpus"]},
            version_form=version_form,
            version_fields={
                name: {
                    "choices": list(version_form.fields[name].choices),
                    "selected": version_form.selected(name),
                    "errors": version_form.errors.get(name, []),
                }
                for name in names
            },
            labels=page_labels(),
        )
        return context


class ColocatedPageView(LoginRequiredMixin, TemplateView):
    """Several deployments sharing one GPU type (e.g. two vLLM instances at 0.45 each): their summed bill."""

    template_name = "frontend/colocated.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(
            sizing_form_context(self.request.user),
            weight_choices=weight_format_choices(),
            engine_choices=select_choices(ENGINE_CHOICES, engine_label_map()),
            default_gpu_memory_utilization=COLOCATED_GPU_MEMORY_UTILIZATION,
            utilization_engines=UTILIZATION_ENGINES,
            min_deployments=COLOCATED_MIN_DEPLOYMENTS,
            max_deployments=COLOCATED_MAX_DEPLOYMENTS,
            labels=page_labels(),
        )
        return context


class BootLogPageView(LoginRequiredMixin, TemplateView):
    """Paste an engine's startup log: its figures against the estimate, and the calibration it gives."""

    template_name = "frontend/bootlog.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(
            sizing_form_context(self.request.user, models_default=False),  # the model the log names
            labels=page_labels(),
        )
        return context


def _arrival_kind_labels() -> dict[str, str]:
    return {
        "poisson": _("Poisson (random, at a steady rate)"),
        "constant": _("Constant (evenly spaced)"),
        "burst": _("Poisson with a burst"),
    }


def _workload_list(organisation: Any) -> list[dict[str, Any]]:
    """What the page's profile list shows before the script fetches anything."""
    return [
        {
            "id": row.pk,
            "name": row.name,
            "sample": row.organisation_id is None,
            "source": row.source,
            "has_fit": row.fit is not None,
        }
        for row in workload_profile_list_for_organisation(organisation=organisation)
    ]


class WorkloadsPageView(LoginRequiredMixin, TemplateView):
    """A customer's traffic as request classes: edit a profile, see its day, or fit one to a CSV request log."""

    template_name = "frontend/workloads.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(
            length_kind_choices=select_choices(tuple(kind.value for kind in LengthKind), length_kind_labels()),
            arrival_kind_choices=select_choices(tuple(kind.value for kind in ArrivalKind), _arrival_kind_labels()),
            length_sides=[("input", _("Input tokens")), ("output", _("Output tokens"))],
            workload_profiles=_workload_list(organisation_for_user(user=self.request.user)),
            max_csv_mib=round(settings.SIZING_MAX_WORKLOAD_CSV_BYTES / 2**20, 1),
            labels=page_labels(),
        )
        return context


# ---------------------------------------------------------------------------------------------------------------
# Latency and throughput: simulate, sweep the load, the largest load within the SLOs, search deployments, calibrate

PERFORMANCE_DEFAULT_RATE_PER_S = 1.0  # the load a first simulation offers: one request per second
PERFORMANCE_DEFAULT_CONCURRENCY = 16
PERFORMANCE_DEFAULT_REQUESTS = 1000  # SIMULATION_DEFAULT_REQUESTS: enough for a stable P99
PERFORMANCE_DEFAULT_TTFT_S = 2.0  # a chat assistant's usual first-token limit
PERFORMANCE_DEFAULT_TPOT_MS = 100  # 10 tokens per second per user, faster than people read
PERFORMANCE_DEFAULT_SWEEP_POINTS = 8  # the API's default
PERFORMANCE_SEARCH_COUNTS = "1, 2, 4, 8"  # the API's default GPU counts
PERFORMANCE_SEARCH_TPS = (1, 2, 4, 8)  # the API's default TP sizes
PERFORMANCE_SEARCH_REQUESTS = 300  # SEARCH_DEFAULT_REQUESTS: a short run per candidate
SLO_PERCENTILES = (50, 90, 95, 99)  # SloSerializer.percentile's choices
# the weight formats a search offers: "auto" and the common plain ones (the sizing page lists every format)
SEARCH_WEIGHT_FORMATS = ("auto", "bf16", "fp16", "fp8", "int8", "int4")


def _load_kind_labels() -> dict[str, str]:
    return {
        "rate": _("Rate (open loop)"),
        "concurrency": _("Concurrency (closed loop)"),
        "offline": _("Offline (all at once)"),
    }


def profile_choices(organisation: Any) -> dict[str, list[dict[str, Any]]]:
    """The workload profiles the traffic select offers: the shipped samples and the organisation's own."""
    rows = _workload_list(organisation)
    return {"samples": [row for row in rows if row["sample"]], "own": [row for row in rows if not row["sample"]]}


def _fingerprint_choices(organisation: Any) -> list[tuple[int, str]]:
    """The organisation's measured machines, newest first: "deployment · host · capture date (GPUs)"."""
    rows = fingerprint_list_for_organisation(organisation=organisation)[:200]
    choices = []
    for row in rows:
        names = sorted({gpu.get("name") for gpu in row.facts.get("gpus", []) if gpu.get("name")})
        gpus = f"{row.facts.get('gpu_count') or 0} × {', '.join(names) or '?'}"
        choices.append((row.pk, f"{row.deployment.name} · {row.host} · {row.captured_at:%Y-%m-%d %H:%M} ({gpus})"))
    return choices


class PerformancePageView(LoginRequiredMixin, TemplateView):
    """Latency and throughput of a deployment at a customer's traffic: simulate, sweep the load, the largest load
    within the SLOs, search deployments, calibrate. The script posts jobs to the simulations API and polls them."""

    template_name = "frontend/performance.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        weight_choices = weight_format_choices()
        context.update(
            sizing_form_context(self.request.user),
            weight_choices=weight_choices,
            kv_dtype_choices=select_choices(KV_CACHE_DTYPES, _kv_dtype_labels()),
            engine_choices=select_choices(ENGINE_CHOICES, engine_label_map()),
            load_kind_choices=select_choices(("rate", "concurrency", "offline"), _load_kind_labels()),
            profiles=profile_choices(organisation_for_user(user=self.request.user)),
            fingerprint_choices=_fingerprint_choices(organisation_for_user(user=self.request.user)),
            default_gpu_memory_utilization=DEFAULT_GPU_MEMORY_UTILIZATION,
            utilization_engines=UTILIZATION_ENGINES,
            default_rate=PERFORMANCE_DEFAULT_RATE_PER_S,
            default_concurrency=PERFORMANCE_DEFAULT_CONCURRENCY,
            default_requests=PERFORMANCE_DEFAULT_REQUESTS,
            default_ttft_s=PERFORMANCE_DEFAULT_TTFT_S,
            default_tpot_ms=PERFORMANCE_DEFAULT_TPOT_MS,
            default_sweep_points=PERFORMANCE_DEFAULT_SWEEP_POINTS,
            slo_percentiles=SLO_PERCENTILES,
            search_counts=PERFORMANCE_SEARCH_COUNTS,
            search_tps=PERFORMANCE_SEARCH_TPS,
            search_requests=PERFORMANCE_SEARCH_REQUESTS,
            search_weight_choices=[c for c in weight_choices if c["value"] in SEARCH_WEIGHT_FORMATS],
            labels=page_labels(),
        )
        return context
