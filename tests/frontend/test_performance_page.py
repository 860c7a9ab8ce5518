"""The latency-and-throughput page: who may see it, the form and the API address its script calls, the header link,
and every string in both languages (the template's and the script's)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.templatetags.static import static
from django.test import Client
from django.urls import reverse

from sizing.estimator.engines import ENGINE_CHOICES
from sizing.models import Organisation
from sizing.services.workloads import workload_profile_create
from tests.frontend.script_words import page_words, words_in

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "frontend" / "static" / "frontend"
TEMPLATE = ROOT / "frontend" / "templates" / "frontend" / "performance.html"
CATALOG = Path(settings.LOCALE_PATHS[0]) / "zh_Hans" / "LC_MESSAGES" / "django.po"
SAMPLE_NAME = "Sample: Q&A, reports, archive analysis"
PROFILE = {
    "classes": [
        {"name": "chat", "share": 1, "input": {"kind": "fixed", "mean": 100}, "output": {"kind": "fixed", "mean": 50}}
    ]
}

pytestmark = pytest.mark.django_db


def _json_script(html: str, element_id: str) -> dict:
    start = html.index(f'<script id="{element_id}" type="application/json">')
    return json.loads(html[start:].split(">", 1)[1].split("</script>")[0])


def _select(html: str, element_id: str) -> str:
    start = html.index(f'id="{element_id}"')
    return html[start : html.index("</select>", start)]


def _flat(strings: dict) -> dict[str, str]:
    """The strings blob with nested dicts (engine names, load kinds) as "outer.inner" keys."""
    flat = {}
    for key, value in strings.items():
        if isinstance(value, dict):
            flat.update({f"{key}.{inner}": text for inner, text in value.items()})
        else:
            flat[key] = value
    return flat


def _english_words(text: str) -> bool:
    """Whether a string has English words left to translate: placeholders, parameter names (max_num_seqs) and
    abbreviations (TTFT, P95) do not count."""
    return re.search(r"[a-z]{4,}", re.sub(r"\{\w+\}|\w*_\w*", "", text)) is not None


def test_performance_page_redirects_anonymous_users_to_login(client: Client) -> None:
    # when
    response = client.get(reverse("frontend:performance"))

    # then
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('frontend:login')}?next=/performance/"


def test_performance_page_renders_the_form_the_actions_and_the_api_address(
    client: Client, catalog: None, user, organisation: Organisation
) -> None:
    # given the shipped catalogs (with the sample profile), one profile of the user's organisation and one of another
    workload_profile_create(organisation=organisation, user=user, name="Acme chat", profile=PROFILE)
    workload_profile_create(
        organisation=Organisation.objects.create(name="Other"), user=None, name="Theirs", profile=PROFILE
    )
    client.force_login(user)

    # when
    response = client.get(reverse("frontend:performance"))

    # then
    assert response.status_code == 200
    html = response.content.decode()
    assert reverse("frontend:performance") == "/performance/"
    assert f'data-simulations-url="{reverse("sizing:simulation-list")}"' in html
    # the deployment: the model preselected, every GPU and engine, the API's names
    assert '<option value="meta-llama/Meta-Llama-3-8B" selected>' in _select(html, "field-model")
    assert '<option value="nvidia-l40s-48gb">NVIDIA L40S 48GB</option>' in _select(html, "field-gpu")
    for engine in ENGINE_CHOICES:
        assert f'<option value="{engine}">' in _select(html, "field-engine")
    for name in (
        "gpus",
        "tp",
        "weights",
        "kv_dtype",
        "gpu_memory_utilization",
        "max_model_len",
        "max_num_seqs",
        "max_num_batched_tokens",
        "input_tokens",
        "output_tokens",
        "load",
        "rate",
        "concurrency",
        "requests",
        "seed",
    ):
        assert f'id="field-{name}" name="{name}"' in html, name
    # the traffic: samples marked in their own group, the organisation's profiles in theirs, nobody else's
    profiles = _select(html, "field-profile")
    samples = profiles[profiles.index('label="Samples"') : profiles.index("</optgroup>")]
    assert re.search(
        rf'<option value="\d+" data-sample="true">{re.escape(SAMPLE_NAME.replace("&", "&amp;"))}'
        r"</option>",
        samples,
    )
    assert re.search(r'label="Your organisation">\s*<option value="\d+">Acme chat</option>', profiles)
    assert "Theirs" not in html
    # the load kinds and the SLOs: TTFT in seconds, TPOT in milliseconds, P95 by default
    assert '<option value="concurrency">Concurrency (closed loop)</option>' in _select(html, "field-load")
    assert 'name="slo_ttft_s" min="0.001" step="any" value="2.0"' in html
    assert 'name="slo_tpot_ms" min="0.1" step="any" value="100"' in html
    assert '<option value="95" selected>P95</option>' in _select(html, "field-slo_percentile")
    assert 'data-error-for="slo.tpot_s"' in html
    # the search's choices: every GPU with its price, TP sizes, formats and engines
    assert re.search(
        r'name="search_gpus" value="nvidia-l40s-48gb">\s*<span>NVIDIA L40S 48GB</span>'
        r'<span class="check-detail">\$0.86/h</span>',
        html,
    )
    assert html.count('name="search_tps"') == 4
    assert 'name="search_weights" value="auto" checked' in html
    assert 'name="search_engines" value="vllm" checked' in html
    # the actions, the result panels the script fills and the measured-run template
    buttons = {
        "simulate": "simulate-button",
        "sweep": "sweep-button",
        "slo_search": "slo-search-button",
        "search": "search-button",
        "calibrate": "calibrate-button",
    }
    for kind, button in buttons.items():
        assert re.search(rf'id="{button}"[^>]* data-kind="{kind}"', html), kind
    for element in (
        "job-status",
        "job-progress",
        "throughput-chart",
        "sweep-ttft-chart",
        "sweep-tpot-chart",
        "sweep-table",
        "probe-table",
        "search-table",
        "latency-table",
        "ttft-histogram",
        "itl-histogram",
        "kv-chart",
        "class-table",
        "plan-figures",
        "efficiency-table",
        "calibration-table",
        "calibration-chart",
        "measurement-template",
    ):
        assert f'id="{element}"' in html, element
    row = html[html.index('id="measurement-template"') : html.index("</template>")]
    for name in ("label", "input_tokens", "output_tokens", "concurrency", "output_tokens_per_s", "ttft_ms", "tpot_ms"):
        assert f'data-name="{name}"' in row, name
    assert static("vendor/plotly/plotly.min.js") in html
    assert f'<script type="module" src="{static("frontend/performance.js")}">' in html
    assert reverse("frontend:javascript-catalog") in html


def test_every_page_links_the_performance_page(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    pages = {
        name: client.get(reverse(f"frontend:{name}")).content.decode()
        for name in ("sizing", "bootlog", "colocated", "workloads", "performance")
    }

    # then
    for html in pages.values():
        assert 'href="/performance/"' in html
    assert re.search(r'href="/performance/" class="topnav-link is-active"\s*aria-current="page"', pages["performance"])
    assert not re.search(r'href="/performance/" class="topnav-link is-active"', pages["sizing"])


def test_performance_script_is_served(client: Client) -> None:
    # when
    response = client.get(static("frontend/performance.js"))

    # then
    assert response.status_code == 200


def test_performance_page_in_chinese(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    html = client.get(reverse("frontend:performance"), headers={"accept-language": "zh-hans"}).content.decode()

    # then the template follows the glossary
    assert '<html lang="zh-hans">' in html
    assert ">性能</a>" in html  # the header link
    for text in (
        "延迟与吞吐量",
        "服务等级目标（SLO）",
        "首字延迟（秒）",
        "每 token 输出时延（毫秒）",
        "SLO 百分位",
        "负载扫描",
        "满足 SLO 的最大负载",
        "搜索部署方案",
        "用实测运行校准",
        "$0.86/小时",
        '<option value="rate">速率（开环）</option>',
        "自动速率取所有请求同时到达时部署完成速率的 10% 到 130%",
    ):
        assert text in html, text
    strings = words_in(client, "performance", "zh-hans")
    assert strings["metric_ttft"] == "首字延迟"
    assert strings["metric_tpot"] == "每 token 输出时延"
    assert strings["knee"] == "拐点"
    assert strings["reason_over"] == "{metric} P{percentile} {value} 秒 > {limit} 秒"
    assert strings["rate_value"] == "{value} 个请求/秒"
    assert strings["kind_slo_search"] == "满足 SLO 的最大负载"


def test_every_script_string_of_the_performance_page_is_translated(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)
    english = _flat(words_in(client, "performance", "en"))

    # when
    chinese = _flat(words_in(client, "performance", "zh-hans"))

    # then every English sentence was translated (engine names stay), and no Chinese one ends with 。
    untranslated = {
        key
        for key, value in english.items()
        if chinese[key] == value and _english_words(value) and not key.startswith("engine_names.")
    }
    assert untranslated == set()
    assert {key for key, value in chinese.items() if value.endswith("。")} == set()


def test_every_string_the_performance_script_reads_is_in_its_blob() -> None:
    # given the fixed keys the script reads, and those it builds from the API's values
    source = (STATIC / "common.js").read_text() + (STATIC / "performance.js").read_text()
    read = set(re.findall(r"\bT\.(\w+)", source)) | set(re.findall(r'\bT\["(\w+)"\]', source))
    built = {
        *(f"kind_{kind}" for kind in ("simulate", "sweep", "slo_search", "search", "calibrate")),
        *(f"status_{status}" for status in ("queued", "running", "done", "failed")),
        *(f"metric_{metric}" for metric in ("ttft", "tpot", "itl", "e2e")),
        *(f"metric_title_{metric}" for metric in ("ttft", "tpot", "itl", "e2e")),
        *(f"figure_{figure}" for figure in ("output_tokens_per_s", "ttft_ms", "tpot_ms")),
    }
    # then (common.js's own keys belong to the pages that use those helpers)
    common_only = {"gib_value"}
    assert (read | built) - common_only <= set(page_words("performance"))


def test_every_template_string_of_the_performance_page_is_in_the_chinese_catalog() -> None:
    # given the template's {% translate %} and {% blocktranslate %} strings and the committed catalog
    text = TEMPLATE.read_text()
    msgids = set(re.findall(r'{% translate "([^"]+)" %}', text)) | set(re.findall(r"{% translate '([^']+)' %}", text))
    msgids = {msgid.replace("%", "%%") for msgid in msgids}  # Django doubles % in template msgids
    blocks = re.findall(r"{% blocktranslate[^%]*%}(.*?){% endblocktranslate %}", text, re.DOTALL)
    msgids |= {re.sub(r"{{ (\w+) }}", r"%(\1)s", block) for block in blocks}
    catalog = {entry.msgid: entry for entry in polib.pofile(str(CATALOG))}

    # when
    missing = {msgid for msgid in msgids if msgid not in catalog or not catalog[msgid].msgstr}
    fuzzy = {msgid for msgid in msgids if msgid in catalog and catalog[msgid].fuzzy}

    # then no Chinese label ends with 。 (docs/i18n-glossary.md)
    assert len(msgids) > 100
    assert missing == set()
    assert fuzzy == set()
    assert {msgid for msgid in msgids if catalog[msgid].msgstr.endswith("。")} == set()
