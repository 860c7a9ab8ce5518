"""API: solvers, remedies, checkpoint facts and boot-log comparison."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from sizing.models import LlmModel

QUICK = "/api/v1/estimates/quick"
SOLVE = "/api/v1/estimates/solve"
BOOTLOG = "/api/v1/bootlogs/compare"
CHECKPOINT = "/api/v1/models/checkpoint"

# vLLM PR #10511 (Dec 2024): `vllm serve meta-llama/Meta-Llama-3-8B` on an H100 80GB
VLLM_PROFILE_LOG = """$ vllm serve meta-llama/Meta-Llama-3-8B
INFO 12-13 19:54:18 worker.py:243] Memory profiling results:
INFO 12-13 19:54:18 worker.py:243] duration     0.75 seconds
INFO 12-13 19:54:18 worker.py:243] total_gpu_memory     79.22GiB
INFO 12-13 19:54:18 worker.py:243] gpu_memory_utilization       0.90
INFO 12-13 19:54:18 worker.py:243] the current vLLM instance can use    71.29GiB
INFO 12-13 19:54:18 worker.py:243] model weights take   14.96GiB
INFO 12-13 19:54:18 worker.py:243] non_torch_memory     1.79GiB
INFO 12-13 19:54:18 worker.py:243] PyTorch activation peak memory       1.26GiB
INFO 12-13 19:54:18 worker.py:243] available_kv_cache_memory    53.29GiB
"""


def test_quick_estimate_that_does_not_fit_lists_ranked_remedies(catalog, api_client):
    # given Llama-3.1-70B on 4 x H100 at TP 4 with 64 requests of 8192 tokens: the KV pool holds 53 of them
    # (on 2 x H100 vLLM's sampler leaves a 464-token pool, which an FP8 KV cache doubles to no whole request)
    payload = {
        "model": "meta-llama/Meta-Llama-3.1-70B",
        "gpu": "nvidia-h100-sxm-80gb",
        "gpus": 4,
        "max_model_len": 8192,
        "concurrency": 64,
        "tokens_per_request": 8192,
    }
    # when
    body = api_client.post(QUICK, payload, format="json").json()
    # then
    assert body["fits"] is False
    keys = [remedy["key"] for remedy in body["remedies"]]
    assert {"kv_fp8", "tp_double", "weights_fp8"} <= set(keys)
    kv_fp8 = next(r for r in body["remedies"] if r["key"] == "kv_fp8")
    assert kv_fp8["flag"] == "--kv-cache-dtype fp8"
    assert kv_fp8["max_concurrency_after"] > kv_fp8["max_concurrency_before"]
    # FP8 halves the KV cache per token and leaves the memory for it as it was: it frees none, and says so
    assert kv_fp8["freed_bytes_per_gpu"] == 0
    assert kv_fp8["kv_room_bytes_after"] == kv_fp8["kv_room_bytes_before"] == body["kv_cache_bytes_per_gpu"]
    assert "KV cache per token per GPU" in kv_fp8["description"]
    # doubling TP frees memory for the KV cache on each GPU, never more than a card holds
    tp_double = next(r for r in body["remedies"] if r["key"] == "tp_double")
    assert 0 < tp_double["freed_bytes_per_gpu"] <= body["capacity_bytes_per_gpu"]
    assert "frees" in tp_double["description"]
    # remedies that fit come first
    fits = [r["fits"] for r in body["remedies"]]
    assert fits == sorted(fits, reverse=True)


def test_quick_estimate_that_fits_has_no_remedies(catalog, api_client):
    body = api_client.post(
        QUICK,
        {"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-h100-sxm-80gb", "max_model_len": 8192},
        format="json",
    ).json()
    assert body["fits"] is True
    assert body["remedies"] == []
    assert body["figure_sources"]["weights"] == "estimated"


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm", "tgi", "transformers", "idealized"])
def test_every_engine_answers_with_its_launch_command(catalog, api_client, engine):
    body = api_client.post(
        QUICK,
        {"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-h100-sxm-80gb", "max_model_len": 8192, "engine": engine},
        format="json",
    ).json()
    assert body["engine"] == engine
    assert body["allocation"] in ("preallocated", "static", "on_demand")
    # the tensors 8,030,261,248 parameters × 2 bytes = 16,060,522,496; vLLM and SGLang also load the rotary
    # cos/sin cache on the GPU: 8192 positions × 128 × 2 bytes = 2,097,152 → 16,062,619,648
    assert body["weight_bytes_per_gpu"] == 16_060_522_496
    expected_weights = 16_062_619_648 if engine in ("vllm", "sglang") else 16_060_522_496
    assert body["memory_per_gpu"]["weights"] == expected_weights


def test_solve_fewest_gpus(catalog, api_client):
    # given Llama-3.1-70B in BF16 (141 GB of weights) for 16 requests of 8192 tokens on H100s
    payload = {
        "model": "meta-llama/Meta-Llama-3.1-70B",
        "gpu": "nvidia-h100-sxm-80gb",
        "max_model_len": 8192,
        "concurrency": 16,
        "tokens_per_request": 8192,
        "target": "fewest_gpus",
    }
    # when
    body = api_client.post(SOLVE, payload, format="json").json()
    # then: 2 GPUs hold the weights but leave ~4 GB of KV each; 3 is the first count that fits
    assert body["target"] == "fewest_gpus"
    assert body["value"] == 3
    assert body["estimate"]["fits"] is True
    assert "smallest layout" in body["stops_because"]


def test_solve_largest_concurrency_says_what_runs_out(catalog, api_client):
    payload = {
        "model": "meta-llama/Meta-Llama-3-8B",
        "gpu": "nvidia-h100-sxm-80gb",
        "max_model_len": 8192,
        "tokens_per_request": 8192,
        "target": "largest_concurrency",
    }
    body = api_client.post(SOLVE, payload, format="json").json()
    quick = api_client.post(
        QUICK, {key: value for key, value in payload.items() if key != "target"}, format="json"
    ).json()
    # the solved concurrency is what the estimate's own KV cache holds (its tokens / 8,192 per request: every
    # layer is full attention and 8,192 is a whole number of 16-token blocks); the next request does not fit
    # (the vLLM figures themselves are pinned in tests/sizing/estimator/test_vllm_budget.py)
    assert body["value"] == quick["kv_capacity_tokens"] // 8192 > 0
    assert "KV tokens" in body["stops_because"]


def test_solve_rejects_an_unknown_target(catalog, api_client):
    response = api_client.post(
        SOLVE,
        {"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-h100-sxm-80gb", "target": "cheapest"},
        format="json",
    )
    assert response.status_code == 400
    assert "target" in response.json()["extra"]["fields"]


def test_checkpoint_index_shows_actual_beside_computed(catalog, api_client, organisation):
    # given Llama-2-7B's published index: total_size 13,476,839,424 bytes
    index = {
        "metadata": {"total_size": 13476839424},
        "weight_map": {
            "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
            "lm_head.weight": "model-00002-of-00002.safetensors",
        },
    }
    upload = SimpleUploadedFile("model.safetensors.index.json", json.dumps(index).encode())
    # when
    response = api_client.post(CHECKPOINT, {"model": "meta-llama/Llama-2-7b-hf", "index": upload}, format="multipart")
    body = api_client.post(
        QUICK, {"model": "meta-llama/Llama-2-7b-hf", "gpu": "nvidia-a100-sxm-80gb"}, format="json"
    ).json()
    # then: the organisation got its own copy with the facts; 2 x 6,738,415,616 = 13,476,831,232 computed
    assert response.status_code == 200, response.content
    assert LlmModel.objects.get(slug="meta-llama/Llama-2-7b-hf", organisation=organisation).checkpoint
    assert body["checkpoint"]["weights"]["actual_bytes"] == 13_476_839_424
    assert body["checkpoint"]["weights"]["computed_bytes"] == 13_476_831_232
    assert body["checkpoint"]["weights"]["difference_bytes"] == 8192


def test_checkpoint_malformed_index_is_a_400_and_saves_nothing(catalog, api_client):
    upload = SimpleUploadedFile("model.safetensors.index.json", b'{"metadata": {"total_size": "many"}}')
    response = api_client.post(CHECKPOINT, {"model": "meta-llama/Llama-2-7b-hf", "index": upload}, format="multipart")
    assert response.status_code == 400
    assert "index" in response.json()["extra"]["fields"]
    assert not LlmModel.objects.filter(organisation__isnull=False).exists()


def test_bootlog_compare_reads_the_log_and_calibrates(catalog, api_client):
    # when: the log names its model; the GPU is the H100 it ran on
    response = api_client.post(BOOTLOG, {"text": VLLM_PROFILE_LOG, "gpu": "nvidia-h100-sxm-80gb"}, format="json")
    # then
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["log"]["model"] == "meta-llama/Meta-Llama-3-8B"
    lines = {line["figure"]: line for line in body["comparison"]}
    # 14.96 GiB logged ("model weights take" counts the rotary cache) vs the weights line 16,060,522,496
    # + 8192 × 128 × 2 = 2,097,152 → 16,062,619,648 bytes (14.959 GiB) estimated
    assert lines["weights_bytes"]["logged_bytes_or_value"] == round(14.96 * 2**30)
    assert lines["weights_bytes"]["estimated"] == 16_062_619_648
    # calibration takes the measured runtime terms and the total memory vLLM saw (79.22 GiB: CUDA's own total)
    calibration = body["calibration"]
    assert calibration["runtime_reserve_bytes"] == round(1.79 * 2**30)
    assert calibration["activation_peak_bytes"] == round(1.26 * 2**30)
    assert calibration["gpu_cuda_total_bytes"] == round(79.22 * 2**30)
    calibrated = body["calibrated_estimate"]
    assert calibrated["figure_sources"]["runtime"] == "calibrated"
    assert calibrated["figure_sources"]["capacity"] == "measured"
    # budget floor(85,061,827,297 x 0.9) = 76,555,644,567 − 16,062,619,648 − 1,352,914,698 − 1,921,997,864
    # = 57,218,112,357 bytes of KV = 53.29 GiB, as logged (to its two decimals)
    assert abs(calibrated["memory_per_gpu"]["kv_cache"] - round(53.29 * 2**30)) < 0.01 * 2**30


def test_bootlog_that_is_not_a_log_is_a_400(catalog, api_client):
    response = api_client.post(
        BOOTLOG,
        {"text": "hello world", "gpu": "nvidia-h100-sxm-80gb", "model": "meta-llama/Meta-Llama-3-8B"},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_argument"
