"""Monitoring logs through the API: a 72-hour log judged against the commitment (pass, a leak, an OOM with a
restart), chart series thinned with the peak kept, refusals with nothing stored, organisation scoping."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from benchmarks_app.models import MemoryLog

TIMELINE = Path(__file__).resolve().parents[1] / "benchmarks_app" / "results" / "fixtures" / "timeline"
MIB = 2**20
COMMITTED_GIB = 75_000 * MIB / 2**30  # 73.2421875 GiB: the commitment the health tests use


def _upload(client: APIClient, name: str, **extra):
    files = {"file": io.BytesIO((TIMELINE / name).read_bytes())}
    files["file"].name = name
    for key in ("events", "breaker"):
        if key in extra:
            files[key] = io.BytesIO((TIMELINE / extra.pop(key)).read_bytes())
            files[key].name = key
    return client.post("/api/v1/memory-logs/", {**files, **extra}, format="multipart")


def test_memory_log_endpoints_require_authentication(db):
    assert APIClient().get("/api/v1/memory-logs/").status_code in (401, 403)


def test_a_healthy_72_hour_log_passes_and_keeps_its_true_peak_in_the_chart(api_client):
    response = _upload(api_client, "healthy_2gpu_72h.csv", committed_gib_per_gpu=COMMITTED_GIB)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["verdict"]["verdict"] == "pass"
    assert body["verdict"]["coverage_hours"] == pytest.approx(72.0, abs=0.1)
    assert body["committed_bytes_per_gpu"] == 75_000 * MIB
    gpu0 = next(g for g in body["analysis"]["gpus"] if g["gpu"] == "0")
    assert gpu0["peak_bytes"] == 76_034_342_912  # the generator's highest sample (tests/sizing/.../test_health.py)
    chart = next(g for g in body["series"]["gpus"] if g["gpu"] == "0")
    assert len(chart["t"]) <= 1501
    assert max(chart["used_bytes"]) == gpu0["peak_bytes"]


def test_a_leak_fails_on_the_climb_and_an_oom_with_a_restart_fails_at_the_first_violation(api_client):
    leak = _upload(api_client, "leak_2gpu_72h.csv", committed_gib_per_gpu=COMMITTED_GIB).json()
    assert leak["verdict"]["verdict"] == "fail"
    failed = {c["code"] for c in leak["verdict"]["checks"] if c["passed"] is False}
    assert failed == {"no_sustained_climb"}
    oom = _upload(
        api_client, "oom_restart_2gpu_72h.csv", committed_gib_per_gpu=COMMITTED_GIB, events="oom_events.log"
    ).json()
    assert oom["verdict"]["verdict"] == "fail"
    assert oom["verdict"]["first_violation"] == "2026-12-01T19:26:02.123Z"
    assert {"no_oom", "no_restart"} <= {c["code"] for c in oom["verdict"]["checks"] if c["passed"] is False}


def test_without_a_commitment_the_verdict_is_insufficient_not_a_pass(api_client):
    body = _upload(api_client, "healthy_2gpu_72h.csv").json()
    assert body["verdict"]["verdict"] == "insufficient"


def test_a_benchmark_result_is_refused_as_a_monitoring_log_and_nothing_is_stored(api_client):
    handle = io.BytesIO(b'{"completed": 6, "failed": 1, "mean_ttft_ms": 42.5, "ttfts": [0.04]}')
    handle.name = "bench.json"
    response = api_client.post("/api/v1/memory-logs/", {"file": handle}, format="multipart")
    assert response.status_code == 400
    assert "import it as a benchmark run" in response.json()["message"]
    assert MemoryLog.objects.count() == 0


def test_a_bad_breaker_log_is_a_400_naming_it(api_client):
    handle = io.BytesIO((TIMELINE / "healthy_2gpu_72h.csv").read_bytes())
    handle.name = "log.csv"
    breaker = io.BytesIO(b'{"time": "yesterday", "kind": "trip"}\n')
    breaker.name = "breaker.jsonl"
    response = api_client.post("/api/v1/memory-logs/", {"file": handle, "breaker": breaker}, format="multipart")
    assert response.status_code == 400
    assert "breaker" in response.json()["extra"]["fields"]
    assert MemoryLog.objects.count() == 0


def test_another_organisations_logs_are_invisible(api_client, db):
    from django.contrib.auth import get_user_model

    from sizing.models import Membership, Organisation

    stored = _upload(api_client, "healthy_2gpu_72h.csv").json()
    other = get_user_model().objects.create_user(username="rival", password="x" * 12)
    Membership.objects.create(user=other, organisation=Organisation.objects.create(name="Rival"))
    rival = APIClient()
    rival.force_authenticate(user=other)
    assert rival.get(f"/api/v1/memory-logs/{stored['id']}/").status_code == 404
    assert rival.get("/api/v1/memory-logs/").json()["results"] == []


def test_one_zone_for_the_samples_the_events_and_the_breaker_log(api_client):
    # given: a server at UTC+08:00 whose nvidia-smi log, vLLM log and breaker log all write local time; the
    # breaker trips at 14:41:02 local, written without a zone
    breaker = io.BytesIO(
        b'{"time": "2026-11-30T14:41:02", "kind": "trip", "breaker": "kv"}\n'
        b'{"time": "2026-11-30T14:41:03", "kind": "shed", "breaker": "kv"}\n'
    )
    breaker.name = "breaker.jsonl"
    files = {
        "file": io.BytesIO((TIMELINE / "oom_restart_2gpu_72h.csv").read_bytes()),
        "events": io.BytesIO((TIMELINE / "oom_events.log").read_bytes()),
        "breaker": breaker,
    }
    files["file"].name, files["events"].name = "gpu.csv", "events.log"

    # when
    response = api_client.post(
        "/api/v1/memory-logs/",
        {**files, "committed_gib_per_gpu": COMMITTED_GIB, "utc_offset_minutes": 480},
        format="multipart",
    )

    # then: samples, the OOM line and the trip are all 8 h earlier in UTC
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["analysis"]["start"] == "2026-11-30T05:41:02.123Z"  # 13:41:02.123 local
    oom = next(c for c in body["verdict"]["checks"] if c["code"] == "no_oom")
    assert [e["time"] for e in oom["extra"]["logged"] if e["kind"] == "oom"] == ["2026-12-01T11:41:03Z"]
    breaker_check = next(c for c in body["verdict"]["checks"] if c["code"] == "breaker_reaction")
    assert breaker_check["extra"]["reactions"][0]["trip"] == "2026-11-30T06:41:02Z"
    # one restart although both GPUs fell; the figures another report reads
    restart = next(c for c in body["verdict"]["checks"] if c["code"] == "no_restart")
    assert restart["extra"]["count"] == 1
    assert body["verdict"]["figures"]["restarts"] == 1
    assert body["verdict"]["figures"]["peak_bytes"] == max(g["peak_bytes"] for g in body["analysis"]["gpus"])
    assert body["verdict"]["figures"]["tolerance_bytes"] == MIB
