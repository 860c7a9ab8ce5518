"""API: speculative-decoding drafts, shared prefixes, expert parallelism, and saved estimates with a draft."""

from __future__ import annotations

import pytest

from sizing.models import Estimate, Gpu, LlmModel
from sizing.services.estimates import estimate_compute

QUICK = "/api/v1/estimates/quick"


def test_a_draft_model_adds_its_weights_and_kv_to_the_bill(catalog, api_client):
    # given Llama-3.1-70B on 4 x H100 with Llama-3.2-1B drafting 4 tokens
    payload = {
        "model": "meta-llama/Meta-Llama-3.1-70B",
        "gpu": "nvidia-h100-sxm-80gb",
        "gpus": 4,
        "max_model_len": 8192,
    }
    # when
    alone = api_client.post(QUICK, payload, format="json").json()
    drafted = api_client.post(
        QUICK, {**payload, "draft_model": "meta-llama/Llama-3.2-1B", "num_speculative_tokens": 4}, format="json"
    ).json()
    # then: the draft's KV per token on each GPU is 16 layers × 2 KV heads (8 over TP 4) × 64 × 2 × 2 = 8,192
    assert drafted["kv_bytes_per_token_per_gpu"] - alone["kv_bytes_per_token_per_gpu"] == 8192
    assert drafted["draft_weight_bytes_per_gpu"] > 0
    assert drafted["kv_capacity_tokens"] < alone["kv_capacity_tokens"]
    assert any(arg.startswith("--speculative-config") for arg in drafted["launch_args"])


def test_an_unknown_draft_model_is_a_field_error(catalog, api_client):
    response = api_client.post(
        QUICK,
        {"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-h100-sxm-80gb", "draft_model": "no/such-draft"},
        format="json",
    )
    assert response.status_code == 400
    assert "draft_model" in response.json()["extra"]["fields"]


def test_a_shared_prefix_lets_more_requests_fit(catalog, api_client):
    payload = {
        "model": "meta-llama/Meta-Llama-3-8B",
        "gpu": "nvidia-h100-sxm-80gb",
        "max_model_len": 8192,
        "tokens_per_request": 8192,
        "concurrency": 100,
    }
    alone = api_client.post(QUICK, payload, format="json").json()
    shared = api_client.post(QUICK, {**payload, "shared_prefix_tokens": 4096}, format="json").json()
    assert alone["fits"] is False
    assert shared["fits"] is True
    # 51 requests of 512 own blocks before; with 256 shared blocks each request holds 256 of its own
    before = alone["concurrency_curve"]["max_concurrency_fit"]
    assert shared["concurrency_curve"]["max_concurrency_fit"] >= 2 * before - 1


def test_parallel_samples_without_output_tokens_is_a_field_error(catalog, api_client):
    response = api_client.post(
        QUICK,
        {"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-h100-sxm-80gb", "parallel_samples": 4},
        format="json",
    )
    assert response.status_code == 400
    assert "output_tokens" in response.json()["extra"]["fields"]


def test_expert_parallel_with_dp_attention_on_deepseek(catalog, api_client):
    payload = {
        "model": "deepseek-ai/DeepSeek-V3",
        "gpu": "nvidia-h200-sxm-141gb",
        "gpus": 8,
        "tp": 1,
        "dp": 8,
        "expert_parallel": True,
        "max_model_len": 32768,
        "tokens_per_request": 8192,
        "concurrency": 64,
    }
    body = api_client.post(QUICK, payload, format="json").json()
    assert (body["tp"], body["dp"], body["ep"]) == (1, 8, 8)
    assert "--enable-expert-parallel" in body["launch_args"]


@pytest.mark.django_db
def test_a_saved_estimate_resolves_its_draft_model(catalog, organisation, user):
    # given an estimate saved with a draft model slug in its inputs (as the API stores it)
    estimate = Estimate.objects.create(
        organisation=organisation,
        requested_by=user,
        model=LlmModel.objects.get(slug="meta-llama/Meta-Llama-3.1-70B", organisation=None),
        gpu=Gpu.objects.get(slug="nvidia-h100-sxm-80gb"),
        inputs={"gpus": 4, "max_model_len": 8192, "draft_model": "meta-llama/Llama-3.2-1B"},
    )
    # when
    done = estimate_compute(estimate_id=estimate.pk)
    # then
    assert done.status == Estimate.Status.DONE
    assert done.result["draft_weight_bytes_per_gpu"] > 0


def test_two_vllm_instances_share_a_card(catalog, api_client):
    # given two Llama-3-8B instances at 0.45 of an H100 each
    deployment = {"model": "meta-llama/Meta-Llama-3-8B", "gpu_memory_utilization": 0.45, "max_model_len": 8192}
    # when
    body = api_client.post(
        "/api/v1/estimates/colocated",
        {"gpu": "nvidia-h100-sxm-80gb", "deployments": [deployment, deployment]},
        format="json",
    ).json()
    # then: each bill is 0.45 × 81,559 MiB + 0.5 GiB of CUDA graphs; together they fit the card
    assert body["fits"] is True
    assert len(body["deployments"]) == 2
    assert body["required_bytes_per_gpu"] == sum(body["deployment_bytes_per_gpu"])
    assert body["memory_per_gpu"]["weights"] == 2 * body["deployments"][0]["memory_per_gpu"]["weights"]


def test_a_second_instance_that_finds_too_little_free_memory_does_not_fit(catalog, api_client):
    first = {"model": "meta-llama/Meta-Llama-3-8B", "gpu_memory_utilization": 0.6, "max_model_len": 8192}
    second = {"model": "meta-llama/Meta-Llama-3-8B", "gpu_memory_utilization": 0.5, "max_model_len": 8192}
    body = api_client.post(
        "/api/v1/estimates/colocated", {"gpu": "nvidia-h100-sxm-80gb", "deployments": [first, second]}, format="json"
    ).json()
    assert body["fits"] is False
    assert any("deployment 2 (vllm) wants" in problem for problem in body["problems"])


def test_colocated_field_errors_name_the_deployment(catalog, api_client):
    response = api_client.post(
        "/api/v1/estimates/colocated",
        {"gpu": "nvidia-h100-sxm-80gb", "deployments": [{"model": "meta-llama/Meta-Llama-3-8B"}, {"tp": 0}]},
        format="json",
    )
    assert response.status_code == 400
    assert "deployments[1]" in response.json()["extra"]["fields"]


@pytest.mark.django_db
def test_a_defect_during_a_saved_estimate_is_stored_not_raised(catalog, organisation, user, monkeypatch):
    # given an estimator defect (simulated) while the worker computes
    estimate = Estimate.objects.create(
        organisation=organisation,
        requested_by=user,
        model=LlmModel.objects.get(slug="meta-llama/Meta-Llama-3-8B", organisation=None),
        gpu=Gpu.objects.get(slug="nvidia-h100-sxm-80gb"),
        inputs={},
    )

    def broken(**_kwargs):
        raise ZeroDivisionError

    monkeypatch.setattr("sizing.services.estimates.estimate_report", broken)
    # when
    done = estimate_compute(estimate_id=estimate.pk)
    # then
    assert done.status == Estimate.Status.FAILED
    assert done.error["code"] == "internal_error"


def test_colocated_estimator_errors_name_the_deployment(catalog, api_client):
    # given expert parallelism asked of a dense model in the second deployment
    deployments = [
        {"model": "meta-llama/Meta-Llama-3-8B", "gpu_memory_utilization": 0.45},
        {"model": "meta-llama/Meta-Llama-3-8B", "gpu_memory_utilization": 0.45, "expert_parallel": True},
    ]
    response = api_client.post(
        "/api/v1/estimates/colocated", {"gpu": "nvidia-h100-sxm-80gb", "deployments": deployments}, format="json"
    )
    assert response.status_code == 400
    assert "expert_parallel" in response.json()["extra"]["fields"]["deployments[1]"]


def test_models_say_whether_they_are_moe(catalog, api_client):
    models = {row["slug"]: row for row in api_client.get("/api/v1/models/").json()["results"]}
    assert models["Qwen/Qwen3-30B-A3B"]["architecture"]["moe"] is True
    assert models["meta-llama/Meta-Llama-3-8B"]["architecture"]["moe"] is False
    assert models["deepseek-ai/DeepSeek-V3"]["architecture"]["mla"] is True


def test_an_unknown_draft_in_a_colocated_deployment_names_the_row(catalog, api_client):
    deployments = [
        {"model": "meta-llama/Meta-Llama-3-8B", "gpu_memory_utilization": 0.45},
        {"model": "meta-llama/Meta-Llama-3-8B", "gpu_memory_utilization": 0.45, "draft_model": "no/draft"},
    ]
    response = api_client.post(
        "/api/v1/estimates/colocated", {"gpu": "nvidia-h100-sxm-80gb", "deployments": deployments}, format="json"
    )
    assert response.status_code == 400
    assert "draft_model" in response.json()["extra"]["fields"]["deployments[1]"]
