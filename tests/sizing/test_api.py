"""REST API: authentication, catalogs, uploads, quick estimates and their errors."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from sizing.models import LlmModel, Organisation

QUICK = "/api/v1/estimates/quick"


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/api/v1/gpus/"),
        ("get", "/api/v1/models/"),
        ("post", "/api/v1/models/"),
        ("post", QUICK),
        ("post", "/api/v1/estimates/"),
        ("get", "/api/v1/estimates/1/"),
        ("get", "/api/v1/deployments/"),
    ],
    ids=["gpus", "models", "upload", "quick", "create", "detail", "deployments"],
)
def test_every_endpoint_requires_authentication(db, method, url):
    # given an anonymous client
    client = APIClient()
    # when
    response = getattr(client, method)(url, {}, format="json")
    # then
    assert response.status_code in (401, 403)


def test_health_needs_no_login(db):
    assert APIClient().get("/health/").json() == {"status": "ok"}


def test_gpu_list_has_the_catalog_with_sources(catalog, api_client):
    # when
    gpus = {row["slug"]: row for row in api_client.get("/api/v1/gpus/").json()["results"]}
    # then: the H100 SXM reports 81,559 MiB in nvidia-smi = 85,520,809,984 bytes
    h100 = gpus["nvidia-h100-sxm-80gb"]
    assert h100["memory_bytes"] == 81559 * 2**20
    assert h100["marketed_memory_gb"] == 80
    assert h100["sources"]
    assert {"nvidia-a100-sxm-40gb", "nvidia-h20-96gb", "amd-mi300x-192gb", "nvidia-t4-16gb"} <= set(gpus)


def test_model_list_marks_unsupported_models_with_reason(catalog, api_client):
    # when
    models = {row["slug"]: row for row in api_client.get("/api/v1/models/").json()["results"]}
    # then
    llama = models["meta-llama/Meta-Llama-3-8B"]
    assert llama["supported"] is True
    assert llama["parameters_total"] == 8030261248  # published: 8,030,261,248
    hybrid = models["nvidia/Nemotron-H-56B-Base-8K"]
    assert hybrid["supported"] is False
    assert "Mamba-2" in hybrid["unsupported_reason"]
    assert hybrid["parameters_total"] is None


def test_quick_estimate_gives_the_cli_fields(catalog, api_client):
    # when
    response = api_client.post(
        QUICK,
        {"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-h100-sxm-80gb", "max_model_len": 8192},
        format="json",
    )
    # then: 32 layers × 8 KV heads × 128 × 2 (K, V) × 2 bytes = 131,072 bytes per token
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["kv_bytes_per_token"] == 131072
    assert body["parameters_total"] == 8030261248
    assert body["weight_bytes_per_gpu"] == 16060522496
    assert body["fits"] is True
    assert set(body["memory_per_gpu"]) == {"weights", "kv_cache", "activations", "runtime", "cuda_graphs"}
    assert len(body["per_gpu"]) == 1
    # vLLM's budget (latest: 0.33.0, utilisation 0.92) multiplies what CUDA sees on an H100 SXM: 81,090 MiB
    # (the catalog's cuda_total_mib, below nvidia-smi's 81,559)
    assert body["engine_version"] == "0.33.0"
    assert body["concurrency_curve"]["limit_bytes"] == int(81090 * 2**20 * 0.92)


def test_quick_estimate_with_a_raw_config(catalog, api_client):
    # given a Llama-2-7B-like config posted inline
    config = {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "intermediate_size": 11008,
        "vocab_size": 32000,
        "torch_dtype": "float16",
        "max_position_embeddings": 4096,
    }
    # when
    response = api_client.post(QUICK, {"config": config, "gpu": "nvidia-a100-sxm-80gb", "gpus": 2}, format="json")
    # then: MHA, 32 layers × 32 heads × 128 × 2 × 2 bytes = 524,288 bytes per token; TP 2 halves it per GPU
    body = response.json()
    assert body["parameters_total"] == 6738415616
    assert body["kv_bytes_per_token_per_gpu"] == 262144
    assert body["tp"] == 2


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"gpu": "nvidia-h100-sxm-80gb"}, "model"),
        ({"model": "meta-llama/Meta-Llama-3-8B", "gpu": "no-such-gpu"}, "gpu"),
        ({"model": "no/such-model", "gpu": "nvidia-h100-sxm-80gb"}, "model"),
        (
            {"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-h100-sxm-80gb", "gpu_memory_utilization": 1.5},
            "gpu_memory_utilization",
        ),
        ({"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-h100-sxm-80gb", "tp": 0}, "tp"),
        ({"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-h100-sxm-80gb", "weights": "int3"}, "weights"),
        ({"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-h100-sxm-80gb", "concurrency": "many"}, "concurrency"),
        ({"model": "meta-llama/Meta-Llama-3-8B", "config": {}, "gpu": "nvidia-h100-sxm-80gb"}, "model"),
    ],
    ids=["no-model", "unknown-gpu", "unknown-model", "utilisation", "tp-zero", "format", "not-int", "both"],
)
def test_quick_estimate_bad_input_is_a_400_with_field_errors(catalog, api_client, payload, field):
    # when
    response = api_client.post(QUICK, payload, format="json")
    # then
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_input"
    assert field in body["extra"]["fields"]
    assert body["message"]


def test_quick_estimate_of_an_unsupported_model_says_what_is_missing(catalog, api_client):
    # when
    response = api_client.post(
        QUICK, {"model": "nvidia/Nemotron-H-56B-Base-8K", "gpu": "nvidia-h100-sxm-80gb"}, format="json"
    )
    # then
    assert response.status_code == 400
    assert response.json()["code"] == "unsupported_architecture"
    assert "state-space" in response.json()["message"]


def test_quick_estimate_tp_not_dividing_heads_is_a_400(catalog, api_client):
    response = api_client.post(
        QUICK, {"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-h100-sxm-80gb", "tp": 3}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_parallelism"
    assert "32 attention heads" in response.json()["message"]


def test_quick_estimate_of_a_malformed_config_is_a_400(catalog, api_client):
    config = {
        "model_type": "llama",
        "hidden_size": "big",
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 8,
        "vocab_size": 10,
    }
    response = api_client.post(QUICK, {"config": config, "gpu": "nvidia-l4-24gb"}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_config"
    assert "hidden_size" in response.json()["message"]


def test_upload_config_file_creates_an_organisation_model(catalog, api_client, organisation):
    # given
    config = {
        "model_type": "qwen2",
        "hidden_size": 896,
        "num_hidden_layers": 24,
        "num_attention_heads": 14,
        "num_key_value_heads": 2,
        "intermediate_size": 4864,
        "vocab_size": 151936,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "max_position_embeddings": 32768,
    }
    upload = SimpleUploadedFile("config.json", json.dumps(config).encode(), content_type="application/json")
    # when
    response = api_client.post(
        "/api/v1/models/", {"slug": "acme/qwen-small", "config_file": upload}, format="multipart"
    )
    # then: the same architecture as Qwen2.5-0.5B-Instruct, 494,032,768 parameters (published)
    assert response.status_code == 201, response.content
    assert response.json()["parameters_total"] == 494032768
    assert LlmModel.objects.get(slug="acme/qwen-small").organisation == organisation


def test_uploaded_models_are_invisible_to_other_organisations(catalog, api_client):
    # given a model uploaded by another organisation
    other = Organisation.objects.create(name="Other Co")
    LlmModel.objects.create(slug="other/secret", organisation=other, config={"model_type": "llama"}, supported=False)
    # when
    slugs = {row["slug"] for row in api_client.get("/api/v1/models/").json()["results"]}
    response = api_client.post(QUICK, {"model": "other/secret", "gpu": "nvidia-h100-sxm-80gb"}, format="json")
    # then
    assert "other/secret" not in slugs
    assert response.status_code == 400
    assert "model" in response.json()["extra"]["fields"]


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"{not json", "not valid JSON"), (b"[1, 2]", "JSON object"), (b"\xff\xfe", "not valid JSON")],
    ids=["syntax", "array", "binary"],
)
def test_upload_malformed_file_is_a_400_and_saves_nothing(catalog, api_client, content, message):
    # given
    before = LlmModel.objects.count()
    upload = SimpleUploadedFile("config.json", content, content_type="application/json")
    # when
    response = api_client.post("/api/v1/models/", {"slug": "acme/bad", "config_file": upload}, format="multipart")
    # then
    assert response.status_code == 400
    assert message in response.json()["message"]
    assert LlmModel.objects.count() == before


def test_upload_config_missing_fields_is_a_400_and_saves_nothing(catalog, api_client):
    before = LlmModel.objects.count()
    response = api_client.post(
        "/api/v1/models/", {"slug": "acme/bad", "config": {"model_type": "llama"}}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "missing_fields"
    assert "hidden_size" in response.json()["message"]
    assert LlmModel.objects.count() == before


def test_upload_too_large_is_refused(catalog, api_client, settings):
    # given a 2 KiB limit
    settings.SIZING_MAX_CONFIG_BYTES = 2048
    upload = SimpleUploadedFile("config.json", b" " * 4096 + b"{}", content_type="application/json")
    # when
    response = api_client.post("/api/v1/models/", {"slug": "acme/big", "config_file": upload}, format="multipart")
    # then
    assert response.status_code == 400
    assert "limit is 2048 bytes" in response.json()["message"]


def test_upload_keeps_non_finite_floats_as_text(catalog, api_client):
    # given a config with Infinity, as real Nemotron-H configs have
    body = b'{"model_type": "nemotron_h", "time_step_limit": [0.0, Infinity], "hidden_size": 8}'
    upload = SimpleUploadedFile("config.json", body, content_type="application/json")
    # when
    response = api_client.post("/api/v1/models/", {"slug": "acme/hybrid", "config_file": upload}, format="multipart")
    # then: stored, refused for sizing with the reason
    assert response.status_code == 201
    assert response.json()["supported"] is False
    assert "Mamba" in response.json()["unsupported_reason"]
    assert LlmModel.objects.get(slug="acme/hybrid").config["time_step_limit"] == [0.0, "Infinity"]


def test_openapi_schema_and_docs_are_served(catalog, api_client):
    schema = api_client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/v1/estimates/quick" in schema.content
    docs = api_client.get("/api/docs/")
    assert docs.status_code == 200
    assert b"cdn" not in docs.content.lower()
