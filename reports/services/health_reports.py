"""The 72-hour sentinel's import and its memory health report (issue 20).

`sentinel_import` reads the uploaded file in the request (a file that cannot be imported is a 400 naming the
problem, nothing stored: see benchmarks_app.results.sentinel for the refusals; a file overlapping an earlier import of the
same GPUs is refused here) and queues the evaluation; `sentinel_evaluate`, the worker's part
(reports.tasks.sentinel_health_report_task), judges the criteria, renders the 显存健康报告 / memory health
report in the report's language, signs it with the organisation's identity and keeps it. `latest_health_report`
gives the newest finished report of a deployment (the commitment's final acceptance rests on it).
"""

from __future__ import annotations

import gzip
import hashlib
import logging
from datetime import UTC, datetime
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.db import transaction
from django.utils import timezone

from benchmarks_app.models.memory_health import MemoryHealthReport
from benchmarks_app.results.detect import MAX_BYTES, BenchmarkFormatError, decode
from benchmarks_app.results.sentinel import (
    BreakerRule,
    SentinelRefusal,
    evaluate,
    overlaps,
    parse_sentinel,
    sentinel_timeline,
)
from benchmarks_app.services.memory_logs import thin_series
from benchmarks_app.texts.sentinel import criteria_in_words
from reports.evidence import BREAKER_KV
from reports.models import Report, ReportVersion
from reports.services.reports import signing_identity
from reports.tasks import sentinel_health_report_task
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.kernel.job_budgets import JobKind, over_budget_error
from sizing.kernel.jobs import job_publish_on_commit
from sizing.kernel.jsonsafe import nonfinite_as_text
from sizing.kernel.uploads import upload_size_check
from sizing.models import Deployment

logger = logging.getLogger(__name__)

CHART_POINTS = 600  # per GPU in the report's chart: one every ~7 minutes of 72 hours
LANGUAGES = ("en", "zh-hans")


def _invalid(field: str, message: str, **extra: Any) -> SizingError:
    return SizingError(
        code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={**extra, "fields": {field: [message]}}
    )


def _when(epoch_s: float) -> datetime:
    return datetime.fromtimestamp(epoch_s, UTC)


def report_language(deployment: Deployment) -> str:
    """The deployment's report language: its newest commitment report's, else English."""

    report = Report.objects.filter(deployment=deployment).order_by("-created_at", "-pk").only("language").first()
    return report.language if report is not None else "en"


def committed_bytes_per_gpu(deployment: Deployment) -> int | None:
    """The peak per GPU of the deployment's newest signed commitment, when there is one (the climb test projects
    towards it; else towards the card's capacity)."""

    version = (
        ReportVersion.objects.filter(report__deployment=deployment, status=ReportVersion.Status.SIGNED)
        .order_by("-signed_at", "-pk")
        .only("content")
        .first()
    )
    if version is None:
        return None
    peak = ((version.content or {}).get("commitment") or {}).get("peak_bytes_per_gpu")
    return int(peak) if isinstance(peak, int | float) and peak > 0 else None


def sentinel_import(
    *, deployment: Deployment, user: Any, name: str, data: bytes, language: str | None = None
) -> MemoryHealthReport:
    """Read a sentinel file and queue its evaluation; a SizingError (400, field `file`) with nothing stored when the
    file cannot be imported."""
    upload_size_check(len(data), limit_bytes=MAX_BYTES, field="file", name=name, note="(50 MiB)")
    if language is not None and language not in LANGUAGES:
        raise _invalid("language", f"language {language!r}: one of {', '.join(LANGUAGES)}")
    try:
        text = decode(data)
    except BenchmarkFormatError as error:
        raise _invalid("file", f"{name}: {error.message}") from None
    try:
        sentinel = parse_sentinel(text)
    except SentinelRefusal as refusal:
        raise _invalid("file", f"{name}: {refusal.message}", refusal=refusal.code.value, **refusal.extra) from None
    uuids = list(sentinel.gpu_uuids)
    with transaction.atomic():
        earlier = (
            MemoryHealthReport.objects.select_for_update()
            .filter(organisation=deployment.organisation)
            .exclude(status=MemoryHealthReport.Status.FAILED)
            .only("pk", "gpu_uuids", "watched_from", "watched_to", "host", "file_sha256")
        )
        for row in earlier:
            if overlaps(
                uuids=uuids,
                start_s=sentinel.first_s,
                end_s=sentinel.last_s,
                other_uuids=row.gpu_uuids,
                other_start_s=row.watched_from.timestamp(),
                other_end_s=row.watched_to.timestamp(),
            ):
                same = " (the same file)" if row.file_sha256 == hashlib.sha256(data).hexdigest() else ""
                raise _invalid(
                    "file",
                    f"{name}: it overlaps health report {row.pk}{same}, an earlier import of host "
                    f"{row.host} with the same GPUs from {row.watched_from:%Y-%m-%d %H:%M} to "
                    f"{row.watched_to:%Y-%m-%d %H:%M} UTC; each stretch of time is imported once: upload a "
                    "file that starts after it ends",
                    refusal="overlap",
                    overlaps_report=row.pk,
                )
        report = MemoryHealthReport.objects.create(
            organisation=deployment.organisation,
            deployment=deployment,
            language=language or report_language(deployment),
            status=MemoryHealthReport.Status.QUEUED,
            progress_message="queued",
            file_name=name[:255],
            file_size_bytes=len(data),
            file_sha256=hashlib.sha256(data).hexdigest(),
            file_gz=gzip.compress(data, compresslevel=6),
            file_meta=nonfinite_as_text(sentinel.summary()),
            host=sentinel.host[:255],
            gpu_uuids=uuids,
            watched_from=_when(sentinel.first_s),
            watched_to=_when(sentinel.last_s),
            created_by=user,
        )
        report_id = report.pk

        def enqueue() -> None:
            sentinel_health_report_task.delay(report_id)

        def fail(error: dict[str, Any]) -> None:
            MemoryHealthReport.objects.filter(pk=report_id).update(
                status=MemoryHealthReport.Status.FAILED, error=error, finished_at=timezone.now()
            )

        job_publish_on_commit(kind=JobKind.SENTINEL_HEALTH.value, job_id=report_id, publish=enqueue, fail=fail)
    return report


def _progress(report_id: int, fraction: float, message: str) -> None:
    MemoryHealthReport.objects.filter(pk=report_id, status=MemoryHealthReport.Status.RUNNING).update(
        progress=fraction, progress_message=message
    )


def _content(
    report: MemoryHealthReport,
    result: dict[str, Any],
    criteria: list[dict[str, Any]],
    series: dict[str, Any],
    signer: str,
    when: datetime,
) -> dict[str, Any]:
    deployment = report.deployment
    return {
        "language": report.language,
        "report": {"id": report.pk, "created_at": report.created_at.isoformat()},
        "organisation": {"name": report.organisation.name},
        "customer": {"name": deployment.customer or deployment.name},
        "deployment": {"id": deployment.pk, "name": deployment.name},
        "file": {
            **report.file_meta,
            "name": report.file_name,
            "size_bytes": report.file_size_bytes,
            "sha256": report.file_sha256,
        },
        "verdict": result["verdict"],
        "coverage_hours": result["coverage_hours"],
        "peak_bytes": result["peak_bytes"],
        "committed_bytes_per_gpu": report.committed_bytes_per_gpu,
        "criteria": [{"title": c["title"], "verdict": c["verdict"], "text": c["text"]} for c in criteria],
        "series": series,
        "signature": {"signer": signer, "signed_at": when.isoformat()},
    }


def sentinel_evaluate(*, report_id: int) -> None:
    """The worker's part: judge, render, sign, keep. Idempotent: a report that is done is left alone; a failure
    marks it failed with the reason (import the file again)."""
    from reports.health_document import render_health_report_pdf
    from reports.signing import identity_fingerprint, sign_pdf

    claimed = MemoryHealthReport.objects.filter(
        pk=report_id, status__in=(MemoryHealthReport.Status.QUEUED, MemoryHealthReport.Status.RUNNING)
    ).update(status=MemoryHealthReport.Status.RUNNING, progress=0.05, progress_message="reading the sentinel file")
    if not claimed:
        return
    report = MemoryHealthReport.objects.select_related("deployment", "organisation").get(pk=report_id)
    try:
        sentinel = parse_sentinel(decode(gzip.decompress(bytes(report.file_gz))))
        _progress(report_id, 0.2, "judging the criteria")
        committed = committed_bytes_per_gpu(report.deployment)
        rule = BreakerRule(
            threshold=float(BREAKER_KV["threshold"]),
            for_s=float(BREAKER_KV["for_s"]),
            recover_within_s=float(BREAKER_KV["recover_within_s"]),
        )
        evaluation = evaluate(sentinel, breaker=rule, committed_bytes_per_gpu=committed)
        result = nonfinite_as_text(evaluation.as_dict())
        criteria = criteria_in_words(result["criteria"], language=report.language)
        series = thin_series(sentinel_timeline(sentinel), points=CHART_POINTS)
        report.committed_bytes_per_gpu = committed
        _progress(report_id, 0.5, "rendering the PDF")
        identity = signing_identity()
        when = timezone.now()
        content = _content(report, result, criteria, series, identity.common_name, when)
        pdf = render_health_report_pdf(content)
        _progress(report_id, 0.8, "signing")
        signed = sign_pdf(
            pdf,
            identity=identity,
            reason=f"Memory health report {report.pk}",
            location=None,
            version_label=f"memory health report {report.pk}",
            signer_name=identity.common_name,
        )
        with transaction.atomic():
            locked = MemoryHealthReport.objects.select_for_update().get(pk=report_id)
            if locked.status != MemoryHealthReport.Status.RUNNING:
                return
            locked.verdict, locked.criteria = result["verdict"], criteria
            locked.coverage_hours, locked.peak_bytes = result["coverage_hours"], result["peak_bytes"]
            locked.committed_bytes_per_gpu = committed
            locked.series = series
            locked.pdf, locked.sha256 = signed, hashlib.sha256(signed).hexdigest()
            locked.signer_certificate_sha256 = identity_fingerprint(identity)
            locked.signed_at, locked.finished_at = when, timezone.now()
            locked.status, locked.progress, locked.progress_message = MemoryHealthReport.Status.DONE, 1.0, "signed"
            locked.error = None
            locked.save()
    except SoftTimeLimitExceeded:
        MemoryHealthReport.objects.filter(pk=report_id).update(
            status=MemoryHealthReport.Status.FAILED,
            progress_message="",
            finished_at=timezone.now(),
            error=over_budget_error(JobKind.SENTINEL_HEALTH),
        )
    except Exception as exc:  # the report is failed with the reason; the upload may be tried again
        logger.exception("memory health report %s failed", report_id)
        MemoryHealthReport.objects.filter(pk=report_id).update(
            status=MemoryHealthReport.Status.FAILED,
            progress_message="",
            finished_at=timezone.now(),
            error={"code": "health_report_failed", "message": str(exc)[:500], "extra": {}},
        )
