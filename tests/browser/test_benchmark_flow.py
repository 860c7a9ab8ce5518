"""Benchmark runs end to end in headless Debian Chromium: a run's page draws its latency CDFs beside the metrics
table, and two runs ticked on the list open side by side."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from benchmarks_app.models import BenchmarkRun
from sizing.models import Organisation
from tests.browser.helpers import sign_in
from tests.frontend.test_benchmark_pages import make_run, stat

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def two_runs(transactional_db, organisation: Organisation) -> tuple[BenchmarkRun, BenchmarkRun]:
    """Two runs of the engineer's organisation, the second with a slower first token (made before the browser
    starts: the test's own thread then holds no database connection of its own)."""
    first = make_run(organisation, "baseline run")
    second = make_run(organisation, "tuned run", metrics={**first.metrics, "ttft_ms": stat(135.0)})
    return first, second


def test_read_a_run_then_compare_two(
    live_server, transactional_db, catalog: None, user, two_runs: tuple[BenchmarkRun, BenchmarkRun], page: Page
) -> None:
    first, second = two_runs

    # when they sign in and open the first run from the header's benchmarks page
    sign_in(page, live_server.url)
    page.click(".topnav >> text=Benchmarks")
    page.wait_for_url(f"{live_server.url}/benchmarks/")
    page.click(f'#runs-table tr[data-run="{first.pk}"] th a')
    page.wait_for_url(f"{live_server.url}/benchmarks/{first.pk}/")

    # then the metrics table and the TTFT distribution are drawn
    expect(page.locator('#metrics-table tr[data-metric="ttft_ms"] td[data-field="p50"]')).to_have_text("85.5")
    expect(page.locator('#request-counts [data-count="failed"] dd')).to_contain_text("2")
    page.wait_for_selector("#cdf-ttft_ms .main-svg")
    expect(page.locator("#cdf-ttft_ms .scatterlayer .trace")).to_have_count(1)
    expect(page.locator("#cdf-ttft_ms")).to_contain_text("Time to first token: 198 requests")

    # when they go back to the list, tick both runs and compare
    page.click(".breadcrumbs >> text=Benchmarks")
    page.wait_for_url(f"{live_server.url}/benchmarks/")
    page.click("#compare-button")
    expect(page.locator("#runs-error")).to_have_text("Tick exactly two runs to compare")
    page.check(f"#pick-{first.pk}")
    page.check(f"#pick-{second.pk}")
    expect(page.locator("#selection-count")).to_have_text("2 selected")
    page.click("#compare-button")

    # then the two runs stand side by side, the older as A, with their differences and both CDFs overlaid
    page.wait_for_url(re.compile(r".*/benchmarks/compare\?run=\d+&run=\d+$"))
    expect(page.locator("#compare-metrics")).to_be_visible()
    row = page.locator('#compare-metrics tr[data-metric="ttft_ms"][data-field="mean"]')
    expect(page.locator("#compare-a a")).to_have_text("baseline run")
    expect(row.locator(".diff-percent")).to_have_text("+50.0%")
    page.wait_for_selector("#cdf-ttft_ms .main-svg")
    expect(page.locator("#cdf-ttft_ms .scatterlayer .trace")).to_have_count(2)
