"""Reads of load tests: an organisation sees its own. Every read first ends the jobs whose workers are gone
(`loadtest_reap`), so nobody ever looks at a test stuck "running" after its worker died."""

from __future__ import annotations

from typing import Any

import numpy as np
from django.db.models import QuerySet

from benchmarks_app.models import BenchmarkRequest, LoadTest
from benchmarks_app.services.loadtests import loadtest_reap
from sizing.models import Organisation

LIVE_REQUESTS = 2048  # the most recent ok requests behind the live percentiles


def loadtest_list_for_organisation(*, organisation: Organisation) -> QuerySet[LoadTest]:
    loadtest_reap()
    return (
        LoadTest.objects.filter(organisation=organisation)
        .select_related("endpoint", "deployment", "run", "created_by")
        .prefetch_related("shards")
    )


def loadtest_get_for_organisation(*, organisation: Organisation, job_id: int) -> LoadTest | None:
    loadtest_reap()
    return (
        LoadTest.objects.filter(organisation=organisation, pk=job_id)
        .select_related("endpoint", "deployment", "run", "created_by", "organisation")
        .prefetch_related("shards")
        .first()
    )


def _percentile(values: np.ndarray, q: float) -> float | None:
    return round(float(np.percentile(values, q)), 3) if values.size else None


def loadtest_progress(*, job: LoadTest) -> dict[str, Any]:
    """Where the test is: the shards' counts and rates summed, the fraction of the bounds done, and live TTFT/TPOT
    percentiles over the most recent stored requests of all shards (linear interpolation; n given)."""
    shards = list(job.shards.all())
    totals = {
        key: sum(int((shard.progress or {}).get(key) or 0) for shard in shards)
        for key in ("sent", "done", "ok", "failed", "in_flight")
    }
    rate = sum(float((shard.progress or {}).get("rate_per_s") or 0.0) for shard in shards)
    fractions = [(shard.progress or {}).get("fraction") for shard in shards]
    known = [float(value) for value in fractions if value is not None]
    elapsed = max((float((shard.progress or {}).get("elapsed_s") or 0.0) for shard in shards), default=0.0)
    live: dict[str, Any] = {"n": 0}
    if job.run_id is not None:
        rows = list(
            BenchmarkRequest.objects.filter(run_id=job.run_id, status="ok")
            .order_by("-pk")
            .values_list("ttft_ms", "tpot_ms")[:LIVE_REQUESTS]
        )
        ttft = np.asarray([row[0] for row in rows if row[0] is not None], dtype=np.float64)
        tpot = np.asarray([row[1] for row in rows if row[1] is not None], dtype=np.float64)
        live = {
            "n": len(rows),
            "ttft_p50_ms": _percentile(ttft, 50),
            "ttft_p99_ms": _percentile(ttft, 99) if ttft.size >= 100 else None,
            "tpot_p50_ms": _percentile(tpot, 50),
            "tpot_p99_ms": _percentile(tpot, 99) if tpot.size >= 100 else None,
        }
    final = job.status in LoadTest.FINAL
    fraction = 1.0 if final else (min(known) if known and len(known) == len(shards) else None)
    if final:  # the shards' last snapshots were taken while requests were still in flight
        totals["in_flight"] = 0
        rate = 0.0
    return {
        **totals,
        "rate_per_s": round(rate, 3),
        "elapsed_s": round(elapsed, 3),
        "fraction": fraction,
        "stored": sum(shard.stored for shard in shards),
        "live": live,
    }
