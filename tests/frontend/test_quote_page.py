"""The quote page for sales people: sign-in, the form and the API address its script calls, the header link, no
inline script, and every string in both languages (the template's and the script's)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from sizing.models import Gpu, Membership
from tests.frontend.script_words import page_words, words_in

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "frontend" / "static" / "frontend" / "quotes.js"
TEMPLATE = ROOT / "frontend" / "templates" / "frontend" / "quotes.html"
CATALOG = Path(settings.LOCALE_PATHS[0]) / "zh_Hans" / "LC_MESSAGES" / "django.po"

pytestmark = pytest.mark.django_db


def _json_script(html: str, element_id: str) -> dict:
    start = html.index(f'<script id="{element_id}" type="application/json">')
    return json.loads(html[start:].split(">", 1)[1].split("</script>")[0])


def _english_words(text: str) -> bool:
    return re.search(r"[a-z]{4,}", re.sub(r"\{\w+\}|\w*_\w*", "", text)) is not None


def _no_inline_script(html: str) -> None:
    """Every <script> loads a file or holds JSON data (the content-security policy forbids the rest), and no
    element has an on*= handler."""
    for tag in re.findall(r"<script\b[^>]*>", html):
        assert "src=" in tag or 'type="application/json"' in tag, tag
    assert re.search(r"<[^>]+\son[a-z]+\s*=", html) is None


def test_the_quote_page_asks_for_a_sign_in(client: Client) -> None:
    response = client.get(reverse("frontend:quotes"))
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('frontend:login')}?next=/quotes/"


def test_the_quote_page_renders_the_form_and_the_api_address(client: Client, catalog: None, user) -> None:
    Gpu.objects.filter(slug="nvidia-t4-16gb").update(price_per_hour_usd=None)
    client.force_login(user)

    html = client.get(reverse("frontend:quotes")).content.decode()

    assert 'data-quotes-url="/api/v1/quotes/"' in html
    for name in (
        "model",
        "input_tokens",
        "output_tokens",
        "profile",
        "rate",
        "slo_ttft_s",
        "slo_tpot_ms",
        "slo_e2e_s",
        "slo_percentile",
        "max_gpus",
        "top",
    ):
        assert f'name="{name}"' in html, name
    assert 'name="gpus" value="nvidia-l40s-48gb"' in html
    assert "$0.86/h" in html
    assert 'value="nvidia-t4-16gb" disabled' in html  # no price: cannot be ranked by cost
    assert 'id="cost-chart"' in html
    assert "vendor/plotly/plotly.min.js" in html
    assert "frontend/quotes.js" in html
    assert ">Quotes</a>" in html
    assert 'aria-current="page">Quotes</a>' in html
    _no_inline_script(html)
    strings = words_in(client, "quotes", "en")
    assert strings["quote_number"] == "Quote {id}"


def test_sales_people_may_open_the_quote_page(client: Client, catalog: None, organisation) -> None:
    seller = get_user_model().objects.create_user(username="seller", password="x" * 12)
    Membership.objects.create(user=seller, organisation=organisation, role="sales")
    client.force_login(seller)
    assert client.get(reverse("frontend:quotes")).status_code == 200


def test_the_quote_page_in_chinese(client: Client, catalog: None, user) -> None:
    client.force_login(user)

    html = client.get(reverse("frontend:quotes"), headers={"accept-language": "zh-hans"}).content.decode()

    assert '<html lang="zh-hans">' in html
    assert ">报价</a>" in html  # the header link
    for text in ("为客户报价", "获取报价", "最多使用的 GPU 数", "未入选的部署及原因", "$0.86/小时", "首字延迟（秒）"):
        assert text in html, text
    _no_inline_script(html)
    strings = words_in(client, "quotes", "zh-hans")
    assert strings["quote_number"] == "报价 {id}"
    assert strings["metric_ttft"] == "首字延迟"


def test_every_script_string_of_the_quote_page_is_translated(client: Client, catalog: None, user) -> None:
    client.force_login(user)
    english = {k: v for k, v in words_in(client, "quotes", "en").items() if isinstance(v, str)}

    chinese = words_in(client, "quotes", "zh-hans")

    untranslated = {key for key, value in english.items() if chinese[key] == value and _english_words(value)}
    assert untranslated == set()
    assert {key for key, value in chinese.items() if isinstance(value, str) and value.endswith("。")} == set()


def test_every_string_the_quote_script_reads_is_in_its_blob() -> None:
    source = SCRIPT.read_text()
    read = set(re.findall(r"\bT\.(\w+)", source)) | set(re.findall(r'\bT\["(\w+)"\]', source))
    built = {
        *(f"status_{status}" for status in ("queued", "running", "done", "failed")),
        *(f"metric_{metric}" for metric in ("ttft", "tpot", "e2e")),
    }
    assert read | built <= set(page_words("quotes"))
    assert "innerHTML" not in source


def test_every_template_string_of_the_quote_page_is_in_the_chinese_catalog() -> None:
    text = TEMPLATE.read_text()
    msgids = set(re.findall(r'{% translate "([^"]+)" %}', text)) | set(re.findall(r"{% translate '([^']+)' %}", text))
    msgids = {msgid.replace("%", "%%") for msgid in msgids}
    blocks = re.findall(r"{% blocktranslate[^%]*%}(.*?){% endblocktranslate %}", text, re.DOTALL)
    msgids |= {re.sub(r"{{ (\w+) }}", r"%(\1)s", block) for block in blocks}
    catalog = {entry.msgid: entry for entry in polib.pofile(str(CATALOG))}

    missing = {msgid for msgid in msgids if msgid not in catalog or not catalog[msgid].msgstr}

    assert missing == set()
    assert {msgid for msgid in msgids if catalog[msgid].msgstr.endswith("。")} == set()
