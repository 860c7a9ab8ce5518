"""The latency-and-throughput page end to end in headless Debian Chromium with a real Celery worker: sweep the load
of Llama-3-8B on an L40S at the sample profile (the chart, the knee, the points), then search deployments over two
GPU types and see them ranked, those meeting the SLOs first."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from celery.contrib.testing.worker import start_worker
from playwright.sync_api import Page, expect

from deploy.celery import app as celery_app
from tests.browser.helpers import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

SAMPLE_NAME = "Sample: Q&A, reports, archive analysis"
JOB_TIMEOUT_MS = 45_000  # a sweep of 4 × 200 requests, or 6 candidates × 300 requests, takes seconds on one worker


@pytest.fixture
def worker(transactional_db) -> Iterator[None]:
    """A worker on the simulations queue, started before the browser (it shares the live server's database)."""
    with start_worker(celery_app, perform_ping_check=False, queues=["simulations"], pool="solo", shutdown_timeout=30):
        yield


def test_sweep_the_load_then_search_deployments(
    live_server, transactional_db, catalog: None, user, worker: None, page: Page
) -> None:
    # given a signed-in engineer who follows the header link
    sign_in(page, live_server.url)
    page.click('.topnav a[href="/performance/"]')
    page.wait_for_url(f"{live_server.url}/performance/")
    expect(page.locator('.topnav a[href="/performance/"]')).to_have_attribute("aria-current", "page")

    # when they set up Llama-3-8B on one L40S at the sample profile, with TTFT 2 s and TPOT 100 ms at P95
    page.select_option("#field-model", "meta-llama/Meta-Llama-3-8B")
    page.select_option("#field-gpu", "nvidia-l40s-48gb")
    page.fill("#field-max_model_len", "8192")
    page.select_option("#field-profile", label=SAMPLE_NAME)
    page.fill("#field-slo_ttft_s", "2")
    page.fill("#field-slo_tpot_ms", "100")
    expect(page.locator("#field-slo_percentile")).to_have_value("95")
    page.fill("#field-requests", "200")
    page.click("#group-sweep summary")
    page.fill("#field-sweep_points", "4")
    page.click("#sweep-button")

    # then the job runs on the worker and the sweep is drawn: throughput against the load, the knee marked
    expect(page.locator("#job-state")).to_have_text("Done", timeout=JOB_TIMEOUT_MS)
    expect(page.locator("#sweep-result")).to_be_visible()
    assert "?job=" in page.url
    page.wait_for_selector("#throughput-chart .main-svg")
    expect(page.locator("#throughput-chart .scatterlayer .trace")).to_have_count(1)
    expect(page.locator("#throughput-chart")).to_contain_text("Knee")
    expect(page.locator("#sweep-ttft-chart")).to_contain_text("SLO 2,000 ms")
    expect(page.locator("#sweep-tpot-chart")).to_contain_text("SLO 100 ms")
    expect(page.locator("#sweep-knee")).to_contain_text("The deployment saturates at about")
    expect(page.locator("#sweep-knee")).not_to_have_attribute("data-knee", "")
    expect(page.locator("#sweep-largest")).to_contain_text("meets the SLOs")
    rows = page.locator("#sweep-table tbody tr")
    expect(rows).to_have_count(4)
    expect(page.locator("#sweep-table tbody tr.row-knee")).to_have_count(1)
    expect(page.locator("#sweep-table .knee-tag")).to_have_text("knee")

    # when they search two GPU types at 1 and 2 GPUs, at the rate on the form (1 request/s)
    page.click("#group-search summary")
    page.check('input[name="search_gpus"][value="nvidia-l40s-48gb"]')
    page.check('input[name="search_gpus"][value="nvidia-h100-sxm-80gb"]')
    page.fill("#field-search_counts", "1, 2")
    page.click("#search-button")

    # then the six candidates (per GPU type: 1 × TP 1, 2 × TP 1, 2 × TP 2) come back ranked, those meeting the SLOs
    # first and the cheapest (one L40S at $0.86/h) on top
    expect(page.locator("#job-state")).to_have_text("Done", timeout=JOB_TIMEOUT_MS)
    expect(page.locator("#sweep-result")).to_be_hidden()
    candidates = page.locator("#search-table tbody tr")
    expect(candidates).to_have_count(6)
    first = candidates.nth(0)
    expect(first).to_have_attribute("data-meets", "true")
    expect(first).to_have_attribute("data-gpu", "nvidia-l40s-48gb")
    expect(first.locator(".rule-mark")).to_have_text("✓")
    expect(first).to_contain_text("1 × NVIDIA L40S 48GB · TP 1 × 1 replica(s)")
    expect(first).to_contain_text("$0.86")
    expect(page.locator("#search-summary")).to_contain_text("6 candidates · 6 fit in memory")
    expect(page.locator("#search-cheapest")).to_contain_text("Cheapest meeting the SLOs: 1 × NVIDIA L40S 48GB")
