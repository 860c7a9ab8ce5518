"""Load tests end to end in headless Debian Chromium (issue 7, "Done means"): a real Celery worker on the `loadtests`
queue (in this process) drives the bundled simulator (uvicorn in a thread, 20 × faster than the modelled L4). An admin
registers the simulator on the Endpoints page; on the Load tests page a deployment chosen fills its SLOs and peak
concurrency; then they run the pulse, long-tail and failure-injection scenarios at a small time scale: each test's
page shows its progress while it runs and ends with a benchmark run and a pass/fail verdict. A fourth test, cancelled
while running, ends "cancelled" with what it had measured; the page then reads in Chinese."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from celery.contrib.testing.worker import start_worker
from django.db import connections
from playwright.sync_api import Page, expect

from benchmarks_app.models import BenchmarkRequest, LoadTest
from benchmarks_app.simserver.app import create_app
from benchmarks_app.simserver.catalog import catalog_plan
from benchmarks_app.simserver.engine import SimEngine
from deploy.celery import app as celery_app
from sizing.models import Deployment, Gpu, LlmModel, Membership, Organisation
from sizing.services.deployments import deployment_create
from tests.browser.helpers import sign_in
from tests.simserver.helpers import ThreadedServer

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

MODEL = "meta-llama/Meta-Llama-3-8B"
L4 = "nvidia-l4-24gb"
FINAL = ("done", "cancelled", "failed")
END_TIMEOUT_MS = 60_000  # a scaled scenario lasts 7–13 s; the worker and the merge add a few


@pytest.fixture
def simulator() -> Iterator[str]:
    """The bundled simulator of Llama-3-8B on one L4, 8 × faster than modelled (requests of ~0.3 s: long enough
    that the generator's few milliseconds between a client's requests stay far below 5% of its time)."""
    engine = SimEngine.from_plan(catalog_plan(model=MODEL, gpu=L4), speedup=8.0)
    server = ThreadedServer(create_app(engine, model_name=MODEL, max_model_len=8192))
    server.start()
    yield server.url
    server.stop()


@pytest.fixture
def worker(transactional_db, settings) -> Iterator[None]:
    """A Celery worker on the loadtests queue, in this process; the shards start 0.3 s after they are queued."""
    settings.LOADTEST_START_LEAD_S = 0.3
    with start_worker(celery_app, queues=["loadtests"], pool="solo", perform_ping_check=False, shutdown_timeout=30):
        yield


@pytest.fixture
def admin(user):
    """The engineer the browser signs in as, made an admin of the organisation (admins register endpoints)."""
    Membership.objects.filter(user=user).update(role=Membership.Role.ADMIN)
    return user


@pytest.fixture
def deployment(catalog: None, organisation: Organisation, user) -> Deployment:
    """Llama 3 8B on one L4 with a TTFT SLO of 100 ms and a TPOT SLO of 15 ms (made before the browser starts)."""
    return deployment_create(
        organisation=organisation,
        user=user,
        data={
            "name": "Acme chat",
            "model": LlmModel.objects.get(slug=MODEL, organisation=None),
            "gpu": Gpu.objects.get(slug=L4),
            "gpu_count": 1,
            "tp": 1,
            "engine": "vllm",
            "slo": {"ttft_ms": 100, "tpot_ms": 15},
        },
    )


def _start(page: Page, base_url: str, *, scenario: str, scale: str, name: str) -> int:
    """Fill the "New load test" form (peak concurrency 8, 128/32 tokens, generous SLOs) and start it; its id."""
    page.goto(f"{base_url}/load-tests/")
    page.check(f"#scenario-{scenario}")
    page.fill("#field-name", name)
    page.fill("#field-peak_concurrency", "8")
    page.fill("#field-slo_ttft_ms", "5000")
    page.fill("#field-slo_tpot_ms", "500")
    page.fill("#field-input_tokens", "128")
    page.fill("#field-output_tokens", "32")
    page.fill("#field-scale", scale)
    page.click("#start-button")
    page.wait_for_url(re.compile(r".*/load-tests/\d+/$"))
    expect(page.locator("#loadtest-name")).to_have_text(name)
    return int(page.url.rstrip("/").rsplit("/", 1)[1])


def _stored(job_id: int) -> tuple[str, dict[str, Any], bool]:
    """The test as stored: its status, its verdict and whether its run holds requests. Read beside the browser, the
    ORM opens a connection of its own: it is closed at once, so that none outlives the test."""
    try:
        job = LoadTest.objects.get(pk=job_id)
        return job.status, job.verdict, BenchmarkRequest.objects.filter(run_id=job.run_id).exists()
    finally:
        connections.close_all()


def _done_count(page: Page) -> int:
    return int(re.sub(r"\D", "", page.locator("#progress-done").text_content() or "") or 0)


def _watch_until_ended(page: Page) -> int:
    """Follow the page while the test runs; the most requests done it showed before the test ended."""
    seen = 0
    deadline = time.monotonic() + END_TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        status = page.locator("#loadtest-status").get_attribute("data-status")
        if status in FINAL:
            break
        seen = max(seen, _done_count(page))
        page.wait_for_timeout(150)
    else:
        raise AssertionError("the test did not end in time")
    return seen


def _ends_with_a_verdict(page: Page, job_id: int) -> None:
    """The page swapped in the ended test: done, a pass/fail verdict, its run and the servers' metrics drawn."""
    expect(page.locator("#loadtest-status")).to_have_attribute("data-status", "done", timeout=END_TIMEOUT_MS)
    expect(page.locator("#verdict-card")).to_be_visible()
    verdict = page.locator("#verdict-badge").get_attribute("data-verdict")
    assert verdict in ("pass", "fail"), page.locator("#verdict-card").inner_text()
    expect(page.locator("#criteria-table tr[data-criterion=slo_attainment]")).to_be_visible()
    expect(page.locator("#run-link")).to_be_visible()
    page.wait_for_selector("#server-chart .main-svg")
    status, stored, has_requests = _stored(job_id)
    assert (status, stored["verdict"], has_requests) == ("done", verdict, True)


def test_an_admin_runs_the_scenarios_against_the_simulator(
    live_server, catalog: None, admin, deployment: Deployment, simulator: str, worker: None, page: Page
) -> None:
    base = live_server.url
    page.on("dialog", lambda dialog: dialog.accept())  # the cancel confirmation

    # given an admin who registers the bundled simulator on the Endpoints page
    sign_in(page, base)
    page.click(".topnav >> text=Endpoints")
    page.fill("#field-name", "Simulator")
    page.select_option("#field-kind", "simulator")
    page.fill("#field-base_url", simulator)
    page.fill("#field-model_name", MODEL)
    page.fill("#field-metrics_url", simulator + "/metrics")
    page.click("#register-endpoint")
    expect(page.locator("#endpoint-table")).to_contain_text("Bundled simulator")

    # when they run the pulse from the Load tests page
    page.click(".topnav >> text=Load tests")
    expect(page.locator("#scenario-pulse")).to_be_checked()
    expect(page.locator("#custom-fields")).to_be_hidden()
    page.check("#scenario-custom")
    expect(page.locator("#custom-fields")).to_be_visible()
    # a deployment chosen fills its SLOs and the peak concurrency its estimate holds, and says so
    page.select_option("#field-deployment", str(deployment.pk))
    expect(page.locator("#defaults-source")).to_contain_text("Filled from the deployment Acme chat: its SLOs (TTFT")
    expect(page.locator("#field-slo_ttft_ms")).to_have_value("100")
    expect(page.locator("#field-slo_tpot_ms")).to_have_value("15")
    expect(page.locator("#field-peak_concurrency")).not_to_have_value("")
    page.select_option("#field-deployment", "")
    expect(page.locator("#defaults-source")).to_be_hidden()
    pulse = _start(page, base, scenario="pulse", scale="0.04", name="pulse check")

    # then its page follows the requests as they are sent, and it ends with a verdict and a benchmark run
    assert _watch_until_ended(page) > 0, "the page never showed a request done while the test ran"
    _ends_with_a_verdict(page, pulse)
    page.click("#run-link")
    expect(page.locator("#verdict-card")).to_be_visible()
    expect(page.locator("#run-status")).to_have_text("Done")
    page.wait_for_selector("#server-chart .main-svg")

    # when they run the long tail and the failure injection
    long_tail = _start(page, base, scenario="long_tail", scale="0.02", name="long tail check")
    assert _watch_until_ended(page) > 0
    _ends_with_a_verdict(page, long_tail)
    failure = _start(page, base, scenario="failure", scale="0.05", name="failure check")
    assert _watch_until_ended(page) > 0
    _ends_with_a_verdict(page, failure)
    expect(page.locator("#criteria-table tr[data-criterion=fault_injected]")).to_have_attribute("data-verdict", "pass")
    expect(page.locator("#criteria-table tr[data-criterion=recovery_time]")).to_be_visible()

    # when they start a longer pulse and cancel it once requests are done
    cancelled = _start(page, base, scenario="pulse", scale="0.3", name="cancelled pulse")
    # a function, not an expression: Playwright evaluates an expression with eval, which the page's CSP refuses
    page.wait_for_function(
        "() => Number(document.getElementById('progress-done').textContent.replace(/\\D/g, '')) > 0",
        timeout=END_TIMEOUT_MS,
    )
    page.click("#cancel-button")

    # then it ends cancelled, keeping what it measured
    expect(page.locator("#loadtest-status")).to_have_attribute("data-status", "cancelled", timeout=END_TIMEOUT_MS)
    expect(page.locator("#loadtest-cancelled")).to_be_visible()
    assert _done_count(page) > 0
    expect(page.locator("#run-link")).to_be_visible()
    status, stored, has_requests = _stored(cancelled)
    assert (status, has_requests) == ("cancelled", True)
    if stored:  # judged over what was measured before it stopped
        assert stored["partial"] is True
        expect(page.locator("#verdict-partial")).to_be_visible()

    # and the list shows the four tests with their verdicts
    page.click(".breadcrumbs >> text=Load tests")
    expect(page.locator("#loadtests-table tbody tr")).to_have_count(4)
    for job_id in (pulse, long_tail, failure):
        expect(page.locator(f'#loadtests-table tr[data-job="{job_id}"] .health-badge')).to_be_visible()

    # when they read the cancelled test's page in Chinese
    page.goto(f"{base}/load-tests/{cancelled}/")
    page.click('.language-switch button[value="zh-hans"]')
    page.wait_for_selector('html[lang="zh-hans"]')
    expect(page.locator("#loadtest-status")).to_have_text("已取消")
    expect(page.locator("#progress-title")).to_have_text("进度")
    expect(page.locator(".topnav")).to_contain_text("压测")
