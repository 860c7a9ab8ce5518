"""The server-rendered pages: sign-in, the sizing page in both languages, and plotly.js served as a static file."""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.templatetags.static import static
from django.test import Client
from django.urls import reverse

from sizing.models import LlmModel

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
    response = client.post(reverse("frontend:login"),
                           {"username": "engineer", "password": "correct horse battery"})

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


def test_sizing_page_marks_unsupported_models_disabled_with_the_reason(
    client: Client, catalog: None, user
) -> None:
    # given
    client.force_login(user)
    hybrid = LlmModel.objects.get(slug="nvidia/Nemotron-H-56B-Base-8K", organisation=None)

    # when
    html = client.get(reverse("frontend:sizing")).content.decode()

    # then
    assert hybrid.supported is False
    assert (f'<option value="nvidia/Nemotron-H-56B-Base-8K" disabled title="{hybrid.unsupported_reason}">'
            f"nvidia/Nemotron-H-56B-Base-8K — not supported: {hybrid.unsupported_reason}</option>") in html


def test_sizing_page_lists_the_organisations_uploads_first(
    client: Client, catalog: None, user, api_client
) -> None:
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
    html = response.content.decode()
    blob = html[html.index('<script id="i18n" type="application/json">') :].split(">", 1)[1].split("</script>")[0]
    strings = json.loads(blob)
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


@pytest.mark.parametrize("path", ["frontend/sizing.js", "frontend/app.css"], ids=["script", "stylesheet"])
def test_page_assets_are_served(client: Client, path: str) -> None:
    # when
    response = client.get(static(path))

    # then
    assert response.status_code == 200
