"""The Endpoints page (issue 7, part 1): sign-in, the organisation's walls, members see the list only while admins
register, change and delete (a member's write is a 403), refusals under their field in both languages with nothing
saved, the API key never rendered back, and every string of the page in the Chinese catalog."""

from __future__ import annotations

import re
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import translation

from benchmarks_app.models import Endpoint
from benchmarks_app.services.endpoints import endpoint_api_key, endpoint_create
from sizing.models import Membership, Organisation

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "frontend" / "templates" / "frontend"
KEY = "sk-page-Vb7Qm2Lx9Rt4Np1w"
FORM = {
    "name": "Simulator",
    "kind": "vllm",
    "base_url": "http://127.0.0.1:8001/",
    "model_name": "llama-3-8b",
    "metrics_url": "http://127.0.0.1:8001/metrics",
    "api_key": KEY,
}
ZH = {"accept-language": "zh-hans"}

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_user(organisation: Organisation):
    account = get_user_model().objects.create_user(username="lead", password="correct horse battery")
    Membership.objects.create(user=account, organisation=organisation, role=Membership.Role.ADMIN)
    return account


@pytest.fixture
def admin_browser(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


@pytest.fixture
def member_browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def endpoint(organisation: Organisation, admin_user) -> Endpoint:
    return endpoint_create(
        organisation=organisation,
        user=admin_user,
        data={
            "name": "Acme vLLM",
            "kind": "vllm",
            "base_url": "http://10.0.0.5:8000",
            "model_name": "Qwen/Qwen2.5-14B",
            "metrics_url": "http://10.0.0.5:8000/metrics",
            "api_key": KEY,
        },
    )


@pytest.fixture
def other_endpoint(db) -> Endpoint:
    other = Organisation.objects.create(name="Globex")
    return endpoint_create(
        organisation=other,
        user=None,
        data={"name": "Globex TGI", "kind": "tgi", "base_url": "http://172.16.0.9:3000", "model_name": "globex-model"},
    )


def _html(response) -> str:
    return response.content.decode()


def test_the_page_needs_a_sign_in(client: Client, endpoint: Endpoint):
    for url in (reverse("frontend:endpoints"), reverse("frontend:endpoint-edit", args=[endpoint.pk])):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("frontend:login"))
    assert client.post(reverse("frontend:endpoints"), FORM).status_code == 302
    assert client.post(reverse("frontend:endpoint-delete", args=[endpoint.pk])).status_code == 302
    assert Endpoint.objects.count() == 1


def test_a_member_sees_the_list_only(member_browser: Client, endpoint: Endpoint, other_endpoint: Endpoint):
    # when
    response = member_browser.get(reverse("frontend:endpoints"))

    # then
    html = _html(response)
    assert response.status_code == 200
    table = html[html.index('id="endpoint-table"') :].split("</table>")[0]
    assert "Acme vLLM" in table
    assert "Qwen/Qwen2.5-14B" in table
    assert "http://10.0.0.5:8000" in table
    assert "http://10.0.0.5:8000/metrics" in table
    assert ">vLLM<" in table
    assert '<span class="key-state key-set">Set</span>' in table
    assert "Globex" not in html
    assert 'id="endpoint-form"' not in html
    assert reverse("frontend:endpoint-edit", args=[endpoint.pk]) not in html
    assert reverse("frontend:endpoint-delete", args=[endpoint.pk]) not in html
    assert "Only an admin of your organisation can register, change or delete endpoints." in html
    assert "Load tests can target registered endpoints only." in html
    assert "http://127.0.0.1:8001" in html
    assert "python manage.py simserve" in html
    assert KEY not in html
    assert endpoint.api_key_encrypted not in html
    assert f'href="{reverse("frontend:endpoints")}"' in html  # the nav link


def test_a_member_cannot_write(member_browser: Client, endpoint: Endpoint):
    assert member_browser.post(reverse("frontend:endpoints"), {**FORM, "name": "Member's"}).status_code == 403
    assert member_browser.get(reverse("frontend:endpoint-edit", args=[endpoint.pk])).status_code == 403
    assert (
        member_browser.post(
            reverse("frontend:endpoint-edit", args=[endpoint.pk]), {**FORM, "clear_api_key": "on", "api_key": ""}
        ).status_code
        == 403
    )
    assert member_browser.post(reverse("frontend:endpoint-delete", args=[endpoint.pk])).status_code == 403
    endpoint.refresh_from_db()
    assert (Endpoint.objects.count(), endpoint.name, endpoint_api_key(endpoint)) == (1, "Acme vLLM", KEY)


def test_an_admin_registers_an_endpoint(admin_browser: Client):
    # given
    page = _html(admin_browser.get(reverse("frontend:endpoints")))
    assert 'id="endpoint-form"' in page
    assert 'id="no-endpoints"' in page

    # when
    response = admin_browser.post(reverse("frontend:endpoints"), FORM, follow=True)

    # then
    html = _html(response)
    assert response.redirect_chain == [(reverse("frontend:endpoints"), 302)]
    stored = Endpoint.objects.get()
    assert (stored.name, stored.base_url, stored.created_by.username) == ("Simulator", "http://127.0.0.1:8001", "lead")
    assert endpoint_api_key(stored) == KEY
    assert "Endpoint Simulator registered" in html
    assert KEY not in html
    assert reverse("frontend:endpoint-edit", args=[stored.pk]) in html


@pytest.mark.parametrize(
    ("change", "field", "english", "chinese"),
    [
        (
            {"base_url": "http://admin:pw@10.0.0.5:8000"},
            "base_url",
            "no user name or password in the URL: enter the API key in its own field",
            "URL 中不能含用户名或密码：请在 API 密钥栏中填写密钥",
        ),
        (
            {"base_url": "ftp://10.0.0.5"},
            "base_url",
            "the URL must start with http:// or https://",
            "URL 必须以 http:// 或 https:// 开头",
        ),
        (
            {"base_url": "http://10.0.0.5:8000/v1"},
            "base_url",
            "give the server&#x27;s root without /v1 (the load tests add /v1/...)",
            "请填写不带 /v1 的服务器根地址（压测会自动加上 /v1/...）",
        ),
        (
            {"metrics_url": "http://10.0.0.5/metrics#top"},
            "metrics_url",
            "no #fragment in the URL",
            "URL 中不能含 # 片段",
        ),
        (
            {"name": "Acme vLLM"},
            "name",
            "your organisation already has an endpoint named “Acme vLLM”; choose another name",
            "您的组织已有名为“Acme vLLM”的端点，请换一个名称",
        ),
    ],
)
def test_a_refusal_comes_back_under_its_field_in_both_languages(
    admin_browser: Client, endpoint: Endpoint, change, field, english, chinese
):
    for headers, words in (({}, english), (ZH, chinese)):
        # when
        response = admin_browser.post(reverse("frontend:endpoints"), {**FORM, **change}, headers=headers)

        # then
        html = _html(response)
        assert response.status_code == 400
        error = html[html.index(f'data-error-for="{field}"') :].split("</p>")[0]
        assert words in error
        assert KEY not in html  # the key input comes back empty
        assert 'name="api_key" maxlength="4096" autocomplete="new-password" value=""' in html
        assert "admin:pw" not in html  # a URL refused for its password is not shown back either
    assert Endpoint.objects.count() == 1


def test_an_admin_edits_keeps_clears_and_deletes(admin_browser: Client, endpoint: Endpoint):
    edit_url = reverse("frontend:endpoint-edit", args=[endpoint.pk])

    # the edit form is filled in, without the key
    html = _html(admin_browser.get(edit_url))
    assert 'value="http://10.0.0.5:8000"' in html
    assert 'id="api-key-kept"' in html
    assert 'id="field-clear_api_key"' in html
    assert KEY not in html
    assert endpoint.api_key_encrypted not in html

    # saving with an empty key keeps it
    saved = admin_browser.post(edit_url, {**FORM, "name": "Acme vLLM 2", "api_key": ""})
    assert saved.status_code == 302
    endpoint.refresh_from_db()
    assert (endpoint.name, endpoint_api_key(endpoint)) == ("Acme vLLM 2", KEY)

    # a new key and "remove" at once is refused
    both = admin_browser.post(edit_url, {**FORM, "api_key": "sk-other", "clear_api_key": "on"})
    assert both.status_code == 400
    assert "either enter a new API key or remove the stored one, not both" in _html(both)
    assert "sk-other" not in _html(both)

    # "remove the stored API key" clears it
    admin_browser.post(edit_url, {**FORM, "api_key": "", "clear_api_key": "on"})
    endpoint.refresh_from_db()
    assert endpoint_api_key(endpoint) is None
    assert '<span class="key-state key-unset">Not set</span>' in _html(admin_browser.get(reverse("frontend:endpoints")))

    # delete
    deleted = admin_browser.post(reverse("frontend:endpoint-delete", args=[endpoint.pk]), follow=True)
    assert "Endpoint Simulator deleted" in _html(deleted)
    assert Endpoint.objects.count() == 0


def test_another_organisations_endpoint_is_a_404(admin_browser: Client, other_endpoint: Endpoint):
    assert admin_browser.get(reverse("frontend:endpoint-edit", args=[other_endpoint.pk])).status_code == 404
    assert admin_browser.post(reverse("frontend:endpoint-edit", args=[other_endpoint.pk]), FORM).status_code == 404
    assert admin_browser.post(reverse("frontend:endpoint-delete", args=[other_endpoint.pk])).status_code == 404
    assert Endpoint.objects.get().name == "Globex TGI"


def test_the_page_in_chinese(admin_browser: Client, member_browser: Client, endpoint: Endpoint):
    # when
    admin_html = _html(admin_browser.get(reverse("frontend:endpoints"), headers=ZH))
    member_html = _html(member_browser.get(reverse("frontend:endpoints"), headers=ZH))

    # then
    assert '<html lang="zh-hans">' in admin_html
    assert '<h1 class="panel-title">推理端点</h1>' in admin_html
    assert "压测只能针对已登记的端点" in admin_html
    assert '<span class="key-state key-set">已设置</span>' in admin_html
    assert "登记新端点" in admin_html
    assert "基础 URL" in admin_html
    assert "API 密钥（可选）" in admin_html
    assert "通用 OpenAI 兼容" in admin_html  # the kind select
    assert "只有您组织的管理员才能登记、修改或删除端点" in member_html
    for html in (admin_html, member_html):
        assert "Load tests can target" not in html
        assert "Registered endpoints" not in html


def test_every_string_of_the_endpoints_page_is_in_the_chinese_catalog():
    # given the template's {% translate %} and {% blocktranslate %} strings and the view's _("...") strings
    text = (TEMPLATES / "endpoints.html").read_text() + (TEMPLATES / "base.html").read_text()
    msgids = set(re.findall(r'{% translate "([^"]+)" %}', text)) | set(re.findall(r"{% translate '([^']+)' %}", text))
    for body in re.findall(r"{% blocktranslate with [^%]*%}(.*?){% endblocktranslate %}", text, re.S):
        msgids.add(re.sub(r"{{ (\w+) }}", r"%(\1)s", body))
    source = (ROOT / "frontend" / "views" / "endpoints.py").read_text()
    msgids |= {re.sub(r'"\s*\n\s*"', "", found) for found in re.findall(r'_\("((?:[^"\\]|"\s*\n\s*")+)"\)', source)}
    with translation.override("en"):
        msgids |= {str(label) for _value, label in Endpoint.Kind.choices} - {"vLLM", "SGLang", "TGI", "TensorRT-LLM"}
    catalog = {
        entry.msgid: entry
        for entry in polib.pofile(str(Path(settings.LOCALE_PATHS[0]) / "zh_Hans" / "LC_MESSAGES" / "django.po"))
    }

    # when
    missing = {msgid for msgid in msgids if msgid not in catalog or not catalog[msgid].msgstr}

    # then
    assert len(msgids) > 50
    assert missing == set()
    assert {msgid for msgid in msgids if catalog[msgid].msgstr.endswith("。")} == set()
