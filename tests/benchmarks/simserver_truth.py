"""Truth of the simulator server at a larger size (not collected by pytest): a plain httpx streaming client measures
TTFT and inter-token latency percentiles against `python -m benchmarks_app.simserver` (in its own process), and the
offline simulator (`sizing.estimator.simulator`) predicts them for the same requests at the times they were actually
sent. Target: every p50/p90/p99 within 10% (scenarios marked "report" are printed, not judged: see their notes).

Scenarios (Llama-3-8B, vLLM defaults, prompts N(mean, mean/2), outputs N(mean, 3·mean/8)):
  l4-short      one L4, speedup 5, open loop (Poisson) at 2 requests/s, 120 requests of 1024 → 32 tokens (seed 1):
                the workload tests/simserver/test_truth.py checks exactly on a virtual clock; here in real time,
                over a socket, ≈ 13 s (the suite asserted it within 10% until the machine's load made it flaky)
  l4-open       one L4, speedup 4, open loop (Poisson) at 2 requests/s, 400 requests of 1024 → 32 tokens
  l4-closed     one L4, speedup 1.5, closed loop of 16 clients, 240 requests of 1024 → 32 tokens (a closed loop
                sends right when steps end, when client and server are busiest: its HTTP delays weigh more)
  h100-open     one H100 in slow motion (speedup 0.25), open loop at 20 requests/s, 300 requests of 512 → 64
                tokens (its TTFTs are ~25 ms: in real time the HTTP stack's 2-5 ms would be 10-20% of them)
  2xl4-open     two L4 replicas, speedup 4, open loop at 4 requests/s, 400 requests of 1024 → 32 tokens
  l4-kv         report: one L4, speedup 4, open loop at 4 requests/s, 300 requests of 512 → 128 tokens: the KV
                cache fills and requests are preempted. The engine follows the rule "no admission in the step that
                preempted" (vLLM V1); the offline simulator's bulk decode path holds admission until the next
                completion after a preemption, and accounts KV by half a block per request rather than whole
                blocks, so the two disagree here; the engine's own rules in virtual time (`replay`) are printed
                beside them to show the difference is the simulator's, not the server's.

    .venv/bin/python tests/benchmarks/simserver_truth.py [--scenario NAME ...] [--seed N]

Exit status 1 when a judged scenario misses the target; the figures are printed either way.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks_app.simserver import truth  # noqa: E402
from benchmarks_app.simserver.catalog import catalog_plan  # noqa: E402
from benchmarks_app.simserver.engine import replay  # noqa: E402

MODEL = "meta-llama/Meta-Llama-3-8B"
TOLERANCE = 0.10


@dataclass(frozen=True)
class Scenario:
    name: str
    gpu: str
    gpus: int
    speedup: float
    requests: int
    input_mean: int
    output_mean: int
    rate: float | None = None  # open loop
    concurrency: int | None = None  # closed loop
    judged: bool = True


SCENARIOS = (
    Scenario("l4-short", "nvidia-l4-24gb", 1, 5.0, 120, 1024, 32, rate=2.0),
    Scenario("l4-open", "nvidia-l4-24gb", 1, 4.0, 400, 1024, 32, rate=2.0),
    Scenario("l4-closed", "nvidia-l4-24gb", 1, 1.5, 240, 1024, 32, concurrency=16),
    Scenario("h100-open", "nvidia-h100-sxm-80gb", 1, 0.25, 300, 512, 64, rate=20.0),
    Scenario("2xl4-open", "nvidia-l4-24gb", 2, 4.0, 400, 1024, 32, rate=4.0),
    Scenario("l4-kv", "nvidia-l4-24gb", 1, 4.0, 300, 512, 128, rate=4.0, judged=False),
)


def run(scenario: Scenario, seed: int) -> bool:
    plan = catalog_plan(model=MODEL, gpu=scenario.gpu, gpus=scenario.gpus)
    sample = truth.truth_sample(
        rate_per_s=scenario.rate or 1.0,
        requests=scenario.requests,
        seed=seed,
        input_mean=scenario.input_mean,
        input_std=scenario.input_mean // 2,
        output_mean=scenario.output_mean,
        output_std=scenario.output_mean * 3 // 8,
    )
    load = (
        f"open loop at {scenario.rate} requests/s"
        if scenario.rate is not None
        else f"closed loop of {scenario.concurrency} clients"
    )
    print(
        f"\n== {scenario.name}: {scenario.gpus} x {scenario.gpu}, speedup {scenario.speedup:g}, {load}, "
        f"{scenario.requests} requests of {scenario.input_mean} → {scenario.output_mean} tokens"
    )
    arguments = [
        "--model",
        MODEL,
        "--gpu",
        scenario.gpu,
        "--gpus",
        str(scenario.gpus),
        "--speedup",
        str(scenario.speedup),
    ]
    if scenario.gpus > 1:
        arguments += ["--routing", "round_robin"]  # the offline simulator deals request i to replica i mod R
    with truth.server_process(arguments) as url:
        started = time.perf_counter()
        measured = asyncio.run(
            truth.measure(url, MODEL, sample, speedup=scenario.speedup, concurrency=scenario.concurrency)
        )
        state = httpx.get(url + "/control", timeout=10).json()
        elapsed = time.perf_counter() - started
    sent = measured.sample(sample)
    predicted = truth.predict(plan, sent)
    table = truth.comparison(measured, predicted)
    late = sum(r["late_steps"] for r in state["replicas"])
    lateness = max(r["max_lateness_s"] for r in state["replicas"]) * 1000
    served_preemptions = sum(r["preemptions"] for r in state["replicas"])
    lag = measured.send_lag_s[~np.isnan(measured.send_lag_s)] * 1000
    print(
        f"wall {elapsed:.1f} s; errors {measured.errors}, usage mismatches {measured.tokens_short}; client send "
        f"lag p50 {np.percentile(lag, 50):.3f} ms, p99 {np.percentile(lag, 99):.3f} ms; server late steps "
        f"{late}, max lateness {lateness:.2f} ms"
    )
    print(
        f"predicted: {predicted.max_running} in flight at most, KV peak {predicted.kv_peak_fraction:.0%}, "
        f"{predicted.preempted} preemptions (the server: {served_preemptions}); TTFT n={predicted.ttft.n}, "
        f"ITL n={predicted.itl.n}"
    )
    print(truth.comparison_table(table))
    if not scenario.judged:
        rules = replay(
            plan.model,
            plan.config,
            arrival_s=sent.arrival_s,
            prompt_tokens=sent.input_tokens,
            output_tokens=sent.output_tokens,
        )
        ttft = truth.ttft_percentiles_ms(np.array(rules.first_s) - sent.arrival_s)
        itl = truth.itl_percentiles_ms(np.array(rules.gaps_s))
        mine = truth.ttft_percentiles_ms(measured.ttft_s)
        print(
            f"the engine's rules in virtual time (replay): {rules.preemptions} preemptions; TTFT "
            + ", ".join(f"p{q} {ttft[q]:.0f} ms (measured {mine[q] / ttft[q] - 1:+.1%})" for q in ttft)
            + "; ITL "
            + ", ".join(f"p{q} {itl[q]:.1f} ms" for q in itl)
        )
        print("report only: not judged")
        return True
    worst = max(abs(diff) for rows in table.values() for _, _, diff in rows.values())
    ok = worst <= TOLERANCE and measured.errors == 0
    print(f"worst difference {worst:.1%}: {'PASS' if ok else 'FAIL'} (target ≤ {TOLERANCE:.0%})")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", choices=[s.name for s in SCENARIOS])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    chosen = [s for s in SCENARIOS if not args.scenario or s.name in args.scenario]
    results = {scenario.name: run(scenario, args.seed) for scenario in chosen}
    print("\n" + ", ".join(f"{name}: {'ok' if ok else 'MISSED'}" for name, ok in results.items()))
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
