"""Server-rendered pages. The sizing page renders the catalogs; its script calls the REST API for estimates."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.mixins import LoginRequiredMixin
from django.db.models.functions import Lower
from django.utils.translation import gettext as _
from django.views.generic import TemplateView

from sizing.estimator.dtypes import KV_CACHE_DTYPES
from sizing.estimator.engines import ENGINE_CHOICES
from sizing.estimator.formats import WEIGHT_FORMAT_CHOICES
from sizing.selectors import gpu_list, model_list_for_organisation
from sizing.services import organisation_for_user

DEFAULT_GPU_MEMORY_UTILIZATION = 0.9  # vLLM's default for --gpu-memory-utilization


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


def _engine_labels() -> dict[str, str]:
    return {
        "vllm": "vLLM",
        "idealized": _("Idealized (weights + KV cache + fixed reserve)"),
    }


def _choices(values: tuple[str, ...], labels: dict[str, str]) -> list[dict[str, str]]:
    """Pair the estimator's choice values with translated labels; a value added later shows as itself."""
    return [{"value": value, "label": labels.get(value, value.upper())} for value in values]


def sizing_page_strings() -> dict[str, str]:
    """Every string the page's script shows, translated into the active language."""
    return {
        # components of the memory bill, in the API's keys
        "weights": _("Weights"),
        "kv_cache": _("KV cache"),
        "activations": _("Activations"),
        "runtime": _("Runtime reserve"),
        "cuda_graphs": _("CUDA graphs"),
        "required": _("Required"),
        "usable": _("Usable"),
        "headroom": _("Headroom"),
        "capacity": _("Card capacity"),
        "budget": _("Engine budget"),
        # verdict
        "fits": _("Fits"),
        "does_not_fit": _("Does not fit"),
        "problems": _("Problems"),
        "warnings": _("Warnings"),
        "approximate": _("Approximate: some architecture details were estimated, not read from the config"),
        "summary": _(
            "{model} on {gpus} × {gpu_name} · TP {tp} · PP {pp} · {replicas} replica(s) · "
            "weights {weights} · KV cache {kv_dtype} · {engine}"
        ),
        "binding_caption": _("Memory bill of the binding GPU (GPU {index})"),
        # units
        "gb": _("GB"),
        "gib": _("GiB"),
        "bytes_value": _("{value} bytes"),
        "tokens_value": _("{value} tokens"),
        "requests_value": _("{value} requests"),
        # key figures
        "parameters": _("Parameters"),
        "kv_per_token": _("KV cache per token (whole model)"),
        "kv_per_token_per_gpu": _("KV cache per token (per GPU)"),
        "kv_capacity": _("KV cache capacity"),
        "max_concurrency": _("Max concurrency at max model length"),
        "max_concurrency_unset": _("Set a max model length to see this"),
        "max_concurrency_fit": _("Concurrent requests that fit at {tokens} tokens each"),
        # charts
        "gpu_label": _("GPU {index}"),
        "memory_chart_title": _("Memory per GPU"),
        "memory_axis": _("Memory (GiB)"),
        "concurrency_chart_title": _("Required memory against concurrency"),
        "concurrency_axis": _("Concurrent requests per replica"),
        "required_memory": _("Required memory"),
        "limit": _("Limit"),
        "stops_fitting": _("Stops fitting here ({value})"),
        "requested": _("Requested"),
        "none_fits": _("Not even one request fits"),
        "download_plot": _("Download plot as a PNG"),
        # launch command
        "copy": _("Copy"),
        "copied": _("Copied"),
        "no_launch_args": _("The idealized engine has no launch command; choose vLLM to get one"),
        # form, upload and errors
        "estimate": _("Estimate"),
        "estimating": _("Estimating…"),
        "estimate_failed": _("The estimate could not be computed"),
        "network_error": _("The server could not be reached; please try again"),
        "upload": _("Upload"),
        "uploading": _("Uploading…"),
        "upload_failed": _("The upload failed"),
        "uploaded": _("Uploaded {slug} and selected it"),
        "uploaded_unsupported": _("Uploaded {slug}, but it cannot be sized yet: {reason}"),
        "choose_file": _("Please choose a config.json file"),
        "give_name": _("Please give the model a name"),
        "your_uploads": _("Your uploads"),
        "not_supported": _("not supported"),
    }


class SizingPageView(LoginRequiredMixin, TemplateView):
    template_name = "frontend/sizing.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        organisation = organisation_for_user(user=self.request.user)
        catalog_models: dict[str, Any] = {}
        own_models: dict[str, Any] = {}
        for model in model_list_for_organisation(organisation=organisation).order_by(Lower("slug")):
            (catalog_models if model.organisation_id is None else own_models)[model.slug] = model
        # An upload shadows the catalog model of the same slug (as the API resolves it), so list it once.
        catalog = [model for slug, model in catalog_models.items() if slug not in own_models]
        own = list(own_models.values())
        supported = [m.slug for m in [*own, *catalog] if m.supported]
        preferred = settings.SIZING_DEFAULT_MODEL
        default_model = own[0].slug if own and own[0].supported else (
            preferred if preferred in supported else next(iter(supported), "")
        )
        context.update(
            catalog_models=catalog,
            own_models=own,
            default_model=default_model,
            gpus=list(gpu_list().order_by("vendor", "marketed_memory_gb", "name")),
            weight_choices=_choices(WEIGHT_FORMAT_CHOICES, _weight_format_labels()),
            kv_dtype_choices=_choices(KV_CACHE_DTYPES, _kv_dtype_labels()),
            engine_choices=_choices(ENGINE_CHOICES, _engine_labels()),
            default_gpu_memory_utilization=DEFAULT_GPU_MEMORY_UTILIZATION,
            i18n_strings=sizing_page_strings(),
        )
        return context
