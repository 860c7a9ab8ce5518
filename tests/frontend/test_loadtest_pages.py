"""The load-test pages (issue 7): sign-in and the organisation's walls, the "New load test" form (refusals under
their fields in both languages with nothing saved, a valid one queued and opened), cancel and delete, a test's
progress, workers and verdict, the verdict and the measuring banner on its benchmark run's page, and every string of
the pages in the Chinese catalog."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import polib
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import translation

from benchmarks_app.models import BenchmarkRun, Endpoint, LoadTest, LoadTestShard
from benchmarks_app.services.loadtests import loadtest_create
from sizing.models import Deployment, Gpu, LlmModel, Membership, Organisation
from sizing.services.deployments import deployment_create
from tests.frontend.script_words import words_in

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "frontend" / "templates" / "frontend"
STATIC = ROOT / "frontend" / "static" / "frontend"
MODEL = "meta-llama/Meta-Llama-3-8B"
ZH = {"accept-language": "zh-hans"}
GIB = 2**30
PULSE = {
    "scenario": "pulse",
    "peak_concurrency": "8",
    "slo_ttft_ms": "5000",
    "slo_tpot_ms": "500",
    "input_tokens": "128",
    "output_tokens": "32",
    "workers": "1",
    "scale": "0.05",
}

pytestmark = pytest.mark.django_db

# A pulse verdict as benchmarks_app.loadtests.scenarios.judge writes it: 190 of 200 requests met the TTFT SLO of
# 100 ms (95 %, 99 % required), no error, the memory verdict passed on the KV cache and preemptions.
VERDICT: dict[str, Any] = {
    "scenario": "pulse",
    "verdict": "fail",
    "summary": "Pulse: FAIL (slo attainment failed).",
    "criteria": [
        {
            "code": "client_fidelity",
            "verdict": "pass",
            "measured": True,
            "limit": True,
            "detail": "The client sent the load it was asked to.",
        },
        {
            "code": "slo_attainment",
            "verdict": "fail",
            "measured": 0.95,
            "limit": 0.99,
            "detail": "190 of 200 requests in the measurement window (95.00%) met every SLO (TTFT ≤ 100 ms); at least "
            "99.00% required (198 requests); errors count as misses.",
        },
        {
            "code": "error_rate",
            "verdict": "pass",
            "measured": 0.0,
            "limit": 0.0,
            "detail": "0 of 200 requests in the measurement window failed (0.00%); at most 0.00% allowed.",
        },
        {
            "code": "memory",
            "verdict": "pass",
            "measured": "pass",
            "limit": "pass",
            "detail": "The memory verdict passed (not measured: peak_within_commitment, no_oom).",
        },
    ],
    "figures": {
        "requests": 200,
        "incomplete": 3,
        "ok": 200,
        "errors": 0,
        "slo": {"ttft_ms": 100.0},
        "ttft_basis": "ttft_ms",
        "concurrency": 4,
        "peak_concurrency": 8,
        "judged_requests": 200,
        "good": 190,
        "attainment": 0.95,
        "judged_errors": 0,
        "error_rate": 0.0,
    },
    "memory": {
        "verdict": "pass",
        "checks": [
            {
                "code": "peak_within_commitment",
                "verdict": "unknown",
                "detail": "no GPU series",
                "value": None,
                "first_violation_s": None,
            },
            {
                "code": "kv_below_full",
                "verdict": "pass",
                "detail": "peak 42%",
                "value": 0.42,
                "first_violation_s": None,
            },
            {
                "code": "no_preemption",
                "verdict": "pass",
                "detail": "no preemption",
                "value": 0.0,
                "first_violation_s": None,
            },
            {
                "code": "no_oom",
                "verdict": "unknown",
                "detail": "nothing could show an OOM",
                "value": None,
                "first_violation_s": None,
            },
            {"code": "no_restart", "verdict": "pass", "detail": "no restart", "value": 0, "first_violation_s": None},
        ],
        "unverified": ["peak_within_commitment", "no_oom"],
        "figures": {
            "kv_peak": 0.42,
            "kv_p95": 0.4,
            "kv_seconds_above_90": 0.0,
            "preemptions": 0.0,
            "running_peak": 4.0,
            "waiting_peak": 0.0,
            "gpu_peak_bytes": None,
            "committed_bytes_per_gpu": None,
        },
        "first_violation": None,
    },
}


@pytest.fixture
def signed_in(client: Client, user) -> Client:
    client.force_login(user)
    return client


@pytest.fixture
def endpoint(organisation: Organisation) -> Endpoint:
    return Endpoint.objects.create(
        organisation=organisation,
        name="Acme vLLM",
        kind=Endpoint.Kind.VLLM,
        base_url="http://10.0.0.5:8000",
        model_name=MODEL,
        metrics_url="http://10.0.0.5:8000/metrics",
    )


@pytest.fixture
def simulator(organisation: Organisation) -> Endpoint:
    return Endpoint.objects.create(
        organisation=organisation,
        name="Sim",
        kind=Endpoint.Kind.SIMULATOR,
        base_url="http://127.0.0.1:8001",
        model_name=MODEL,
    )


@pytest.fixture
def deployment(catalog: None, organisation: Organisation, user) -> Deployment:
    """Llama 3 8B on 2 × A100 80GB with TP 2, with a TTFT SLO of 100 ms and a TPOT SLO of 15 ms."""
    return deployment_create(
        organisation=organisation,
        user=user,
        data={
            "name": "Acme chat",
            "model": LlmModel.objects.get(slug=MODEL, organisation=None),
            "gpu": Gpu.objects.get(slug="nvidia-a100-sxm-80gb"),
            "gpu_count": 2,
            "tp": 2,
            "engine": "vllm",
            "slo": {"ttft_ms": 100, "tpot_ms": 15},
        },
    )


def _job(organisation: Organisation, endpoint: Endpoint, user: Any = None, **changes: Any) -> LoadTest:
    """A pulse test made by the service (its dispatch, on commit, never runs in these tests)."""
    job = loadtest_create(
        organisation=organisation,
        user=user,
        data={
            "endpoint": endpoint.pk,
            "scenario": "pulse",
            "peak_concurrency": 8,
            "scale": 0.05,
            "slo": {"ttft_ms": 100},
            "input_tokens": 128,
            "output_tokens": 32,
        },
    )
    if changes:
        LoadTest.objects.filter(pk=job.pk).update(**changes)
        job.refresh_from_db()
    return job


@pytest.fixture
def other_job(db) -> LoadTest:
    other = Organisation.objects.create(name="Globex")
    stranger = get_user_model().objects.create_user(username="stranger", password="another horse battery")
    Membership.objects.create(user=stranger, organisation=other)
    endpoint = Endpoint.objects.create(
        organisation=other,
        name="Globex TGI",
        kind=Endpoint.Kind.TGI,
        base_url="http://172.16.0.9:3000",
        model_name="globex-model",
    )
    return _job(other, endpoint, stranger, name="their secret test")


def _html(response) -> str:
    return response.content.decode()


def _field_error(html: str, field: str) -> str:
    match = re.search(rf'<p class="field-error" data-error-for="{field}">(.*?)</p>', html, re.S)
    assert match, field
    return match.group(1).strip()


# --- who may see what ---------------------------------------------------------------------------------------------


def test_anonymous_users_are_sent_to_sign_in(client: Client, organisation: Organisation, endpoint: Endpoint):
    job = _job(organisation, endpoint)
    for url in (reverse("frontend:load-tests"), reverse("frontend:load-test", args=[job.pk])):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("frontend:login"))
    for url in (
        reverse("frontend:load-tests"),
        reverse("frontend:load-test-cancel", args=[job.pk]),
        reverse("frontend:load-test-delete", args=[job.pk]),
    ):
        assert client.post(url, {**PULSE, "endpoint": endpoint.pk}).status_code == 302
    job.refresh_from_db()
    assert (LoadTest.objects.count(), job.cancel_requested, job.status) == (1, False, "queued")


def test_another_organisations_test_is_a_404(signed_in: Client, other_job: LoadTest):
    # when
    responses = [
        signed_in.get(reverse("frontend:load-test", args=[other_job.pk])),
        signed_in.post(reverse("frontend:load-test-cancel", args=[other_job.pk])),
        signed_in.post(reverse("frontend:load-test-delete", args=[other_job.pk])),
    ]

    # then
    assert [response.status_code for response in responses] == [404, 404, 404]
    other_job.refresh_from_db()
    assert (other_job.status, other_job.cancel_requested) == ("queued", False)
    listing = _html(signed_in.get(reverse("frontend:load-tests")))
    assert "their secret test" not in listing
    assert "Globex TGI" not in listing


# --- the list and the form ----------------------------------------------------------------------------------------


def test_the_list_shows_the_tests_and_the_form(
    signed_in: Client, organisation: Organisation, endpoint: Endpoint, deployment: Deployment
):
    # given a queued test and a finished one with its verdict
    queued = _job(organisation, endpoint, name="warm-up")
    done = _job(organisation, endpoint, name="pulse of Monday", status="done", verdict=VERDICT)

    # when
    html = _html(signed_in.get(reverse("frontend:load-tests")))

    # then the table
    table = html[html.index('id="loadtests-table"') :].split("</table>")[0]
    row = table[table.index(f'data-job="{queued.pk}"') :].split("</tr>")[0]
    assert "warm-up" in row
    assert "Pulse" in row
    assert "Acme vLLM" in row
    assert '<span class="status-pill status-queued">Queued</span>' in row
    assert 'class="progress-bar" style="width: 0%"' in row
    finished = table[table.index(f'data-job="{done.pk}"') :].split("</tr>")[0]
    assert 'data-verdict="fail">Fail</span>' in finished
    assert "progress-bar" not in finished
    # and the form: the endpoint, the scenarios in words, the deployment, the time scale explained
    assert f'<option value="{endpoint.pk}" data-kind="vllm" selected>Acme vLLM · vLLM · {MODEL}</option>' in html
    for scenario in ("pulse", "long_tail", "failure", "custom"):
        assert f'id="scenario-{scenario}" value="{scenario}"' in html
    assert "Half the peak concurrency arrives within 10 s and is held for 3 minutes." in html
    assert f'<option value="{deployment.pk}">Acme chat</option>' in html
    assert "0.05 runs a quick check of about 10 s" in html
    assert 'id="no-endpoints"' not in html
    assert f'href="{reverse("frontend:load-tests")}"' in html  # the nav link


def test_without_an_endpoint_the_form_says_an_admin_registers_one(signed_in: Client):
    html = _html(signed_in.get(reverse("frontend:load-tests")))
    notice = html[html.index('id="no-endpoints"') :].split("</div>")[0]
    assert "an admin of your organisation must register one first" in notice
    assert f'href="{reverse("frontend:endpoints")}"' in notice
    assert 'id="no-tests"' in html


@pytest.mark.parametrize(
    ("form", "field", "english", "chinese"),
    [
        pytest.param(
            {**PULSE, "peak_concurrency": ""},
            "peak_concurrency",
            "Give the deployment&#x27;s peak concurrency (the scenarios load a share of it), or choose a "
            "deployment whose estimate gives it",
            "请填写部署的峰值并发数",
            id="no-peak",
        ),
        pytest.param(
            {**PULSE, "scenario": "failure"},
            "scenario",
            "A failure-injection test needs a way to cause the failure: an admin registers the command that "
            "kills a worker or drops a replica on the endpoint Acme vLLM",
            "故障命令",
            id="no-failure-command",
        ),
        pytest.param(
            {**PULSE, "scenario": "custom"},
            "concurrency",
            "A custom load needs a number of concurrent clients (closed loop) or a request rate (open loop)",
            "自定义负载需要",
            id="custom-without-load",
        ),
        pytest.param(
            {**PULSE, "scale": "2"},
            "scale",
            "Ensure this value is less than or equal to 1.0.",
            "1.0",
            id="scale-above-1",
        ),
        pytest.param(
            {**PULSE, "endpoint": ""}, "endpoint", "Choose the endpoint to test", "请选择要测试的端点", id="no-endpoint"
        ),
    ],
)
def test_a_refused_form_shows_the_reason_under_its_field_and_saves_nothing(
    signed_in: Client, endpoint: Endpoint, form: dict[str, str], field: str, english: str, chinese: str
):
    # given
    data = {"endpoint": str(endpoint.pk), **form}

    # when
    response = signed_in.post(reverse("frontend:load-tests"), data)
    chinese_response = signed_in.post(reverse("frontend:load-tests"), data, headers=ZH)

    # then
    assert response.status_code == 400
    assert english in _field_error(_html(response), field)
    assert 'id="loadtest-errors"' in _html(response)
    assert chinese in _field_error(_html(chinese_response), field)
    assert (LoadTest.objects.count(), BenchmarkRun.objects.count(), LoadTestShard.objects.count()) == (0, 0, 0)
    # the values come back as typed
    assert (
        'name="input_tokens" min="1" max="1000000" step="1" inputmode="numeric"\n                 value="128"'
        in _html(response)
    )


def test_another_organisations_endpoint_is_refused(signed_in: Client, other_job: LoadTest):
    response = signed_in.post(reverse("frontend:load-tests"), {**PULSE, "endpoint": str(other_job.endpoint_id)})
    assert response.status_code == 400
    assert "Choose one of your organisation&#x27;s registered endpoints" in _field_error(_html(response), "endpoint")
    assert LoadTest.objects.count() == 1


def test_a_valid_form_queues_the_test_and_opens_its_page(
    signed_in: Client, endpoint: Endpoint, user, django_capture_on_commit_callbacks
):
    # when
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = signed_in.post(
            reverse("frontend:load-tests"),
            {
                **PULSE,
                "endpoint": str(endpoint.pk),
                "name": "quick pulse",
                "committed_gib_per_gpu": "20.5",
                "slo_e2e_ms": "",
            },
        )

    # then
    job = LoadTest.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("frontend:load-test", args=[job.pk])
    assert len(callbacks) == 1  # the shards are sent to the loadtests queue after the commit
    assert (job.name, job.scenario, job.status, job.peak_concurrency, job.workers) == (
        "quick pulse",
        "pulse",
        "queued",
        8,
        1,
    )
    assert job.slo == {"ttft_ms": 5000.0, "tpot_ms": 500.0}
    assert job.committed_bytes_per_gpu == round(20.5 * GIB) == 22_011_707_392
    load = job.plan["load"]
    assert (load["mode"], load["ramp_up_s"], load["concurrency"]) == ("closed", 0.5, 4)  # 10 s × 0.05, 50 % of 8
    assert job.plan["requests"]["input_tokens"] == 128
    assert job.created_by == user
    page = _html(signed_in.get(response["Location"]))
    assert "Load test quick pulse queued" in page


@pytest.mark.parametrize(
    ("gib", "exact", "expected"),
    [
        ("20.27", "21766298664", 21_766_298_664),  # the GiB field still shows the deployment's figure: its bytes
        ("20.5", "21766298664", round(20.5 * GIB)),  # the user changed it: what they typed
        ("20.27", "", round(20.27 * GIB)),  # no page script: the GiB typed
    ],
    ids=["shown-figure-keeps-its-bytes", "changed-figure", "no-exact-figure"],
)
def test_the_committed_figure_keeps_the_deployments_bytes_while_it_is_shown(
    signed_in: Client, endpoint: Endpoint, gib: str, exact: str, expected: int
) -> None:
    # given: the demo deployment commits 21,766,298,664 bytes (20.2716 GiB), which the page shows as 20.27 GiB;
    # 20.27 GiB is 21,764,979,098 bytes, 1.26 MB less: below a simulator gauge reading of 20,757 MiB
    form = {**PULSE, "endpoint": str(endpoint.pk), "committed_gib_per_gpu": gib, "committed_bytes_per_gpu": exact}

    # when
    response = signed_in.post(reverse("frontend:load-tests"), form)

    # then
    assert response.status_code == 302, _html(response)
    assert LoadTest.objects.get().committed_bytes_per_gpu == expected


def test_the_deployment_fills_the_defaults_server_side_too(
    signed_in: Client, endpoint: Endpoint, deployment: Deployment
):
    # given no peak and no SLO typed, a deployment chosen (as without the page script)
    form = {
        **PULSE,
        "endpoint": str(endpoint.pk),
        "deployment": str(deployment.pk),
        "peak_concurrency": "",
        "slo_ttft_ms": "",
        "slo_tpot_ms": "",
    }

    # when
    response = signed_in.post(reverse("frontend:load-tests"), form)

    # then its SLOs and the peak concurrency its estimate holds were used
    assert response.status_code == 302, _html(response)
    job = LoadTest.objects.get()
    assert job.slo == {"ttft_ms": 100.0, "tpot_ms": 15.0}
    assert job.peak_concurrency is not None
    assert job.peak_concurrency > 1
    assert job.deployment == deployment


# --- a test's page ------------------------------------------------------------------------------------------------


def test_a_running_tests_page_shows_its_progress_workers_and_cancel(
    signed_in: Client, organisation: Organisation, endpoint: Endpoint
):
    # given a running test whose only worker sent 40 requests (37 done, 2 failed)
    job = _job(organisation, endpoint, name="live", status="running")
    LoadTestShard.objects.filter(job=job).update(
        status="running",
        worker="celery@gpu-box",
        stored=35,
        progress={
            "sent": 40,
            "done": 37,
            "ok": 35,
            "failed": 2,
            "in_flight": 3,
            "rate_per_s": 12.5,
            "elapsed_s": 3.25,
            "fraction": 0.4,
        },
    )

    # when
    html = _html(signed_in.get(reverse("frontend:load-test", args=[job.pk])))

    # then
    assert '<span class="status-pill status-running" id="loadtest-status" data-status="running">Running</span>' in html
    assert 'id="progress-done" data-progress="done">37</span>' in html
    assert 'data-progress="sent">of 40 sent</span>' in html
    assert 'id="progress-failed" data-progress="failed">2</dd>' in html
    assert 'id="progress-rate" data-progress="rate">12.5 requests/s</dd>' in html
    assert 'id="progress-elapsed" data-progress="elapsed">3.2 s</dd>' in html
    assert 'id="progress-ttft" data-progress="ttft">— / — ms</dd>' in html
    assert 'id="progress-bar" style="width: 40%"' in html
    shards = html[html.index('id="shards-table"') :].split("</table>")[0]
    assert "celery@gpu-box" in shards
    assert ">35</td>" in shards
    assert 'id="cancel-button"' in html
    assert 'id="delete-button"' not in html
    assert reverse("benchmarks:load-test-plan", args=[job.pk]) in html
    assert "python -m llm_sizing_loadgen run plan.json --out result.json" in html
    assert f'href="{reverse("frontend:benchmark", args=[job.run_id])}"' in html
    assert 'id="verdict-card"' not in html


def test_cancel_stops_a_running_test_and_ends_a_queued_one(
    signed_in: Client, organisation: Organisation, endpoint: Endpoint
):
    # given
    running = _job(organisation, endpoint, status="running")
    queued = _job(organisation, endpoint)

    # when
    first = signed_in.post(reverse("frontend:load-test-cancel", args=[running.pk]))
    second = signed_in.post(reverse("frontend:load-test-cancel", args=[queued.pk]))

    # then the running one is asked to stop (its workers see the flag), the queued one ends at once
    assert first.status_code == second.status_code == 302
    assert first["Location"] == reverse("frontend:load-test", args=[running.pk])
    running.refresh_from_db()
    queued.refresh_from_db()
    assert (running.status, running.cancel_requested) == ("running", True)
    assert (queued.status, queued.cancel_requested) == ("cancelled", True)
    page = _html(signed_in.get(first["Location"]))
    assert "Cancelling the test: what was measured is kept" in page
    assert 'id="cancel-button" disabled>Cancelling…</button>' in page
    ended = _html(signed_in.get(reverse("frontend:load-test", args=[queued.pk])))
    assert 'id="loadtest-cancelled"' in ended
    assert 'id="delete-button"' in ended


def test_a_finished_tests_page_shows_its_verdict(signed_in: Client, organisation: Organisation, endpoint: Endpoint):
    # given
    job = _job(organisation, endpoint, status="done", verdict=VERDICT)

    # when
    html = _html(signed_in.get(reverse("frontend:load-test", args=[job.pk])))
    chinese = _html(signed_in.get(reverse("frontend:load-test", args=[job.pk]), headers=ZH))

    # then the badge, the summary and each criterion measured against its limit, worded from its code
    assert 'id="verdict-badge" data-verdict="fail">Fail</span>' in html
    assert "Failed: SLO attainment" in html
    row = html[html.index('data-criterion="slo_attainment"') :].split("</tr>")[0]
    assert '<td class="num" data-field="measured">95.0%</td>' in row
    assert '<td class="num" data-field="limit">≥ 99.0%</td>' in row
    assert (
        "190 of 200 requests in the measurement window met every SLO (95.0%); at least 99.0% required, errors "
        "counting as misses"
    ) in row
    assert 'lang="en"' not in row
    assert "SLOs: TTFT ≤ 100 ms" in html
    # and the memory verdict's checks
    memory = html[html.index('id="memory-checks"') :].split("</table>")[0]
    assert "KV-cache usage peaked at 42.0%" in memory
    assert 'data-check="no_oom" data-verdict="unknown"' in memory
    assert 'id="delete-button"' in html
    assert 'id="cancel-button"' not in html
    assert "data-confirm=" in html
    # in Chinese
    assert "未通过" in chinese
    assert "SLO 达成率" in chinese
    assert "200 个请求中有 190 个" in chinese


def test_deleting_an_ended_test_removes_its_run_and_a_running_one_is_kept(
    signed_in: Client, organisation: Organisation, endpoint: Endpoint
):
    ended = _job(organisation, endpoint, status="done")
    running = _job(organisation, endpoint, status="running")

    response = signed_in.post(reverse("frontend:load-test-delete", args=[ended.pk]))
    refused = signed_in.post(reverse("frontend:load-test-delete", args=[running.pk]))

    assert response["Location"] == reverse("frontend:load-tests")
    assert refused["Location"] == reverse("frontend:load-test", args=[running.pk])
    assert list(LoadTest.objects.values_list("pk", flat=True)) == [running.pk]
    assert list(BenchmarkRun.objects.values_list("pk", flat=True)) == [running.run_id]


# --- the benchmark run's page -------------------------------------------------------------------------------------


def test_the_run_page_shows_the_verdict_and_the_server_chart(
    signed_in: Client, organisation: Organisation, endpoint: Endpoint
):
    # given a test that ended, its run carrying the verdict and the scraped server samples
    job = _job(organisation, endpoint, name="judged", status="done", verdict=VERDICT)
    BenchmarkRun.objects.filter(pk=job.run_id).update(
        status="done",
        verdict=VERDICT,
        server_series={
            "servers": [
                {
                    "engine": "vllm",
                    "instance": "engine=0",
                    "samples": [
                        {
                            "time": "2026-01-01T00:00:00Z",
                            "kv_cache_usage": 0.1,
                            "requests_running": 2,
                            "requests_waiting": 0,
                        },
                        {
                            "time": "2026-01-01T00:00:01Z",
                            "kv_cache_usage": 0.42,
                            "requests_running": 4,
                            "requests_waiting": 1,
                        },
                    ],
                }
            ]
        },
    )

    # when
    html = _html(signed_in.get(reverse("frontend:benchmark", args=[job.run_id])))

    # then
    assert 'id="verdict-badge" data-verdict="fail">Fail</span>' in html
    assert 'id="server-chart"' in html
    assert '"server_series": {"servers": [{"engine": "vllm"' in html
    assert f'href="{reverse("frontend:load-test", args=[job.pk])}" id="load-test-link"' in html


def test_the_run_page_says_a_load_test_is_measuring(signed_in: Client, organisation: Organisation, endpoint: Endpoint):
    job = _job(organisation, endpoint, name="measuring now", status="running")

    html = _html(signed_in.get(reverse("frontend:benchmark", args=[job.run_id])))

    assert '<span class="status-pill status-running" id="run-status">Measuring</span>' in html
    assert 'id="measuring-status"' in html
    assert f'href="{reverse("frontend:load-test", args=[job.pk])}" id="load-test-link"' in html
    assert 'id="verdict-card"' not in html
    assert 'id="server-chart"' not in html


# --- every string in Chinese --------------------------------------------------------------------------------------


def _template_msgids(text: str) -> set[str]:
    msgids = set(re.findall(r'{% translate "([^"]+)" %}', text)) | set(re.findall(r"{% translate '([^']+)' %}", text))
    for body in re.findall(r"{% blocktranslate[^%]*%}(.*?){% endblocktranslate %}", text, flags=re.DOTALL):
        for part in body.split("{% plural %}"):
            msgids.add(re.sub(r"{{ (\w+) }}", r"%(\1)s", part))
    return msgids


def _python_msgids(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("_", "gettext_lazy", "ngettext")
        ):
            for arg in node.args[: 2 if node.func.id == "ngettext" else 1]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.add(arg.value)
    return found


def test_every_string_of_the_load_test_pages_is_in_the_chinese_catalog() -> None:
    # given the templates' strings, those of the view modules and the model's choices
    names = (
        "loadtests.html",
        "loadtest_detail.html",
        "partials/loadtest_verdict.html",
        "benchmark_detail.html",
        "endpoints.html",
        "base.html",
    )
    msgids = _template_msgids("".join((TEMPLATES / name).read_text() for name in names))
    for module in ("views/loadtests.py", "views/benchmarks.py", "views/endpoints.py"):
        msgids |= _python_msgids(ROOT / "frontend" / module)
    with translation.override("en"):
        msgids |= {
            str(label)
            for choices in (LoadTest.Scenario.choices, LoadTest.Status.choices, BenchmarkRun.Status.choices)
            for _value, label in choices
        }
        msgids.add(str(Endpoint.Kind.SIMULATOR.label))
    catalog: dict[str, polib.POEntry] = {}
    for entry in polib.pofile(str(Path(settings.LOCALE_PATHS[0]) / "zh_Hans" / "LC_MESSAGES" / "django.po")):
        catalog[entry.msgid] = entry
        if entry.msgid_plural:
            catalog[entry.msgid_plural] = entry

    # when
    missing = {
        msgid
        for msgid in msgids
        if msgid not in catalog or not (catalog[msgid].msgstr or any(catalog[msgid].msgstr_plural.values()))
    }

    # then
    assert missing == set()
    assert {msgid for msgid in msgids if catalog[msgid].msgstr.endswith("。")} == set()


def test_every_script_string_is_in_the_blob_and_translated(signed_in: Client) -> None:
    # given the keys loadtests.js reads (the server chart's words are charts.js's own)
    source = (STATIC / "loadtests.js").read_text()
    read = set(re.findall(r"\bT\.(\w+)", source))
    built = {f"status_{status}" for status in ("queued", "running", "done", "cancelled", "failed")} | {
        f"slo_{key}" for key in ("ttft_ms", "tpot_ms", "e2e_ms")
    }
    english = words_in(signed_in, "loadtests", "en")

    # when
    chinese = words_in(signed_in, "loadtests", "zh-hans")

    # then every English sentence was translated (names, units and flags may stay as they are)
    assert read | built <= set(english)
    untranslated = {
        key
        for key, value in english.items()
        if chinese[key] == value and re.search(r"[a-z]{4,}", re.sub(r"\{\w+\}", "", value))
    }
    assert untranslated == set()


# --- the endpoint's failure command on the Endpoints page ---------------------------------------------------------


@pytest.fixture
def admin_browser(organisation: Organisation) -> Client:
    account = get_user_model().objects.create_user(username="lead", password="correct horse battery")
    Membership.objects.create(user=account, organisation=organisation, role=Membership.Role.ADMIN)
    client = Client()
    client.force_login(account)
    return client


def test_an_admin_sets_the_failure_command_as_a_command_line(admin_browser: Client, endpoint: Endpoint):
    # given the edit form
    url = reverse("frontend:endpoint-edit", args=[endpoint.pk])
    form = {
        "name": endpoint.name,
        "kind": "vllm",
        "base_url": endpoint.base_url,
        "model_name": MODEL,
        "metrics_url": endpoint.metrics_url,
        "api_key": "",
    }

    # when a command line with a quoted word is saved
    response = admin_browser.post(url, {**form, "failure_command": "kubectl delete pod 'vllm 0' -n serving"})

    # then it is stored as its words, and shown back as one line
    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.failure_command == ["kubectl", "delete", "pod", "vllm 0", "-n", "serving"]
    edit = _html(admin_browser.get(url))
    assert 'value="kubectl delete pod &#x27;vllm 0&#x27; -n serving"' in edit
    assert "The load-test worker runs it without a shell" in edit
    listing = _html(admin_browser.get(reverse("frontend:endpoints")))
    assert "<code>kubectl delete pod &#x27;vllm 0&#x27; -n serving</code>" in listing
    assert '<option value="simulator">Bundled simulator</option>' in listing


def test_a_bad_failure_command_comes_back_under_its_field(admin_browser: Client, endpoint: Endpoint):
    url = reverse("frontend:endpoint-edit", args=[endpoint.pk])
    form = {
        "name": endpoint.name,
        "kind": "vllm",
        "base_url": endpoint.base_url,
        "model_name": MODEL,
        "failure_command": "kubectl delete pod 'vllm-0",
    }

    english = admin_browser.post(url, form)
    chinese = admin_browser.post(url, form, headers=ZH)

    assert english.status_code == chinese.status_code == 400
    assert _field_error(_html(english), "failure_command") == (
        "the command line cannot be split into words: check the quotes"
    )
    assert _field_error(_html(chinese), "failure_command") == "命令行无法拆分成单词：请检查引号"
    endpoint.refresh_from_db()
    assert endpoint.failure_command == []
