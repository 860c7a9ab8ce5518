"""Every URL pattern and API route, walked: anonymous requests are refused (except the public ones), a user of
organisation A gets 404 for every object of organisation B by id in every verb the route takes (and B's rows do
not change), a sales user gets 403 on every write and on the engineering evidence, and every route has an access
policy (sizing/kernel/access.py). The routes are read from the URL resolver, so a new route is walked without editing
this file; a new kind of id in a URL fails `test_every_object_route_is_walked` until it is added to OBJECT_IDS."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from benchmarks_app.kernel.endpoint_secrets import secret_encrypt
from benchmarks_app.models import BenchmarkRun, BenchmarkSeries, Endpoint, LoadTest, MemoryLog
from reports.models import Report
from reports.services.reports import report_create
from sizing.kernel.access import POLICIES, PUBLIC_NAMES, SALES, policy_for
from sizing.kernel.apikeys import api_key_create
from sizing.models import (
    ApiKey,
    Deployment,
    Estimate,
    Fingerprint,
    Gpu,
    LlmModel,
    Membership,
    Organisation,
    SimulationJob,
    WorkloadProfile,
)
from sizing.services.quotes import quote_create

VERBS = ("get", "post", "put", "patch", "delete")
WRITE_VERBS = ("post", "put", "patch", "delete")
B_SECRET = "sk-org-b-endpoint-key-0123456789"


@dataclass(frozen=True)
class Route:
    name: str  # namespace:name
    pattern: str  # the path with <converter:kwarg> placeholders
    kwargs: tuple[str, ...]

    def path(self, values: dict[str, Any]) -> str:
        def fill(match: re.Match[str]) -> str:
            return str(values[match.group(2)])

        return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", fill, self.pattern)

    @property
    def is_api(self) -> bool:
        return self.pattern.startswith("api/")


def _walk(resolver: URLResolver, prefix: str = "", namespace: str = "") -> Iterator[Route]:
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            inner = (
                f"{namespace}:{entry.namespace}" if namespace and entry.namespace else (entry.namespace or namespace)
            )
            yield from _walk(entry, prefix + str(entry.pattern), inner)
        elif isinstance(entry, URLPattern) and entry.name:
            pattern = prefix + str(entry.pattern)
            name = f"{namespace}:{entry.name}" if namespace else entry.name
            yield Route(name, pattern, tuple(re.findall(r"<(?:\w+:)?(\w+)>", pattern)))


def routes() -> list[Route]:
    """Every named route but the Django admin (the operator's, behind its own staff check, across organisations by
    design) and the static/media helpers."""
    return [route for route in _walk(get_resolver()) if not route.name.startswith("admin:")]


def _kind(route: Route, kwarg: str) -> str:
    """Which object a URL kwarg names (job_id is a simulation job or a load test, by the route)."""
    if kwarg == "job_id":
        return "load_test" if "load-test" in route.name else "simulation"
    return kwarg


# the URL kwargs that name an organisation's object, and what the walk fills them with
OBJECT_IDS = (
    "deployment_id",
    "fingerprint_id",
    "estimate_id",
    "job_id",
    "workload_profile_id",
    "run_id",
    "series_id",
    "log_id",
    "endpoint_id",
    "report_id",
    "number",
    "key_id",
    "user_id",
    "name",
    "quote_id",
    "item",
)


def _ids(objects: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """For each kind: the kwarg values naming that organisation's object."""
    return {
        "deployment_id": objects["deployment"].pk,
        "fingerprint_id": objects["fingerprint"].pk,
        "estimate_id": objects["estimate"].pk,
        "simulation": objects["simulation"].pk,
        "load_test": objects["load_test"].pk,
        "workload_profile_id": objects["workload"].pk,
        "run_id": objects["run"].pk,
        "series_id": objects["series"].pk,
        "log_id": objects["memory_log"].pk,
        "endpoint_id": objects["endpoint"].pk,
        "report_id": objects["report"].pk,
        "number": 1,
        "key_id": objects["api_key"].pk,
        "user_id": objects["user"].pk,
        "name": objects["deployment"].customer,
        "quote_id": objects["quote"].pk,
        "item": "monitoring",  # a checklist item of the report's version
    }


def _values(route: Route, ids: dict[str, Any]) -> dict[str, Any]:
    return {kwarg: ids[_kind(route, kwarg)] for kwarg in route.kwargs}


def _organisation_objects(name: str, *, role: str) -> dict[str, Any]:
    """An organisation with one of everything, made by a user of `role`."""
    organisation = Organisation.objects.create(name=name)
    user = get_user_model().objects.create_user(
        username=f"{name.lower().replace(' ', '-')}-user", password="correct horse battery"
    )
    Membership.objects.create(user=user, organisation=organisation, role=role)
    model = LlmModel.objects.get(slug="meta-llama/Meta-Llama-3-8B", organisation__isnull=True)
    gpu = Gpu.objects.get(slug="nvidia-l4-24gb")
    deployment = Deployment.objects.create(
        organisation=organisation,
        name=f"{name} chat",
        customer=f"{name} Customer",
        engine="vllm",
        gpu_count=1,
        tp=1,
        model=model,
        gpu=gpu,
        slo={"ttft_ms": 2000.0, "tpot_ms": 150.0},
    )
    fingerprint = Fingerprint.objects.create(
        deployment=deployment,
        host=f"{name}-gpu-1",
        captured_at=timezone.now(),
        facts={},
        raw=[],
        size_bytes=0,
        sha256="0" * 64,
    )
    estimate = Estimate.objects.create(organisation=organisation, model=model, gpu=gpu, inputs={})
    simulation = SimulationJob.objects.create(organisation=organisation, kind="simulate", inputs={})
    quote = quote_create(
        organisation=organisation,
        user=user,
        inputs={  # queued, not run (on commit)
            "model": "meta-llama/Meta-Llama-3-8B",
            "input_tokens": 512,
            "output_tokens": 64,
            "rate": 1.0,
            "slo": {"ttft_s": 2.0},
            "gpus": ["nvidia-l4-24gb"],
            "max_gpus": 1,
        },
    )
    workload = WorkloadProfile.objects.create(
        organisation=organisation, name=f"{name} traffic", profile={"name": "x", "classes": []}
    )
    series = BenchmarkSeries.objects.create(organisation=organisation, name=f"{name} sweep")
    run = BenchmarkRun.objects.create(
        organisation=organisation, name=f"{name} run", format="vllm", tool="vllm", series=series
    )
    memory_log = MemoryLog.objects.create(
        organisation=organisation, name=f"{name} log", format="nvidia-smi", sha256="1" * 64, content="", size_bytes=0
    )
    endpoint = Endpoint.objects.create(
        organisation=organisation,
        name=f"{name} vLLM",
        base_url="http://10.0.0.5:8000",
        model_name="llama",
        api_key_encrypted=secret_encrypt(B_SECRET),
    )
    load_test = LoadTest.objects.create(
        organisation=organisation,
        endpoint=endpoint,
        endpoint_name=endpoint.name,
        name=f"{name} pulse",
        scenario="pulse",
        plan={},
    )
    report = report_create(
        organisation=organisation,
        user=user,
        data={"deployment": deployment.pk, "language": "en", "title": f"{name} report"},
    )
    api_key, _ = api_key_create(user=user, name=f"{name} script")
    return {
        "organisation": organisation,
        "user": user,
        "deployment": deployment,
        "fingerprint": fingerprint,
        "estimate": estimate,
        "simulation": simulation,
        "quote": quote,
        "workload": workload,
        "series": series,
        "run": run,
        "memory_log": memory_log,
        "endpoint": endpoint,
        "load_test": load_test,
        "report": report,
        "api_key": api_key,
    }


def _snapshot(objects: dict[str, Any]) -> dict[str, Any]:
    """What a write could change of an organisation's objects (each row's fields as stored)."""
    state = {}
    for key, row in objects.items():
        if hasattr(row, "_meta") and key != "organisation":
            fresh = type(row).objects.filter(pk=row.pk).values().first()
            if fresh is not None:
                fresh.pop("last_used_at", None)  # an API key's use is stamped by design
                fresh.pop("last_login", None)
            state[key] = fresh
    return state


@pytest.fixture
def world(catalog: None) -> dict[str, Any]:
    a = _organisation_objects("Org A", role="admin")
    b = _organisation_objects("Org B", role="admin")
    operator = get_user_model().objects.create_user(
        username="org-a-operator", password="correct horse battery", is_superuser=True
    )
    Membership.objects.create(user=operator, organisation=a["organisation"], role="engineer")
    sales = get_user_model().objects.create_user(username="org-a-sales", password="correct horse battery")
    Membership.objects.create(user=sales, organisation=a["organisation"], role=SALES)
    return {"a": a, "b": b, "operator": operator, "sales": sales}


def _client(user: Any) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(user)
    return client


def _call(client: Client, verb: str, path: str) -> Any:
    if verb in ("get", "delete"):
        return getattr(client, verb)(path)
    return getattr(client, verb)(path, data="{}", content_type="application/json")


# ------------------------------------------------------------------------------------------------------------------


def test_every_route_has_an_access_policy():
    unlisted = sorted(r.name for r in routes() if r.name not in POLICIES and r.name not in PUBLIC_NAMES)
    assert unlisted == []
    stale = sorted(set(POLICIES) - {r.name for r in routes()})
    assert stale == []


def test_every_object_route_is_walked():
    unknown = sorted({(r.name, kwarg) for r in routes() for kwarg in r.kwargs if kwarg not in OBJECT_IDS})
    assert unknown == []


@pytest.mark.django_db
def test_anonymous_requests_are_refused_everywhere_but_the_public_routes(world):
    ids = _ids(world["a"])
    client = Client()
    allowed = []
    for route in routes():
        path = route.path(_values(route, ids))
        for verb in VERBS:
            response = _call(client, verb, path)
            if route.name in PUBLIC_NAMES:
                continue
            if route.is_api:
                ok = response.status_code in (401, 403)
            else:
                ok = response.status_code == 302 and "/login/" in response["Location"]
            if not ok:
                allowed.append((verb, path, response.status_code))
    assert allowed == []


@pytest.mark.django_db
def test_a_user_of_another_organisation_gets_404_for_every_object_in_every_verb(world):
    # given: an operator-level user of A (every role check passes, so only the organisation scoping can refuse)
    client = _client(world["operator"])
    ids = _ids(world["b"])
    before = _snapshot(world["b"])
    leaks, walked = [], 0
    for route in routes():
        if not route.kwargs or route.name in PUBLIC_NAMES:
            continue
        path = route.path(_values(route, ids))
        answered = []
        for verb in VERBS:
            response = _call(client, verb, path)
            if response.status_code == 405:  # the route does not take this verb at all
                continue
            answered.append(verb)
            walked += 1
            body = response.content.decode(errors="replace")
            if response.status_code != 404 or "Org B" in body or B_SECRET in body:
                leaks.append((verb, path, response.status_code))
        assert answered, route.name  # every object route takes at least one verb
    # then nothing answered but 404, and B's rows are as they were
    assert leaks == []
    assert _snapshot(world["b"]) == before
    assert walked >= 60


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("verb", "path", "body"),
    [
        ("get", "/api/v1/fingerprints/?deployment={deployment}", None),
        ("get", "/api/v1/fingerprints/diff?before={fingerprint}&after={fingerprint}", None),
        ("get", "/api/v1/load-tests/defaults?deployment={deployment}", None),
        ("get", "/api/v1/benchmark-runs/?deployment={deployment}", None),
        ("post", "/api/v1/load-tests/", {"endpoint": "{endpoint}", "scenario": "pulse", "peak_concurrency": 2}),
        ("post", "/api/v1/reports/", {"deployment": "{deployment}", "language": "en"}),
        ("post", "/api/v1/fingerprints/", {"deployment": "{deployment}", "texts": ["NVIDIA-SMI 550.54"]}),
        (
            "post",
            "/api/v1/simulations/",
            {
                "kind": "simulate",
                "model": "meta-llama/Meta-Llama-3-8B",
                "gpu": "nvidia-l4-24gb",
                "profile": "{workload}",
                "rate": 1,
            },
        ),
        (
            "post",
            "/api/v1/estimates/quick",
            {"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-l4-24gb", "fingerprint": "{fingerprint}"},
        ),
    ],
    ids=[
        "fingerprints",
        "diff",
        "load-test-defaults",
        "runs",
        "load-test",
        "report",
        "fingerprint-upload",
        "simulation-profile",
        "estimate-on-fingerprint",
    ],
)
def test_another_organisations_ids_in_queries_and_bodies_are_refused(world, verb, path, body):
    b = world["b"]
    values = {
        "deployment": b["deployment"].pk,
        "fingerprint": b["fingerprint"].pk,
        "endpoint": b["endpoint"].pk,
        "workload": b["workload"].pk,
    }
    client = _client(world["operator"])
    counts = {model: model.objects.count() for model in (LoadTest, Report, Fingerprint, SimulationJob)}
    if body is None:
        response = client.get(path.format(**values))
    else:
        filled = {
            k: (int(v.format(**values)) if isinstance(v, str) and v.startswith("{") else v) for k, v in body.items()
        }
        response = client.post(path, data=filled, content_type="application/json")
    text = response.content.decode()
    assert response.status_code in (400, 404) or (
        response.status_code == 200 and '"count":0' in text.replace(" ", "")
    ), text
    assert "Org B" not in text
    assert B_SECRET not in text
    assert {model: model.objects.count() for model in counts} == counts


@pytest.mark.django_db
def test_a_sales_user_gets_403_on_every_write_and_on_the_engineering_evidence(world):
    client = _client(world["sales"])
    ids = _ids(world["a"])
    before = _snapshot(world["a"])
    wrong = []
    for route in routes():
        if route.name in PUBLIC_NAMES:
            continue
        policy = policy_for(route.name)
        path = route.path(_values(route, ids))
        for verb in VERBS:
            write = verb in WRITE_VERBS
            if (SALES in policy.write) if write else (SALES in policy.read):
                continue
            response = _call(client, verb, path)
            if response.status_code != 403:
                wrong.append((verb, path, response.status_code))
    assert wrong == []
    assert _snapshot(world["a"]) == before


@pytest.mark.django_db
def test_what_a_sales_user_may_do(world):
    client = _client(world["sales"])
    a = world["a"]
    assert client.get("/api/v1/deployments/").status_code == 200
    assert client.get(f"/api/v1/deployments/{a['deployment'].pk}/").status_code == 200
    assert client.get(f"/api/v1/reports/{a['report'].pk}/").status_code == 200
    assert client.get("/reports/").status_code == 200
    quick = client.post(
        "/api/v1/estimates/quick",
        data={"model": "meta-llama/Meta-Llama-3-8B", "gpu": "nvidia-l4-24gb", "max_model_len": 4096},
        content_type="application/json",
    )
    assert quick.status_code == 200, quick.content
    # but not the evidence, nor the endpoints
    assert client.get(f"/api/v1/fingerprints/{a['fingerprint'].pk}/").status_code == 403
    assert client.get("/api/v1/endpoints/").status_code == 403
    assert client.get("/load-tests/").status_code == 403


@pytest.mark.django_db
def test_reviewers_and_signers_read_everything_and_write_only_the_workflow(world):
    a = world["a"]
    for role in ("reviewer", "signer"):
        user = get_user_model().objects.create_user(username=f"org-a-{role}", password="correct horse battery")
        Membership.objects.create(user=user, organisation=a["organisation"], role=role)
        client = _client(user)
        assert client.get(f"/api/v1/fingerprints/{a['fingerprint'].pk}/").status_code == 200
        assert client.get(f"/api/v1/load-tests/{a['load_test'].pk}/").status_code == 200
        refused = client.post("/api/v1/deployments/", data={}, content_type="application/json")
        assert refused.status_code == 403
        assert refused.json()["message"] == (
            f"your role in the organisation ({role}) does not allow this; it needs: admin, engineer"
        )
        # the workflow: a draft cannot be approved (400 from the workflow, not a 403 from the role)
        approve = client.post(f"/api/v1/reports/{a['report'].pk}/versions/1/approve")
        assert approve.status_code == 400, approve.content
    assert ApiKey.objects.count() == 2
