"""Bounded work (issue 19): a job's request lengths are held to the model's context and its simulated tokens to a cap
before it is queued (400 naming the field and the limit), a task past its time budget ends failed with "stopped: over
its time budget of N s", and an organisation at its most jobs at once gets a 429 while another is unaffected.

The worker runs in the test's process: the job is queued on commit and run at once (`run_jobs_now`)."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from sizing.kernel import job_budgets
from sizing.kernel.job_budgets import RUNNING_JOBS_MAX, SIMULATED_TOKENS_MAX, JobKind, TimeBudget
from sizing.models import Membership, Organisation, SimulationJob
from sizing.services.quotes import quote_create
from sizing.services.simulations import simulation_job_run
from sizing.tasks import quote_run_task

QUOTES_URL = "/api/v1/quotes/"
SIMULATIONS_URL = "/api/v1/simulations/"
L40S, T4 = "nvidia-l40s-48gb", "nvidia-t4-16gb"
MODEL = "meta-llama/Meta-Llama-3-8B"  # max_position_embeddings 8192
# the issue's quote: ten million output tokens a request
ISSUE_QUOTE = {
    "model": MODEL,
    "input_tokens": 1000,
    "output_tokens": 10_000_000,
    "rate": 2.0,
    "slo": {"ttft_s": 2.0, "tpot_s": 0.1},
}


@pytest.fixture
def run_jobs_now(settings, monkeypatch):
    """Jobs run in this process as soon as their transaction commits (no broker, no worker)."""
    settings.SIZING_SEARCH_FANOUT = "never"
    monkeypatch.setattr("sizing.services.quotes._enqueue", lambda job_id: simulation_job_run(job_id=job_id))


def _client(organisation: Organisation, role: str, username: str) -> APIClient:
    account = get_user_model().objects.create_user(username=username, password="correct horse battery")
    Membership.objects.create(user=account, organisation=organisation, role=role)
    client = APIClient()
    client.force_authenticate(user=account)
    return client


@pytest.mark.parametrize("role", ["sales", "engineer", "admin"])
def test_the_issues_quote_of_ten_million_output_tokens_is_refused_for_every_role(
    catalog, organisation, role, django_capture_on_commit_callbacks
):
    # given
    client = _client(organisation, role, f"someone-{role}")

    # when
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post(QUOTES_URL, ISSUE_QUOTE, format="json")

    # then: 400 naming the field and the model's context (8192 - 1000 = 7192 output tokens at most)
    assert response.status_code == 400, response.content
    body = response.json()
    assert list(body["extra"]["fields"]) == ["output_tokens"]
    assert body["message"] == (
        "input_tokens 1,000 + output_tokens 10,000,000 = 10,001,000 tokens exceed the context of 8,192 tokens "
        f"(max_position_embeddings of {MODEL}); at most 7,192 output tokens with 1,000 input tokens"
    )
    assert callbacks == []
    assert not SimulationJob.objects.exists()


def test_the_plans_max_model_len_is_the_limit_when_given(catalog, organisation):
    client = _client(organisation, "sales", "seller")

    response = client.post(QUOTES_URL, {**ISSUE_QUOTE, "output_tokens": 4000, "max_model_len": 4096}, format="json")

    assert response.status_code == 400, response.content
    assert response.json()["extra"]["fields"]["output_tokens"] == [
        "input_tokens 1,000 + output_tokens 4,000 = 5,000 tokens exceed the context of 4,096 tokens "
        "(max_model_len); at most 3,096 output tokens with 1,000 input tokens"
    ]
    assert not SimulationJob.objects.exists()


def test_a_long_but_valid_quote_runs_and_ends_within_its_budget(
    catalog, organisation, run_jobs_now, django_capture_on_commit_callbacks
):
    # given 1000 + 7000 tokens: within Llama 3 8B's 8192
    client = _client(organisation, "sales", "seller")
    inputs = {**ISSUE_QUOTE, "output_tokens": 7000, "gpus": [L40S, T4], "max_gpus": 2, "requests": 300}

    # when
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(QUOTES_URL, inputs, format="json")

    # then it runs to the end, within its budget (a job over it would end failed with over_time_budget)
    assert response.status_code == 202, response.content
    job = SimulationJob.objects.get()
    assert job.status == SimulationJob.Status.DONE, job.error


def test_a_simulation_over_the_simulated_token_cap_is_refused_with_the_cap(
    catalog, api_client, django_capture_on_commit_callbacks
):
    # given 200,000 requests × (1000 + 7000) tokens = 1,600,000,000 simulated tokens
    inputs = {
        "kind": "simulate",
        "model": MODEL,
        "gpu": L40S,
        "input_tokens": 1000,
        "output_tokens": 7000,
        "rate": 5.0,
        "requests": 200_000,
    }

    # when
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = api_client.post(SIMULATIONS_URL, inputs, format="json")

    # then
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["extra"]["fields"]["requests"] == [
        f"1,600,000,000 simulated tokens; at most {SIMULATED_TOKENS_MAX:,} per job"
    ]
    assert body["extra"]["max_simulated_tokens"] == 1_000_000_000
    assert callbacks == []
    assert not SimulationJob.objects.exists()


def test_a_simulation_longer_than_the_context_names_the_field(catalog, api_client):
    inputs = {"kind": "simulate", "model": MODEL, "gpu": L40S, "input_tokens": 9000, "output_tokens": 10, "rate": 5.0}

    response = api_client.post(SIMULATIONS_URL, inputs, format="json")

    assert response.status_code == 400, response.content
    assert response.json()["extra"]["fields"]["input_tokens"] == [
        f"input_tokens 9,000 leaves no room in the context of 8,192 tokens (max_position_embeddings of {MODEL}); "
        "at most 8,191 input tokens"
    ]


def test_a_quote_past_its_soft_time_limit_ends_failed_with_the_budget(
    catalog, organisation, monkeypatch, django_capture_on_commit_callbacks
):
    # given a quote's budget of 1 s, and a search that takes longer (every count of 8 L40S and T4, 3000 requests)
    monkeypatch.setitem(job_budgets.TIME_BUDGETS, JobKind.QUOTE, TimeBudget(soft_s=1, hard_s=2))
    monkeypatch.setattr("sizing.services.simulations.settings.SIZING_SEARCH_FANOUT", "never", raising=False)
    monkeypatch.setattr("sizing.services.quotes._enqueue", lambda job_id: None)
    with django_capture_on_commit_callbacks(execute=True):
        job = quote_create(
            organisation=organisation,
            user=None,
            inputs={**ISSUE_QUOTE, "output_tokens": 4000, "gpus": [L40S, T4], "max_gpus": 8, "requests": 3000},
        )

    # when the worker runs it
    started = time.monotonic()
    quote_run_task(job.pk)
    elapsed_s = time.monotonic() - started

    # then
    job.refresh_from_db()
    assert job.status == SimulationJob.Status.FAILED
    assert job.error == {
        "code": "over_time_budget",
        "message": "stopped: over its time budget of 1 s",
        "extra": {"time_budget_s": 1, "job_kind": "quote"},
    }
    assert job.finished_at is not None
    assert elapsed_s >= 1.0  # the timer fires at the soft limit, never before (no upper bound: the box may be busy)


def test_a_task_that_ends_within_its_budget_is_never_interrupted_later():
    # given a body that ends before its 0.2 s budget
    with job_budgets.time_budget(JobKind.ESTIMATE, soft_s=0.2):
        pass

    # when the budget's time comes and goes, then nothing is raised here
    time.sleep(0.4)


def test_an_organisation_at_its_most_quotes_gets_429_and_another_is_unaffected(
    catalog, organisation, django_capture_on_commit_callbacks
):
    # given as many queued quotes as the organisation may have
    limit = RUNNING_JOBS_MAX[JobKind.QUOTE]
    for _ in range(limit):
        SimulationJob.objects.create(organisation=organisation, kind=SimulationJob.Kind.QUOTE, inputs={})
    other = Organisation.objects.create(name="Other Integrator")
    inputs = {**ISSUE_QUOTE, "output_tokens": 200, "gpus": [L40S], "max_gpus": 1, "requests": 60}

    # when
    with django_capture_on_commit_callbacks(execute=False):
        refused = _client(organisation, "sales", "seller").post(QUOTES_URL, inputs, format="json")
        accepted = _client(other, "sales", "other-seller").post(QUOTES_URL, inputs, format="json")

    # then
    assert refused.status_code == 429, refused.content
    assert refused.json() == {
        "code": "too_many_jobs",
        "message": f"your organisation already has {limit} quotes queued or running; at most {limit} at once: wait "
        "for one to finish",
        "extra": {"running": limit, "limit": limit, "job_kind": "quote"},
    }
    assert SimulationJob.objects.filter(organisation=organisation).count() == limit
    assert accepted.status_code == 202, accepted.content
    assert SimulationJob.objects.filter(organisation=other).count() == 1


def test_finished_jobs_do_not_count_against_the_limit(catalog, organisation, django_capture_on_commit_callbacks):
    for _ in range(RUNNING_JOBS_MAX[JobKind.SIMULATION]):
        SimulationJob.objects.create(
            organisation=organisation, kind="simulate", inputs={}, status=SimulationJob.Status.DONE
        )
    client = _client(organisation, "engineer", "engineer2")

    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(
            SIMULATIONS_URL,
            {"kind": "simulate", "model": MODEL, "gpu": L40S, "input_tokens": 1000, "output_tokens": 200, "rate": 2.0},
            format="json",
        )

    assert response.status_code == 202, response.content
