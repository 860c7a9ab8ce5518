"""Quotes for sales tooling: the service (offers cheapest first, all meeting the SLOs, a GPU that cannot hold the
model among the rejected with its reason, the cost per million tokens computed by hand), the API (202 with a
Location, polled to done, field errors, organisation scope, the list's pagination) and the schema.

The worker runs in the test's process: the job is queued on commit and run at once (`run_jobs_now`)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from sizing.models import Gpu, Membership, Organisation, SimulationJob, WorkloadProfile
from sizing.services.quotes import cost_per_million_tokens, quote_create, quote_result
from sizing.services.simulations import simulation_job_run

URL = "/api/v1/quotes/"
L40S, T4, H100 = "nvidia-l40s-48gb", "nvidia-t4-16gb", "nvidia-h100-sxm-80gb"
# Llama 3 8B in BF16 (≈15 GiB of weights) at 2 requests/s of 1000 prompt and 200 output tokens, on L40S or T4,
# at most 2 GPUs: 1 x T4 cannot hold it; 2 x T4 (TP 2), 1 x and 2 x L40S can. A short run per candidate.
QUOTE = {
    "model": "meta-llama/Meta-Llama-3-8B",
    "input_tokens": 1000,
    "output_tokens": 200,
    "rate": 2.0,
    "slo": {"ttft_s": 2.0, "tpot_s": 0.1},
    "gpus": [L40S, T4],
    "max_gpus": 2,
    "requests": 60,
    "max_model_len": 8192,
}


@pytest.fixture
def run_jobs_now(settings, monkeypatch):
    """Jobs run in this process as soon as their transaction commits (no broker, no worker)."""
    settings.SIZING_SEARCH_FANOUT = "never"
    monkeypatch.setattr("sizing.services.quotes._enqueue", lambda job_id: simulation_job_run(job_id=job_id))


def _done_quote(organisation, inputs, django_capture_on_commit_callbacks) -> dict:
    with django_capture_on_commit_callbacks(execute=True):
        job = quote_create(organisation=organisation, user=None, inputs=inputs)
    job.refresh_from_db()
    assert job.status == "done", job.error
    return quote_result(job)


# ---------------------------------------------------------------------------------------------------------------
# The service


def test_the_cost_per_million_tokens_is_the_hourly_cost_over_the_tokens_of_an_hour():
    # 2 x L40S at $0.86 = $1.72/h; 2 requests/s x (1000 + 200) tokens x 3600 s = 8,640,000 tokens per hour
    # → $1.72 / 8.64 = $0.19907... per million tokens
    assert cost_per_million_tokens(
        cost_per_hour_usd=1.72, rate_per_s=2.0, mean_input_tokens=1000, mean_output_tokens=200
    ) == pytest.approx(0.199074, abs=1e-6)
    assert (
        cost_per_million_tokens(cost_per_hour_usd=None, rate_per_s=2.0, mean_input_tokens=1000, mean_output_tokens=200)
        is None
    )


def test_a_quote_offers_the_cheapest_deployments_meeting_the_slos(
    catalog, organisation, run_jobs_now, django_capture_on_commit_callbacks
):
    # when
    quote = _done_quote(organisation, QUOTE, django_capture_on_commit_callbacks)

    # then: offers cheapest first, each meeting every SLO at P95
    offers = quote["offers"]
    assert len(offers) == 3
    costs = [offer["cost_per_hour_usd"] for offer in offers]
    assert costs == sorted(costs)
    for offer in offers:
        assert offer["gpu"] in (L40S, T4)
        assert offer["percentile"] == 95
        assert offer["ttft_ms"] <= 2000
        assert offer["tpot_ms"] <= 100
        assert offer["e2e_ms"] > 0
        assert offer["gpus"] == offer["tp"] * offer["replicas"]
        assert offer["kv_capacity_tokens"] > 0
        assert offer["memory_per_gpu_gib"] == pytest.approx(offer["memory_per_gpu_bytes"] / 2**30, abs=0.01)
    # the cheapest: two T4 at $0.35 with TP 2 ($0.70/h); then one L40S ($0.86/h)
    assert (offers[0]["gpu"], offers[0]["gpus"], offers[0]["tp"], offers[0]["cost_per_hour_usd"]) == (T4, 2, 2, 0.70)
    assert (offers[1]["gpu"], offers[1]["gpus"], offers[1]["cost_per_hour_usd"]) == (L40S, 1, 0.86)
    # per million tokens, input and output counted: $0.86 / (2 x 3600 x 1200 / 1e6 = 8.64) = $0.099537...
    assert offers[1]["cost_per_million_tokens_usd"] == pytest.approx(0.099537, abs=1e-6)
    assert offers[0]["cost_per_million_tokens_usd"] == pytest.approx(0.081019, abs=1e-6)  # $0.70 / 8.64
    assert offers[0]["cost_per_million_output_tokens_usd"] > offers[0]["cost_per_million_tokens_usd"]

    # and the one T4 that cannot hold the model is rejected, cheaper than any offer, with the reason
    rejected = {(row["gpu"], row["gpus"]): row for row in quote["rejected"]}
    one_t4 = rejected[(T4, 1)]
    assert one_t4["fits"] is False
    assert one_t4["reason"].startswith("does not fit")
    assert one_t4["verdict"]["code"] == "does_not_fit"
    assert one_t4["cheaper_than_best_offer"] is True
    assert one_t4["cost_per_hour_usd"] == 0.35

    # and the assumptions say what was priced and simulated
    assumptions = quote["assumptions"]
    assert assumptions["gpu_prices_usd_per_hour"] == {L40S: 0.86, T4: 0.35}
    assert assumptions["requests_simulated"] == 60
    assert assumptions["traffic"]["tokens_per_hour"] == 8_640_000
    assert quote["summary"]["candidates"] == 6  # 2 GPU types x (1 GPU TP 1, 2 GPUs TP 1, 2 GPUs TP 2)


def test_the_offers_latencies_at_p95_are_the_searchs_own(
    catalog, organisation, run_jobs_now, django_capture_on_commit_callbacks
):
    # when
    quote = _done_quote(organisation, QUOTE, django_capture_on_commit_callbacks)

    # then: the offers simulated again read the same run as the search did
    job = SimulationJob.objects.get(pk=quote["id"])
    by_label = {o["candidate"]["label"]: o for o in job.result["outcomes"]}
    for offer in quote["offers"]:
        assert offer["ttft_ms"] == pytest.approx(by_label[offer["label"]]["ttft_p95_ms"])
        assert offer["tpot_ms"] == pytest.approx(by_label[offer["label"]]["tpot_p95_ms"])


def test_a_quote_of_a_sample_profile_prices_its_mean_lengths(
    catalog, organisation, run_jobs_now, django_capture_on_commit_callbacks
):
    sample = WorkloadProfile.objects.get(organisation__isnull=True)
    quote = _done_quote(
        organisation,
        {
            "model": "meta-llama/Meta-Llama-3-8B",
            "profile": sample.pk,
            "rate": 1.0,
            "slo": {"ttft_s": 5.0},
            "gpus": [H100],
            "max_gpus": 1,
            "requests": 50,
            "top": 1,
            "max_model_len": 8192,
        },
        django_capture_on_commit_callbacks,
    )

    traffic = quote["assumptions"]["traffic"]
    assert traffic["kind"] == "profile"
    assert traffic["profile_name"] == sample.name
    assert traffic["mean_input_tokens"] > 128  # the busiest hour mixes reports (≈2048) with Q&A (≈128)
    offer = quote["offers"][0]
    tokens_per_hour = 1.0 * 3600 * (traffic["mean_input_tokens"] + traffic["mean_output_tokens"])
    assert offer["cost_per_million_tokens_usd"] == pytest.approx(2.99 / (tokens_per_hour / 1e6))


# ---------------------------------------------------------------------------------------------------------------
# The API


def test_a_quote_is_accepted_with_202_and_polled_until_done(
    catalog, api_client, run_jobs_now, django_capture_on_commit_callbacks
):
    # when
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post(URL, QUOTE, format="json")

    # then
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["url"] == f"/api/v1/quotes/{body['id']}/"
    assert response["Location"] == body["url"]
    assert body["status"] == "queued"
    assert body["offers"] is None
    assert body["inputs"]["top"] == 3
    assert body["inputs"]["engines"] == ["vllm"]

    # and polling the URL gives the finished quote
    polled = api_client.get(body["url"])
    assert polled.status_code == 200
    done = polled.json()
    assert done["status"] == "done"
    assert done["progress"] == 1.0
    assert [offer["cost_per_hour_usd"] for offer in done["offers"]] == [0.70, 0.86, 1.72]
    assert done["rejected"][0]["reason"].startswith("does not fit")
    assert done["assumptions"]["prices"].startswith("List prices from the GPU catalog, in USD per GPU-hour")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"model": None}, "model"),
        ({"model": "no/such-model"}, "model"),
        ({"gpus": ["no-such-gpu"]}, "gpus"),
        ({"profile": 999999, "input_tokens": None, "output_tokens": None}, "profile"),
        ({"profile": 1}, "profile"),  # a profile and lengths both
        ({"input_tokens": None, "output_tokens": None}, "profile"),  # no traffic
        ({"output_tokens": None}, "output_tokens"),
        ({"rate": None}, "rate"),
        ({"concurrency": 16}, "concurrency"),
        ({"slo": {"percentile": 95}}, "slo"),
        ({"slo": None}, "slo"),
        ({"top": 11}, "top"),
        ({"max_gpus": 0}, "max_gpus"),
        ({"engines": ["teleport"]}, "engines"),
    ],
    ids=[
        "no-model",
        "unknown-model",
        "unknown-gpu",
        "unknown-profile",
        "profile-and-lengths",
        "no-traffic",
        "no-output",
        "no-rate",
        "concurrency",
        "no-slo-limit",
        "no-slo",
        "top-too-large",
        "no-gpus",
        "bad-engine",
    ],
)
def test_bad_quotes_are_refused_with_the_field_and_nothing_is_stored(catalog, api_client, change, field):
    payload = {key: value for key, value in {**QUOTE, **change}.items() if value is not None}

    response = api_client.post(URL, payload, format="json")

    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] in ("invalid_input", "invalid_argument")
    assert field in body["extra"]["fields"], body
    assert SimulationJob.objects.count() == 0


def test_a_gpu_without_a_price_cannot_be_quoted(catalog, api_client):
    Gpu.objects.filter(slug=T4).update(price_per_hour_usd=None)

    response = api_client.post(URL, QUOTE, format="json")

    assert response.status_code == 400
    message = response.json()["extra"]["fields"]["gpus"][0]
    assert "no list price" in message
    assert "cannot be ranked by cost" in message


def test_quotes_of_another_organisation_are_not_found(catalog, api_client):
    other = Organisation.objects.create(name="Other")
    job = SimulationJob.objects.create(organisation=other, kind="quote", inputs={"quote": {}})

    assert api_client.get(f"{URL}{job.pk}/").status_code == 404
    assert api_client.get(URL).json()["count"] == 0


def test_the_list_is_paginated_newest_first_and_holds_only_quotes(catalog, api_client, organisation):
    ids = [
        SimulationJob.objects.create(organisation=organisation, kind="quote", inputs={"quote": {"n": n}}).pk
        for n in range(3)
    ]
    SimulationJob.objects.create(organisation=organisation, kind="search", inputs={})

    page = api_client.get(URL, {"limit": 2}).json()

    assert set(page) == {"count", "next", "previous", "results"}
    assert page["count"] == 3
    assert page["previous"] is None
    assert "offset=2" in page["next"]
    assert [row["id"] for row in page["results"]] == ids[::-1][:2]
    assert page["results"][0]["url"] == f"{URL}{ids[-1]}/"
    assert page["results"][0]["cheapest"] is None
    rest = api_client.get(page["next"]).json()
    assert [row["id"] for row in rest["results"]] == ids[:1]


def test_sales_people_may_quote(catalog, organisation, run_jobs_now, django_capture_on_commit_callbacks):
    seller = get_user_model().objects.create_user(username="seller", password="x" * 12)
    Membership.objects.create(user=seller, organisation=organisation, role="sales")
    client = APIClient()
    client.force_authenticate(user=seller)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(URL, {**QUOTE, "gpus": [L40S], "max_gpus": 1}, format="json")

    assert response.status_code == 202, response.content
    assert client.get(response["Location"]).json()["offers"][0]["gpu"] == L40S


def test_the_quote_api_is_in_the_schema_with_its_examples(db, tmp_path):
    from django.core.management import call_command

    call_command("spectacular", "--fail-on-warn", "--file", str(tmp_path / "schema.yml"))
    schema = (tmp_path / "schema.yml").read_text()
    assert "/api/v1/quotes/{quote_id}/" in schema
    assert "cost_per_million_tokens_usd" in schema
    assert "A finished quote" in schema
