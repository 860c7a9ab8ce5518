"""Scale-out: a plan split over shards, and the shards' result documents merged onto one clock."""

from __future__ import annotations

import doctest
import json
from dataclasses import replace

import pytest

from benchmarks_app.loadtests import shard as shard_module
from benchmarks_app.loadtests.shard import merge_documents, shard_plan
from benchmarks_app.results.formats import llm_sizing
from llm_sizing_loadgen.plan import FaultKind, FaultSpec, MetricsSpec, PlanError, plan_from_dict

BASE = {
    "endpoint": {"base_url": "http://127.0.0.1:8001", "model": "m"},
    "requests": {"input_tokens": 64, "output_tokens": 16},
}


def test_doctests() -> None:
    assert doctest.testmod(shard_module).failed == 0


def test_closed_loop_clients_and_requests_are_shared_as_evenly_as_whole_numbers_allow() -> None:
    plan = plan_from_dict({**BASE, "load": {"mode": "closed", "concurrency": 7}, "bounds": {"max_requests": 20}})
    shards = [shard_plan(plan, index, 3) for index in range(3)]
    assert [s.load.concurrency for s in shards] == [3, 2, 2]
    assert sum(s.load.concurrency for s in shards) == 7
    assert [s.bounds.max_requests for s in shards] == [7, 7, 6]
    assert len({s.seed for s in shards}) == 3


def test_open_loop_rate_is_divided_and_only_shard_0_scrapes_and_injects() -> None:
    plan = plan_from_dict(
        {**BASE, "load": {"mode": "open", "rate": 30.0, "concurrency": 10}, "bounds": {"max_duration_s": 60}}
    )
    plan = replace(
        plan,
        metrics=MetricsSpec(url="http://127.0.0.1:8001/metrics"),
        faults=(FaultSpec(at_s=5.0, kind=FaultKind.HTTP, url="http://127.0.0.1:8001/control"),),
    )
    shards = [shard_plan(plan, index, 4) for index in range(4)]
    assert [s.load.rate for s in shards] == [7.5] * 4
    assert [s.load.concurrency for s in shards] == [3, 3, 2, 2]
    assert shards[0].metrics is not None
    assert shards[0].faults
    assert all(s.metrics is None and not s.faults for s in shards[1:])
    assert shard_plan(plan, 0, 1) is plan


def test_more_workers_than_clients_is_refused_with_the_limit() -> None:
    plan = plan_from_dict({**BASE, "load": {"mode": "closed", "concurrency": 2}, "bounds": {"max_requests": 20}})
    with pytest.raises(PlanError, match="at most 2 worker"):
        shard_plan(plan, 0, 3)


def _document(
    offset_ids: int, sends: list[float], *, window: tuple[float, float], valid: bool = True, concurrency: int = 2
) -> dict:
    requests = []
    for number, send in enumerate(sends):
        requests.append(
            {
                "id": number,
                "status": "ok",
                "error": None,
                "http_status": 200,
                "timeout_phase": None,
                "t_sched_s": send,
                "t_send_s": send,
                "ttft_ms": 100.0,
                "ttft_sched_ms": 100.0,
                "e2e_ms": 400.0,
                "itl_ms": [100.0, 100.0, 100.0],
                "input_tokens": 64,
                "input_tokens_sent": 64,
                "output_tokens": 4,
                "output_tokens_source": "usage",
                "cached_tokens": None,
                "finish_reason": "length",
            }
        )
    return {
        "format": "llm-sizing-loadgen-result",
        "version": 1,
        "tool": {"name": "llm-sizing-loadgen", "version": "1.0"},
        "run": {
            "started_at": "2026-11-30T10:00:00.000000Z",
            "duration_s": window[1] + 1,
            "load": {"kind": "concurrency", "rate": None, "concurrency": concurrency},
            "endpoint": {"kind": "openai-completions", "model": "m"},
            "settings": {"name": "x"},
            "window": {"start_s": window[0], "end_s": window[1]},
        },
        "requests": requests,
        "summary": {
            "stop_reason": "completed",
            "sent": len(sends),
            "client_fidelity": {"valid": valid, "reasons": [] if valid else ["lag"]},
        },
        **(
            {"faults": [{"t_s": 2.0, "label": "kill", "kind": "http", "ok": True, "detail": "", "duration_s": 0.01}]}
            if offset_ids == 0
            else {}
        ),
    }


def test_merged_documents_share_one_clock_unique_ids_and_the_common_window() -> None:
    first = _document(0, [0.0, 1.0, 2.0], window=(0.5, 9.0))
    second = _document(1, [0.0, 1.0], window=(1.0, 10.0), valid=False)
    merged = merge_documents(
        [first, second], offsets_s=[0.0, 0.25], started_at="2026-11-30T10:00:00.000000Z", plan={"name": "pulse"}
    )
    sends = [(entry["id"], entry["t_send_s"]) for entry in merged["requests"]]
    assert sends == [(0, 0.0), (1, 0.25), (2, 1.0), (3, 1.25), (4, 2.0)]  # id × 2 + shard, shifted by 0.25 s
    assert merged["run"]["window"] == {"start_s": 1.25, "end_s": 9.0}  # where both shards measured
    assert merged["run"]["load"]["concurrency"] == 4
    assert merged["run"]["settings"]["shards"] == 2
    assert merged["summary"]["client_fidelity"] == {"valid": False, "reasons": ["shard 2: lag"]}
    assert merged["faults"][0]["t_s"] == 2.0
    (run,) = llm_sizing.read(json.dumps(merged))  # our own importer reads the merge
    assert run.load.concurrency == 4
    assert run.completed == 2  # the requests sent inside [1.25, 9.0]: at 1.25 s and 2.0 s
