"""Customer deployments and the fingerprints of their machines.

A deployment holds the plan (model, the GPU it was sized for, GPUs per server, TP, engine, the image's CUDA version).
A fingerprint is what one server measured (a probe file, or pasted outputs), stored with its raw texts. A stored
fingerprint must be whole: a file the parsers do not recognise (another tool's output), a cut file (truncated XML,
a cut probe JSON), binary content or a file over the size limit is refused with the reason and nothing is stored.

Reading a fingerprint checks it against its deployment's plan (the plan may change after the upload) and shows
what the measured memory per card and the measured links do to the estimate and the performance model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from sizing.estimator.engines import ENGINE_CHOICES, ENGINE_TRAITS, Engine
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.launch import INSTALLS, USAGE_CONTEXTS, install_line, launch_lines
from sizing.estimator.perf import decode_tokens_per_s, step_model, time_to_first_token_s
from sizing.estimator.versions import LATEST, resolve_engine_version
from sizing.fingerprint.checks import Plan, plan_check
from sizing.fingerprint.detect import PieceKind, decode_input, parse_any
from sizing.fingerprint.diff import fingerprint_diff
from sizing.fingerprint.environment import MeasuredEnvironment, measured_environment
from sizing.fingerprint.errors import FingerprintError
from sizing.fingerprint.identity import identity_from_facts
from sizing.fingerprint.probe import is_probe_output, probe_pieces
from sizing.kernel.jsonsafe import nonfinite_as_text
from sizing.kernel.uploads import upload_read, upload_size_check
from sizing.models import Deployment, Fingerprint, Gpu, LlmModel, Organisation
from sizing.services.estimates import estimate_report, estimate_request_build
from sizing.services.fingerprints import fingerprint_from_texts
from sizing.services.machines import fingerprint_host_choose

NAME_MAX_LENGTH = 200
MAX_FILES = 20
FILE_NAME_MAX_LENGTH = 200
# engines that take their whole memory budget (a fraction of the card) when they start: memory other processes
# hold must leave that budget free (vLLM refuses to start otherwise), not only the bill
PREALLOCATING_ENGINES = {Engine.VLLM.value, Engine.SGLANG.value}
_CUDA_VERSION = re.compile(r"^\d{1,2}(\.\d{1,3}){0,2}$")
EFFECT_PROMPT_TOKENS = 2048  # the prompt and context the performance comparison times
EFFECT_BATCH = 32


def _invalid(field: str, message: str, **extra: Any) -> SizingError:
    return SizingError(
        code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={**extra, "fields": {field: [message]}}
    )


# ---------------------------------------------------------------------------------------------------------------
# Deployments


DEPLOYMENT_FIELDS = (
    "name",
    "customer",
    "notes",
    "model",
    "gpu",
    "gpu_count",
    "tp",
    "engine",
    "engine_version",
    "usage_context",
    "install",
    "image_cuda_version",
    "max_model_len",
    "slo",
    "workload",
    "rate_per_s",
)
SLO_KEYS = ("ttft_ms", "tpot_ms", "e2e_ms")


def _slo_clean(value: Any) -> dict[str, float]:
    """SLOs in milliseconds, each optional and > 0; anything else is a 400 naming the key."""
    if value in (None, ""):
        return {}
    if not isinstance(value, Mapping):
        raise _invalid("slo", "SLOs are an object: {ttft_ms, tpot_ms, e2e_ms}, each optional")
    unknown = sorted(set(value) - set(SLO_KEYS))
    if unknown:
        raise _invalid("slo", f"unknown SLO {', '.join(unknown)}; use {', '.join(SLO_KEYS)}")
    cleaned = {}
    for key in SLO_KEYS:
        item = value.get(key)
        if item in (None, ""):
            continue
        if isinstance(item, bool) or not isinstance(item, int | float) or not 0 < item < 3_600_000:
            raise _invalid("slo", f"{key} must be a number of milliseconds above 0")
        cleaned[key] = float(item)
    return cleaned


def _deployment_clean(
    *,
    organisation: Organisation,
    data: Mapping[str, Any],
    exclude_pk: int | None = None,
    current: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`data`'s DEPLOYMENT_FIELDS checked; `current` holds the stored plan's engine and release (an update)."""
    values = {key: data[key] for key in DEPLOYMENT_FIELDS if key in data}
    current = current or {}
    if "name" in values:
        name = str(values["name"] or "").strip()
        if not name:
            raise _invalid("name", "give the deployment a name")
        if len(name) > NAME_MAX_LENGTH:
            raise _invalid("name", f"the name has {len(name)} characters; the limit is {NAME_MAX_LENGTH}")
        if Deployment.objects.filter(organisation=organisation, name=name).exclude(pk=exclude_pk).exists():
            raise _invalid("name", f"your organisation already has a deployment named {name!r}; choose another name")
        values["name"] = name
    if values.get("engine") is not None and values["engine"] not in ENGINE_CHOICES:
        raise _invalid("engine", f"engine must be one of {', '.join(ENGINE_CHOICES)}")
    if "engine_version" in values or "engine" in values:
        version = str(values.get("engine_version", current.get("engine_version")) or "").strip()
        if version.lower() == LATEST:
            version = ""  # empty: the newest release modelled when the plan is estimated
        # raises INVALID_ARGUMENT on engine_version: not a version, or a release older than the modelled bands
        resolve_engine_version(values.get("engine") or current.get("engine") or Engine.VLLM.value, version)
        if "engine_version" in values:
            values["engine_version"] = version
    for key, choices in (("usage_context", USAGE_CONTEXTS), ("install", INSTALLS)):
        if key in values and values[key] not in choices:
            raise _invalid(key, f"{key} must be one of {', '.join(choices)}")
    cuda = str(values.get("image_cuda_version") or "").strip()
    if cuda and not _CUDA_VERSION.match(cuda):
        raise _invalid("image_cuda_version", f"{cuda!r} is not a CUDA version; write it like 12.4 or 12.4.1")
    if "image_cuda_version" in values:
        values["image_cuda_version"] = cuda
    tp = values.get("tp")
    if tp is not None and tp < 1:
        raise _invalid("tp", "TP must be ≥ 1")
    count = values.get("gpu_count")
    if count and tp and count % tp:
        raise _invalid("gpu_count", f"{count} GPUs are not a whole number of TP {tp} groups")
    if "slo" in values:
        values["slo"] = _slo_clean(values["slo"])
    model = values.get("model")
    if model is not None and model.organisation_id not in (None, organisation.pk):
        raise _invalid("model", "unknown model")
    workload = values.get("workload")
    if workload is not None and workload.organisation_id not in (None, organisation.pk):
        raise _invalid("workload", "unknown workload profile")
    rate = values.get("rate_per_s")
    if rate is not None and (isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate <= 100_000):
        raise _invalid("rate_per_s", "the rate is a number of requests per second above 0 (at most 100,000)")
    return values


@transaction.atomic
def deployment_create(*, organisation: Organisation, user: Any, data: Mapping[str, Any]) -> Deployment:
    """A new deployment of the organisation; `data` holds DEPLOYMENT_FIELDS (model an LlmModel, gpu a Gpu)."""
    if not str(data.get("name") or "").strip():
        raise _invalid("name", "give the deployment a name")
    values = _deployment_clean(organisation=organisation, data=data)
    return Deployment.objects.create(organisation=organisation, created_by=user, **values)


@transaction.atomic
def deployment_update(*, deployment: Deployment, data: Mapping[str, Any]) -> Deployment:
    values = _deployment_clean(
        organisation=deployment.organisation,
        data=data,
        exclude_pk=deployment.pk,
        current={"engine": deployment.engine, "engine_version": deployment.engine_version},
    )
    for key, value in values.items():
        setattr(deployment, key, value)
    deployment.save()
    return deployment


def deployment_delete(*, deployment: Deployment) -> None:
    """A deployment that reports document is kept (the reports are the signed record): a 400 naming them."""
    reports = list(deployment.reports.values_list("pk", flat=True))
    if reports:
        raise _invalid(
            "deployment",
            f"the deployment has {len(reports)} report(s) (ids {', '.join(map(str, reports))})"
            "; a documented deployment cannot be deleted",
            reports=reports,
        )
    deployment.delete()


# ---------------------------------------------------------------------------------------------------------------
# Fingerprints: upload


@dataclass(frozen=True)
class Upload:
    """One uploaded file or pasted text: its name (for messages) and its bytes."""

    name: str
    data: bytes


FINGERPRINT_SIZE_NOTE = "(SIZING_MAX_FINGERPRINT_BYTES): upload the probe's JSON file or one command's output"


def fingerprint_max_bytes() -> int:
    return int(settings.SIZING_MAX_FINGERPRINT_BYTES)


def uploads_from(*, files: list[Any], texts: list[str]) -> list[Upload]:
    """Uploaded files (read up to the limit: a 50 MB file is refused by its size, not read whole) and pasted
    texts as Uploads."""
    limit = fingerprint_max_bytes()
    uploads = []
    for file in files:
        name = str(getattr(file, "name", "") or "file")
        data = upload_read(file, limit_bytes=limit, field="files", name=name, note=FINGERPRINT_SIZE_NOTE)
        uploads.append(Upload(name=name, data=data))
    uploads += [Upload(name=f"pasted text {i + 1}", data=text.encode()) for i, text in enumerate(texts)]
    return uploads


def _piece_refusal(piece_kind: PieceKind, problems: Sequence[str]) -> str | None:
    """Why a parsed piece cannot be stored, or None. Another tool's output and nvidia-smi's own failure messages
    are not machine facts; a cut output would store a machine with GPUs or sections missing."""
    if piece_kind is PieceKind.UNKNOWN:
        return "not an output the fingerprint reads (" + ("; ".join(problems) or "unrecognised format") + ")"
    if piece_kind is PieceKind.NVIDIA_SMI_FAILURE:
        return "nvidia-smi failed on that machine: " + "; ".join(problems)
    cut = [problem for problem in problems if "truncated" in problem]
    if cut:
        return "the output is cut short (" + "; ".join(cut) + "): upload the whole output"
    return None


def _texts_read(uploads: Sequence[Upload]) -> list[tuple[str, str]]:
    """Each upload as text, refusing oversize, binary, cut and unrecognised ones (a 400 naming the file)."""
    if not uploads:
        raise _invalid("files", "upload a probe file or paste at least one nvidia-smi output")
    if len(uploads) > MAX_FILES:
        raise _invalid("files", f"{len(uploads)} files; at most {MAX_FILES} per fingerprint (one machine)")
    limit = fingerprint_max_bytes()
    texts = []
    for upload in uploads:
        name = upload.name[:FILE_NAME_MAX_LENGTH] or "pasted text"
        upload_size_check(len(upload.data), limit_bytes=limit, field="files", name=name, note=FINGERPRINT_SIZE_NOTE)
        try:
            text = decode_input(upload.data)
            if is_probe_output(text[:400]):
                _facts, entries, _problems = probe_pieces(text)
                parsed = [(f"{name}#{entry}", parse_any(output)) for entry, output in entries]
                if not parsed:
                    raise _invalid(
                        "files", f"{name}: the probe file holds no GPU output (was nvidia-smi found on that machine?)"
                    )
            else:
                parsed = [(name, parse_any(text))]
        except FingerprintError as error:
            raise _invalid("files", f"{name}: {error.message}", reason=error.code.value) from None
        for label, piece in parsed:
            refusal = _piece_refusal(piece.kind, piece.problems)
            if refusal:
                raise _invalid("files", f"{label}: {refusal}; nothing was stored")
        texts.append((name, text))
    return texts


def _captured_at(facts: Mapping[str, Any]) -> datetime:
    stamp = (facts.get("host") or {}).get("captured_at")
    parsed = parse_datetime(stamp) if isinstance(stamp, str) else None
    if parsed is None:
        return timezone.now()
    return parsed if timezone.is_aware(parsed) else parsed.replace(tzinfo=UTC)


@transaction.atomic
def fingerprint_upload(
    *, deployment: Deployment, user: Any, uploads: Sequence[Upload], label: str = "", host: str = ""
) -> Fingerprint:
    """Parse and store what one machine measured. `host` names the machine for pasted outputs (a probe file
    names its own host). The upload joins the deployment's host whose GPUs' UUIDs (else name) it shows, or starts a
    new host (sizing.services.machines.fingerprint_host_choose). Raises SizingError (a 400) with nothing stored when
    any upload is refused."""
    texts = _texts_read(uploads)
    facts = fingerprint_from_texts(texts=[text for _, text in texts])
    if not facts.get("gpus"):
        raise _invalid(
            "files",
            "no GPU is described in what was uploaded: add nvidia-smi -q -x (or the probe file); nothing was stored",
        )
    digest = hashlib.sha256()
    for name, text in texts:
        digest.update(name.encode() + b"\0" + text.encode() + b"\0")
    sha = digest.hexdigest()
    existing = Fingerprint.objects.filter(deployment=deployment, sha256=sha).first()
    if existing is not None:
        raise _invalid(
            "files",
            f"these outputs were already uploaded to this deployment as fingerprint {existing.pk} ({existing})",
            fingerprint=existing.pk,
        )
    # which host this is a version of: its GPUs' UUIDs, else its name; neither: a host of its own, named after its
    # GPUs (sizing.fingerprint.identity), until a person merges it into another
    identity = identity_from_facts(facts, given_name=host)
    choice = fingerprint_host_choose(deployment=deployment, facts=facts, identity=identity, upload_sha256=sha)
    return Fingerprint.objects.create(
        deployment=deployment,
        host=choice.name[:255],
        host_key=choice.key,
        host_named=choice.named,
        gpu_uuids=list(identity.gpu_uuids),
        captured_at=_captured_at(facts),
        label=label.strip()[:100],
        facts=nonfinite_as_text(facts),
        raw=[{"name": name, "text": text} for name, text in texts],
        size_bytes=sum(len(text.encode()) for _, text in texts),
        sha256=sha,
        created_by=user,
    )


def fingerprint_delete(*, fingerprint: Fingerprint) -> None:
    fingerprint.delete()


# ---------------------------------------------------------------------------------------------------------------
# Fingerprints: checks against the plan, and the effect on the estimate


def deployment_plan(deployment: Deployment, *, required_bytes_per_gpu: int | None = None) -> Plan:
    gpu: Gpu | None = deployment.gpu
    return Plan(
        gpu_name=gpu.name if gpu else None,
        gpu_count=deployment.gpu_count,
        memory_bytes_per_gpu=gpu.memory_bytes if gpu else None,
        tp=deployment.tp or 1,
        image_cuda_version=deployment.image_cuda_version or None,
        required_bytes_per_gpu=required_bytes_per_gpu,
    )


def estimate_parameters(deployment: Deployment) -> dict[str, Any]:
    tp = deployment.tp or 1
    count = deployment.gpu_count if deployment.gpu_count and deployment.gpu_count % tp == 0 else tp
    return {
        "gpus": count,
        "tp": tp,
        "engine": deployment.engine or Engine.VLLM.value,
        "max_model_len": deployment.max_model_len,
        # the release the plan is sized for; empty: the newest modelled (None leaves the estimator's default)
        "engine_version": deployment.engine_version or None,
        "usage_context": deployment.usage_context or None,
        "install": deployment.install or None,
    }


def deployment_release(*, deployment: Deployment, estimate: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The engine release the plan is sized for and how it is installed and started: `version` (the release the
    estimate's rules follow, "" for engines without version rules), `requested` (the plan's, "latest" when empty),
    `label`, `install`, `usage_context`, `install_command` (None when the engine publishes no package or image we
    know) and `launch` (the lines that install and start it, the estimate's launch arguments when `estimate` is
    given). A plan whose release cannot be resolved any more gives its text as `requested` and an empty version."""
    engine = Engine(deployment.engine or Engine.VLLM.value)
    try:
        resolved = resolve_engine_version(engine.value, deployment.engine_version)
        version, requested = (str(resolved.version) if resolved.version else ""), resolved.requested
    except SizingError:
        version, requested = "", deployment.engine_version
    if estimate is not None and estimate.get("engine_version") is not None:
        version = str(estimate["engine_version"])
    install = deployment.install or INSTALLS[0]
    usage_context = deployment.usage_context or USAGE_CONTEXTS[0]
    traits = ENGINE_TRAITS[engine]
    model = deployment.model.slug if deployment.model else "MODEL"
    command = str((estimate or {}).get("launch_command") or traits.command)
    args = [str(arg) for arg in (estimate or {}).get("launch_args") or ()]
    return {
        "engine": engine.value,
        "label": traits.label,
        "version": version,
        "requested": requested,
        "install": install,
        "usage_context": usage_context,
        "install_command": install_line(engine=engine.value, version=version, install=install),
        "launch": list(
            launch_lines(
                engine=engine.value,
                label=traits.label,
                version=version,
                requested=requested,
                install=install,
                usage_context=usage_context,
                command=command,
                model=model,
                args=args,
            )
        ),
    }


def deployment_launch(*, deployment: Deployment) -> dict[str, Any]:
    """The plan's release and launch lines (`deployment_release`) with the estimate's launch arguments, the
    warning about the release (newer than modelled: estimated with the newest band) and `error` when the plan
    cannot be estimated (the lines then carry no arguments)."""
    estimate, error = None, None
    if deployment.model is not None and deployment.gpu is not None:
        try:
            estimate = estimate_report(
                gpu=deployment.gpu,
                model=deployment.model,
                parameters=estimate_parameters(deployment),
                organisation=deployment.organisation,
            )
        except SizingError as failure:
            error = failure.message
    release = deployment_release(deployment=deployment, estimate=estimate)
    try:
        warning = resolve_engine_version(release["engine"], deployment.engine_version).warning
    except SizingError as failure:  # a release stored before the bands changed
        warning = failure.message
    release["warnings"] = [warning] if warning else []
    release["error"] = error
    return release


EFFECT_ROWS = (
    "capacity_bytes_per_gpu",
    "budget_bytes_per_gpu",
    "required_bytes_per_gpu",
    "headroom_bytes_per_gpu",
    "kv_cache_bytes_per_gpu",
    "kv_capacity_tokens",
    "max_concurrency",
    "fits",
)


def _performance(
    *, model: LlmModel, gpu: Gpu, parameters: Mapping[str, Any], tp: int, environment: MeasuredEnvironment
) -> dict[str, Any] | None:
    """Time to first token and decode speed with the catalog's link against the measured one (TP > 1 only: one GPU
    has no all-reduce)."""
    if tp < 2 or environment.link is None:
        return None
    request = estimate_request_build(gpu=gpu, model=model, parameters=parameters)
    common = {
        "arch": request.arch,
        "gpu": request.gpu,
        "weights": request.weights,
        "kv_dtype": request.kv_dtype,
        "tp": tp,
        "engine": request.engine,
    }
    catalog = step_model(**common)
    measured = step_model(**common, link=environment.link, link_bytes_per_s=environment.link_bytes_per_s)

    def timings(model_: Any) -> dict[str, float]:
        return {
            "link_bytes_per_s": model_.link_bytes_per_s,
            "ttft_s": time_to_first_token_s(model_, prompt_tokens=EFFECT_PROMPT_TOKENS),
            "decode_tokens_per_s_batch_1": decode_tokens_per_s(model_, batch=1, context_tokens=EFFECT_PROMPT_TOKENS),
            f"decode_tokens_per_s_batch_{EFFECT_BATCH}": decode_tokens_per_s(
                model_, batch=EFFECT_BATCH, context_tokens=EFFECT_PROMPT_TOKENS
            ),
        }

    return {
        "prompt_tokens": EFFECT_PROMPT_TOKENS,
        "batch": EFFECT_BATCH,
        "catalog_link": request.gpu.interconnect or "pcie",
        "measured_link": environment.link,
        "catalog": timings(catalog),
        "measured": timings(measured),
    }


def deployment_commitment(*, deployment: Deployment) -> dict[str, Any]:
    """What the plan's estimate commits to, for a load test's defaults: `committed_bytes_per_gpu` (the peak per card:
    the engine's budget plus what lives outside it for engines that reserve at start) and `kv_capacity_tokens`
    (the tokens its KV cache holds: the concurrency it can promise is this over the tokens per request). Empty when
    the plan names no model or GPU or cannot be estimated."""
    if deployment.model is None or deployment.gpu is None:
        return {}
    parameters = estimate_parameters(deployment)
    try:
        estimate = estimate_report(
            gpu=deployment.gpu, model=deployment.model, parameters=parameters, organisation=deployment.organisation
        )
    except SizingError:
        return {}
    # the peak per card: for engines that reserve at start, their budget plus what lives outside it (CUDA graphs,
    # non-torch memory; DESIGN §11), which is the estimate's required memory; for the others their peak demand
    found = {
        "committed_bytes_per_gpu": estimate["required_bytes_per_gpu"],
        "kv_capacity_tokens": estimate.get("kv_capacity_tokens"),
    }
    return {key: int(value) for key, value in found.items() if value}


def fingerprint_estimate_effect(*, deployment: Deployment, environment: MeasuredEnvironment) -> dict[str, Any]:
    """The plan's estimate on the catalog card against the same estimate on the measured card (memory per GPU as
    the driver reports it; on MIG slices the slice's memory, which is also CUDA's total) and, with TP, the measured
    link in the performance model. {"error": ...} when the plan cannot be estimated; {"missing": [...]} when the plan
    names no model or GPU."""
    missing = [key for key in ("model", "gpu") if getattr(deployment, key) is None]
    if missing:
        return {"missing": missing}
    parameters = estimate_parameters(deployment)
    model, gpu = deployment.model, deployment.gpu
    try:
        catalog = estimate_report(gpu=gpu, model=model, parameters=parameters, organisation=deployment.organisation)
        measured_parameters = {**parameters, **_measured_memory(environment)}
        measured = estimate_report(
            gpu=gpu, model=model, parameters=measured_parameters, organisation=deployment.organisation
        )
        performance = _performance(
            model=model, gpu=gpu, parameters=parameters, tp=catalog["tp"], environment=environment
        )
    except SizingError as error:
        return {"error": error.message}
    rows = [{"key": key, "catalog": catalog.get(key), "measured": measured.get(key)} for key in EFFECT_ROWS]
    needed = (
        measured["budget_bytes_per_gpu"]
        if parameters["engine"] in PREALLOCATING_ENGINES
        else measured["required_bytes_per_gpu"]
    )
    return nonfinite_as_text(
        {
            "parameters": {key: value for key, value in parameters.items() if value is not None},
            "model": model.slug,
            "gpu": gpu.slug,
            "rows": rows,
            "needed_bytes_per_gpu": needed,
            "needed_is_budget": parameters["engine"] in PREALLOCATING_ENGINES,
            "performance": performance,
        }
    )


def fingerprint_report(*, fingerprint: Fingerprint) -> dict[str, Any]:
    """A stored fingerprint as the detail page and API show it: the facts, the machine's findings and the plan's,
    the measured environment and its effect on the estimate."""
    deployment = fingerprint.deployment
    facts = fingerprint.facts
    environment = measured_environment(facts, tp=deployment.tp or 1, gpus=deployment.gpu_count)
    effect = fingerprint_estimate_effect(deployment=deployment, environment=environment)
    plan = deployment_plan(deployment, required_bytes_per_gpu=effect.get("needed_bytes_per_gpu"))
    machine = [{**finding, "source": "machine"} for finding in facts.get("findings", [])]
    planned = [{**finding, "source": "plan"} for finding in plan_check(facts, plan)]
    order = {"error": 0, "warning": 1, "info": 2}
    findings = sorted(planned + machine, key=lambda f: order.get(f.get("severity"), 3))
    return nonfinite_as_text(
        {
            "facts": facts,
            "findings": findings,
            "plan": {
                "gpu_name": plan.gpu_name,
                "gpu_count": plan.gpu_count,
                "tp": plan.tp,
                "memory_bytes_per_gpu": plan.memory_bytes_per_gpu,
                "image_cuda_version": plan.image_cuda_version,
                "required_bytes_per_gpu": plan.required_bytes_per_gpu,
            },
            "environment": environment.as_dict(),
            "effect": effect,
        }
    )


def fingerprint_diff_report(*, before: Fingerprint, after: Fingerprint) -> dict[str, Any]:
    """Two stored fingerprints compared (either order; any two of the organisation, e.g. staging and
    production)."""
    return nonfinite_as_text(
        {
            **fingerprint_diff(before.facts, after.facts),
            "before": {
                "id": before.pk,
                "host": before.host,
                "captured_at": before.captured_at,
                "label": before.label,
                "deployment": before.deployment.name,
            },
            "after": {
                "id": after.pk,
                "host": after.host,
                "captured_at": after.captured_at,
                "label": after.label,
                "deployment": after.deployment.name,
            },
        }
    )


# ---------------------------------------------------------------------------------------------------------------
# Estimates and simulations on a measured machine


def _measured_memory(environment: MeasuredEnvironment) -> dict[str, int]:
    """The estimate inputs a fingerprint measured: `gpu_memory_bytes`, the driver's total per GPU (a MIG slice's on
    MIG), and `gpu_cuda_total_bytes` only where the fingerprint shows CUDA's own total (a MIG slice: CUDA reports the
    slice's memory); nvidia-smi never shows it for a whole card, so there the estimator takes the catalog's driver
    reservation off the measured total."""
    measured = {}
    if environment.memory_bytes_per_gpu:
        measured["gpu_memory_bytes"] = environment.memory_bytes_per_gpu
        if environment.cuda_total_bytes_per_gpu:
            measured["gpu_cuda_total_bytes"] = environment.cuda_total_bytes_per_gpu
    return measured


def fingerprint_parameters(
    *, fingerprint: Fingerprint, parameters: Mapping[str, Any], tp: int | None = None
) -> tuple[dict[str, Any], MeasuredEnvironment]:
    """`parameters` with the measured memory per card, and the measured environment. The measured figures win over
    the catalog's; figures given in `parameters` win over the measured ones (a given `gpu_memory_bytes` keeps the
    fingerprint's CUDA total out too: the two describe one card)."""
    tp = tp or parameters.get("tp") or 1
    gpus = parameters.get("gpus")
    if gpus is not None and gpus < tp:
        raise _invalid("gpus", f"{gpus} GPU(s) cannot hold a TP {tp} group")
    environment = measured_environment(fingerprint.facts, tp=tp, gpus=gpus)
    updated = dict(parameters)
    if updated.get("gpu_memory_bytes") is None and updated.get("gpu_cuda_total_bytes") is None:
        updated.update(_measured_memory(environment))
    elif updated.get("gpu_memory_bytes") is None and environment.memory_bytes_per_gpu:
        updated["gpu_memory_bytes"] = environment.memory_bytes_per_gpu
    return updated, environment


def fingerprint_estimate_environment(
    *, fingerprint: Fingerprint, environment: MeasuredEnvironment, estimate: Mapping[str, Any], gpu: Gpu, engine: str
) -> dict[str, Any]:
    """What an estimate made on a measured machine says about it: the environment and the plan's findings (this
    estimate's GPU, count, TP and memory need against the machine)."""
    needed = estimate["budget_bytes_per_gpu"] if engine in PREALLOCATING_ENGINES else estimate["required_bytes_per_gpu"]
    plan = Plan(
        gpu_name=gpu.name,
        gpu_count=estimate.get("gpus"),
        memory_bytes_per_gpu=None,
        tp=estimate.get("tp", 1),
        required_bytes_per_gpu=needed,
    )
    return nonfinite_as_text(
        {
            "fingerprint": fingerprint.pk,
            "host": fingerprint.host,
            "captured_at": fingerprint.captured_at,
            "environment": environment.as_dict(),
            "findings": plan_check(fingerprint.facts, replace(plan)),
        }
    )
