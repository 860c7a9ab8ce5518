"""The sizing page tells one story (issue 18): the engine release it sizes for (a select of the modelled releases,
latest by default), the usage context and install, flags left empty for the release's defaults, and an answer
whose verdict, bill and remedies agree with each other.

The page draws the quick-estimate API's answer in its script (the browser tests drive that); here: what the server
renders, and the relations in the answer the script reads. vLLM's figures change with its release rules, so the
answer is checked for consistency, not for numbers."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from sizing.estimator.version_choices import VLLM_RELEASES, latest_vllm_release
from sizing.models import Gpu
from tests.frontend.script_words import WORDS, page_words, words_in

pytestmark = pytest.mark.django_db
QUICK = "/api/v1/estimates/quick"
ISSUE = {
    "model": "meta-llama/Meta-Llama-3-70B",
    "gpu": "nvidia-h100-sxm-80gb",
    "gpus": 2,
    "tp": 2,
    "max_model_len": 32768,
    "concurrency": 64,
}


def _select(html: str, name: str) -> str:
    return html[html.index(f'<select id="field-{name}"') :].split("</select>")[0]


def _field(html: str, name: str) -> str:
    """The select and its error slot."""
    start = html.index(f'<select id="field-{name}"')
    return html[start : html.index("</p>", html.index(f'data-error-for="{name}"', start))]


def test_the_release_select_offers_the_modelled_releases_with_latest_first(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    html = client.get(reverse("frontend:sizing")).content.decode()

    # then every offered release is an option, latest first and selected, each with what changes at it
    select = _select(html, "engine_version")
    values = re.findall(r'<option value="([^"]+)"', select)
    assert values == list(VLLM_RELEASES)
    assert f'<option value="latest" selected>latest ({latest_vllm_release()}) · the newest release modelled' in select
    assert '<option value="0.20.0">0.20.0 · gpu_memory_utilization 0.92 by default' in select
    # shown for vLLM only, as are the usage context and the install
    assert re.search(r'data-engines="vllm" id="engine-version-field">\s*<label for="field-engine_version">', html)
    assert re.findall(r'<option value="([^"]+)"', _select(html, "usage_context")) == ["serve", "llm"]
    assert re.findall(r'<option value="([^"]+)"', _select(html, "install")) == ["pip", "docker"]
    assert re.search(
        r'<div class="field-row field-row-2" data-engines="vllm">\s*<div class="field">\s*'
        r'<label for="field-usage_context">',
        html,
    )


def test_flags_left_empty_start_empty_for_the_release_to_resolve(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    html = client.get(reverse("frontend:sizing")).content.decode()

    # then gpu_memory_utilization has no value of its own (vLLM's default moved from 0.90 to 0.92 at 0.20)
    utilization = html[html.index('<input type="number" id="field-gpu_memory_utilization"') :].split(">")[0]
    assert "value=" not in utilization
    assert 'placeholder="engine default"' in utilization
    for name in ("max_num_seqs", "max_num_batched_tokens"):
        field = html[html.index(f'<input type="number" id="field-{name}"') :].split(">")[0]
        assert "value=" not in field


def test_the_page_knows_each_cards_own_total_beside_what_cuda_sees(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    html = client.get(reverse("frontend:sizing")).content.decode()

    # then the catalog's total per card is on the page: vLLM's bill counts from the CUDA-visible total, and the
    # page shows the card's beside it
    blob = html[html.index('<script id="gpu-memory" type="application/json">') :].split(">", 1)[1]
    memory = json.loads(blob.split("</script>")[0])
    assert memory["nvidia-h100-sxm-80gb"] == Gpu.objects.get(slug="nvidia-h100-sxm-80gb").memory_bytes


@pytest.mark.parametrize(
    ("query", "name", "value"),
    [
        ("engine_version=0.5.1", "engine_version", "0.5.1"),
        ("usage_context=batch", "usage_context", "batch"),
        ("install=conda", "install", "conda"),
    ],
    ids=["release older than modelled", "usage context", "install"],
)
def test_a_choice_the_page_does_not_offer_shows_the_message_beside_its_field(
    client: Client, catalog: None, user, query: str, name: str, value: str
) -> None:
    # given
    client.force_login(user)

    # when the address names a value the select does not offer
    html = client.get(f"{reverse('frontend:sizing')}?{query}").content.decode()

    # then the select keeps its default and the message stands beside it
    field = _field(html, name)
    assert 'aria-invalid="true"' in field
    assert f"Select a valid choice. {value} is not one of the available choices." in field
    first = re.search(r'<option value="([^"]+)"', field)
    assert first is not None
    assert f'<option value="{first.group(1)}" selected>' in field


def test_a_release_in_the_address_is_preselected(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    html = client.get(f"{reverse('frontend:sizing')}?engine_version=0.9.2&install=docker").content.decode()

    # then
    assert '<option value="0.9.2" selected>' in _select(html, "engine_version")
    assert '<option value="docker" selected>' in _select(html, "install")
    assert 'aria-invalid="true"' not in _field(html, "engine_version")


def test_the_new_strings_are_in_chinese(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    html = client.get(reverse("frontend:sizing"), headers={"accept-language": "zh-hans"}).content.decode()

    # then the form and the script's strings are Chinese
    assert '<label for="field-engine_version">vLLM 版本</label>' in html
    assert f'<option value="latest" selected>最新（{latest_vllm_release()}） · 已建模的最新版本' in html
    assert '<label for="field-usage_context">使用方式</label>' in html
    strings = words_in(client, "sizing", "zh-hans")
    assert strings["memory_left"] == "剩余显存（余量）：每张 GPU {value} GiB"
    assert strings["short_kv"] == "每请求 {tokens} 个 token 时 KV 缓存只能容纳 {concurrency} 个请求中的 {fit} 个"
    assert strings["binds_title"] == "制约因素"
    assert strings["remedy_kind_combination"] == "组合"
    # Django's own sentence, translated, with its placeholder in the script's form
    assert "%(value)s" in strings["choice_not_offered"]
    assert strings["choice_not_offered"] != page_words("sizing")["choice_not_offered"].msgid
    assert '.replace("%(value)s", "{value}")' in (WORDS / "sizing.js").read_text()


def test_the_answer_the_page_draws_tells_one_story(api_client, catalog: None) -> None:
    # given the issue's first try: 32k tokens of a model trained on 8k, on 2 x H100
    # when
    body = api_client.post(QUICK, ISSUE, format="json").json()

    # then it does not fit, and the remedies start with the context fix
    assert body["fits"] is False
    remedies = body["remedies"]
    assert [r["key"] for r in remedies[:2]] == ["context_limit", "rope_yarn"]
    assert remedies[0]["flag"] == "--max-model-len 8192"
    # the engine's budget is the CUDA-visible total times the utilization the release gave, below the card's total
    card = Gpu.objects.get(slug="nvidia-h100-sxm-80gb").memory_bytes
    utilization = body["assumptions"]["gpu_memory_utilization"]
    assert body["budget_bytes_per_gpu"] < body["capacity_bytes_per_gpu"] <= card
    assert abs(body["budget_bytes_per_gpu"] - body["capacity_bytes_per_gpu"] * utilization) <= 1
    assert body["defaults_assumed"]["gpu_memory_utilization"] == utilization
    assert body["engine_version_requested"] == "latest"
    assert body["engine_version"] == latest_vllm_release()
    # every memory figure a remedy gives is one a card can have, and what it frees is its change in KV room
    for remedy in remedies:
        assert 0 <= remedy["kv_room_bytes_after"] <= card
        assert remedy["freed_bytes_per_gpu"] == remedy["kv_room_bytes_after"] - remedy["kv_room_bytes_before"]
        assert remedy["kv_room_bytes_before"] == body["kv_cache_bytes_per_gpu"]
        assert remedy["max_concurrency_before"] == (
            body["concurrency_curve"]["max_concurrency_fit"] * body["replicas"] * body["dp"]
        )
    # a combination that fits, with the context fix and the exact flags, re-estimated to fit
    combination = next(r for r in remedies if r["kind"] == "combination" and r["fits"])
    assert combination["flag"].startswith("--max-model-len 8192")
    settings = {key: value for key, value in combination["settings"].items() if key != "rope_scaling"}
    again = api_client.post(QUICK, {**ISSUE, **settings}, format="json").json()
    assert again["fits"] is True
    assert again["gpus"] == combination["gpus"]


def test_an_answer_for_an_older_release_holds_for_that_release(api_client, catalog: None) -> None:
    # given the issue's request at vLLM 0.11.0 with the OpenAI server from the official image
    payload = {
        **ISSUE,
        "max_model_len": 8192,
        "engine_version": "0.11.0",
        "usage_context": "serve",
        "install": "docker",
    }

    # when
    body = api_client.post(QUICK, payload, format="json").json()

    # then the bill says which release it follows and that utilization took 0.11's default (0.90)
    assert (body["engine_version"], body["engine_version_requested"]) == ("0.11.0", "0.11.0")
    assert body["defaults_assumed"]["gpu_memory_utilization"] == pytest.approx(0.9)
