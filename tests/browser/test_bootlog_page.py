"""The boot-log page end to end in headless Debian Chromium: paste a vLLM startup log, read the comparison and the
calibrated estimate, and carry the measured terms to the sizing page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.helpers import sign_in, wait_for_estimate

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# vLLM PR #10511 (Dec 2024): `vllm serve meta-llama/Meta-Llama-3-8B` on an H100 80GB
VLLM_PROFILE_LOG = """$ vllm serve meta-llama/Meta-Llama-3-8B
INFO 12-13 19:54:18 worker.py:243] Memory profiling results:
INFO 12-13 19:54:18 worker.py:243] duration     0.75 seconds
INFO 12-13 19:54:18 worker.py:243] total_gpu_memory     79.22GiB
INFO 12-13 19:54:18 worker.py:243] gpu_memory_utilization       0.90
INFO 12-13 19:54:18 worker.py:243] the current vLLM instance can use    71.29GiB
INFO 12-13 19:54:18 worker.py:243] model weights take   14.96GiB
INFO 12-13 19:54:18 worker.py:243] non_torch_memory     1.79GiB
INFO 12-13 19:54:18 worker.py:243] PyTorch activation peak memory       1.26GiB
INFO 12-13 19:54:18 worker.py:243] available_kv_cache_memory    53.29GiB
"""


def test_paste_a_vllm_log_compare_and_use_the_measured_terms(
    live_server, transactional_db, catalog: None, user, page: Page
) -> None:
    # given a signed-in engineer who follows the header link to the boot-log page
    sign_in(page, live_server.url)
    page.click(".topnav >> text=Boot log")
    page.wait_for_url(f"{live_server.url}/bootlog/")

    # when they paste the log, choose the H100 it ran on and compare
    page.fill("#field-text", VLLM_PROFILE_LOG)
    page.select_option("#field-gpu", "nvidia-h100-sxm-80gb")
    page.click("#compare-button")
    page.wait_for_selector("#comparison-table tr[data-figure]")

    # then the page names what the log says
    expect(page.locator('#log-facts [data-fact="engine"]')).to_contain_text("vLLM")
    expect(page.locator('#log-facts [data-fact="model"]')).to_contain_text("meta-llama/Meta-Llama-3-8B")
    # and the comparison table sets the logged weights (14.96 GiB) against the estimate (16,060,522,496 bytes)
    weights = page.locator('#comparison-table tr[data-figure="weights_bytes"]')
    expect(weights.locator("th")).to_contain_text("Weights")
    expect(weights.locator("td.logged")).to_have_text("14.96 GiB")
    expect(weights.locator("td.estimated")).to_have_text("14.96 GiB")
    expect(weights).to_have_attribute("title", "INFO 12-13 19:54:18 worker.py:243] model weights take   14.96GiB")
    # the log's wording dates it to vLLM 0.6.5 (V0, regime P1): the rules put 0.05 GiB + 1 GiB of allocator
    # fragmentation in non-torch memory, 1.05 / 1.79 − 1 = −41.3 %
    expect(page.locator('#comparison-table tr[data-figure="non_torch_bytes"] td.relative')).to_have_text("-41.3%")
    # the source line of a figure opens under its row
    page.click('#comparison-table tr[data-figure="kv_cache_bytes"] .line-toggle')
    expect(page.locator("#comparison-table .source-row:visible")).to_contain_text("available_kv_cache_memory")
    # the calibration terms and the calibrated KV cache: budget − weights − measured activations and runtime
    expect(page.locator('#calibration [data-fact="runtime_reserve_bytes"]')).to_contain_text("1.79 GiB")
    # the total vLLM printed is what CUDA sees: the calibration hands it as the CUDA-visible total
    expect(page.locator('#calibration [data-fact="gpu_cuda_total_bytes"]')).to_contain_text("79.22 GiB")
    kv = page.locator('#calibrated-table tr[data-row="kv_cache"]')
    expect(kv.locator("td.estimate")).to_have_text(re.compile(r"^\d+\.\d\d$"))
    assert abs(float(kv.locator("td.calibrated").text_content()) - 53.29) <= 0.01  # as logged: 53.29 GiB
    expect(page.locator('#calibrated-table tr[data-row="runtime"] .source-badge')).to_have_text("calibrated")
    expect(page.locator('#calibrated-table tr[data-row="capacity"] .source-badge')).to_have_text("measured")

    # when they carry the measured terms to the sizing page
    page.click("#use-terms")
    wait_for_estimate(page)

    # then the sizing page has them in its form (in GiB) and the bill says they are calibrated and measured
    assert "runtime_reserve_bytes=1921997865" in page.url
    expect(page.locator("#measured-terms")).to_have_attribute("open", "")
    expect(page.locator("#field-runtime_reserve_bytes")).to_have_value("1.79")
    expect(page.locator("#field-activation_peak_bytes")).to_have_value("1.26")
    expect(page.locator("#field-gpu_cuda_total_bytes")).to_have_value("79.22")
    expect(page.locator('#memory-table tr[data-row="runtime"] .source-badge')).to_have_text("calibrated")
    expect(page.locator('#memory-table tr[data-row="capacity"] .source-badge')).to_have_text("measured")
    assert abs(float(page.locator('#memory-table tr[data-row="kv_cache"] td').last.text_content()) - 53.29) <= 0.01


def test_a_text_without_engine_lines_is_refused_next_to_the_field(
    live_server, transactional_db, catalog: None, user, page: Page
) -> None:
    # given a signed-in engineer on the boot-log page
    sign_in(page, live_server.url)
    page.goto(f"{live_server.url}/bootlog/")

    # when they compare nothing, then a text that is no startup log
    page.click("#compare-button")
    expect(page.locator('[data-error-for="text"]')).to_have_text("Please paste a startup log or choose a file")
    page.fill("#field-text", "hello")
    page.click("#compare-button")

    # then the API's reason is shown next to the text field and no result
    expect(page.locator('[data-error-for="text"]')).to_contain_text("no line of a vLLM or SGLang startup log")
    expect(page.locator("#form-error")).to_contain_text("invalid_argument")
    expect(page.locator("#bootlog-results")).to_be_hidden()
