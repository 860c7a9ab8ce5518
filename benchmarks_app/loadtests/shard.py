"""Scale-out: one plan split into shards that several processes (Celery workers on several hosts) run from a common
start, and their result documents merged back into one (issue 7, part 5). No Django here.

Splitting (`shard_plan`): the load is divided as evenly as whole numbers allow — closed loop: the clients
(`concurrency` C over N shards: C // N each, the first C % N shards one more); open loop: the rate (rate / N each, the
same arrival process, each shard with its own seed, so the sum is the same process at the full rate for Poisson);
`max_requests` like the clients; a burst's extra requests like the clients. Durations, the workload and the timeouts
stay. Only shard 0 scrapes the endpoint's metrics and injects the faults (once for the whole test). A shard that would
get no client (C < N) is refused: ask for fewer workers.

Merging (`merge_documents`): each shard's document has its own t = 0 (its monotonic clock at its start); `offsets_s`
gives each shard's start on the common clock (its wall-clock start minus the earliest, so hosts need synchronised
clocks: NTP keeps them within milliseconds, well under the request times measured). Requests are shifted onto the
common clock and renumbered (`id` × N + shard), so ids stay unique; the measurement window is the span where every
shard was measuring (the latest window start to the earliest window end); the load is the sum of the shards'; the
scrapes and faults come from the shard that has them, shifted too. The shards' own summaries are kept under
`summary.shards`; the client fidelity of the whole is valid only when every shard's was.

>>> from llm_sizing_loadgen.plan import plan_from_dict
>>> plan = plan_from_dict({"endpoint": {"base_url": "http://127.0.0.1:8001", "model": "m"},
...                        "load": {"mode": "closed", "concurrency": 10}, "requests": {"input_tokens": 64,
...                        "output_tokens": 16}, "bounds": {"max_requests": 101}})
>>> [(p.load.concurrency, p.bounds.max_requests, p.seed) for p in (shard_plan(plan, i, 3) for i in range(3))]
[(4, 34, 0), (3, 34, 1), (3, 33, 2)]
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from llm_sizing_loadgen.plan import LoadMode, PlanError, TestPlan

SEED_STRIDE = 1  # shard i draws its requests and arrivals with seed + i


def _share(total: int, index: int, count: int) -> int:
    """Shard `index`'s whole share of `total` (the first `total % count` shards get one more)."""
    return total // count + (1 if index < total % count else 0)


def shard_plan(plan: TestPlan, index: int, count: int) -> TestPlan:
    """Shard `index` (0-based) of `count`: its share of the load, its own seed; metrics and faults on shard 0 only."""
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"shard {index} of {count} does not exist")
    if count == 1:
        return plan
    if plan.sweep is not None:
        raise PlanError([("sweep", "a sweep cannot be split over workers: run its points as separate tests")])
    load = plan.load
    if load.mode is LoadMode.CLOSED:
        clients = load.concurrency or 1
        if clients < count:
            raise PlanError(
                [
                    (
                        "workers",
                        f"{clients} client(s) cannot be shared by {count} workers: use at most {clients} worker(s)",
                    )
                ]
            )
        load = replace(load, concurrency=_share(clients, index, count))
    else:
        cap = None if load.concurrency is None else max(1, _share(load.concurrency, index, count))
        load = replace(
            load,
            rate=(load.rate or 0.0) / count,
            concurrency=cap,
            burst_requests=_share(load.burst_requests, index, count),
        )
    bounds = plan.bounds
    if bounds.max_requests is not None:
        share = _share(bounds.max_requests, index, count)
        if share < 1:
            raise PlanError([("workers", f"{bounds.max_requests} request(s) cannot be shared by {count} workers")])
        bounds = replace(bounds, max_requests=share)
    name = f"{plan.name} · shard {index + 1}/{count}" if plan.name else f"shard {index + 1}/{count}"
    keep = index == 0
    return replace(
        plan,
        load=load,
        bounds=bounds,
        seed=plan.seed + SEED_STRIDE * index,
        name=name,
        metrics=plan.metrics if keep else None,
        faults=plan.faults if keep else (),
    )


def _shift(value: Any, offset: float) -> Any:
    return round(value + offset, 6) if isinstance(value, int | float) and not isinstance(value, bool) else value


def merge_documents(
    documents: Sequence[Mapping[str, Any]],
    *,
    offsets_s: Sequence[float],
    started_at: str,
    plan: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One result document from the shards' documents (see the module docstring). `started_at` is the common t = 0
    on the wall clock (ISO 8601 UTC); `plan` the whole test's plan, recorded in the settings."""
    if not documents:
        raise ValueError("no shard documents to merge")
    if len(offsets_s) != len(documents):
        raise ValueError(f"{len(documents)} documents but {len(offsets_s)} offsets")
    count = len(documents)
    if count == 1 and not offsets_s[0]:
        merged = copy.deepcopy(dict(documents[0]))
        merged["run"]["started_at"] = started_at
        if plan is not None:
            merged["run"]["settings"]["plan"] = dict(plan)
        return merged
    first = documents[0]
    runs = [doc["run"] for doc in documents]
    requests: list[dict[str, Any]] = []
    for shard, (doc, offset) in enumerate(zip(documents, offsets_s, strict=True)):
        for entry in doc["requests"]:
            item = dict(entry)
            item["id"] = int(entry["id"]) * count + shard
            item["t_sched_s"] = _shift(entry["t_sched_s"], offset)
            item["t_send_s"] = _shift(entry["t_send_s"], offset)
            requests.append(item)
    requests.sort(key=lambda item: (item["t_send_s"], item["id"]))

    window_start = max(run["window"]["start_s"] + offset for run, offset in zip(runs, offsets_s, strict=True))
    window_end = min(run["window"]["end_s"] + offset for run, offset in zip(runs, offsets_s, strict=True))
    if window_end <= window_start:  # the shards never measured together (one ended before another began)
        window_start = min(run["window"]["start_s"] + offset for run, offset in zip(runs, offsets_s, strict=True))
        window_end = max(run["window"]["end_s"] + offset for run, offset in zip(runs, offsets_s, strict=True))

    load = dict(runs[0]["load"])
    if load.get("kind") == "concurrency":
        load["concurrency"] = sum(int(run["load"].get("concurrency") or 0) for run in runs)
    else:
        load["rate"] = round(sum(float(run["load"].get("rate") or 0.0) for run in runs), 9)
        caps = [run["load"].get("concurrency") for run in runs]
        load["concurrency"] = sum(caps) if all(cap is not None for cap in caps) else None

    settings = dict(runs[0].get("settings") or {})
    settings["shards"] = count
    settings["shard_offsets_s"] = [round(offset, 6) for offset in offsets_s]
    if plan is not None:
        settings["plan"] = dict(plan)
    settings.pop("name", None)
    if plan is not None and plan.get("name"):
        settings["name"] = plan["name"]

    summaries = [doc.get("summary") or {} for doc in documents]
    fidelities = [summary.get("client_fidelity") or {} for summary in summaries]
    reasons = [
        f"shard {shard + 1}: {reason}"
        for shard, fidelity in enumerate(fidelities)
        for reason in fidelity.get("reasons") or []
    ]
    merged: dict[str, Any] = {
        "format": first["format"],
        "version": first["version"],
        "tool": dict(first["tool"]),
        "run": {
            "started_at": started_at,
            "duration_s": round(
                max(run["duration_s"] + offset for run, offset in zip(runs, offsets_s, strict=True)), 6
            ),
            "load": load,
            "endpoint": dict(runs[0]["endpoint"]),
            "settings": settings,
            "window": {"start_s": round(window_start, 6), "end_s": round(window_end, 6)},
        },
        "requests": requests,
        "summary": {
            "stop_reason": _stop_reason([summary.get("stop_reason") for summary in summaries]),
            "sent": sum(int(summary.get("sent") or 0) for summary in summaries),
            "client_fidelity": {
                "valid": all(fidelity.get("valid", True) for fidelity in fidelities),
                "reasons": reasons,
            },
            "shards": summaries,
            "notes": [
                f"Merged from {count} shards run by separate workers from a common start; each shard's own "
                "summary is under shards."
            ],
        },
    }
    for key in ("server_metrics", "faults", "scenario"):
        for doc, offset in zip(documents, offsets_s, strict=True):
            if key in doc:
                merged[key] = _shifted_block(key, doc[key], offset)
                break
    return merged


def _stop_reason(reasons: Sequence[str | None]) -> str:
    """The whole test's: cancelled if any shard was, else the duration bound if any shard hit it, else completed."""
    for reason in ("cancelled", "max_duration"):
        if reason in reasons:
            return reason
    return "completed"


def _shifted_block(key: str, block: Any, offset: float) -> Any:
    value = copy.deepcopy(block)
    if key == "faults" and isinstance(value, list):
        for event in value:
            if isinstance(event, dict) and "t_s" in event:
                event["t_s"] = _shift(event["t_s"], offset)
    elif key == "server_metrics" and isinstance(value, dict):
        for scrape in value.get("scrapes") or []:
            if isinstance(scrape, dict) and "t_s" in scrape:
                scrape["t_s"] = _shift(scrape["t_s"], offset)
    return value
