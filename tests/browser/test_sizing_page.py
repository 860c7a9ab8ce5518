"""The sizing page end to end in headless Debian Chromium: sign in, estimate, read the charts, switch language."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
TIMEOUT_MS = 20_000

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def browser() -> Iterator[Browser]:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(locale="en-US", viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(TIMEOUT_MS)
    tab = context.new_page()
    yield tab
    context.close()


def _sign_in(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/")
    page.fill("#id_username", "engineer")
    page.fill("#id_password", "correct horse battery")
    page.click("#login-button")
    page.wait_for_url(f"{base_url}/")


def _estimate(page: Page) -> None:
    page.select_option("#field-model", "meta-llama/Meta-Llama-3-8B")
    page.select_option("#field-gpu", "nvidia-h100-sxm-80gb")
    page.click("#estimate-button")
    page.wait_for_selector("#memory-chart .main-svg")
    page.wait_for_selector("#memory-chart .trace.bars")
    page.wait_for_selector("#concurrency-chart .main-svg")


def test_sign_in_estimate_and_switch_to_chinese(live_server, transactional_db, catalog: None, user,
                                                page: Page) -> None:
    # given a signed-in engineer
    _sign_in(page, live_server.url)

    # when they estimate Llama-3-8B on one H100 SXM
    _estimate(page)

    # then the verdict, the memory bill and the charts are on the page
    expect(page.locator("#verdict")).to_have_attribute("data-fits", "true")
    expect(page.locator("#verdict .verdict-title")).to_have_text("Fits")
    kv_row = page.locator('#memory-table tr[data-row="kv_cache"]')
    expect(kv_row.locator("th")).to_have_text("KV cache")
    expect(kv_row.locator("td")).to_have_count(2)
    expect(page.locator('#memory-table tr[data-row="weights"] td').first).to_have_text("16.06")  # 8.03e9 × 2 B
    assert page.locator("#memory-chart .trace.bars").count() == 5  # one trace per component
    assert page.locator("#memory-chart .point").count() == 5  # one GPU: one bar per component
    expect(page.locator("#launch-command")).to_contain_text("vllm serve meta-llama/Meta-Llama-3-8B")

    # when they switch the page to Simplified Chinese
    page.click('.language-switch button[value="zh-hans"]')

    # then the labels are Chinese and the estimate is drawn again from the address
    page.wait_for_selector('html[lang="zh-hans"]')
    expect(page.locator('label[for="field-gpu_memory_utilization"]')).to_have_text("显存利用率")
    page.wait_for_selector("#memory-chart .trace.bars")
    expect(page.locator('#memory-table tr[data-row="kv_cache"] th')).to_have_text("KV 缓存")
    expect(page.locator("#verdict .verdict-title")).to_have_text("装得下")


def test_api_errors_are_shown_next_to_the_fields(live_server, transactional_db, catalog: None, user,
                                                 page: Page) -> None:
    # given a signed-in engineer
    _sign_in(page, live_server.url)

    # when they ask for more tensor parallelism than the API accepts
    page.select_option("#field-model", "meta-llama/Meta-Llama-3-8B")
    page.fill("#field-tp", "65")
    page.click("#estimate-button")

    # then the form shows the error next to TP and no result
    expect(page.locator('[data-error-for="tp"]')).not_to_be_empty()
    expect(page.locator("#form-error")).to_be_visible()
    expect(page.locator("#form-error")).to_contain_text("invalid_input")
    expect(page.locator("#field-tp")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#results")).to_be_hidden()
