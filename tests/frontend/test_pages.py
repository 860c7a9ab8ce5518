"""The server-rendered pages: sign-in, the sizing, boot-log and shared-GPU pages in both languages, the translated
strings their scripts read, and plotly.js served as a static file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.templatetags.static import static
from django.test import Client
from django.urls import reverse

from sizing.estimator.engines import ENGINE_CHOICES, Allocation
from sizing.models import LlmModel
from sizing.services.estimates import SOLVER_TARGETS
from tests.frontend.script_words import keys_read_by, page_words, words_in

STATIC = Path(__file__).resolve().parents[2] / "frontend" / "static" / "frontend"

pytestmark = pytest.mark.django_db


def test_sizing_page_redirects_anonymous_users_to_login(client: Client) -> None:
    # given an anonymous visitor
    # when
    response = client.get(reverse("frontend:sizing"))

    # then
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('frontend:login')}?next=/"


def test_login_page_renders_the_form(client: Client) -> None:
    # when
    response = client.get(reverse("frontend:login"))

    # then
    assert response.status_code == 200
    assert b'name="username"' in response.content
    assert b'name="password"' in response.content


def test_login_form_signs_in_and_redirects_to_sizing(client: Client, user) -> None:
    # when
    response = client.post(reverse("frontend:login"), {"username": "engineer", "password": "correct horse battery"})

    # then
    assert response.status_code == 302
    assert response["Location"] == reverse("frontend:sizing")


def test_logout_needs_post_and_signs_out(client: Client, user) -> None:
    # given
    client.force_login(user)

    # when
    refused = client.get(reverse("frontend:logout"))
    response = client.post(reverse("frontend:logout"))

    # then
    assert refused.status_code == 405
    assert response.status_code == 302
    assert response["Location"] == reverse("frontend:login")
    assert client.get(reverse("frontend:sizing")).status_code == 302


def test_sizing_page_lists_catalog_gpus_and_models(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    response = client.get(reverse("frontend:sizing"))

    # then
    assert response.status_code == 200
    html = response.content.decode()
    assert '<option value="nvidia-h100-sxm-80gb">NVIDIA H100 SXM5 80GB</option>' in html
    # the default model is preselected
    assert '<option value="meta-llama/Meta-Llama-3-8B" selected>meta-llama/Meta-Llama-3-8B</option>' in html
    assert 'id="memory-chart"' in html
    assert 'id="concurrency-chart"' in html
    assert static("vendor/plotly/plotly.min.js") in html
    assert static("frontend/sizing.js") in html
    assert "engineer" in html


def test_sizing_page_marks_unsupported_models_disabled_with_the_reason(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)
    hybrid = LlmModel.objects.get(slug="nvidia/Nemotron-H-56B-Base-8K", organisation=None)

    # when
    html = client.get(reverse("frontend:sizing")).content.decode()

    # then
    assert hybrid.supported is False
    assert (
        f'<option value="nvidia/Nemotron-H-56B-Base-8K" disabled title="{hybrid.unsupported_reason}">'
        f"nvidia/Nemotron-H-56B-Base-8K — not supported: {hybrid.unsupported_reason}</option>"
    ) in html


def test_sizing_page_lists_the_organisations_uploads_first(client: Client, catalog: None, user, api_client) -> None:
    # given an upload by the user's organisation
    config = LlmModel.objects.get(slug="meta-llama/Llama-3.2-1B", organisation=None).config
    created = api_client.post("/api/v1/models/", {"slug": "acme/tiny-llama", "config": config}, format="json")
    client.force_login(user)

    # when
    html = client.get(reverse("frontend:sizing")).content.decode()

    # then the upload is listed in its own group, before the catalog, and preselected
    assert created.status_code == 201
    own_group = html[html.index('id="models-own"') : html.index('id="models-catalog"')]
    assert '<option value="acme/tiny-llama" selected>acme/tiny-llama</option>' in own_group


def test_sizing_page_embeds_the_translated_strings_for_the_script(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    response = client.get(reverse("frontend:sizing"), headers={"accept-language": "zh-hans"})

    # then
    assert response.status_code == 200
    strings = words_in(client, "sizing", "zh-hans")
    assert strings["kv_cache"] == "KV 缓存"
    assert strings["fits"] == "装得下"
    assert strings["memory_chart_title"] == "每张 GPU 的显存"


def test_sizing_page_in_chinese_from_accept_language(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    response = client.get(reverse("frontend:sizing"), headers={"accept-language": "zh-hans"})

    # then
    html = response.content.decode()
    assert response.status_code == 200
    assert '<html lang="zh-hans">' in html
    assert "大模型部署容量估算" in html
    assert "显存利用率" in html
    assert "退出登录" in html


def test_sizing_page_in_chinese_from_the_language_cookie(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"

    # when
    html = client.get(reverse("frontend:sizing")).content.decode()

    # then
    assert "估算" in html
    assert "KV 缓存数据类型" in html


def test_set_language_switches_to_chinese_and_back(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    switched = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/"})
    chinese = client.get(reverse("frontend:sizing")).content.decode()
    client.post("/i18n/setlang/", {"language": "en", "next": "/"})
    english = client.get(reverse("frontend:sizing")).content.decode()

    # then
    assert switched.status_code == 302
    assert "显存利用率" in chinese
    assert "GPU memory utilization" in english


def test_plotly_js_is_served_as_a_static_file(client: Client) -> None:
    # when
    response = client.get(static("vendor/plotly/plotly.min.js"))

    # then
    assert response.status_code == 200
    assert "javascript" in response["Content-Type"]
    body = b"".join(response.streaming_content) if response.streaming else response.content
    assert b"plotly.js v" in body[:200]
    assert len(body) > 1_000_000


@pytest.mark.parametrize(
    "path",
    ["frontend/common.js", "frontend/sizing.js", "frontend/bootlog.js", "frontend/colocated.js", "frontend/app.css"],
    ids=["shared script", "sizing script", "boot-log script", "shared-GPU script", "stylesheet"],
)
def test_page_assets_are_served(client: Client, path: str) -> None:
    # when
    response = client.get(static(path))

    # then
    assert response.status_code == 200


def test_sizing_page_offers_every_engine_and_its_own_inputs(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    html = client.get(reverse("frontend:sizing")).content.decode()

    # then every engine the estimator knows is offered, with a readable name
    for engine in ENGINE_CHOICES:
        assert f'<option value="{engine}">' in html
    assert '<option value="trtllm">TensorRT-LLM</option>' in html
    assert '<option value="llamacpp">llama.cpp</option>' in html
    # engine-specific inputs carry the engines they belong to; the script shows them for those only
    assert re.search(r'data-engines="sglang">\s*<label for="field-mem_fraction_static"', html)
    assert re.search(r'data-engines="trtllm">\s*<label for="field-kv_cache_free_gpu_mem_fraction"', html)
    assert re.search(r'data-engines="idealized">\s*<label for="field-weight_overhead"', html)
    assert re.search(r'data-engines="vllm sglang">\s*<label for="field-enforce_eager"', html)
    # the measured terms are typed in GiB and sent in bytes under the API's names
    for name in ("runtime_reserve_bytes", "cuda_graph_bytes", "activation_peak_bytes", "gpu_memory_bytes"):
        assert f'name="{name}" data-unit="gib"' in html
    # the result panels and the API addresses the script calls
    for element in ('id="risks"', 'id="remedies"', 'id="solve"', 'id="checkpoint"', 'id="checkpoint-upload"'):
        assert element in html
    assert f'data-solve-url="{reverse("sizing:estimate-solve")}"' in html
    assert f'data-checkpoint-url="{reverse("sizing:model-checkpoint")}"' in html
    assert f'<script type="module" src="{static("frontend/sizing.js")}"></script>' in html


def test_sizing_page_blob_has_the_new_strings_in_chinese(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    strings = words_in(client, "sizing", "zh-hans")

    # then
    assert strings["risks_title"] == "警告与风险"
    assert strings["remedies_title"] == "补救措施"
    assert strings["remedy_kv_fp8"] == "FP8 KV 缓存"
    assert strings["source_estimated"] == "估算"
    assert strings["source_calibrated"] == "校准"
    assert strings["source_measured"] == "实测"
    assert strings["allocation_preallocated"] == "预分配"
    assert strings["allocation_text_on_demand"].startswith("{engine} 随序列增长占用 KV 缓存显存")
    assert strings["parameters_active"] == "每个 token 的激活参数量"
    assert strings["kv_groups"] == "KV 缓存层分组"
    assert strings["stops_because"] == "受限于"
    assert strings["formula_headroom"] == "余量 = 可用 − 所需 = {usable} − {required} = {headroom}"
    assert strings["engine_names"]["idealized"] == "理想化引擎"


@pytest.mark.parametrize("module", ["sizing", "bootlog", "colocated"], ids=["sizing", "boot log", "shared GPU"])
def test_every_script_string_reaches_the_page_in_chinese(client: Client, catalog: None, user, module: str) -> None:
    # given the words of the page's script, as the catalog serves them in English
    client.force_login(user)
    english = {key: value for key, value in words_in(client, module, "en").items() if isinstance(value, str)}

    # when the reader reads Chinese
    chinese = words_in(client, module, "zh-hans")

    # then every English sentence was translated (names, units and flags may stay as they are)
    untranslated = {
        key
        for key, value in english.items()
        if chinese[key] == value and re.search(r"[a-z]{4,}", re.sub(r"\{\w+\}", "", value))
    }
    assert untranslated == set()


def test_every_string_the_scripts_read_is_in_their_blobs() -> None:
    # given the fixed keys the scripts read, and the keys they build from API values
    sizing = set(page_words("sizing"))
    bootlog = set(page_words("bootlog"))
    built_for_sizing = {
        *(f"allocation_{a.value}" for a in Allocation),
        *(f"allocation_text_{a.value}" for a in Allocation),
        *(f"source_{s}" for s in ("estimated", "calibrated", "measured", "catalog")),
        *(f"source_title_{s}" for s in ("estimated", "calibrated", "measured", "catalog")),
        *(f"solve_value_{target}" for target in SOLVER_TARGETS),
        "remedy_action_weights_int4",
        "remedy_action_replica",
        *(f"rule_{rule}" for rule in ("overhead_factor", "activations_share", "plan_limit")),
        *(f"rule_title_{rule}" for rule in ("overhead_factor", "activations_share", "plan_limit")),
        *(f"checkpoint_source_{s}" for s in ("index", "headers", "index+headers")),
    }
    figures = (
        "weights_bytes",
        "activation_peak_bytes",
        "non_torch_bytes",
        "kv_cache_bytes",
        "kv_cache_tokens",
        "max_concurrency",
        "cuda_graph_bytes",
        "budget_bytes",
        "total_gpu_memory_bytes",
    )
    built_for_bootlog = {
        *(f"figure_{figure}" for figure in figures),
        *(
            f"calibration_{term}"
            for term in ("runtime_reserve_bytes", "cuda_graph_bytes", "gpu_memory_bytes", "activation_peak_bytes")
        ),
        *(f"source_{s}" for s in ("estimated", "calibrated", "measured", "catalog")),
    }

    built_for_colocated = {"weights", "kv_cache", "activations", "runtime", "cuda_graphs", "capacity", "headroom"}

    # then (common.js reads its own words module)
    assert keys_read_by("sizing.js") | built_for_sizing <= sizing
    assert keys_read_by("bootlog.js") | built_for_bootlog <= bootlog
    assert keys_read_by("colocated.js") | built_for_colocated <= set(page_words("colocated"))
    assert keys_read_by("common.js") <= set(page_words("common"))


def test_bootlog_page_redirects_anonymous_users_to_login(client: Client) -> None:
    # when
    response = client.get(reverse("frontend:bootlog"))

    # then
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('frontend:login')}?next=/bootlog/"


def test_bootlog_page_lists_gpus_and_models_and_defaults_to_the_logs_model(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    response = client.get(reverse("frontend:bootlog"))

    # then
    assert response.status_code == 200
    html = response.content.decode()
    assert '<option value="nvidia-h100-sxm-80gb">NVIDIA H100 SXM5 80GB</option>' in html
    assert '<option value="" selected>As named in the log</option>' in html
    assert '<option value="meta-llama/Meta-Llama-3-8B">meta-llama/Meta-Llama-3-8B</option>' in html
    assert 'id="field-text" name="text"' in html
    assert 'id="field-file" name="file"' in html
    assert f'data-compare-url="{reverse("sizing:bootlog-compare")}"' in html
    for element in ('id="comparison-table"', 'id="calibrated-table"', 'id="calibration"', 'id="use-terms"'):
        assert element in html
    assert static("frontend/bootlog.js") in html
    assert f'<script type="module" src="{static("frontend/bootlog.js")}"></script>' in html
    assert static("vendor/plotly/plotly.min.js") not in html  # no charts on this page


def test_header_links_the_sizing_boot_log_and_shared_gpu_pages(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    sizing = client.get(reverse("frontend:sizing")).content.decode()
    bootlog = client.get(reverse("frontend:bootlog")).content.decode()
    colocated = client.get(reverse("frontend:colocated")).content.decode()

    # then every page links every page, and marks the current one
    for html in (sizing, bootlog, colocated):
        assert f'href="{reverse("frontend:bootlog")}"' in html
        assert f'href="{reverse("frontend:sizing")}"' in html
        assert f'href="{reverse("frontend:colocated")}"' in html
    assert re.search(r'href="/bootlog/" class="topnav-link is-active"\s*aria-current="page"', bootlog)
    assert re.search(r'href="/" class="topnav-link is-active"\s*aria-current="page"', sizing)
    assert re.search(r'href="/colocated/" class="topnav-link is-active"\s*aria-current="page"', colocated)


def test_bootlog_page_in_chinese(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    html = client.get(reverse("frontend:bootlog"), headers={"accept-language": "zh-hans"}).content.decode()

    # then the template and the script's strings are Chinese
    assert '<html lang="zh-hans">' in html
    assert "将启动日志与估算对比" in html
    assert "按日志中的模型" in html
    assert "日志值与估算值对比" in html
    assert "在容量估算页使用这些实测项" in html
    assert ">启动日志</a>" in html  # the header link
    strings = words_in(client, "bootlog", "zh-hans")
    assert strings["figure_weights_bytes"] == "权重"
    assert strings["figure_non_torch_bytes"] == "non-torch 显存（运行时预留）"
    assert strings["calibration_runtime_reserve_bytes"] == "运行时预留（non-torch 显存）"
    assert strings["compare"] == "对比"
    assert strings["source_calibrated"] == "校准"


# ---------------------------------------------------------------- parallelism, speculative decoding, traffic shape


def test_sizing_page_offers_the_parallelism_speculative_and_traffic_inputs(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    html = client.get(reverse("frontend:sizing")).content.decode()

    # then each new input is in its group, under the API's name
    groups = {
        "group-parallelism": ("dp", "expert_parallel"),
        "group-speculative": ("draft_model", "num_speculative_tokens"),
        "group-traffic": ("shared_prefix_tokens", "prefix_caching", "parallel_samples", "output_tokens"),
    }
    for group, names in groups.items():
        start = html.index(f'id="{group}"')
        body = html[start : html.index("</fieldset>" if group == "group-parallelism" else "</details>", start)]
        for name in names:
            assert f'id="field-{name}" name="{name}"' in body, (group, name)
    # prefix caching is on unless the user turns it off (the API's default)
    assert re.search(r'name="prefix_caching" value="true" checked', html)
    # the expert-parallel checkbox is for mixture-of-experts models: the script reads data-moe off the options
    assert 'id="expert-parallel-field" data-moe-only' in html

    def select(element_id: str) -> str:
        start = html.index(f'id="{element_id}"')
        return html[start : html.index("</select>", start)]

    model_select = select("field-model")
    assert '<option value="Qwen/Qwen3-30B-A3B" data-moe="true">' in model_select
    assert '<option value="mistralai/Mixtral-8x7B-v0.1" data-moe="true">' in model_select
    assert '<option value="meta-llama/Meta-Llama-3-8B" selected>' in model_select
    # the draft model list offers the same models, none preselected beyond "None"
    draft_select = select("field-draft_model")
    assert '<option value="" selected>None</option>' in draft_select
    assert '<option value="meta-llama/Llama-3.2-1B">meta-llama/Llama-3.2-1B</option>' in draft_select
    assert draft_select.count(" selected") == 1
    # the rules of thumb sit beside the bill
    assert 'id="rules-of-thumb"' in html
    assert "shown here for comparison only" in html


def test_sizing_page_new_groups_in_chinese(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    html = client.get(reverse("frontend:sizing"), headers={"accept-language": "zh-hans"}).content.decode()

    # then the template's labels follow the glossary
    for text in (
        "投机解码",
        "草稿模型",
        "前缀缓存",
        "共享前缀 token 数",
        "专家并行（EP）",
        "数据并行",
        "流量特征",
        "经验法则",
        "并行采样数（n）",
        "输出 token 数",
    ):
        assert text in html, text
    # and so do the script's strings
    strings = words_in(client, "sizing", "zh-hans")
    assert strings["rules_of_thumb"] == "经验法则"
    assert strings["rule_activations_share"] == "激活 ≈ KV 缓存需求的 20%"
    assert strings["rule_overhead_factor"] == "（权重 + KV 缓存需求）× {factor}"
    assert strings["incl_rope_cache"] == "含旋转位置编码缓存 {value} GiB"
    assert strings["incl_draft_weights"] == "含草稿模型 {value} GiB"
    assert strings["summary_draft"] == "草稿模型 {draft}"
    assert strings["remedy_apply"] == "应用"


# ---------------------------------------------------------------- the shared-GPU page


def test_colocated_page_redirects_anonymous_users_to_login(client: Client) -> None:
    # when
    response = client.get(reverse("frontend:colocated"))

    # then
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('frontend:login')}?next=/colocated/"


def test_colocated_page_renders_the_row_template_and_the_api_address(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    response = client.get(reverse("frontend:colocated"))

    # then
    assert response.status_code == 200
    html = response.content.decode()
    assert reverse("frontend:colocated") == "/colocated/"
    assert f'data-estimate-url="{reverse("sizing:estimate-colocated")}"' in html
    assert 'data-min-rows="2" data-max-rows="8"' in html
    assert '<option value="nvidia-h100-sxm-80gb">NVIDIA H100 SXM5 80GB</option>' in html
    # one row as a template the script clones: a model, an engine, a weight format and four numbers
    row = html[html.index('id="deployment-row-template"') : html.index("</template>")]
    for name in (
        "model",
        "engine",
        "weights",
        "gpu_memory_utilization",
        "max_model_len",
        "concurrency",
        "tokens_per_request",
    ):
        assert f'data-name="{name}"' in row, name
    assert '<option value="meta-llama/Meta-Llama-3-8B" selected>' in row
    assert 'data-name="gpu_memory_utilization" min="0.01" max="1" step="0.01"\n                 value="0.45"' in row
    assert 'data-engines="vllm tgi llamacpp transformers idealized"' in row
    for element in ('id="add-row"', 'id="colocated-chart"', 'id="colocated-table"', 'id="verdict"'):
        assert element in html
    assert static("vendor/plotly/plotly.min.js") in html
    assert f'<script type="module" src="{static("frontend/colocated.js")}"></script>' in html
    assert static("frontend/colocated.js") in html


def test_colocated_page_in_chinese(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)

    # when
    html = client.get(reverse("frontend:colocated"), headers={"accept-language": "zh-hans"}).content.decode()

    # then
    assert '<html lang="zh-hans">' in html
    assert "一张 GPU 上的多个部署" in html
    assert ">共享显卡</a>" in html  # the header link
    assert "添加部署" in html
    assert "合并估算" in html
    assert "2 到 8 个部署" in html
    strings = words_in(client, "colocated", "zh-hans")
    assert strings["estimate"] == "合并估算"
    assert strings["total"] == "合计"
    assert strings["summary"] == "{count} 个部署共用一张 {gpu_name}：需要 {required} GiB，共 {capacity} GiB"
    assert strings["kv_cache"] == "KV 缓存"


def test_bootlog_page_offers_to_keep_the_calibration(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)
    # when
    html = client.get(reverse("frontend:bootlog")).content.decode()
    chinese = client.get(reverse("frontend:bootlog"), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    # then
    assert 'id="field-save" name="save"' in html
    assert "Keep the measured terms as a calibration" in html
    assert "将实测项保存为校准" in chinese
