"""The sizing page end to end in headless Debian Chromium: sign in, estimate, read the charts, switch language;
remedies and solvers when a deployment does not fit; engine-specific inputs, formulas and checkpoint facts."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.browser.helpers import sign_in, wait_for_estimate

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _estimate(page: Page) -> None:
    page.select_option("#field-model", "meta-llama/Meta-Llama-3-8B")
    page.select_option("#field-gpu", "nvidia-h100-sxm-80gb")
    page.click("#estimate-button")
    wait_for_estimate(page)


def test_sign_in_estimate_and_switch_to_chinese(live_server, transactional_db, catalog: None, user, page: Page) -> None:
    # given a signed-in engineer
    sign_in(page, live_server.url)

    # when they estimate Llama-3-8B on one H100 SXM
    _estimate(page)

    # then the verdict, the memory bill and the charts are on the page
    expect(page.locator("#verdict")).to_have_attribute("data-fits", "true")
    expect(page.locator("#verdict .verdict-title")).to_have_text("Fits")
    kv_row = page.locator('#memory-table tr[data-row="kv_cache"]')
    expect(kv_row.locator(".row-name")).to_have_text("KV cache")
    expect(kv_row.locator("td")).to_have_count(2)
    expect(page.locator('#memory-table tr[data-row="weights"] td').first).to_have_text("16.06")  # 8.03e9 × 2 B
    assert page.locator("#memory-chart .trace.bars").count() == 5  # one trace per component
    assert page.locator("#memory-chart .point").count() == 5  # one GPU: one bar per component
    expect(page.locator("#launch-command")).to_contain_text("vllm serve meta-llama/Meta-Llama-3-8B")
    # vLLM preallocates: the page says what that means for the commitment
    expect(page.locator("#allocation")).to_have_attribute("data-allocation", "preallocated")
    expect(page.locator("#allocation")).to_contain_text("not running out of memory")
    # every bill row says where its figure comes from
    expect(page.locator('#memory-table tr[data-row="weights"] .source-badge')).to_have_text("estimated")
    expect(page.locator('#memory-table tr[data-row="capacity"] .source-badge')).to_have_text("catalog")
    expect(page.locator('#key-figures [data-figure="parameters_active"]')).to_contain_text("8,030,261,248")
    expect(page.locator("#risks")).to_be_hidden()
    expect(page.locator("#remedies")).to_be_hidden()

    # when they switch the page to Simplified Chinese
    page.click('.language-switch button[value="zh-hans"]')

    # then the labels are Chinese and the estimate is drawn again from the address
    page.wait_for_selector('html[lang="zh-hans"]')
    expect(page.locator('label[for="field-gpu_memory_utilization"]')).to_have_text("显存利用率")
    page.wait_for_selector("#memory-chart .trace.bars")
    expect(page.locator('#memory-table tr[data-row="kv_cache"] .row-name')).to_have_text("KV 缓存")
    expect(page.locator("#verdict .verdict-title")).to_have_text("装得下")
    expect(page.locator('#memory-table tr[data-row="weights"] .source-badge')).to_have_text("估算")
    expect(page.locator("#allocation .allocation-tag")).to_have_text("预分配")


def test_api_errors_are_shown_next_to_the_fields(
    live_server, transactional_db, catalog: None, user, page: Page
) -> None:
    # given a signed-in engineer
    sign_in(page, live_server.url)

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


def test_a_deployment_that_does_not_fit_lists_ranked_remedies_and_solves(
    live_server, transactional_db, catalog: None, user, page: Page
) -> None:
    # given a signed-in engineer
    sign_in(page, live_server.url)

    # when they size Llama-3.1-70B on 4 × H100 (TP 4) for 64 requests of 8192 tokens: the KV cache holds
    # 53 such requests, and an FP8 KV cache would hold 106
    page.select_option("#field-model", "meta-llama/Meta-Llama-3.1-70B")
    page.select_option("#field-gpu", "nvidia-h100-sxm-80gb")
    page.fill("#field-gpus", "4")
    page.fill("#field-tp", "4")
    page.fill("#field-concurrency", "64")
    page.fill("#field-tokens_per_request", "8192")
    page.click("#estimate-button")
    wait_for_estimate(page)

    # then it does not fit, the problems are in the verdict and the remedies are listed with their exact flags
    expect(page.locator("#verdict")).to_have_attribute("data-fits", "false")
    expect(page.locator("#verdict .verdict-problems li").first).to_be_visible()
    expect(page.locator("#remedies")).to_be_visible()
    kv_fp8 = page.locator('#remedy-list .remedy[data-key="kv_fp8"]')
    expect(kv_fp8.locator("code.remedy-flag")).to_have_text("--kv-cache-dtype fp8")
    expect(kv_fp8.locator(".remedy-title")).to_have_text("FP8 KV cache")
    expect(kv_fp8.locator(".remedy-mark")).to_be_visible()
    assert page.locator("#remedy-list .remedy").count() >= 3
    # ranked: every remedy that fits comes before every one that does not
    fits = [
        value == "true"
        for value in page.locator("#remedy-list .remedy").evaluate_all("items => items.map(item => item.dataset.fits)")
    ]
    assert fits == sorted(fits, reverse=True)

    # when they ask for the fewest GPUs that hold this load
    page.click('.solve-button[data-target="fewest_gpus"]')

    # then a small box gives the value and why it stops there
    box = page.locator('.solve-item[data-target="fewest_gpus"] .solve-result')
    expect(box).to_be_visible()
    expect(box).to_have_attribute("data-value", re.compile(r"^[1-9]\d*$"))
    expect(box.locator(".solve-value")).to_contain_text("GPUs")
    expect(box.locator(".solve-stops-text")).to_contain_text("the smallest layout that fits")

    # when they use that value
    gpus = box.get_attribute("data-value")
    box.locator(".solve-apply").click()

    # then the form takes the layout and the estimate fits
    expect(page.locator("#verdict")).to_have_attribute("data-fits", "true")
    expect(page.locator("#field-gpus")).to_have_value(gpus)
    expect(page.locator("#remedies")).to_be_hidden()


def test_engine_specific_inputs_and_the_formula_of_a_bill_row(
    live_server, transactional_db, catalog: None, user, page: Page
) -> None:
    # given a signed-in engineer with the advanced settings open
    sign_in(page, live_server.url)
    page.click("#group-advanced summary")

    # when they choose SGLang, then the idealized engine
    page.select_option("#field-engine", "sglang")

    # then only the chosen engine's inputs are shown
    expect(page.locator("#field-mem_fraction_static")).to_be_visible()
    expect(page.locator("#field-enforce_eager")).to_be_visible()
    expect(page.locator("#field-kv_cache_free_gpu_mem_fraction")).to_be_hidden()
    expect(page.locator("#field-gpu_memory_utilization")).to_be_hidden()
    page.select_option("#field-engine", "idealized")
    expect(page.locator("#field-weight_overhead")).to_be_visible()
    expect(page.locator("#field-mem_fraction_static")).to_be_hidden()
    expect(page.locator("#field-enforce_eager")).to_be_hidden()

    # when they estimate with vLLM and open the KV cache row
    page.select_option("#field-engine", "vllm")
    _estimate(page)
    page.click('#memory-table tr[data-row="kv_cache"] summary')

    # then the row shows vLLM's formula with the estimate's numbers: the budget is the CUDA-visible total (not the
    # card's) times the release's default utilization, and it is the budget row's figure
    formula = page.locator('#memory-table tr[data-row="kv_cache"] .formula-body')
    expect(formula).to_contain_text("Engine budget = CUDA-visible total × gpu_memory_utilization = ")
    expect(formula).to_contain_text("KV cache = engine budget − weights − activations − runtime reserve")
    budget_line = re.search(r"= ([\d.]+) GiB × ([\d.]+) = ([\d.]+) GiB", formula.inner_text())
    assert budget_line is not None
    cuda, utilization, budget = (float(value) for value in budget_line.groups())
    assert abs(cuda * utilization - budget) <= 0.01
    budget_row = page.locator('#memory-table tr[data-row="budget"] td').nth(1)
    expect(budget_row).to_have_text(f"{budget:.2f}")
    capacity = float(page.locator('#memory-table tr[data-row="capacity"] td').nth(1).inner_text())
    assert cuda < capacity


def test_checkpoint_facts_uploaded_for_the_selected_model_show_beside_the_computed_weights(
    live_server, transactional_db, catalog: None, user, page: Page
) -> None:
    # given Llama-2-7B estimated on an A100
    sign_in(page, live_server.url)
    page.select_option("#field-model", "meta-llama/Llama-2-7b-hf")
    page.select_option("#field-gpu", "nvidia-a100-sxm-80gb")
    page.click("#estimate-button")
    wait_for_estimate(page)
    expect(page.locator("#checkpoint-facts")).to_contain_text("No checkpoint facts")

    # when they upload its published index (total_size 13,476,839,424 bytes)
    index = {
        "metadata": {"total_size": 13476839424},
        "weight_map": {
            "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
            "lm_head.weight": "model-00002-of-00002.safetensors",
        },
    }
    page.click("#checkpoint-upload summary")
    page.set_input_files(
        "#checkpoint-index",
        files=[
            {
                "name": "model.safetensors.index.json",
                "mimeType": "application/json",
                "buffer": json.dumps(index).encode(),
            }
        ],
    )
    page.click("#checkpoint-button")

    # then the estimate compares the computed weights (2 × 6,738,415,616 bytes) with the checkpoint
    weights = page.locator('#checkpoint-table tr[data-row="weights"]')
    expect(weights).to_contain_text("13,476,831,232 bytes")
    expect(weights).to_contain_text("13,476,839,424 bytes")
    expect(weights).to_contain_text("+8,192 bytes")
    expect(page.locator("#checkpoint-facts .checkpoint-explanation").first).to_contain_text("8,192 bytes more")
    expect(page.locator("#models-own option[value='meta-llama/Llama-2-7b-hf']")).to_have_count(1)


def test_a_remedy_is_applied_from_its_settings(live_server, transactional_db, catalog: None, user, page: Page) -> None:
    # given Llama-3.1-70B on 2 × H100 (TP 2) for 64 requests of 8192 tokens, which does not fit
    sign_in(page, live_server.url)
    page.select_option("#field-model", "meta-llama/Meta-Llama-3.1-70B")
    page.select_option("#field-gpu", "nvidia-h100-sxm-80gb")
    page.fill("#field-gpus", "2")
    page.fill("#field-tp", "2")
    page.fill("#field-concurrency", "64")
    page.fill("#field-tokens_per_request", "8192")
    page.click("#estimate-button")
    wait_for_estimate(page)
    expect(page.locator("#verdict")).to_have_attribute("data-fits", "false")

    # then each remedy offers to apply the settings the API gives for it
    tp_double = page.locator('#remedy-list .remedy[data-key="tp_double"]')
    apply = tp_double.locator(".remedy-apply")
    expect(apply).to_have_text("Apply")
    settings = json.loads(apply.get_attribute("data-settings"))
    assert settings == {"gpus": 4, "tp": 4, "pp": 1}
    expect(tp_double.locator(".remedy-title")).to_have_text("4 GPUs with TP 4")
    int4 = page.locator('#remedy-list .remedy[data-key="weights_int4"]')
    expect(int4.locator(".remedy-action")).to_have_text("Serve an AWQ or GPTQ checkpoint of the model")
    assert json.loads(int4.locator(".remedy-apply").get_attribute("data-settings")) == {"weights": "int4"}

    # when they apply doubling the tensor parallelism
    apply.click()

    # then the form takes exactly those settings, the address keeps them and the estimate is redrawn for them
    expect(page.locator("#field-gpus")).to_have_value("4")
    expect(page.locator("#field-tp")).to_have_value("4")
    expect(page.locator("#field-pp")).to_have_value("1")
    expect(page.locator("#verdict .verdict-summary")).to_contain_text("on 4 × NVIDIA H100 SXM5 80GB · TP 4 · PP 1")
    query = parse_qs(urlsplit(page.url).query)
    assert (query["gpus"], query["tp"], query["pp"]) == (["4"], ["4"], ["1"])

    # when they also apply the FP8 KV cache
    page.locator('#remedy-list .remedy[data-key="kv_fp8"] .remedy-apply').click()

    # then the select shows it and the deployment fits
    expect(page.locator("#field-kv_dtype")).to_have_value("fp8")
    expect(page.locator("#verdict")).to_have_attribute("data-fits", "true")
    assert parse_qs(urlsplit(page.url).query)["kv_dtype"] == ["fp8"]


def test_speculative_decoding_traffic_shape_and_expert_parallel_inputs(
    live_server, transactional_db, catalog: None, user, page: Page
) -> None:
    # given a signed-in engineer
    sign_in(page, live_server.url)

    # then the expert-parallel checkbox shows for a mixture-of-experts model only
    page.select_option("#field-model", "meta-llama/Meta-Llama-3-8B")
    expect(page.locator("#field-expert_parallel")).to_be_hidden()
    page.select_option("#field-model", "Qwen/Qwen3-30B-A3B")
    expect(page.locator("#field-expert_parallel")).to_be_visible()

    # when they size Qwen3-30B-A3B over 2 H100 with DP 2 and expert parallelism
    page.select_option("#field-gpu", "nvidia-h100-sxm-80gb")
    page.fill("#field-gpus", "2")
    page.fill("#field-dp", "2")
    page.check("#field-expert_parallel")
    page.click("#estimate-button")
    wait_for_estimate(page)

    # then the summary and the key figures show DP and EP, and the rules of thumb stand beside the bill
    expect(page.locator("#verdict .verdict-summary")).to_contain_text("DP 2 · EP 2")
    expect(page.locator('#key-figures [data-figure="ep"]')).to_contain_text("2")
    expect(page.locator('#rules-table tr[data-rule="plan_limit"]')).to_contain_text(
        "plan at no more than 90% of the card"
    )
    expect(page.locator('#rules-table tr[data-rule="overhead_factor"] th')).to_have_text(
        re.compile(r"^\(weights \+ KV demand\) × 1\.\d+$")
    )
    expect(page.locator("#rules-table tbody tr")).to_have_count(3)
    # vLLM keeps a rotary cos/sin table with the weights
    expect(page.locator('#memory-table tr[data-row="weights"] .row-note')).to_contain_text("incl. rotary cache")

    # when they size Llama-3-8B with a Llama-3.2-1B draft, a shared system prompt without prefix caching, and n = 4
    page.select_option("#field-model", "meta-llama/Meta-Llama-3-8B")
    expect(page.locator("#field-expert_parallel")).to_be_hidden()
    page.fill("#field-gpus", "1")
    page.fill("#field-dp", "")
    page.click("#group-speculative summary")
    page.select_option("#field-draft_model", "meta-llama/Llama-3.2-1B")
    page.fill("#field-num_speculative_tokens", "4")
    page.click("#group-traffic summary")
    page.fill("#field-tokens_per_request", "4096")
    page.fill("#field-shared_prefix_tokens", "1000")
    page.uncheck("#field-prefix_caching")
    page.fill("#field-parallel_samples", "4")
    page.click("#estimate-button")

    # then n > 1 needs the output tokens: the API's error stands next to that input
    expect(page.locator('[data-error-for="output_tokens"]')).not_to_be_empty()

    # when they give them
    page.fill("#field-output_tokens", "512")
    page.click("#estimate-button")
    wait_for_estimate(page)

    # then the draft's weights are counted in the weights line and the address keeps every new input
    expect(page.locator("#verdict .verdict-summary")).to_contain_text(
        "draft model meta-llama/Llama-3.2-1B · 4 speculative tokens"
    )
    expect(page.locator('#key-figures [data-figure="weights_per_gpu"]')).to_contain_text("incl. draft model")
    expect(page.locator('#key-figures [data-figure="parallel_samples"]')).to_contain_text("4")
    for pair in (
        "draft_model=meta-llama%2FLlama-3.2-1B",
        "num_speculative_tokens=4",
        "shared_prefix_tokens=1000",
        "prefix_caching=false",
        "parallel_samples=4",
        "output_tokens=512",
    ):
        assert pair in page.url, pair
    assert "expert_parallel" not in page.url  # the hidden checkbox of the MoE model is not sent

    # when the page is opened again from the address
    page.goto(page.url)
    wait_for_estimate(page)

    # then the groups are open with the values restored
    expect(page.locator("#field-draft_model")).to_have_value("meta-llama/Llama-3.2-1B")
    expect(page.locator("#field-prefix_caching")).not_to_be_checked()
    expect(page.locator("#field-output_tokens")).to_have_value("512")
    expect(page.locator("#group-traffic")).to_have_attribute("open", "")


def _gib_figures(text: str) -> list[float]:
    return [float(value.replace(",", "")) for value in re.findall(r"([\d,]+\.\d+) GiB", text)]


def test_the_page_tells_one_story_when_the_context_is_above_the_model(
    live_server, transactional_db, catalog: None, user, page: Page
) -> None:
    # given a new user's first try (issue 18): Meta-Llama-3-70B (trained on 8192 tokens) on 2 × H100, vLLM,
    # a 32k context and 64 requests
    sign_in(page, live_server.url)
    page.select_option("#field-model", "meta-llama/Meta-Llama-3-70B")
    page.select_option("#field-gpu", "nvidia-h100-sxm-80gb")
    page.fill("#field-gpus", "2")
    page.fill("#field-tp", "2")
    page.fill("#field-max_model_len", "32768")
    page.fill("#field-concurrency", "64")

    # when they estimate with the release left at latest
    expect(page.locator("#field-engine_version")).to_have_value("latest")
    page.click("#estimate-button")
    wait_for_estimate(page)

    # then beside "Does not fit" the page says what is short, and the memory left keeps its own label
    verdict = page.locator("#verdict")
    expect(verdict).to_have_attribute("data-fits", "false")
    expect(verdict.locator('.verdict-short[data-short="context"]')).to_have_text(
        "Max model length 32,768 tokens is above the model's limit of 8,192 tokens"
    )
    expect(verdict.locator(".verdict-headroom")).to_contain_text("Memory left (headroom): ")
    expect(verdict.locator("#engine-release")).to_have_text(re.compile(r"^Rules of vLLM \d+\.\d+\.\d+ \(latest\)$"))

    # and the bill shows the card, what CUDA sees and the engine's budget apart, the budget their product
    def figure(row: str) -> float:
        return float(page.locator(f'#memory-table tr[data-row="{row}"] td').nth(1).inner_text())

    card, cuda, budget = figure("capacity"), figure("cuda_visible"), figure("budget")
    utilization = float(page.locator("#field-gpu_memory_utilization").get_attribute("placeholder").split()[-1])
    assert budget < cuda < card
    assert abs(cuda * utilization - budget) <= 0.01
    expect(page.locator('#memory-table tr[data-row="usable"]')).to_have_count(0)
    expect(page.locator('#defaults-assumed li[data-flag="gpu_memory_utilization"]')).to_contain_text(str(utilization))

    # and the context fix comes first with its exact flag, the RoPE-scaled variant second with the quality caveat
    remedies = page.locator("#remedy-list .remedy")
    expect(remedies.nth(0)).to_have_attribute("data-key", "context_limit")
    expect(remedies.nth(0).locator("code.remedy-flag")).to_have_text("--max-model-len 8192")
    expect(remedies.nth(1)).to_have_attribute("data-key", "rope_yarn")
    expect(remedies.nth(1).locator("code.remedy-flag")).to_contain_text('"rope_type": "yarn", "factor": 4.0')
    expect(remedies.nth(1).locator(".remedy-note")).to_contain_text("trained on 8,192 tokens")
    # and, no single change being enough, the smallest combination that fits with the combined flags
    combination = page.locator('#remedy-list .remedy[data-kind="combination"][data-fits="true"]').first
    expect(combination.locator("code.remedy-flag")).to_contain_text("--max-model-len 8192")
    # every "KV cache room" a remedy gives is memory a card can have
    for text in page.locator("#remedy-list .remedy-effect").all_inner_texts():
        assert all(value <= card for value in _gib_figures(text)), text

    # when they apply the first combination that fits
    combination.locator(".remedy-apply").click()

    # then it fits, and the verdict says how many requests the KV cache holds
    expect(verdict).to_have_attribute("data-fits", "true")
    expect(page.locator("#field-max_model_len")).to_have_value("8192")
    expect(verdict.locator(".verdict-holds")).to_contain_text("(64 asked)")


def test_a_kv_cache_short_of_the_requests_says_so_beside_the_verdict(
    live_server, transactional_db, catalog: None, user, page: Page
) -> None:
    # given Llama-3.1-70B on 2 × H100 (TP 2) with FP8 weights for 64 requests of 8192 tokens: the memory before
    # the KV cache fits, the KV cache holds fewer requests than asked
    sign_in(page, live_server.url)
    page.select_option("#field-model", "meta-llama/Meta-Llama-3.1-70B")
    page.select_option("#field-gpu", "nvidia-h100-sxm-80gb")
    page.fill("#field-gpus", "2")
    page.fill("#field-tp", "2")
    page.select_option("#field-weights", "fp8")
    page.fill("#field-max_model_len", "8192")
    page.fill("#field-concurrency", "64")

    # when they estimate
    page.click("#estimate-button")
    wait_for_estimate(page)

    # then the verdict says what is short in requests, beside a labelled (positive) memory left
    verdict = page.locator("#verdict")
    expect(verdict).to_have_attribute("data-fits", "false")
    short = verdict.locator('.verdict-short[data-short="kv"]')
    expect(short).to_have_text(re.compile(r"^KV cache holds \d+ of the 64 requests at 8,192 tokens$"))
    held = int(re.search(r"holds (\d+) of", short.inner_text()).group(1))
    assert held < 64
    expect(verdict.locator(".verdict-short")).to_have_count(1)
    left = _gib_figures(verdict.locator(".verdict-headroom").inner_text())
    assert left
    assert left[0] > 0
    # and the bill's KV demand row is marked short, the remedies that fit say how many requests they hold
    expect(page.locator('#memory-table tr[data-row="kv_demand"]')).to_have_class(re.compile("row-negative"))
    first = page.locator('#remedy-list .remedy[data-fits="true"]').first
    expect(first.locator(".remedy-effect")).to_contain_text("of the 64 requests at 8,192 tokens")
