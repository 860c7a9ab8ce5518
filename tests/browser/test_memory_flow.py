"""GPU memory end to end in headless Debian Chromium: a 72-hour nvidia-smi log uploaded with its commitment opens
its page, with the health verdict and the memory timeline drawn."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.helpers import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TIMELINE = Path(__file__).resolve().parents[1] / "benchmarks_app" / "results" / "fixtures" / "timeline"
HEALTHY = TIMELINE / "healthy_2gpu_72h.csv"


def test_upload_a_monitoring_log_and_read_its_verdict(live_server, transactional_db, user, page: Page) -> None:
    # when they sign in, open the GPU memory page from the header and upload the healthy log with its commitment
    sign_in(page, live_server.url)
    page.click(".topnav >> text=GPU memory")
    page.wait_for_url(f"{live_server.url}/memory/")
    expect(page.locator("#smi-command")).to_contain_text("nvidia-smi --query-gpu=timestamp,index,memory.used")
    page.set_input_files("#upload-file", str(HEALTHY))
    page.fill("#upload-committed_gib_per_gpu", "73.2421875")
    page.click("#upload-button")

    # then the log's page opens with the pass verdict and every check passed
    page.wait_for_url(re.compile(r".*/memory/\d+/$"))
    expect(page.locator("#verdict-badge")).to_have_text("Pass")
    expect(page.locator('#checks-table tr[data-passed="true"]')).to_have_count(5)
    # and the timeline: two GPUs, their totals and the commitment
    page.wait_for_selector("#memory-chart .main-svg")
    expect(page.locator("#memory-chart .scatterlayer .trace")).to_have_count(5)
    expect(page.locator("#memory-chart")).to_contain_text("Commitment (73.24 GiB per GPU)")
