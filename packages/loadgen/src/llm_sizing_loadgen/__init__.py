"""The load generator: streamed OpenAI-compatible requests, timed by METRICS.md, in closed or open loops.

Its own distribution, `llm-sizing-loadgen` (packages/loadgen/pyproject.toml, built by hatchling: `make
loadgen-wheel`), with no Django and no server code: it runs inside a customer's network as
`python -m llm_sizing_loadgen run plan.json --out result.json` (or the `llm-sizing-loadgen` command). Its only
dependencies are httpx, numpy and pydantic. The service's side of load tests (scenario plans from a deployment,
verdicts, merging shards) is `benchmarks_app.loadtests`.

- `workload`: the workload profile (length distributions, request classes, arrivals) and its sampling;
- `errors`: the coded error the workload raises (`SizingError`, which the estimator names too);
- `plan`: the test plan (JSON, schema in `docs/loadgen-plan.schema.json`) and its validation;
- `prompts`: deterministic synthetic prompts of about N tokens;
- `client`: one request, its timings (`t_send`, `t_hdr`, `t_c1..t_cC`, `t_end`) and status;
- `runner`: closed and open loops, ramp-up, bounds, cancellation, progress and client fidelity;
- `result`: the result document (`docs/loadgen-result.md`), which the service's importer of the `llm_sizing` format
  reads;
- `schemas`: the plan and result documents as pydantic models (`PlanDocument`, `ResultDocument`: the result's one
  definition, which `result` validates with) and the JSON Schemas in `docs/` written from them.
"""

from __future__ import annotations

TOOL_NAME = "llm-sizing-loadgen"
__version__ = "0.1.0"
