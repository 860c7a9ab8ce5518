"""A synthetic 72-hour sentinel file (format memory-sentinel/1, deploy/tools/memory_sentinel.py) from the simulator's
gauges, for tests and the demo: what the sentinel would have written beside the bundled simulator (simserver) over
three days, with the injected failure and one breaker episode in it.

The GPU memory per card is the simulator's (`SimGpuMemory` of `SimEngine.from_plan`: the estimate's peak per card,
held from the first second, as vLLM reserves it) for a catalog model on catalog GPUs, or given in MiB. On top of it:
a few MiB of deterministic jitter below it (an engine that reserves holds its figure as a ceiling: buffers it frees
show as dips, nothing goes above), a linear climb of `climb_mib_per_h` (0: steady), the KV-cache usage following a
day's traffic (0.25 at night to 0.75 in the afternoon), and, unless turned off:

- the injected failure at hour 30: the engine killed, its GPUs empty and its metrics endpoint down for 90 s, then
  back with new PIDs (events process_exit, engine_down, process_start, engine_up, as the sentinel writes them);
- one breaker episode at hour 50: KV usage above 0.95 for 20 s (read every second, as the sentinel's fast
  sampling does), the breaker's trip line 5.5 s after the first reading above, its recovery line 8 s after the
  first reading back below.

`python manage.py sentinel_synthetic --hours 72 --climb-mib-per-h 0 --out steady.jsonl` writes one.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

MIB = 2**20
START_EPOCH_S = 1_796_000_000.0  # 2026-11-29T08:53:20Z, a fixed start so that files are reproducible
FAILURE_AT_H = 30.0
FAILURE_DOWN_S = 90.0
BREAKER_AT_H = 50.0
BREAKER_ABOVE_S = 20.0
BREAKER_TRIP_AFTER_S = 5.5
BREAKER_RECOVER_AFTER_S = 8.0


@dataclass(frozen=True, kw_only=True)
class SyntheticGauges:
    """Per-card memory the simulator shows (MiB), the card's total (MiB), and the GPUs of the server."""

    used_mib: int
    total_mib: int
    gpus: int
    name: str = "NVIDIA H100 80GB HBM3"


def simulator_gauges(
    *, model: str = "meta-llama/Meta-Llama-3-8B", gpu: str = "nvidia-h100-sxm-80gb", gpus: int = 2, tp: int = 2
) -> SyntheticGauges:
    """The simulator's GPU memory for a catalog plan (SimEngine.from_plan's SimGpuMemory)."""
    from benchmarks_app.simserver.catalog import catalog_gpu, catalog_plan
    from benchmarks_app.simserver.engine import SimEngine

    plan = catalog_plan(model=model, gpu=gpu, gpus=gpus, tp=tp)
    memory = SimEngine.from_plan(plan).gpu_memory
    assert memory is not None  # noqa: S101 - from_plan always sets it
    return SyntheticGauges(
        used_mib=memory.used_bytes // MIB,
        total_mib=memory.total_bytes // MIB,
        gpus=memory.gpus_per_replica,
        name=str(getattr(catalog_gpu(gpu), "name", gpu)),
    )


def _iso(epoch_s: float, zone: timezone) -> str:
    return datetime.fromtimestamp(epoch_s, UTC).astimezone(zone).isoformat(timespec="milliseconds")


def synthetic_sentinel_lines(
    *,
    hours: float = 72.0,
    interval_s: float = 10.0,
    climb_mib_per_h: float = 0.0,
    gauges: SyntheticGauges | None = None,
    failure: bool = True,
    breaker: bool = True,
    oom_at_h: float | None = None,
    seed: int = 0,
    host: str = "gpu-sim-01",
    zone_minutes: int = 480,
    start_s: float = START_EPOCH_S,
) -> Iterator[str]:
    """The file's lines (each ending in a newline), in order."""
    gauges = gauges or SyntheticGauges(used_mib=71_900, total_mib=81_559, gpus=2)
    zone = timezone(timedelta(minutes=zone_minutes))
    sign = "+" if zone_minutes >= 0 else "-"
    uuids = [f"GPU-5e171e7a-0000-4000-8000-{host.encode().hex()[:8]}{i:04d}" for i in range(gauges.gpus)]
    duration_s = hours * 3600.0
    header = {
        "type": "header",
        "tool": "memory-sentinel",
        "format": "memory-sentinel/1",
        "version": "1.0.0",
        "host": host,
        "boot_id": f"synthetic-{seed}",
        "gpus": [
            {"index": i, "uuid": u, "name": gauges.name, "memory_total_mib": gauges.total_mib}
            for i, u in enumerate(uuids)
        ],
        "interval_s": interval_s,
        "duration_s": duration_s,
        "zone": f"{sign}{abs(zone_minutes) // 60:02d}:{abs(zone_minutes) % 60:02d}",
        "start": _iso(start_s, zone),
        "start_epoch_s": start_s,
        "metrics_url": "http://127.0.0.1:8000/metrics",
        "engine_logs": ["/var/log/vllm/engine.log"],
        "breaker_logs": ["/var/log/gateway/breaker.log"],
        "breaker_trip_pattern": "breaker (open|tripped)",
        "breaker_recover_pattern": "breaker closed",
        "max_bytes": 48 * MIB,
        "cap_policy": "thin-then-stop",
        "python": "3.11",
        "synthetic": True,
    }

    def dumps(record: dict) -> str:
        return json.dumps(record, separators=(",", ":")) + "\n"

    def stamp(off: float) -> dict:
        return {"t": _iso(start_s + off, zone), "off_s": round(off, 3)}

    def event(off: float, kind: str, source: str, detail: str) -> str:
        return dumps({"type": "event", **stamp(off), "kind": kind, "source": source, "detail": detail})

    yield dumps(header)
    rng = random.Random(seed)  # noqa: S311 - reproducible jitter, not a secret
    down_from = FAILURE_AT_H * 3600 if failure else math.inf
    down_to = down_from + FAILURE_DOWN_S
    above_from = BREAKER_AT_H * 3600 if breaker else math.inf
    above_to = above_from + BREAKER_ABOVE_S
    oom_s = oom_at_h * 3600 if oom_at_h is not None else math.inf
    pids = [4242 + i for i in range(gauges.gpus)]
    state = "up"
    preemptions = 0
    samples = 0
    off = 0.0
    pending: list[tuple[float, str]] = []  # (time, line) of events between samples
    if breaker and above_to < duration_s:
        pending.append(
            (
                above_from + BREAKER_TRIP_AFTER_S,
                event(
                    above_from + BREAKER_TRIP_AFTER_S,
                    "breaker_trip",
                    "breaker_log",
                    "WARN gateway: circuit breaker (open) kv_cache_usage 0.97 > 0.95 for 5s",
                ),
            )
        )
        pending.append(
            (
                above_to + BREAKER_RECOVER_AFTER_S,
                event(
                    above_to + BREAKER_RECOVER_AFTER_S,
                    "breaker_recover",
                    "breaker_log",
                    "INFO gateway: circuit breaker closed",
                ),
            )
        )
    if oom_s < duration_s:
        pending.append(
            (
                oom_s,
                event(
                    oom_s, "oom", "engine_log", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
                ),
            )
        )
    fast_times: list[float] = []
    if breaker and above_to < duration_s:  # the sentinel reads the metrics every second around the episode
        fast_times = [above_from - 3 + k for k in range(int(BREAKER_ABOVE_S) + 40)]

    def kv_at(when: float) -> float:
        if above_from <= when < above_to:
            return 0.97
        hour_of_day = (when / 3600.0 + zone_minutes / 60.0) % 24
        return round(0.5 - 0.25 * math.cos((hour_of_day - 3) / 24 * 2 * math.pi) + rng.uniform(-0.02, 0.02), 4)

    def engine(when: float) -> dict:
        kv = kv_at(when)
        return {
            "up": True,
            "engine": "vllm",
            "kv": kv,
            "running": round(kv * 40),
            "waiting": 0,
            "preemptions": preemptions,
            "process_start": start_s - 600 if when < down_to else down_to - 30,
        }

    while off <= duration_s:
        due = [line for when, line in pending if when <= off]
        pending = [(when, line) for when, line in pending if when > off]
        yield from due
        for fast in [f for f in fast_times if f < off]:
            fast_times.remove(fast)
            if fast > 0 and not any(abs(fast - k * interval_s) < 1e-9 for k in (round(fast / interval_s),)):
                yield dumps({"type": "sample", **stamp(fast), "fast": True, "engine": engine(fast)})
                samples += 1
        if state == "up" and down_from <= off < down_to:
            state = "down"
            yield event(off, "process_exit", "pids", f"the engine's GPU processes {pids} are gone")
            yield event(
                off, "engine_down", "metrics", "the metrics endpoint does not answer: [Errno 111] Connection refused"
            )
        elif state == "down" and off >= down_to:
            state = "up"
            pids = [5151 + i for i in range(gauges.gpus)]
            yield event(off, "process_start", "pids", f"engine GPU processes {pids} started")
            yield event(off, "engine_up", "metrics", "the metrics endpoint answers again")
        if state == "down":
            rows = [[i, 3 + rng.randint(0, 2), gauges.total_mib, 0] for i in range(gauges.gpus)]
            record = {
                "type": "sample",
                **stamp(off),
                "gpus": rows,
                "pids": [],
                "engine": {"up": False, "error": "[Errno 111] Connection refused"},
            }
        else:
            climb = climb_mib_per_h * off / 3600.0
            rows = [
                [
                    i,
                    min(gauges.total_mib, int(gauges.used_mib + climb + rng.randint(-4, 0))),
                    gauges.total_mib,
                    int(30 + 60 * kv_at(off)),
                ]
                for i in range(gauges.gpus)
            ]
            record = {"type": "sample", **stamp(off), "gpus": rows, "pids": pids, "engine": engine(off)}
        yield dumps(record)
        samples += 1
        off += interval_s
    yield from (line for _, line in sorted(pending))
    yield dumps({"type": "end", **stamp(off), "reason": "duration", "samples": samples})


def synthetic_sentinel_text(**options: object) -> str:
    """The whole file as one string (`synthetic_sentinel_lines`'s options)."""
    return "".join(synthetic_sentinel_lines(**options))  # type: ignore[arg-type]
