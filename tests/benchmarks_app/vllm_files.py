"""`vllm bench serve --save-result --save-detailed` files made for these tests (and the speed benchmark): n
requests, a fixed pattern of TTFTs and decode gaps, every `failed_every`-th request an HTTP 400."""

from __future__ import annotations

import json
from typing import Any


def vllm_result(
    n: int,
    *,
    failed_every: int = 0,
    output_tokens: int = 16,
    concurrency: int | None = 4,
    model: str = "meta-llama/Meta-Llama-3.1-8B",
) -> dict[str, Any]:
    """A result of `n` requests: TTFT 30 + (i mod 10) ms, decode gaps 7 ms (every 5th request has one 20 ms
    stall), 512 + (i mod 7) input tokens; failed requests keep their input length with zero timings."""
    ok = [not (failed_every and (i + 1) % failed_every == 0) for i in range(n)]
    ttfts = [(0.030 + (i % 10) / 1000) if good else 0.0 for i, good in enumerate(ok)]
    itls = [
        ([0.007] * (output_tokens - 2) + [0.020 if i % 5 == 0 else 0.007]) if good else [] for i, good in enumerate(ok)
    ]
    latencies = [(t + sum(gaps)) if good else 0.0 for t, gaps, good in zip(ttfts, itls, ok, strict=True)]
    completed = sum(ok)
    duration = max(1.0, sum(latencies) / max(1, concurrency or 1))
    return {
        "date": "20261130-120000",
        "endpoint_type": "openai",
        "backend": "openai",
        "label": None,
        "model_id": model,
        "tokenizer_id": model,
        "num_prompts": n,
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": concurrency,
        "duration": duration,
        "completed": completed,
        "failed": n - completed,
        "total_input_tokens": sum(512 + i % 7 for i in range(n)),
        "total_output_tokens": completed * output_tokens,
        "request_throughput": completed / duration,
        "output_throughput": completed * output_tokens / duration,
        "total_token_throughput": (completed * output_tokens + sum(512 + i % 7 for i in range(n))) / duration,
        "input_lens": [512 + i % 7 for i in range(n)],
        "output_lens": [output_tokens if good else 0 for good in ok],
        "ttfts": ttfts,
        "itls": itls,
        "latencies": latencies,
        "start_times": [1000.0 + i * 0.01 for i in range(n)],
        "generated_texts": ["word " * output_tokens if good else "" for good in ok],
        "errors": ["" if good else "Bad Request" for good in ok],
        "mean_ttft_ms": 1000 * sum(t for t, g in zip(ttfts, ok, strict=True) if g) / max(1, completed),
    }


def vllm_file(n: int, **kwargs: Any) -> bytes:
    return json.dumps(vllm_result(n, **kwargs)).encode()
