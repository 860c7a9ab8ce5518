"""The API fuzzed against its own OpenAPI schema (schemathesis): every operation of /api/schema/, called in-process
through the WSGI app as an organisation admin with an API key, over seeded data so that ids exist. No answer may be
a 5xx, and every answer must be documented: its status code, content type and body."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.contrib.auth import get_user_model
from django.core import signals as signal
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from rest_framework.throttling import SimpleRateThrottle
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from benchmarks_app.services.endpoints import endpoint_create
from llm_sizing_loadgen.workload import profile_to_dict, sample_profile
from reports.services.reports import report_create
from sizing.kernel.apikeys import api_key_create
from sizing.models import Membership, Organisation
from sizing.selectors.estimates import gpu_get, model_get_for_organisation
from sizing.services.deployments import deployment_create
from sizing.services.workloads import workload_profile_create

POSITIVE_EXAMPLES = 12  # per operation, valid by the schema
NEGATIVE_EXAMPLES = 4  # per operation, invalid by the schema (must be a 4xx, never a 5xx)
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]

# Left out, and why: none of these can run in a test process.
EXCLUDED = [
    # starts a load test: the worker would send requests to the endpoint's URL (no live inference server here)
    ("POST", "/api/v1/load-tests/"),
]


@pytest.fixture
def seeded(catalog: None, db: None) -> dict[str, Any]:
    """An organisation admin with an API key, and one of each thing the paths name, so that ids exist."""
    organisation = Organisation.objects.create(name="Fuzz Integrator")
    user = get_user_model().objects.create_user(username="fuzzer", password="correct horse battery")
    Membership.objects.create(user=user, organisation=organisation, role=Membership.Role.ADMIN)
    _row, key = api_key_create(user=user, name="fuzz")
    workload = workload_profile_create(
        organisation=organisation, user=user, name="fuzz traffic", profile=profile_to_dict(sample_profile())
    )
    model = model_get_for_organisation(organisation=organisation, slug="meta-llama/Meta-Llama-3-8B")
    deployment = deployment_create(
        organisation=organisation,
        user=user,
        data={
            "name": "fuzz deployment",
            "customer": "Fuzz Bank",
            "model": model,
            "gpu": gpu_get(slug="nvidia-l40s-48gb"),
            "gpu_count": 2,
            "tp": 2,
            "workload": workload,
        },
    )
    endpoint = endpoint_create(
        organisation=organisation,
        user=user,
        data={"name": "fuzz endpoint", "base_url": "http://127.0.0.1:9", "kind": "vllm", "model_name": "llama"},
    )
    report = report_create(organisation=organisation, user=user, data={"deployment": deployment.pk})
    return {
        "key": key,
        "ids": {
            "deployment_id": deployment.pk,
            "workload_profile_id": workload.pk,
            "endpoint_id": endpoint.pk,
            "report_id": report.pk,
            "number": 1,
        },
    }


@pytest.fixture
def high_throttle_rates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Throttles stay on (their code runs) at rates the fuzz cannot reach; the rates are read when the throttle
    classes are made, so override_settings would not reach them."""
    rates = {scope: "1000000/min" for scope in [*SimpleRateThrottle.THROTTLE_RATES, "sustained", "burst"]}
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", rates)


def _fuzz_operation(
    operation: Any,
    key: str,
    ids: dict[str, int],
    failures: list[str],
    counts: dict[str, int],
) -> None:
    headers = {"Authorization": f"Bearer {key}"}

    def exercise(case: Any, use_seeded_ids: bool) -> None:
        if use_seeded_ids and case.path_parameters:  # half of the valid cases name rows that exist
            case.path_parameters = {name: ids.get(name, value) for name, value in case.path_parameters.items()}
        counts["requests"] += 1
        response = case.call(headers=headers)
        try:
            case.validate_response(response, checks=CHECKS, headers=headers)
        except (Failure, FailureGroup) as error:
            failures.append(f"{operation.label}: {error}\n{case.as_curl_command(headers=headers)}")
            if len(failures) > 100:
                raise

    for mode, examples in ((GenerationMode.POSITIVE, POSITIVE_EXAMPLES), (GenerationMode.NEGATIVE, NEGATIVE_EXAMPLES)):
        try:
            strategy = operation.as_strategy(generation_mode=mode)
        except Exception as error:
            failures.append(f"{operation.label} ({mode.value}): cannot generate: {error}")
            continue

        @settings(
            max_examples=examples,
            derandomize=True,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=strategy, use_seeded_ids=st.booleans() if mode == GenerationMode.POSITIVE else st.just(False))
        def run(case: Any, use_seeded_ids: bool) -> None:
            exercise(case, use_seeded_ids)

        try:
            run()
        except Unsatisfiable:  # nothing to make invalid (no parameters, no body): the positive cases suffice
            assert mode == GenerationMode.NEGATIVE


@pytest.fixture
def connection_kept() -> Any:
    """The requests run inside the test's transaction: Django would close the connection at each request's end (as
    its test client does, keep it)."""
    signal.request_started.disconnect(close_old_connections)
    signal.request_finished.disconnect(close_old_connections)
    yield
    signal.request_started.connect(close_old_connections)
    signal.request_finished.connect(close_old_connections)


@pytest.mark.django_db
def test_api_fuzz(
    seeded: dict[str, Any], high_throttle_rates: None, connection_kept: None, request: pytest.FixtureRequest
) -> None:
    schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
    failures: list[str] = []
    counts = {"operations": 0, "requests": 0}
    started = time.monotonic()
    for result in schema.get_all_operations():
        operation = result.ok()
        if (operation.method.upper(), operation.path) in EXCLUDED:
            continue
        counts["operations"] += 1
        _fuzz_operation(operation, seeded["key"], seeded["ids"], failures, counts)
    summary = (
        f"API fuzz: {counts['requests']} requests over {counts['operations']} operations in "
        f"{time.monotonic() - started:.0f} s, {len(failures)} failures"
    )
    request.config.api_fuzz_summary = summary  # printed in pytest's terminal summary (tests/api/conftest.py)
    print(summary)
    if os.environ.get("API_FUZZ_REPORT"):  # the failures in full, for whoever fixes them
        Path(os.environ["API_FUZZ_REPORT"]).write_text("\n\n".join(failures))
    assert not failures, f"{len(failures)} failures:\n\n" + "\n\n".join(failures)


def _operations() -> list[tuple[str, str]]:
    """(method, path template) of every operation in /api/schema/."""
    schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
    return [(result.ok().method.upper(), result.ok().path) for result in schema.get_all_operations()]


@pytest.mark.django_db
def test_nul_deep_and_oversized_input_is_refused_by_every_operation(
    seeded: dict[str, Any], high_throttle_rates: None, connection_kept: None
) -> None:
    """Issue 19: a NUL in a query value (400), a 927-level JSON body (400 json_too_deep) and a body over
    JSON_MAX_BODY_BYTES (413) for every operation; never a 5xx."""
    from django.test import Client

    from sizing.kernel.json_limits import JSON_MAX_BODY_BYTES

    # given
    client = Client(HTTP_AUTHORIZATION=f"Bearer {seeded['key']}")
    deep = "[" * 927 + "]" * 927
    oversized = '{"a": "' + "x" * JSON_MAX_BODY_BYTES + '"}'
    answers: dict[str, list[str]] = {"nul": [], "deep": [], "oversized": []}
    for method, template in _operations():
        path = template
        for name, value in seeded["ids"].items():
            path = path.replace("{" + name + "}", str(value))
        path = re.sub(r"\{[^}]+\}", "1", path)
        call = getattr(client, method.lower())
        # when / then: a NUL in a query value, on every operation
        response = call(f"{path}?q=a%00b")
        answers["nul"].append(f"{method} {template} {response.status_code}")
        assert response.status_code == 400, answers["nul"][-1]
        if path.startswith("/api/"):
            assert response.json()["extra"]["fields"] == {
                "q": ["q holds a NUL character (\\u0000), which cannot be stored; remove it"]
            }
        else:  # the health probes: the page
            assert "q holds a NUL character" in response.content.decode()
        if method not in ("POST", "PUT", "PATCH"):
            continue
        for kind, body, refusal in (("deep", deep, "json_too_deep"), ("oversized", oversized, "request_too_large")):
            response = call(path, body, content_type="application/json")
            code = response.json().get("code") if response["Content-Type"] == "application/json" else None
            answers[kind].append(f"{method} {template} {response.status_code} {code}")
            # other answers: 415 where the operation takes no JSON (a multipart upload), 401/403/404/405 or a
            # state check before the body is read, a 2xx where the operation reads no body
            assert response.status_code < 500, answers[kind][-1]
            if code == refusal:
                assert response.status_code == (400 if kind == "deep" else 413), answers[kind][-1]
    parsed = [line.rsplit(" ", 2)[0] for line in answers["deep"] if line.endswith(" json_too_deep")]
    refused = [line.rsplit(" ", 2)[0] for line in answers["oversized"] if line.endswith(" request_too_large")]
    assert len(parsed) >= 20, answers["deep"]  # the JSON operations reached the parser
    assert refused == parsed, (answers["deep"], answers["oversized"])  # the same operations read the body
