"""Writes and computations of the sizing app. Views, APIs, tasks and commands call these."""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from sizing.estimator.architecture import (
    Architecture,
    architecture_from_config,
    architecture_summary,
    merge_quant_config,
)
from sizing.estimator.bootlog import (
    BootLog,
    bootlog_calibration,
    bootlog_calibration_evidence,
    bootlog_compare,
    bootlog_parse,
)
from sizing.estimator.checkpoint import (
    CheckpointFacts,
    checkpoint_compare,
    checkpoint_from_headers,
    checkpoint_from_index,
    checkpoint_merge,
)
from sizing.estimator.colocation import estimate_colocated
from sizing.estimator.dtypes import KV_CACHE_DTYPES
from sizing.estimator.engines import Engine
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.memory import EstimateRequest, MemoryEstimate, estimate_memory
from sizing.estimator.solvers import fewest_gpus, largest_concurrency, largest_context, remedies
from sizing.estimator.tensors import parameter_count, tensor_inventory
from sizing.estimator.versions import parse_version, resolve_engine_version
from sizing.kernel.jobs import job_publish_on_commit
from sizing.kernel.jsonsafe import nonfinite_as_text
from sizing.models import Calibration, Estimate, Gpu, LlmModel, Membership, Organisation
from sizing.selectors.estimates import calibration_latest, model_get_for_organisation
from sizing.services.workloads import workload_sample_load
from sizing.tasks import estimate_compute_task

logger = logging.getLogger(__name__)

CATALOG_DIR = Path(__file__).resolve().parents[1] / "catalog_data"
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
            return ParsedModel(
                model_type=model_type,
                architecture={},
                parameters_total=None,
                supported=False,
                unsupported_reason=error.message,
            )
        raise
    return ParsedModel(
        model_type=model_type,
        architecture=architecture_summary(arch),
        parameters_total=parameter_count(tensor_inventory(arch)),
        supported=True,
        unsupported_reason="",
    )


def _gpu_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    smi_mib = row.get("nvidia_smi_memory_mib")
    cuda_mib = row.get("cuda_total_mib")
    return {
        "vendor": row["vendor"],
        "name": row["name"],
        "architecture": row.get("architecture", ""),
        "form_factor": row.get("form_factor", ""),
        "marketed_memory_gb": row["marketed_memory_gb"],
        "memory_type": row.get("memory_type", ""),
        "nvidia_smi_memory_bytes": int(smi_mib * MIB) if smi_mib else None,
        "cuda_total_bytes": int(cuda_mib * MIB) if cuda_mib else None,
        "sm_count": row.get("sm_count"),
        "compute_capability": row.get("compute_capability") or "",
        "nvswitch": bool(row.get("nvswitch", False)),
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
    """Load the GPU and model catalogs shipped in `catalog_data/`, and the sample workload profile; idempotent.
    Returns (gpus, models).

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
                "config": nonfinite_as_text(row["config"]),
                "quant_config": nonfinite_as_text(row.get("quant_config")),
                "model_type": parsed.model_type,
                "architecture": parsed.architecture,
                "parameters_total": parsed.parameters_total,
                "supported": parsed.supported,
                "unsupported_reason": parsed.unsupported_reason,
                "source": row.get("source", ""),
            },
        )
    workload_sample_load()
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
    """Create (or reset) the demo organisation and user (an admin of it); return the login to print."""
    user_model = get_user_model()
    password = password or secrets.token_urlsafe(9)
    organisation, _ = Organisation.objects.get_or_create(name=organisation_name)
    user, _ = user_model.objects.get_or_create(username=DEMO_USERNAME)
    user.set_password(password)
    user.is_staff = True
    user.is_superuser = True
    user.save()
    Membership.objects.update_or_create(
        user=user, defaults={"organisation": organisation, "role": Membership.Role.ADMIN}
    )
    return DEMO_USERNAME, password


@transaction.atomic
def model_create(*, organisation: Organisation, slug: str, config: Mapping[str, Any]) -> LlmModel:
    """Store an uploaded config.json for an organisation. Malformed configs raise SizingError, nothing saved."""
    parsed = model_parse(config=config)
    model, _ = LlmModel.objects.update_or_create(
        organisation=organisation,
        slug=slug,
        defaults={
            "config": nonfinite_as_text(config),
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
    """The estimator's view of a catalog GPU: the driver's total as `memory_bytes`, CUDA's own total (what vLLM's
    budget multiplies), SM count, compute capability ("8.9" → (8, 9); empty for AMD cards → None) and NVSwitch."""
    major, _, minor = gpu.compute_capability.strip().partition(".")
    capability = (int(major), int(minor)) if major.isdigit() and minor.isdigit() else None
    return GpuSpec(
        slug=gpu.slug,
        name=gpu.name,
        memory_bytes=gpu.memory_bytes,
        memory_bandwidth_bytes_per_s=gpu.memory_bandwidth_bytes_per_s,
        tflops_dense={k: float(v) for k, v in gpu.tflops_dense.items()},
        interconnect=str(gpu.interconnect.get("kind", "")),
        interconnect_bytes_per_s=int(float(gpu.interconnect.get("bandwidth_gb_s") or 0) * 10**9),
        pcie_generation=gpu.pcie_generation,
        price_per_hour_usd=float(gpu.price_per_hour_usd) if gpu.price_per_hour_usd is not None else None,
        cuda_total_bytes=gpu.cuda_total_bytes,
        sm_count=gpu.sm_count,
        compute_capability=capability,
        nvswitch=gpu.nvswitch,
    )


def model_architecture(*, config: Mapping[str, Any], quant_config: Mapping[str, Any] | None = None) -> Architecture:
    """Parse a stored or uploaded config into the estimator's Architecture (raises SizingError)."""
    return architecture_from_config(merge_quant_config(config, quant_config))


ESTIMATE_PARAMETERS = (
    "gpus",
    "tp",
    "pp",
    "dp",
    "expert_parallel",
    "weights",
    "kv_dtype",
    "gpu_memory_utilization",
    "gpu_memory_bytes",
    "gpu_cuda_total_bytes",
    "max_model_len",
    "max_num_seqs",
    "max_num_batched_tokens",
    "block_size",
    "concurrency",
    "tokens_per_request",
    "mem_fraction_static",
    "kv_cache_free_gpu_mem_fraction",
    "enforce_eager",
    "runtime_reserve_bytes",
    "cuda_graph_bytes",
    "activation_peak_bytes",
    "weight_overhead",
    "shared_prefix_tokens",
    "prefix_caching",
    "parallel_samples",
    "output_tokens",
    "num_speculative_tokens",
    # the engine release and how it runs (estimator.versions, estimator.launch); None: the version's own default
    "engine_version",
    "usage_context",
    "engine_mode",
    "install",
    "flashinfer_sampler",
    "estimate_cudagraphs",
    "nccl_nvls",
    "enable_chunked_prefill",
    "kv_cache_memory_bytes",
)
SOLVER_TARGETS = ("largest_context", "largest_concurrency", "fewest_gpus")


def parameters_with_draft(*, parameters: Mapping[str, Any], organisation: Organisation | None) -> dict[str, Any]:
    """Resolve a `draft_model` slug (as stored in a saved estimate's inputs) to the organisation's model."""
    resolved = dict(parameters)
    slug = resolved.get("draft_model")
    if isinstance(slug, str):
        draft = model_get_for_organisation(organisation=organisation, slug=slug)
        if draft is None:
            raise SizingError(
                code=SizingErrorCode.INVALID_ARGUMENT,
                message=f"unknown draft model {slug!r}",
                extra={"fields": {"draft_model": [f"unknown model {slug!r}"]}},
            )
        resolved["draft_model"] = draft
    return resolved


def estimate_request_build(
    *,
    gpu: Gpu,
    parameters: Mapping[str, Any],
    model: LlmModel | None = None,
    config: Mapping[str, Any] | None = None,
) -> EstimateRequest:
    """The estimator's request for a catalog/uploaded model or a raw config (raises SizingError).

    `parameters` holds the optional knobs of ESTIMATE_PARAMETERS plus `engine` and `draft_model` (an LlmModel
    served as the speculative-decoding draft); absent or None means default.
    """
    if model is not None:
        if not model.supported:
            raise SizingError(
                code=SizingErrorCode.UNSUPPORTED_ARCHITECTURE,
                message=f"{model.slug}: {model.unsupported_reason}",
                extra={"model": model.slug},
            )
        arch = model_architecture(config=model.config, quant_config=model.quant_config)
    elif config is not None:
        arch = model_architecture(config=config)
    else:
        raise SizingError(
            code=SizingErrorCode.INVALID_ARGUMENT,
            message="give a model or a config",
            extra={"fields": {"model": ["give a model or a config"]}},
        )
    knobs = {key: parameters[key] for key in ESTIMATE_PARAMETERS if parameters.get(key) is not None}
    engine = Engine(parameters.get("engine") or Engine.VLLM.value)
    draft = parameters.get("draft_model")
    if draft is not None:
        if not draft.supported:
            raise SizingError(
                code=SizingErrorCode.UNSUPPORTED_ARCHITECTURE,
                message=f"draft model {draft.slug}: {draft.unsupported_reason}",
                extra={"fields": {"draft_model": [draft.unsupported_reason]}},
            )
        knobs["draft_arch"] = model_architecture(config=draft.config, quant_config=draft.quant_config)
    return EstimateRequest(arch=arch, gpu=gpu_spec(gpu), engine=engine, **knobs)


def estimate_quick(
    *,
    gpu: Gpu,
    parameters: Mapping[str, Any],
    model: LlmModel | None = None,
    config: Mapping[str, Any] | None = None,
) -> MemoryEstimate:
    """Compute a memory estimate for a catalog/uploaded model or a raw config; nothing is stored."""
    request = estimate_request_build(gpu=gpu, parameters=parameters, model=model, config=config)
    return estimate_memory(request)


def estimate_report(
    *,
    gpu: Gpu,
    parameters: Mapping[str, Any],
    model: LlmModel | None = None,
    config: Mapping[str, Any] | None = None,
    organisation: Organisation | None = None,
) -> dict[str, Any]:
    """The quick estimate as the API and the page show it: the bill, ranked remedies when it does not fit,
    and the checkpoint's actual size beside the computed one when the model has checkpoint facts."""
    request = estimate_request_build(gpu=gpu, parameters=parameters, model=model, config=config)
    applied = None
    if organisation is not None and model is not None and parameters.get("use_calibration", True):
        applied = calibration_latest(
            organisation=organisation,
            model=model,
            gpu=gpu,
            engine=request.engine.value,
            tp=estimate_memory(replace(request, detail=False)).tp,
        )
        if applied is not None:
            # measured terms the request does not set itself
            terms = {key: value for key, value in applied.terms.items() if getattr(request, key, None) is None}
            request = replace(request, **terms)
    result = estimate_memory(request)
    payload = result.as_dict()
    payload["calibration_applied"] = (
        None
        if applied is None
        else {
            "id": applied.pk,
            "engine_version": applied.engine_version,
            "created_at": applied.created_at.isoformat(),
            "terms": applied.terms,
        }
    )
    payload["remedies"] = [asdict(remedy) for remedy in remedies(request)] if not result.fits else []
    payload["checkpoint"] = None
    if model is not None and model.checkpoint and parameters.get("weights") in (None, "auto"):
        facts = checkpoint_facts_from_dict(model.checkpoint)
        payload["checkpoint"] = checkpoint_compare(
            facts, computed_weight_bytes=result.weight_bytes_total, computed_parameters=result.parameters_total
        )
    return payload


def estimate_colocated_report(*, gpu: Gpu, deployments: list[dict[str, Any]]) -> dict[str, Any]:
    """Several deployments on the same GPUs; each item holds `model` (an LlmModel) or `config`, and parameters."""
    requests = []
    for index, item in enumerate(deployments):
        try:
            requests.append(
                estimate_request_build(
                    gpu=gpu, model=item.get("model"), config=item.get("config"), parameters=item.get("parameters", {})
                )
            )
        except SizingError as error:
            raise error.for_item(field=f"deployments[{index}]", label=f"deployment {index + 1}") from error
    result = estimate_colocated(tuple(requests)).as_dict()
    for item, deployment in zip(deployments, result["deployments"], strict=True):
        deployment["model"] = item["model"].slug if item.get("model") is not None else None
    return result


def estimate_solve(
    *,
    gpu: Gpu,
    parameters: Mapping[str, Any],
    target: str,
    model: LlmModel | None = None,
    config: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Solve for the largest context, the largest concurrency or the fewest GPUs (see estimator.solvers)."""
    request = estimate_request_build(gpu=gpu, parameters=parameters, model=model, config=config)
    if target == "largest_context":
        solved = largest_context(request, concurrency=request.concurrency)
    elif target == "largest_concurrency":
        tokens = request.tokens_per_request or request.max_model_len or request.arch.max_position_embeddings
        if tokens is None:
            raise SizingError(
                code=SizingErrorCode.INVALID_ARGUMENT,
                message="give tokens_per_request: the config has no context length",
                extra={"fields": {"tokens_per_request": ["required for this model"]}},
            )
        solved = largest_concurrency(request, tokens=tokens)
    elif target == "fewest_gpus":
        solved = fewest_gpus(request)
    else:
        raise SizingError(
            code=SizingErrorCode.INVALID_ARGUMENT,
            message=f"unknown target {target!r}",
            extra={"fields": {"target": [f"choose one of {', '.join(SOLVER_TARGETS)}"]}},
        )
    return asdict(solved)


def estimate_create(
    *, organisation: Organisation, requested_by: Any, model: LlmModel, gpu: Gpu, inputs: Mapping[str, Any]
) -> Estimate:
    """Save an estimate request and queue its computation on a worker once the transaction commits."""

    estimate = Estimate.objects.create(
        organisation=organisation, requested_by=requested_by, model=model, gpu=gpu, inputs=dict(inputs)
    )
    estimate_id = estimate.pk

    def fail(error: dict[str, Any]) -> None:
        Estimate.objects.filter(pk=estimate_id, status=Estimate.Status.PENDING).update(
            status=Estimate.Status.FAILED, error=error, finished_at=timezone.now()
        )

    job_publish_on_commit(
        kind="estimate", job_id=estimate_id, publish=lambda: estimate_compute_task.delay(estimate_id), fail=fail
    )
    return estimate


def estimate_compute(*, estimate_id: int) -> Estimate:
    """Compute a saved estimate; a SizingError is stored as the estimate's error, not raised."""
    estimate = Estimate.objects.select_related("model", "gpu").get(pk=estimate_id)
    if estimate.status == Estimate.Status.DONE:
        return estimate  # idempotent: a redelivered task does nothing
    Estimate.objects.filter(pk=estimate.pk).update(status=Estimate.Status.RUNNING)
    try:
        parameters = parameters_with_draft(parameters=estimate.inputs, organisation=estimate.organisation)
        # the same report as estimates/quick: calibrations applied, remedies, checkpoint comparison
        result = estimate_report(
            gpu=estimate.gpu, model=estimate.model, parameters=parameters, organisation=estimate.organisation
        )
    except SizingError as error:
        estimate.status, estimate.error, estimate.result = Estimate.Status.FAILED, error.as_dict(), None
    except SoftTimeLimitExceeded:
        raise  # over its time budget: the task marks the estimate failed with the budget (sizing.kernel.job_budgets)
    except Exception:  # a defect must not leave the estimate running forever or kill the worker
        logger.exception("estimate %s failed", estimate.pk)
        estimate.status, estimate.result = Estimate.Status.FAILED, None
        estimate.error = {"code": "internal_error", "message": "the estimate failed; the error is logged", "extra": {}}
    else:
        estimate.status, estimate.result, estimate.error = Estimate.Status.DONE, result, None
    estimate.finished_at = timezone.now()
    estimate.save(update_fields=["status", "result", "error", "finished_at"])
    logger.info("estimate %s %s", estimate.pk, estimate.status)
    return estimate


def checkpoint_facts_from_dict(data: Mapping[str, Any]) -> CheckpointFacts:
    """Rebuild stored checkpoint facts (the JSON kept on the model)."""
    fields = {
        key: tuple(value) if isinstance(value, list) and key in _TUPLE_FIELDS else value
        for key, value in data.items()
        if key in CheckpointFacts.__dataclass_fields__
    }
    return CheckpointFacts(**fields)


_TUPLE_FIELDS = ("quantization_hints", "buffer_labels", "warnings")


@transaction.atomic
def model_checkpoint_attach(
    *,
    model: LlmModel,
    index: Mapping[str, Any] | None = None,
    headers: Mapping[str, Any] | None = None,
) -> LlmModel:
    """Keep the checkpoint facts of an index and/or safetensors headers on an organisation's model."""
    if index is None and headers is None:
        raise SizingError(
            code=SizingErrorCode.INVALID_ARGUMENT,
            message="give a model.safetensors.index.json or the safetensors headers file",
            extra={"fields": {"index": ["required without headers"]}},
        )
    facts = None
    if index is not None:
        facts = checkpoint_from_index(index)
    if headers is not None:
        header_facts = checkpoint_from_headers(headers)
        facts = checkpoint_merge(facts, header_facts) if facts is not None else header_facts
    assert facts is not None  # one of the two was given  # noqa: S101
    model.checkpoint = nonfinite_as_text(asdict(facts))
    model.save(update_fields=["checkpoint"])
    return model


VLLM_ENGINE = Engine.VLLM.value
# Engine flags a boot log echoes, mapped onto our estimate parameters (vLLM and SGLang names).
_BOOTLOG_FLAGS = {
    "tensor_parallel_size": "tp",
    "tp_size": "tp",
    "pipeline_parallel_size": "pp",
    "pp_size": "pp",
    "gpu_memory_utilization": "gpu_memory_utilization",
    "mem_fraction_static": "mem_fraction_static",
    "max_model_len": "max_model_len",
    "context_length": "max_model_len",
    "max_num_seqs": "max_num_seqs",
    "max_num_batched_tokens": "max_num_batched_tokens",
    "chunked_prefill_size": "max_num_batched_tokens",
    "block_size": "block_size",
    "kv_cache_dtype": "kv_dtype",
    "enforce_eager": "enforce_eager",
}


def _bootlog_release(log: BootLog, merged: dict[str, Any]) -> list[str]:
    """Compare like with like: the estimate takes the log's engine release (the version it prints, else the
    oldest release of its V0 wording) and engine (V0/V1) unless the caller gave them; returns the warnings.

    A log of a release older than the modelled bands is refused (a 400 on `text` naming the release); a version
    text that is no version is ignored with a warning.
    """
    warnings: list[str] = []
    if merged.get("engine") != log.engine:
        return warnings  # estimated as another engine on purpose: the log's release says nothing about it
    given = merged.get("engine_version")
    version = log.engine_version or log.engine_version_inferred
    if given not in (None, "") and version and parse_version(str(given)) != parse_version(version):
        warnings.append(
            f"the log is {log.engine} {version}; the estimate is for {given} as asked: the two "
            "describe different releases"
        )
    elif given in (None, "") and version:
        try:
            resolve_engine_version(log.engine, version)
        except SizingError as error:
            if parse_version(version) is None:
                warnings.append(
                    f"the log's version {version[:40]!r} is not a release number: estimated as the "
                    "newest release modelled"
                )
            else:
                message = (
                    f"the log is from {log.engine} {version}: {error.message}; give engine_version to "
                    "compare it with a modelled release"
                )
                raise SizingError(
                    code=SizingErrorCode.INVALID_ARGUMENT,
                    message=message,
                    extra={"engine_version": version, "fields": {"text": [message]}},
                ) from None
        else:
            merged["engine_version"] = version
            if log.engine_version is None:
                warnings.append(
                    f"the log prints no {log.engine} version; its V0 wording dates it to {version} or "
                    f"later: compared as {log.engine} {version} in V0 mode (give engine_version for "
                    "the exact release)"
                )
    if log.engine == VLLM_ENGINE and merged.get("engine_mode") in (None, "") and log.engine_mode_hint:
        merged["engine_mode"] = log.engine_mode_hint
    return warnings


def bootlog_analyse(
    *,
    text: str,
    gpu: Gpu,
    parameters: Mapping[str, Any],
    organisation: Organisation,
    model_slug: str | None = None,
    config: Mapping[str, Any] | None = None,
    save: bool = False,
    user: Any = None,
) -> dict[str, Any]:
    """Parse an engine startup log, estimate the same deployment, compare line by line, and re-estimate
    with the runtime terms the log measured (calibrated).

    The model is `model_slug`, else `config`, else the model the log names. Flags the log echoes fill the
    parameters the caller left out, so both sides describe one launch. With `save`, the measured terms are kept
    as a Calibration that later estimates of the same model, GPU, engine and TP apply.
    """
    log = bootlog_parse(text)
    parameters = parameters_with_draft(parameters=parameters, organisation=organisation)
    model = None
    if config is None:
        slug = model_slug or log.model
        model = model_get_for_organisation(organisation=organisation, slug=slug) if slug else None
        if model is None:
            message = (
                f"unknown model {slug!r}: give a catalog slug or the config"
                if slug
                else "the log names no model: give model or config"
            )
            raise SizingError(
                code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={"fields": {"model": [message]}}
            )
    merged = dict(parameters)
    merged.setdefault("engine", log.engine)
    warnings = _bootlog_release(log, merged)
    for flag, name in _BOOTLOG_FLAGS.items():
        value = log.flags.get(flag)
        if merged.get(name) is None and value is not None and not isinstance(value, dict | list):
            merged[name] = value
    if merged.get("tp") is None and log.tensor_parallel_size:
        merged["tp"] = log.tensor_parallel_size
    if merged.get("max_model_len") is None and log.max_model_len:
        merged["max_model_len"] = log.max_model_len
    if merged.get("gpu_memory_utilization") is None and log.gpu_memory_utilization:
        merged["gpu_memory_utilization"] = log.gpu_memory_utilization
    if merged.get("kv_dtype") not in (None, *KV_CACHE_DTYPES):
        merged["kv_dtype"] = None  # an engine-specific name we do not size (e.g. fp8_inc): keep the default
    request = estimate_request_build(gpu=gpu, parameters=merged, model=model, config=config)
    estimate = estimate_memory(request).as_dict()
    calibration = bootlog_calibration(log)
    calibrated_result = estimate_memory(replace(request, **calibration)) if calibration else None
    calibrated = calibrated_result.as_dict() if calibrated_result else None
    saved = None
    if save:
        if model is None or not calibration:
            message = (
                "only a catalog or uploaded model can keep a calibration"
                if model is None
                else "the log prints no runtime term to calibrate with"
            )
            raise SizingError(
                code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={"fields": {"save": [message]}}
            )
        saved = Calibration.objects.create(
            organisation=organisation,
            created_by=user,
            model=model,
            gpu=gpu,
            engine=request.engine.value,
            engine_version=log.engine_version or "",
            tp=calibrated_result.tp if calibrated_result else 1,
            terms=calibration,
            evidence=bootlog_calibration_evidence(log),
        )
    return {
        "calibration_id": saved.pk if saved else None,
        "release": {
            "log": log.engine_version,
            "inferred": log.engine_version_inferred,
            "engine_mode": log.engine_mode_hint,
            "estimated_as": estimate.get("engine_version") or None,
        },
        "warnings": warnings,
        "log": log.as_dict(),
        "parameters": {key: value for key, value in merged.items() if value is not None},
        "comparison": [asdict(line) for line in bootlog_compare(log, estimate)],
        "calibration": calibration,
        "estimate": estimate,
        "calibrated_estimate": calibrated,
    }
