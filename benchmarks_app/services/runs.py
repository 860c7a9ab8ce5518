"""Importing benchmark result files: read (every importer tried; a refusal is a 400 naming each format's reason,
nothing stored), keep the file, one row per run with its summary, and the per-request records stored in bulk by a
worker (with progress) so a 100,000-request file does not hold the request open."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from benchmarks_app.loadtests.scenarios import judge
from benchmarks_app.models import BenchmarkFile, BenchmarkRequest, BenchmarkRun, BenchmarkSeries
from benchmarks_app.results.analysis import run_distributions
from benchmarks_app.results.detect import MAX_BYTES, BenchmarkFormatError, decode, import_text
from benchmarks_app.results.loadverdict import load_memory_verdict
from benchmarks_app.results.run import ImportedRun, RequestRecord, request_tpot_ms
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.kernel.job_budgets import JobKind, over_budget_error
from sizing.kernel.jobs import job_publish_on_commit
from sizing.kernel.jsonsafe import nonfinite_as_text
from sizing.kernel.uploads import upload_size_check
from sizing.models import Deployment, Gpu, LlmModel, Organisation

logger = logging.getLogger(__name__)

BULK_BATCH = 5000  # request rows per INSERT
PROGRESS_INTERVAL_S = 0.5
NAME_MAX_LENGTH = 255


def _invalid(field: str, message: str, **extra: Any) -> SizingError:
    return SizingError(
        code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={**extra, "fields": {field: [message]}}
    )


BENCHMARK_SIZE_NOTE = "(50 MiB): split the run, or upload the summary without per-request details"


def benchmark_file_read(*, name: str, data: bytes) -> tuple[str, str, list[ImportedRun]]:
    """(text, format, runs) of an uploaded file; a 400 (SizingError) that lists every format tried and why it
    refused the file when none reads it."""
    upload_size_check(len(data), limit_bytes=MAX_BYTES, field="file", name=name, note=BENCHMARK_SIZE_NOTE)
    try:
        text = decode(data)
        fmt, runs = import_text(text)
    except BenchmarkFormatError as error:
        raise _invalid("file", f"{name}: {error.message}", tried=error.as_dict()["tried"]) from None
    return text, fmt, runs


def _started_at(value: str | None) -> datetime | None:
    parsed = parse_datetime(value) if value else None
    if parsed is None:
        return None
    return parsed if timezone.is_aware(parsed) else parsed.replace(tzinfo=UTC)


def _model_for(organisation: Organisation, name: str | None) -> LlmModel | None:
    """The catalog or uploaded model the file names (Hugging Face ids compared case-insensitively; a local path
    ending in the repo name, e.g. /models/Meta-Llama-3-8B, matches by its last part)."""
    if not name:
        return None
    candidates = LlmModel.objects.filter(Q(organisation__isnull=True) | Q(organisation=organisation))
    exact = candidates.filter(slug__iexact=name).order_by("organisation").first()
    if exact is not None:
        return exact
    tail = name.rstrip("/").rsplit("/", 1)[-1]
    return candidates.filter(slug__iendswith="/" + tail).order_by("organisation").first() if tail else None


def _name(run: ImportedRun, file_name: str, index: int, count: int) -> str:
    parts = [run.label or (f"{file_name} #{index + 1}" if count > 1 else file_name)]
    return " · ".join(parts)[:NAME_MAX_LENGTH]


def run_fields(run: ImportedRun) -> dict[str, Any]:
    """The BenchmarkRun fields an imported run fills (what it measured and how), for a new row or an update."""
    return {
        "model_name": (run.model or "")[:255],
        "format": run.format,
        "tool": run.tool,
        "tool_version": (run.tool_version or "")[:60],
        "label": (run.label or "")[:255],
        "backend": (run.backend or "")[:120],
        "started_at": _started_at(run.started_at),
        "duration_s": run.duration_s,
        "load": nonfinite_as_text(run.load.as_dict()),
        "settings": nonfinite_as_text(dict(run.settings)),
        "completed": run.completed,
        "failed": run.failed,
        "incomplete": run.incomplete,
        "metrics": nonfinite_as_text({key: stat.as_dict() for key, stat in run.metrics.items()}),
        "reported": nonfinite_as_text(dict(run.reported)),
        "notes": list(run.notes),
        "output_tokens_per_s": run.output_tokens_per_s,
        "requests_per_s": run.requests_per_s,
        "total_tokens_per_s": run.total_tokens_per_s,
        "request_count": len(run.requests),
        "distributions": nonfinite_as_text(run_distributions(run.requests)),
    }


SERVER_SERIES_POINTS = 600  # scraped samples kept per server for the charts


def server_series(timeline: Any) -> dict[str, Any]:
    """The server samples scraped during a run (KV-cache usage, running and waiting requests, preemptions), thinned
    to SERVER_SERIES_POINTS per server for the charts; {} when nothing was scraped."""
    servers = []
    for server in getattr(timeline, "servers", None) or ():
        samples = list(server.samples)
        step = max(1, math.ceil(len(samples) / SERVER_SERIES_POINTS))
        servers.append(
            {
                "engine": server.engine,
                "instance": server.instance,
                "samples": [sample.as_dict() for sample in samples[::step]],
            }
        )
    return nonfinite_as_text({"servers": servers}) if servers else {}


def run_verdict(
    run: ImportedRun,
    *,
    slo: Mapping[str, float],
    committed_bytes_per_gpu: int | None,
    peak_concurrency: int | None,
    fidelity_valid: bool | None = None,
) -> dict[str, Any]:
    """A load-test run's verdict (our generator's result with a scenario): the memory verdict from the metrics
    scraped during it, and the scenario's pass/fail against the SLOs. {} for a run without a scenario."""
    if not run.scenario:
        return {}
    kind = str(run.scenario.get("kind") or "")
    peak = peak_concurrency or run.scenario.get("peak_concurrency")
    memory = None
    if run.timeline is not None:
        memory = load_memory_verdict(
            run.timeline,
            committed_bytes_per_gpu=committed_bytes_per_gpu,
            promised_concurrency=peak,
            window=None,
            allow_restarts=kind == "failure",
        )
    return nonfinite_as_text(judge(run, slo=slo, memory=memory, fidelity_valid=fidelity_valid))


@transaction.atomic
def benchmark_import(
    *,
    organisation: Organisation,
    user: Any,
    name: str,
    data: bytes,
    deployment: Deployment | None = None,
    model: LlmModel | None = None,
    gpu: Gpu | None = None,
    gpu_count: int | None = None,
    tp: int | None = None,
    engine: str = "",
    engine_version: str = "",
    store_requests: Callable[[int], None] | None = None,
) -> list[BenchmarkRun]:
    """Read and keep a result file: the file, a series when it holds several runs, one row per run. Per-request
    records are stored after the commit by `store_requests(file_id)` (a worker task; None: stored here, now).
    What the caller gives (deployment, model, GPU, TP, engine) wins over what the file says; a deployment fills
    the rest from its plan."""
    text, fmt, runs = benchmark_file_read(name=name, data=data)
    if deployment is not None:
        model = model or deployment.model
        gpu = gpu or deployment.gpu
        gpu_count = gpu_count or deployment.gpu_count
        tp = tp or deployment.tp
        engine = engine or deployment.engine
    stored_file = BenchmarkFile.objects.create(
        organisation=organisation,
        name=name[:NAME_MAX_LENGTH],
        format=fmt,
        size_bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        content=text,
        uploaded_by=user,
    )
    series = None
    if len(runs) > 1:
        series = BenchmarkSeries.objects.create(
            organisation=organisation, name=name[:NAME_MAX_LENGTH], file=stored_file
        )
    created = []
    for index, run in enumerate(runs):
        has_requests = bool(run.requests)
        created.append(
            BenchmarkRun.objects.create(
                organisation=organisation,
                created_by=user,
                file=stored_file,
                series=series,
                series_index=index,
                index_in_file=index,
                name=_name(run, name, index, len(runs)),
                deployment=deployment,
                model=model or _model_for(organisation, run.model),
                gpu=gpu,
                gpu_count=gpu_count,
                tp=tp,
                engine=engine or "",
                engine_version=engine_version,
                **run_fields(run),
                server_series=server_series(run.timeline),
                verdict=run_verdict(
                    run,
                    slo=(deployment.slo if deployment else None) or {},
                    committed_bytes_per_gpu=None,
                    peak_concurrency=None,
                ),
                status=BenchmarkRun.Status.IMPORTING if has_requests else BenchmarkRun.Status.DONE,
                progress=0.0 if has_requests else 1.0,
                progress_message="per-request records queued" if has_requests else "",
                finished_at=None if has_requests else timezone.now(),
            )
        )
    if any(run.requests for run in runs):
        if store_requests is None:
            _store(stored_file, runs)
        else:
            file_id = stored_file.pk
            job_publish_on_commit(
                kind="benchmark_import",
                job_id=file_id,
                publish=lambda: store_requests(file_id),
                fail=lambda error: BenchmarkRun.objects.filter(
                    file_id=file_id, status=BenchmarkRun.Status.IMPORTING
                ).update(
                    status=BenchmarkRun.Status.FAILED, error=error, progress_message="", finished_at=timezone.now()
                ),
            )
    return created


def record_row(run: BenchmarkRun | None, index: int, record: RequestRecord) -> BenchmarkRequest:
    def count(value: int | None) -> int | None:
        return value if value is None or value >= 0 else None

    return BenchmarkRequest(
        run=run,
        index=index,
        status=record.status,
        error=(record.error or "")[:2000],
        start_s=record.start_s,
        ttft_ms=record.ttft_ms,
        ttft_sched_ms=record.ttft_sched_ms,
        e2e_ms=record.e2e_ms,
        tpot_ms=request_tpot_ms(record),
        itl_ms=list(record.itl_ms),
        input_tokens=count(record.input_tokens),
        output_tokens=count(record.output_tokens),
    )


COPY_COLUMNS = (
    "run_id",
    "index",
    "status",
    "error",
    "start_s",
    "ttft_ms",
    "ttft_sched_ms",
    "e2e_ms",
    "tpot_ms",
    "itl_ms",
    "input_tokens",
    "output_tokens",
)


def _copy_rows(run_id: int, start: int, chunk: Sequence[RequestRecord]) -> None:
    """PostgreSQL's COPY of request rows: several times faster than INSERTs for a 100,000-request run."""
    table = BenchmarkRequest._meta.db_table
    columns = ", ".join(f'"{name}"' for name in COPY_COLUMNS)
    with connection.cursor() as cursor, cursor.cursor.copy(f'COPY "{table}" ({columns}) FROM STDIN') as copy:
        for offset, record in enumerate(chunk):
            row = record_row(None, start + offset, record)
            copy.write_row(
                (
                    run_id,
                    row.index,
                    row.status,
                    row.error,
                    row.start_s,
                    row.ttft_ms,
                    row.ttft_sched_ms,
                    row.e2e_ms,
                    row.tpot_ms,
                    json.dumps(row.itl_ms),
                    row.input_tokens,
                    row.output_tokens,
                )
            )


def requests_store(row: BenchmarkRun, records: Sequence[RequestRecord], *, first_index: int = 0) -> Iterator[int]:
    """Store `records` as the run's request rows from index `first_index` on, in batches (PostgreSQL's COPY, else
    bulk INSERTs); yields the size of each batch stored."""
    for start in range(0, len(records), BULK_BATCH):
        chunk = records[start : start + BULK_BATCH]
        if connection.vendor == "postgresql":
            _copy_rows(row.pk, first_index + start, chunk)
        else:
            BenchmarkRequest.objects.bulk_create(
                [record_row(row, first_index + start + offset, record) for offset, record in enumerate(chunk)]
            )
        yield len(chunk)


def _store(
    stored_file: BenchmarkFile, runs: list[ImportedRun], progress: Callable[[int, int], None] | None = None
) -> None:
    rows = {row.index_in_file: row for row in BenchmarkRun.objects.filter(file=stored_file)}
    total = sum(len(run.requests) for run in runs)
    done = 0
    for index, run in enumerate(runs):
        row = rows.get(index)
        if row is None or not run.requests:
            continue
        BenchmarkRequest.objects.filter(run=row).delete()  # a redelivered task starts the run over
        for count in requests_store(row, run.requests):
            done += count
            if progress is not None:
                progress(done, total)
        BenchmarkRun.objects.filter(pk=row.pk).update(
            status=BenchmarkRun.Status.DONE,
            progress=1.0,
            progress_message=f"{len(run.requests):,} requests stored",
            finished_at=timezone.now(),
        )


def benchmark_requests_store(*, file_id: int) -> None:
    """Store the per-request records of a kept file's runs (the worker's part), with progress on each run; a
    failure marks the runs failed with the reason, never leaves them importing."""
    stored_file = BenchmarkFile.objects.filter(pk=file_id).first()
    if stored_file is None:
        return
    runs_of_file = BenchmarkRun.objects.filter(file=stored_file, status=BenchmarkRun.Status.IMPORTING)
    if not runs_of_file.exists():
        return  # already stored (a redelivered task)
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] < PROGRESS_INTERVAL_S and done < total:
            return
        last[0] = now
        runs_of_file.filter(status=BenchmarkRun.Status.IMPORTING).update(
            progress=done / total if total else 1.0, progress_message=f"{done:,} of {total:,} requests stored"
        )

    try:
        _fmt, runs = import_text(stored_file.content)
        with transaction.atomic():
            _store(stored_file, runs, progress)
    except SoftTimeLimitExceeded:  # over its time budget (sizing.kernel.job_budgets)
        runs_of_file.update(
            status=BenchmarkRun.Status.FAILED,
            finished_at=timezone.now(),
            error=over_budget_error(JobKind.BENCHMARK_IMPORT),
        )
    except Exception:  # the run must end, with the reason, whatever happened
        logger.exception("storing the requests of benchmark file %s failed", file_id)
        runs_of_file.update(
            status=BenchmarkRun.Status.FAILED,
            finished_at=timezone.now(),
            error={
                "code": "internal_error",
                "message": "storing the per-request records failed; the error is in the worker's log",
                "extra": {},
            },
        )


def benchmark_run_summary(run: ImportedRun) -> dict[str, Any]:
    """The CLI contract's view of a run: tool, counts, the four latencies and the throughputs."""

    def metric(key: str) -> dict[str, Any] | None:
        stat = run.metrics.get(key)
        return stat.as_dict() if stat is not None else None

    return nonfinite_as_text(
        {
            "tool": run.tool,
            "tool_version": run.tool_version,
            "format": run.format,
            "label": run.label,
            "model": run.model,
            "completed": run.completed,
            "failed": run.failed,
            "incomplete": run.incomplete,
            "ttft_ms": metric("ttft_ms"),
            "tpot_ms": metric("tpot_ms"),
            "itl_ms": metric("itl_ms"),
            "e2e_ms": metric("e2e_ms"),
            "output_tokens_per_s": run.output_tokens_per_s,
            "requests_per_s": run.requests_per_s,
            "total_tokens_per_s": run.total_tokens_per_s,
            "load": run.load.as_dict(),
            "request_count": len(run.requests),
            "notes": list(run.notes),
        }
    )


def benchmark_run_delete(*, run: BenchmarkRun) -> None:
    run.delete()


EXPORT_FORMATS = ("ours", "llm-d")


def benchmark_run_export(*, run: BenchmarkRun, kind: str) -> dict[str, Any]:
    """The run as our load generator's JSON (with a `source` block; it re-imports) or as the llm-d Benchmark Report
    v0.2 layout."""
    from benchmarks_app.results.export import export_llm_d, export_ours

    if kind not in EXPORT_FORMATS:
        raise _invalid("kind", f"export kind must be one of {', '.join(EXPORT_FORMATS)}")
    data = {
        "name": run.name,
        "tool": run.tool,
        "tool_version": run.tool_version or None,
        "format": run.format,
        "label": run.label or None,
        "model_name": run.model_name or None,
        "model": run.model.slug if run.model else None,
        "gpu": run.gpu.slug if run.gpu else None,
        "gpu_count": run.gpu_count,
        "tp": run.tp,
        "engine": run.engine or None,
        "engine_version": run.engine_version or None,
        "backend": run.backend or None,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "duration_s": run.duration_s,
        "load": run.load,
        "settings": run.settings,
        "completed": run.completed,
        "failed": run.failed,
        "incomplete": run.incomplete,
        "metrics": run.metrics,
        "reported": run.reported,
        "notes": run.notes,
        "output_tokens_per_s": run.output_tokens_per_s,
        "requests_per_s": run.requests_per_s,
        "total_tokens_per_s": run.total_tokens_per_s,
    }
    requests = (
        BenchmarkRequest.objects.filter(run=run)
        .order_by("index")
        .values(
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
        .iterator(chunk_size=5000)
    )
    exported = export_ours(data, requests) if kind == "ours" else export_llm_d(data, requests)
    return nonfinite_as_text(exported)
