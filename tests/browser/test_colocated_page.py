"""The shared-GPU page end to end in headless Debian Chromium: several deployments on one card, their bills
stacked against its capacity, errors placed in the row they belong to, the rows kept in the address."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.helpers import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _row(page: Page, index: int):
    return page.locator("#deployment-rows [data-row]").nth(index)


def _fill_row(page: Page, index: int, *, model: str, utilization: str) -> None:
    row = _row(page, index)
    row.locator('[data-name="model"]').select_option(model)
    row.locator('[data-name="engine"]').select_option("vllm")
    row.locator('[data-name="gpu_memory_utilization"]').fill(utilization)


def test_two_llama_3_8b_at_0_45_share_an_h100(live_server, transactional_db, catalog: None, user, page: Page) -> None:
    # given a signed-in engineer on the shared-GPU page
    sign_in(page, live_server.url)
    page.click('.topnav a[href="/colocated/"]')
    page.wait_for_url(f"{live_server.url}/colocated/")

    # then it starts with two rows, which cannot be removed below two
    rows = page.locator("#deployment-rows [data-row]")
    expect(rows).to_have_count(2)
    expect(_row(page, 0).locator(".remove-row")).to_be_disabled()

    # when they put two Llama-3-8B vLLM instances at 0.45 each on an H100 SXM
    page.select_option("#field-gpu", "nvidia-h100-sxm-80gb")
    _fill_row(page, 0, model="meta-llama/Meta-Llama-3-8B", utilization="0.45")
    _fill_row(page, 1, model="meta-llama/Meta-Llama-3-8B", utilization="0.45")
    page.click("#estimate-button")

    # then both fit, one stacked bar segment per deployment is drawn against the card, and the table adds them up
    expect(page.locator("#verdict")).to_have_attribute("data-fits", "true")
    expect(page.locator("#verdict .verdict-title")).to_have_text("Fits")
    expect(page.locator("#verdict .verdict-summary")).to_contain_text("2 deployments on one NVIDIA H100 SXM5 80GB")
    page.wait_for_selector("#colocated-chart .main-svg")
    expect(page.locator("#colocated-chart .trace.bars")).to_have_count(2)
    expect(page.locator("#colocated-chart")).to_contain_text("Card capacity 79.65 GiB")
    expect(page.locator('#colocated-table tr[data-deployment="0"]')).to_contain_text("1 · meta-llama/Meta-Llama-3-8B")
    expect(page.locator('#colocated-table tr[data-deployment="1"]')).to_contain_text("Fits")
    expect(page.locator('#colocated-table tr[data-deployment="capacity"]')).to_contain_text("79.65")
    assert "deployments=" in page.url

    # when they add a third copy, push its utilization out of range and estimate
    page.click("#add-row")
    expect(rows).to_have_count(3)
    expect(_row(page, 0).locator(".remove-row")).to_be_enabled()
    _row(page, 2).locator('[data-name="gpu_memory_utilization"]').fill("2")
    page.click("#estimate-button")

    # then the API's error stands next to that row's input, and only that row is marked
    third = _row(page, 2)
    expect(third.locator('[data-error-for="gpu_memory_utilization"]')).not_to_be_empty()
    expect(third.locator('[data-name="gpu_memory_utilization"]')).to_have_attribute("aria-invalid", "true")
    expect(third).to_have_attribute("data-invalid", "true")
    expect(_row(page, 0).locator('[data-error-for="gpu_memory_utilization"]')).to_be_empty()
    expect(page.locator("#form-error")).to_contain_text("invalid_input")
    expect(page.locator("#colocated-results")).to_be_hidden()

    # when they give the third one 0.2 of the card
    third.locator('[data-name="gpu_memory_utilization"]').fill("0.2")
    page.click("#estimate-button")

    # then the three do not fit together, and the problems say why
    expect(page.locator("#verdict")).to_have_attribute("data-fits", "false")
    expect(page.locator("#verdict .verdict-problems li").first).to_be_visible()
    expect(page.locator("#colocated-chart .trace.bars")).to_have_count(3)

    # when they remove the third row and switch to Chinese
    third.locator(".remove-row").click()
    expect(rows).to_have_count(2)
    page.click("#estimate-button")
    expect(page.locator("#verdict")).to_have_attribute("data-fits", "true")
    page.click('.language-switch button[value="zh-hans"]')

    # then the page comes back in Chinese with the same two rows, estimated again from the address
    page.wait_for_selector('html[lang="zh-hans"]')
    expect(rows).to_have_count(2)
    expect(_row(page, 1).locator('[data-name="gpu_memory_utilization"]')).to_have_value("0.45")
    expect(page.locator("#verdict .verdict-title")).to_have_text("装得下")
    expect(page.locator("#colocated-chart .trace.bars")).to_have_count(2)
