"""Remedies that tell one story with the estimate: the context fix first when the context is above the model's
limit, physically possible memory figures, the smallest combination of changes that fits with its exact flags,
and what binds when nothing fits.

The vLLM figures change with the engine's release rules, so these tests assert relations between the remedies and
re-estimates of what they propose, not the numbers themselves (those are pinned in test_vllm_budget.py)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from sizing.estimator import solvers
from sizing.estimator.architecture import architecture_from_config
from sizing.estimator.engines import Engine
from sizing.estimator.hardware import GpuSpec
from sizing.estimator.memory import EstimateRequest, estimate_memory
from sizing.estimator.solvers import (
    MAX_GPUS,
    Remedy,
    _rope_scaled,
    _total_fit,
    binding_limits,
    fewest_gpus,
    remedies,
)
from sizing.estimator.units import GB
from tests.sizing.estimator.builders import LLAMA3_70B_CONFIG, build_arch

H100 = GpuSpec(slug="h100-test", name="H100 SXM 80GB", memory_bytes=81_559 * 2**20)
LLAMA3_70B = architecture_from_config(LLAMA3_70B_CONFIG)  # trained on 8192 tokens (max_position_embeddings)


def _issue_request(**overrides: object) -> EstimateRequest:
    """Issue 18's first try: Meta-Llama-3-70B on 2 x H100 (TP 2), vLLM, a 32k context, 64 requests."""
    values: dict[str, object] = {
        "arch": LLAMA3_70B,
        "gpu": H100,
        "gpus": 2,
        "tp": 2,
        "max_model_len": 32768,
        "concurrency": 64,
    }
    values.update(overrides)
    return EstimateRequest(**values)  # type: ignore[arg-type]


def _applied(request: EstimateRequest, remedy: Remedy) -> EstimateRequest:
    """The request with a remedy's settings, as the page applies them (a RoPE override changes the model)."""
    settings = dict(remedy.settings)
    scaling = settings.pop("rope_scaling", None)
    changed = replace(request, **settings)  # type: ignore[arg-type]
    if scaling is not None:
        limit = scaling["original_max_position_embeddings"]
        changed = replace(changed, arch=_rope_scaled(request.arch, length=int(limit * scaling["factor"])))
    return changed


def test_the_context_fix_comes_first_when_the_context_is_above_the_models_limit():
    # given 32,768 tokens asked of a model trained on 8,192
    request = _issue_request()

    # when
    found = remedies(request)

    # then the first remedy is the model's limit with its exact flag, the second a YaRN RoPE override of factor
    # ceil(32768 / 8192) = 4 that keeps the asked context, with the quality caveat
    limit, rope = found[0], found[1]
    assert (limit.key, limit.kind, limit.flag, limit.settings) == (
        "context_limit",
        "context",
        "--max-model-len 8192",
        {"max_model_len": 8192},
    )
    assert limit.tokens_per_request == 8192
    scaling = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}
    assert (rope.key, rope.kind, rope.settings) == ("rope_yarn", "context", {"rope_scaling": scaling})
    assert rope.flag == f"--hf-overrides '{json.dumps({'rope_scaling': scaling})}' --max-model-len 32768"
    assert rope.tokens_per_request == 32768
    assert rope.note is not None
    assert "8192 tokens" in rope.note
    # nothing else is offered alone: without a context fix no change fits
    assert all(r.kind in ("context", "combination", "binds") for r in found)


def test_when_no_single_change_fits_the_smallest_combination_carries_the_exact_flags():
    # given the issue's request, where neither context fix alone fits on its 2 GPUs
    request = _issue_request()
    assert not any(r.fits for r in remedies(request) if r.kind == "context")

    # when
    combinations = [r for r in remedies(request) if r.kind == "combination"]

    # then combinations fit, each holds a context fix, and its flag is its changes' flags joined
    assert combinations
    assert all(r.fits for r in combinations)
    assert all({"context_limit", "rope_yarn", "max_model_len"} & set(r.changes) for r in combinations)
    for remedy in combinations:
        assert remedy.key == "+".join(remedy.changes)
        assert 2 <= len(remedy.changes) <= 3
        assert remedy.flag is not None
        assert remedy.flag.startswith("--max-model-len 8192") or remedy.flag.startswith("--hf-overrides")
        # re-estimated with its settings, it fits on the GPUs it says and holds what it says
        after = estimate_memory(_applied(request, remedy))
        assert after.fits
        assert (after.gpus, _total_fit(after)) == (remedy.gpus, remedy.max_concurrency_after)
        assert remedy.max_concurrency_after >= request.concurrency
    # smallest first: fewest GPUs, then fewest changes; the asked 32k context is kept by one of them
    assert [(r.gpus, len(r.changes)) for r in combinations[:3]] == sorted(
        (r.gpus, len(r.changes)) for r in combinations[:3]
    )
    assert any("rope_yarn" in r.changes for r in combinations)
    # none holds a smaller fitting combination
    for remedy in combinations:
        assert not any(set(other.changes) < set(remedy.changes) for other in combinations)


def test_a_combination_is_offered_where_it_fits_on_fewer_gpus_than_any_single_change():
    # given the model's own context: 64 requests of 8,192 tokens on 2 x H100 (TP 2)
    request = _issue_request(max_model_len=8192)

    # when
    found = remedies(request)

    # then what fits comes first, fewest GPUs first, and a combination only where no single change fits on as few
    fits = [r.fits for r in found]
    assert fits == sorted(fits, reverse=True)
    fitting = [r for r in found if r.fits]
    assert [r.gpus for r in fitting] == sorted(r.gpus for r in fitting)
    singles = [r for r in fitting if r.kind == "change"]
    assert any(r.kind == "combination" for r in fitting)
    for combination in (r for r in fitting if r.kind == "combination"):
        assert all(single.gpus > combination.gpus for single in singles)
    # TP x 4 within a node: TP 8 at most, and the TP flag names the new size
    for remedy in found:
        if "tp_quadruple" in remedy.changes:
            assert "--tensor-parallel-size 8" in (remedy.flag or "")
        assert remedy.gpus <= MAX_GPUS


@pytest.mark.parametrize(
    "request_",
    [
        _issue_request(),
        _issue_request(max_model_len=8192),
        _issue_request(max_model_len=8192, gpus=4, tp=4),
        _issue_request(max_model_len=8192, gpus=1, tp=1, weights="int4", concurrency=8),
        _issue_request(max_model_len=8192, engine=Engine.IDEALIZED),
        _issue_request(max_model_len=8192, engine=Engine.SGLANG),
        _issue_request(max_model_len=8192, engine=Engine.TGI),
    ],
    ids=["issue", "8k", "tp4", "int4-one-gpu", "idealized", "sglang", "tgi"],
)
def test_memory_a_remedy_frees_is_memory_a_card_can_have(request_):
    # given a deployment that does not fit
    before = estimate_memory(request_)

    # when
    found = remedies(request_)

    # then each remedy's KV room is between nothing and the card, and what it frees is the change in that room
    assert found
    for remedy in found:
        assert 0 <= remedy.kv_room_bytes_before <= before.capacity_bytes_per_gpu
        assert 0 <= remedy.kv_room_bytes_after <= request_.gpu.memory_bytes
        assert remedy.freed_bytes_per_gpu == remedy.kv_room_bytes_after - remedy.kv_room_bytes_before
        assert abs(remedy.freed_bytes_per_gpu) <= request_.gpu.memory_bytes
        assert f"of the {request_.concurrency} requests" in remedy.description or remedy.kind == "binds"


def test_the_remedies_search_is_bounded_for_a_70b_model(monkeypatch):
    # given the issue's request (singles, then two- and three-change combinations), counting the estimates
    request = _issue_request()
    calls = []
    real = solvers.estimate_memory
    monkeypatch.setattr(solvers, "estimate_memory", lambda r: calls.append(r) or real(r))

    # when
    remedies(request)
    remedies(replace(request, max_model_len=8192))

    # then the search stays small (at most 200 estimates, each well under a millisecond: its speed is
    # measured in tests/benchmarks/, not asserted here)
    assert 0 < len(calls) <= 200, len(calls)  # 97 today


def test_flags_follow_the_engine_and_its_release():
    # given the issue's request on SGLang, and on vLLM 0.6.4 (before --hf-overrides)
    sglang = remedies(_issue_request(engine=Engine.SGLANG))
    old_vllm = remedies(_issue_request(engine_version="0.6.4"))

    # then SGLang's context flag is --context-length and its override flag --json-model-override-args;
    # vLLM 0.6.4 takes the RoPE override as --rope-scaling
    assert sglang[0].flag == "--context-length 8192"
    assert (sglang[1].flag or "").startswith('--json-model-override-args \'{"rope_scaling": ')
    assert (old_vllm[1].flag or "").startswith('--rope-scaling \'{"rope_type": "yarn", "factor": 4.0')


def test_when_nothing_fits_the_last_entry_says_what_binds():
    # given Llama-3-8B for a million requests of 8,192 tokens: no layout of up to 64 GPUs holds that KV cache
    request = EstimateRequest(arch=build_arch(), gpu=H100, max_model_len=8192, concurrency=1_000_000)

    # when
    found = remedies(request)

    # then nothing fits and the last entry names the binds with their numbers
    assert not any(r.fits for r in found)
    last = found[-1]
    assert (last.key, last.kind, last.settings, last.fits) == ("nothing_fits", "binds", {}, False)
    codes = [bind.code for bind in last.binds]
    assert codes == ["kv_short", "kv_exceeds_every_layout"]
    short, extent = last.binds
    assert short.extra["fit"] == _total_fit(estimate_memory(request)) < 1_000_000
    assert extent.extra["max_gpus"] == MAX_GPUS
    assert short.extra["fit"] < extent.extra["fit"] < 1_000_000
    assert extent.extra["changes"]  # measured with the most compact formats
    assert last.description == "; ".join(bind.message for bind in last.binds)


def test_what_binds_names_the_weights_when_no_card_holds_them():
    # given Llama-3-70B on cards of 1 GB: even INT4 weights over 64 GPUs leave no KV cache
    tiny = GpuSpec(slug="tiny", name="1 GB", memory_bytes=1 * GB)
    request = _issue_request(gpu=tiny, max_model_len=8192, concurrency=1)

    # when
    binds = binding_limits(request)

    # then at this layout the static memory exceeds the budget, and no layout of up to 64 GPUs holds the weights
    assert [bind.code for bind in binds] == ["static_exceeds_budget", "weights_exceed_cards"]
    static = binds[0].extra
    assert static["static_bytes"] >= static["budget_bytes"]
    assert static["weights_bytes"] <= static["static_bytes"]


def test_what_binds_starts_with_the_context_and_finds_the_gpus_a_layout_needs():
    # given the issue's request
    request = _issue_request()

    # when
    binds = binding_limits(request)

    # then the context comes first; further out, some layout fits with the compact formats
    assert binds[0].code == "context_above_model_limit"
    assert binds[0].extra == {"max_model_len": 32768, "max_position_embeddings": 8192, "rope_factor": 4}
    extent = binds[-1]
    assert extent.code == "needs_more_gpus"
    gpus, tp, pp = extent.extra["gpus"], extent.extra["tp"], extent.extra["pp"]
    assert gpus % (tp * pp) == 0
    assert tp <= 8


def test_fewest_gpus_says_the_context_binds_instead_of_searching_64_gpus():
    # given the issue's request, and the same at the model's own context
    over = fewest_gpus(_issue_request())
    within = fewest_gpus(_issue_request(max_model_len=8192, concurrency=16))

    # then above the limit no number of GPUs fits and the answer names the fix
    assert (over.value, over.estimate) == (0, None)
    assert "8192" in over.stops_because
    assert "RoPE scaling" in over.stops_because
    # and within it the solver still answers with a layout that fits
    assert within.value > 0
    assert within.estimate is not None
    assert within.estimate["fits"] is True
