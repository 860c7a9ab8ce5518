"""The workload-profiles page: the profiles it lists (own and samples, nobody else's), the editor's template and the
API addresses its script calls, and every string in both languages."""

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

from sizing.models import Organisation, WorkloadProfile
from sizing.services.workloads import workload_profile_create, workload_sample_load
from tests.frontend.script_words import page_words, words_in

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "frontend" / "static" / "frontend"
TEMPLATE = ROOT / "frontend" / "templates" / "frontend" / "workloads.html"
SAMPLE_NAME = "Sample: Q&A, reports, archive analysis"
PROFILE = {
    "classes": [
        {"name": "chat", "share": 1, "input": {"kind": "fixed", "mean": 100}, "output": {"kind": "fixed", "mean": 50}}
    ]
}

pytestmark = pytest.mark.django_db


def _json_script(html: str, element_id: str) -> object:
    start = html.index(f'<script id="{element_id}" type="application/json">')
    return json.loads(html[start:].split(">", 1)[1].split("</script>")[0])


def test_workloads_page_redirects_anonymous_users_to_login(client: Client) -> None:
    # when
    response = client.get(reverse("frontend:workloads"))
    # then
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('frontend:login')}?next=/workloads/"


def test_workloads_page_lists_the_sample_first_and_only_the_organisations_profiles(
    client: Client, user, organisation: Organisation
) -> None:
    # given the sample, a profile of the user's organisation and one of another organisation
    sample = workload_sample_load()
    own = workload_profile_create(organisation=organisation, user=user, name="Acme chat", profile=PROFILE)
    workload_profile_create(
        organisation=Organisation.objects.create(name="Other"), user=None, name="Theirs", profile=PROFILE
    )
    client.force_login(user)
    # when
    html = client.get(reverse("frontend:workloads")).content.decode()
    # then
    assert _json_script(html, "workload-profiles") == [
        {"id": sample.pk, "name": SAMPLE_NAME, "sample": True, "source": "sample", "has_fit": False},
        {"id": own.pk, "name": "Acme chat", "sample": False, "source": "manual", "has_fit": False},
    ]
    assert WorkloadProfile.objects.count() == 3


def test_workloads_page_renders_the_editor_and_the_api_addresses(client: Client, user) -> None:
    # given
    client.force_login(user)
    # when
    response = client.get(reverse("frontend:workloads"))
    # then
    assert response.status_code == 200
    html = response.content.decode()
    assert reverse("frontend:workloads") == "/workloads/"
    assert 'data-list-url="/api/v1/workloads/"' in html
    assert 'data-preview-url="/api/v1/workloads/preview"' in html
    assert 'data-import-url="/api/v1/workloads/import"' in html
    assert 'data-detail-url="/api/v1/workloads/0/"' in html
    # one class row as a template: name, share, prefix, hours, and kind/mean/std/bins/min/max for both sides
    row = html[html.index('id="class-row-template"') : html.index("</template>")]
    for name in ("name", "share", "shared_prefix_tokens", "windows"):
        assert f'data-name="{name}"' in row, name
    for side in ("input", "output"):
        for name in ("kind", "mean", "std", "bins", "minimum", "maximum"):
            assert f'data-name="{side}_{name}"' in row, (side, name)
    assert '<option value="lognormal">Lognormal</option>' in row
    assert '<option value="empirical">Empirical (histogram)</option>' in row
    # the arrival pattern, the chart, the import form and the fit report
    assert '<option value="burst">Poisson with a burst</option>' in html
    for element in (
        'id="field-burst_requests"',
        'id="daily-chart"',
        'id="class-table"',
        'id="import-file"',
        'id="fit-table"',
        'id="fit-charts"',
        'id="profile-list"',
    ):
        assert element in html, element
    assert "Up to 8.0 MiB." in html  # SIZING_MAX_WORKLOAD_CSV_BYTES
    assert static("vendor/plotly/plotly.min.js") in html
    assert f'<script type="module" src="{static("frontend/workloads.js")}">' in html
    assert reverse("frontend:javascript-catalog") in html


def test_every_page_links_the_workloads_page(client: Client, catalog: None, user) -> None:
    # given
    client.force_login(user)
    # when
    pages = {
        name: client.get(reverse(f"frontend:{name}")).content.decode()
        for name in ("sizing", "bootlog", "colocated", "workloads")
    }
    # then
    for html in pages.values():
        assert 'href="/workloads/"' in html
    assert re.search(r'href="/workloads/" class="topnav-link is-active"\s*aria-current="page"', pages["workloads"])
    assert not re.search(r'href="/workloads/" class="topnav-link is-active"', pages["sizing"])


def test_workloads_script_and_stylesheet_are_served(client: Client) -> None:
    # when
    response = client.get(static("frontend/workloads.js"))
    # then
    assert response.status_code == 200


def test_workloads_page_in_chinese(client: Client, user) -> None:
    # given
    client.force_login(user)
    # when
    html = client.get(reverse("frontend:workloads"), headers={"accept-language": "zh-hans"}).content.decode()
    # then the template follows the glossary
    assert '<html lang="zh-hans">' in html
    assert ">负载画像</a>" in html  # the header link
    for text in (
        "请求类别",
        "到达模式",
        "活跃时段",
        "共享前缀 token 数",
        "用请求日志拟合画像",
        "拟合结果与数据对比",
        "KS 统计量",
        '<option value="lognormal">对数正态</option>',
        "最大 8.0 MiB",
    ):
        assert text in html, text
    strings = words_in(client, "workloads", "zh-hans")
    assert strings["busiest"] == "高峰时段 {hour}：占全天请求的 {share}"
    assert strings["save_copy"] == "另存副本"
    assert strings["fit_dispersion"] == "离散指数"
    assert strings["length_kinds"]["normal"] == "正态"


def test_every_script_string_of_the_workloads_page_is_translated(client: Client, user) -> None:
    # given
    client.force_login(user)
    english = words_in(client, "workloads", "en")
    # when
    chinese = words_in(client, "workloads", "zh-hans")
    # then every English sentence was translated (names, units and placeholders may stay as they are)
    flat_english = {
        **{k: v for k, v in english.items() if isinstance(v, str)},
        **{f"length_kinds.{k}": v for k, v in english["length_kinds"].items()},
    }
    flat_chinese = {**chinese, **{f"length_kinds.{k}": v for k, v in chinese["length_kinds"].items()}}
    untranslated = {
        key
        for key, value in flat_english.items()
        if flat_chinese[key] == value and re.search(r"[a-z]{4,}", re.sub(r"\{\w+\}", "", value))
    }
    assert untranslated == set()


def test_every_string_the_workloads_script_reads_is_in_its_blob() -> None:
    # given the fixed keys the script reads, and those it builds: T[side] and T[source]
    source = (STATIC / "common.js").read_text() + (STATIC / "workloads.js").read_text()
    read = set(re.findall(r"\bT\.(\w+)", source)) | set(re.findall(r'\bT\["(\w+)"\]', source))
    built = {"input", "output", "data", "fitted"}
    # then (common.js's own keys belong to the pages that use those helpers)
    common_only = {"gib_value", "engine_names"}
    assert (read | built) - common_only <= set(page_words("workloads"))


def test_every_template_string_of_the_workloads_page_is_in_the_chinese_catalog() -> None:
    # given the template's {% translate %} strings and the committed catalog
    text = TEMPLATE.read_text() + (ROOT / "frontend" / "templates" / "frontend" / "base.html").read_text()
    msgids = set(re.findall(r'{% translate "([^"]+)" %}', text)) | set(re.findall(r"{% translate '([^']+)' %}", text))
    catalog = {
        entry.msgid: entry
        for entry in polib.pofile(str(Path(settings.LOCALE_PATHS[0]) / "zh_Hans" / "LC_MESSAGES" / "django.po"))
    }
    # when
    missing = {msgid for msgid in msgids if msgid not in catalog or not catalog[msgid].msgstr}
    fuzzy = {msgid for msgid in msgids if msgid in catalog and catalog[msgid].fuzzy}
    # then no Chinese label ends with 。 (docs/i18n-glossary.md)
    assert missing == set()
    assert fuzzy == set()
    assert {msgid for msgid in msgids if catalog[msgid].msgstr.endswith("。")} == set()
