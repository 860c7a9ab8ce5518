"""Writes and computations of the sizing app. Views, APIs, tasks and commands call these."""

from __future__ import annotations

import json
import logging
import math
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from sizing.estimator.architecture import (
    Architecture,
    architecture_from_config,
    architecture_summary,
    merge_quant_config,
)
from sizing.estimator.engines import Engine
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.memory import EstimateRequest, MemoryEstimate, estimate_memory
from sizing.estimator.tensors import parameter_count, tensor_inventory
from sizing.models import Estimate, Gpu, LlmModel, Membership, Organisation

logger = logging.getLogger(__name__)

CATALOG_DIR = Path(__file__).resolve().parent / "catalog_data"
MIB = 2**20
DEMO_USERNAME = "demo"


@dataclass(frozen=True, kw_only=True)
class ParsedModel:
    """What the catalog stores about a config: the parse, or why it cannot be sized."""

    model_type: str
    architecture: dict[str, Any]
    parameters_total: int | None
    supported: bool
    unsupported_reason: str


def model_parse(*, config: Mapping[str, Any], quant_config: Mapping[str, Any] | None = None) -> ParsedModel:
    """Parse a config.json; unsupported architectures are reported, malformed configs raise SizingError."""
    merged = merge_quant_config(config, quant_config)
    model_type = str(merged.get("model_type", ""))
    try:
        arch = architecture_from_config(merged)
    except SizingError as error:
        if error.code is SizingErrorCode.UNSUPPORTED_ARCHITECTURE:
            return ParsedModel(model_type=model_type, architecture={}, parameters_total=None, supported=False,
                               unsupported_reason=error.message)
        raise
    return ParsedModel(
        model_type=model_type,
        architecture=architecture_summary(arch),
        parameters_total=parameter_count(tensor_inventory(arch)),
        supported=True,
        unsupported_reason="",
    )


def json_safe(value: Any) -> Any:
    """Replace non-finite floats (Infinity and NaN appear in real configs) by strings; JSON columns refuse them."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(value, Mapping):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return value


def _gpu_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    smi_mib = row.get("nvidia_smi_memory_mib")
    return {
        "vendor": row["vendor"],
        "name": row["name"],
        "architecture": row.get("architecture", ""),
        "form_factor": row.get("form_factor", ""),
        "marketed_memory_gb": row["marketed_memory_gb"],
        "memory_type": row.get("memory_type", ""),
        "nvidia_smi_memory_bytes": int(smi_mib * MIB) if smi_mib else None,
        "memory_bandwidth_bytes_per_s": int(row["memory_bandwidth_gb_s"] * 10**9),
        "tflops_dense": row.get("tflops_dense", {}),
        "interconnect": row.get("interconnect", {}),
        "pcie_generation": row.get("pcie_generation"),
        "tdp_w": row.get("tdp_w"),
        "sources": row.get("sources", []),
        "notes": row.get("notes", ""),
    }


@transaction.atomic
def catalog_load(*, catalog_dir: Path = CATALOG_DIR) -> tuple[int, int]:
    """Load the GPU and model catalogs shipped in `catalog_data/`; idempotent. Returns (gpus, models).

    Prices already edited by users are kept; everything else follows the shipped data.
    """
    gpu_rows = json.loads((catalog_dir / "gpus.json").read_text())
    for row in gpu_rows:
        gpu, created = Gpu.objects.update_or_create(slug=row["slug"], defaults=_gpu_fields(row))
        if created or gpu.price_per_hour_usd is None:
            price = row.get("price_per_hour_usd")
            gpu.price_per_hour_usd = Decimal(str(price)) if price is not None else None
            gpu.save(update_fields=["price_per_hour_usd"])
    model_rows = json.loads((catalog_dir / "models.json").read_text())["models"]
    for row in model_rows:
        parsed = model_parse(config=row["config"], quant_config=row.get("quant_config"))
        LlmModel.objects.update_or_create(
            slug=row["slug"],
            organisation=None,
            defaults={
                "config": json_safe(row["config"]),
                "quant_config": json_safe(row.get("quant_config")),
                "model_type": parsed.model_type,
                "architecture": parsed.architecture,
                "parameters_total": parsed.parameters_total,
                "supported": parsed.supported,
                "unsupported_reason": parsed.unsupported_reason,
                "source": row.get("source", ""),
            },
        )
    return len(gpu_rows), len(model_rows)


def organisation_for_user(*, user: Any) -> Organisation:
    """The user's organisation; a user without one gets a personal organisation on first use."""
    membership = Membership.objects.select_related("organisation").filter(user=user).first()
    if membership is not None:
        return membership.organisation
    with transaction.atomic():
        organisation, _ = Organisation.objects.get_or_create(name=f"{user.get_username()} (personal)")
        Membership.objects.create(user=user, organisation=organisation)
    return organisation


@transaction.atomic
def demo_setup(*, organisation_name: str, password: str | None = None) -> tuple[str, str]:
    """Create (or reset) the demo organisation and user; return the login to print."""
    user_model = get_user_model()
    password = password or secrets.token_urlsafe(9)
    organisation, _ = Organisation.objects.get_or_create(name=organisation_name)
    user, _ = user_model.objects.get_or_create(username=DEMO_USERNAME)
    user.set_password(password)
    user.is_staff = True
    user.is_superuser = True
    user.save()
    Membership.objects.update_or_create(user=user, defaults={"organisation": organisation})
    return DEMO_USERNAME, password


@transaction.atomic
def model_create(*, organisation: Organisation, slug: str, config: Mapping[str, Any]) -> LlmModel:
    """Store an uploaded config.json for an organisation. Malformed configs raise SizingError, nothing saved."""
    parsed = model_parse(config=config)
    model, _ = LlmModel.objects.update_or_create(
        organisation=organisation,
        slug=slug,
        defaults={
            "config": json_safe(config),
            "model_type": parsed.model_type,
            "architecture": parsed.architecture,
            "parameters_total": parsed.parameters_total,
            "supported": parsed.supported,
            "unsupported_reason": parsed.unsupported_reason,
            "source": "uploaded",
        },
    )
    return model


def gpu_spec(gpu: Gpu) -> GpuSpec:
    """The estimator's view of a catalog GPU."""
    return GpuSpec(
        slug=gpu.slug,
        name=gpu.name,
        memory_bytes=gpu.memory_bytes,
        memory_bandwidth_bytes_per_s=gpu.memory_bandwidth_bytes_per_s,
        tflops_dense={k: float(v) for k, v in gpu.tflops_dense.items()},
        interconnect=str(gpu.interconnect.get("kind", "")),
    )


def model_architecture(*, config: Mapping[str, Any], quant_config: Mapping[str, Any] | None = None) -> Architecture:
    """Parse a stored or uploaded config into the estimator's Architecture (raises SizingError)."""
    return architecture_from_config(merge_quant_config(config, quant_config))


ESTIMATE_PARAMETERS = (
    "gpus", "tp", "pp", "weights", "kv_dtype", "gpu_memory_utilization", "gpu_memory_bytes", "max_model_len",
    "max_num_seqs", "max_num_batched_tokens", "block_size", "concurrency", "tokens_per_request",
)


def estimate_quick(
    *, gpu: Gpu, parameters: Mapping[str, Any], model: LlmModel | None = None,
    config: Mapping[str, Any] | None = None,
) -> MemoryEstimate:
    """Compute a memory estimate for a catalog/uploaded model or a raw config; nothing is stored.

    `parameters` holds the optional knobs of ESTIMATE_PARAMETERS plus `engine`; absent or None means default.
    """
    if model is not None:
        if not model.supported:
            raise SizingError(code=SizingErrorCode.UNSUPPORTED_ARCHITECTURE,
                              message=f"{model.slug}: {model.unsupported_reason}",
                              extra={"model": model.slug})
        arch = model_architecture(config=model.config, quant_config=model.quant_config)
    elif config is not None:
        arch = model_architecture(config=config)
    else:
        raise SizingError(code=SizingErrorCode.INVALID_ARGUMENT, message="give a model or a config",
                          extra={"fields": {"model": ["give a model or a config"]}})
    knobs = {key: parameters[key] for key in ESTIMATE_PARAMETERS if parameters.get(key) is not None}
    engine = Engine(parameters.get("engine") or Engine.VLLM.value)
    return estimate_memory(EstimateRequest(arch=arch, gpu=gpu_spec(gpu), engine=engine, **knobs))


def estimate_create(
    *, organisation: Organisation, requested_by: Any, model: LlmModel, gpu: Gpu, inputs: Mapping[str, Any]
) -> Estimate:
    """Save an estimate request and queue its computation on a worker once the transaction commits."""
    from sizing.tasks import estimate_compute_task

    estimate = Estimate.objects.create(
        organisation=organisation, requested_by=requested_by, model=model, gpu=gpu, inputs=dict(inputs)
    )
    transaction.on_commit(lambda: estimate_compute_task.delay(estimate.pk))
    return estimate


def estimate_compute(*, estimate_id: int) -> Estimate:
    """Compute a saved estimate; a SizingError is stored as the estimate's error, not raised."""
    estimate = Estimate.objects.select_related("model", "gpu").get(pk=estimate_id)
    if estimate.status == Estimate.Status.DONE:
        return estimate  # idempotent: a redelivered task does nothing
    Estimate.objects.filter(pk=estimate.pk).update(status=Estimate.Status.RUNNING)
    try:
        result = estimate_quick(gpu=estimate.gpu, model=estimate.model, parameters=estimate.inputs)
    except SizingError as error:
        estimate.status, estimate.error, estimate.result = Estimate.Status.FAILED, error.as_dict(), None
    else:
        estimate.status, estimate.result, estimate.error = Estimate.Status.DONE, result.as_dict(), None
    estimate.finished_at = timezone.now()
    estimate.save(update_fields=["status", "result", "error", "finished_at"])
    logger.info("estimate %s %s", estimate.pk, estimate.status)
    return estimate
