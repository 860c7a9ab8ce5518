"""The README's demo load test, on the exact (virtual) clock: the bundled simulator of the demo deployment (Llama 3
8B on one L4, as `make run` starts it), the pulse scenario with the README's inputs (output tokens 32, the form's
512 input tokens, peak concurrency 40, time scale 0.5), its metrics scraped every second as a load test does, and
the verdict the service gives it (the suite's criteria and the memory verdict against the commitment).

On the virtual clock a request costs exactly what the engine's steps cost, so what this test measures is the
deployment's own latency at that load, without a busy machine's jitter: the demo passes with margin there, and the
same run on the real clock (README) passes with more."""

from __future__ import annotations

from benchmarks_app.loadtests.scenarios import judge, scenario_plan
from benchmarks_app.results.formats import llm_sizing
from benchmarks_app.results.loadverdict import load_memory_verdict
from benchmarks_app.results.run import request_tpot_ms
from benchmarks_app.simserver.catalog import catalog_plan
from llm_sizing_loadgen.plan import EndpointSpec, MetricsSpec, RequestSpec
from llm_sizing_loadgen.result import result_document, result_json
from llm_sizing_loadgen.runner import run_points
from llm_sizing_loadgen.workload import fixed_profile
from sizing.estimator.units import GiB
from tests.loadgen.virtual_time import run_virtual
from tests.simserver.inprocess import catalog_engine, inprocess_simulator

MODEL = "meta-llama/Meta-Llama-3-8B"
GPU = "nvidia-l4-24gb"
URL = "http://simulator.test"
DEMO_SLO = {"ttft_ms": 2000.0, "tpot_ms": 150.0}  # the demo deployment's (simulator_register.DEMO_SLO)


def test_the_readme_demo_pulse_passes_with_its_memory_verdict() -> None:
    # given: the README's pulse against the demo's simulator, scraped every second
    plan = scenario_plan(
        "pulse",
        endpoint=EndpointSpec(base_url=URL, model=MODEL),
        peak_concurrency=40,
        scale=0.5,
        requests=RequestSpec(profile=fixed_profile(input_tokens=512, output_tokens=32), fixed=True),
        metrics=MetricsSpec(url=URL + "/metrics", interval_s=1.0, engine="vllm"),
        criteria=DEMO_SLO,
    )
    engine, max_model_len = catalog_engine(model=MODEL, gpu=GPU, speedup=1.0)
    committed = int(catalog_plan(model=MODEL, gpu=GPU).memory.required_bytes_per_gpu)  # what the gauge shows

    async def agent(clock):
        async with inprocess_simulator(engine, model_name=MODEL, max_model_len=max_model_len) as transport:
            return await run_points(plan, transport=transport, clock=clock)

    # when: it runs, and is judged as the service judges it, at the deployment's figure and at the 0.01 GiB the
    # page shows of it
    (outcome,) = run_virtual(agent)
    (run,) = llm_sizing.read(result_json(result_document(outcome)))
    shown = round(round(committed / GiB, 2) * GiB)
    verdicts = {
        name: judge(
            run,
            slo=DEMO_SLO,
            fidelity_valid=True,
            memory=load_memory_verdict(run.timeline, committed_bytes_per_gpu=figure, promised_concurrency=40),
        )
        for name, figure in (("exact", committed), ("shown", shown))
    }

    # then: 20 clients (half of 40); every request within the SLOs, with room under the TPOT limit
    assert plan.load.concurrency == 20
    exact = verdicts["exact"]
    assert exact["verdict"] == "pass", exact["summary"]
    assert exact["figures"]["good"] == exact["figures"]["judged_requests"] > 0
    tpots = [request_tpot_ms(r) for r in run.requests if r.status == "ok"]
    assert max(t for t in tpots if t is not None) < 0.8 * DEMO_SLO["tpot_ms"]
    # the memory verdict: the gauge (whole MiB, floored) against the commitment within its 1 MiB step, both ways
    for verdict in verdicts.values():
        memory = verdict["memory"]
        assert memory["verdict"] == "pass"
        assert memory["unverified"] == []
        assert memory["figures"]["gpu_peak_bytes"] == committed // 2**20 * 2**20
        assert memory["figures"]["tolerance_bytes"] == 2**20
        assert verdict["figures"]["gpu_peak_bytes"] == memory["figures"]["gpu_peak_bytes"]
