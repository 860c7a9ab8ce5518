"""The load generator: streamed OpenAI-compatible requests, timed by METRICS.md, in closed or open loops.

No Django here, nor anything that imports it: the package runs inside a customer's network as
`python -m benchmarks_app.loadgen run plan.json --out result.json` (see `wheel.py` for the Django-free wheel).
Its only dependencies are httpx, numpy and the pure workload module `sizing.estimator.workload`.

- `plan`: the test plan (JSON, schema in `docs/loadgen-plan.schema.json`) and its validation;
- `prompts`: deterministic synthetic prompts of about N tokens;
- `client`: one request, its timings (`t_send`, `t_hdr`, `t_c1..t_cC`, `t_end`) and status;
- `runner`: closed and open loops, ramp-up, bounds, cancellation, progress and client fidelity;
- `result`: the result document (`docs/loadgen-result.md`), which `sizing.benchmarks.formats.llm_sizing` imports.
"""

from __future__ import annotations

TOOL_NAME = "llm-sizing-loadgen"
__version__ = "0.1.0"
