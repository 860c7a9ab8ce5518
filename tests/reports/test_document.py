"""The report document: content → HTML → PDF, checked through poppler's pdftotext, pdffonts and pdfinfo."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET  # parses only the SVG that the code under test writes
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from reports.charts import memory_bill_svg
from reports.document import REPORT_SECTIONS, render_report_html, render_report_pdf
from tests.reports.sample_content import SAMPLE_CONTENT, SAMPLE_CONTENT_ZH

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module", autouse=True)
def compiled_translations() -> None:
    call_command("compile_translations", verbosity=0)


def _poppler(tool: str, *args: str) -> str:
    """Run a poppler-utils tool by its absolute path and return its standard output."""
    executable = shutil.which(tool)
    assert executable is not None, f"{tool} (poppler-utils) is not installed"
    return subprocess.run([executable, *args], capture_output=True, text=True, check=True).stdout  # noqa: S603


def _text(pdf_path: Path) -> str:
    """The PDF's text (pdftotext -layout) with each run of spaces collapsed to one."""
    text = _poppler("pdftotext", "-layout", str(pdf_path), "-")
    return "\n".join(" ".join(line.split()) for line in text.splitlines())


def _with(content: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of `content` with `changes` applied at dotted paths ("customer.name")."""
    changed = copy.deepcopy(content)
    for dotted, value in changes.items():
        *parents, leaf = dotted.split("__")
        target = changed
        for key in parents:
            target = target[key]
        target[leaf] = value
    return changed


@pytest.fixture(scope="module")
def zh_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "zh.pdf"
    path.write_bytes(render_report_pdf(SAMPLE_CONTENT_ZH))
    return path


@pytest.fixture(scope="module")
def en_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "en.pdf"
    path.write_bytes(render_report_pdf(SAMPLE_CONTENT))
    return path


def test_chinese_pdf_shows_the_customer_and_the_chinese_section_headings(zh_pdf: Path) -> None:
    # when
    text = _text(zh_pdf)

    # then
    assert "深圳市某某科技有限公司" in text
    assert "报告 42，第 3 版 · 深圳市某某科技有限公司" in text  # the running header
    for heading in (
        "1 硬件、驱动与 CUDA",
        "2 模型、格式与引擎启动参数",
        "3 每张 GPU 的显存明细",
        "4 承诺一：每张显卡的显存峰值",
        "5 承诺二：保护措施",
        "6 承诺三：回退方案",
        "7 依据",
        "8 缺失的依据",
        "9 假设与排除项",
        "10 版本历史",
        "11 签署",
        "12 最终验收",
    ):
        assert heading in text, heading
    assert "第1页/共8页" in text.replace(" ", "")  # pdftotext drops the narrow spaces of the footer's CJK font


def test_chinese_pdf_states_the_committed_figures(zh_pdf: Path) -> None:
    # given: peak 77,513,904,128 bytes = 77,513,904,128 / 2^30 = 72.19 GiB = 77.51 GB; KV overflow 0.0031 = 0.31%
    # when
    text = _text(zh_pdf)

    # then
    assert "显存峰值 ≤ 72.19 GiB（每卡），置信度 99.9%" in text
    assert "每张显卡的显存峰值 72.19 GiB（77.51 GB）" in text
    assert "77,513,904,128" in text
    assert "KV 缓存需求超出 KV 缓存容量的概率 0.31%" in text
    assert "1 GiB = 1,073,741,824 字节" in text


def test_chinese_pdf_shows_each_load_test_with_its_verdict(zh_pdf: Path) -> None:
    # when
    text = _text(zh_pdf)

    # then
    assert "脉冲：10 秒内升至峰值并发的 50%，保持 3 分钟 通过" in text
    assert "长尾：峰值的 10%，其中 10% 的请求为 4096 个 token 通过" in text
    assert "故障：运行中途终止一个工作进程 不通过" in text
    assert "恢复时间 不通过 故障发生 41.2 秒后请求恢复成功；要求在 30 秒内恢复" in text
    assert "上线后监控（gpu-node-01） 数据不足" in text


def test_chinese_pdf_carries_the_configuration_verbatim(zh_pdf: Path) -> None:
    # when
    lines = set(_text(zh_pdf).splitlines())

    # then: every line of the configuration, as given (spaces collapsed by the comparison only)
    for line in SAMPLE_CONTENT_ZH["protection"]["config"].splitlines():
        if line.strip():
            assert " ".join(line.split()) in lines, line


def test_chinese_pdf_embeds_a_cjk_font(zh_pdf: Path) -> None:
    # when: pdffonts lists name, type, encoding, emb, sub, uni, object id
    fonts = [line.split() for line in _poppler("pdffonts", str(zh_pdf)).splitlines()[2:]]

    # then: without the font WeasyPrint would draw boxes while pdftotext still extracts the text
    embedded_cjk = [font[0] for font in fonts if "CJK" in font[0] and font[-5] == "yes"]
    assert any("Noto-Sans-CJK-SC" in name for name in embedded_cjk), fonts
    assert any("Mono" in name for name in embedded_cjk), "the configuration block's monospace font"


def test_pdf_page_count_is_within_a_sane_bound(zh_pdf: Path, en_pdf: Path) -> None:
    # when
    pages = {
        path.name: int(re.search(r"^Pages:\s+(\d+)$", _poppler("pdfinfo", str(path)), re.MULTILINE).group(1))
        for path in (zh_pdf, en_pdf)
    }

    # then: the sample is 8 pages in both languages (title page, then sections 1-12)
    assert pages == {"zh.pdf": 8, "en.pdf": 8}, pages
    assert all(3 <= count <= 20 for count in pages.values())


def test_english_pdf_has_english_headings_and_no_chinese_labels(en_pdf: Path) -> None:
    # when
    text = _text(en_pdf)

    # then
    for heading in (
        "1 Hardware, driver and CUDA",
        "3 Memory bill per GPU",
        "4 Commitment 1: peak GPU memory per card",
        "5 Commitment 2: protection",
        "6 Commitment 3: fallback plan",
        "11 Signatures",
        "12 Final acceptance",
    ):
        assert heading in text, heading
    assert "Peak GPU memory per card 72.19 GiB (77.51 GB)" in text
    assert "Page 1 of 8" in text
    assert "承诺" not in text


def test_pdf_renders_the_same_bytes_for_the_same_content(zh_pdf: Path) -> None:
    # when: a signed version must be re-rendered identically
    again = render_report_pdf(SAMPLE_CONTENT_ZH)

    # then
    assert again == zh_pdf.read_bytes()


def test_html_has_every_section_in_order() -> None:
    # when
    html = render_report_html(SAMPLE_CONTENT)

    # then
    positions = [html.index(f'id="section-{key}"') for key in REPORT_SECTIONS]
    assert positions == sorted(positions)


def test_html_escapes_every_text_of_the_content() -> None:
    # given
    hostile = "<script>alert(1)</script> & Co"
    content = _with(SAMPLE_CONTENT, customer__name=hostile, protection__config="</pre><script>x()</script>")
    content["memory"]["per_gpu"][0]["label"] = "<b>Weights</b>"

    # when
    html = render_report_html(content)

    # then
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co" in html
    assert "&lt;/pre&gt;&lt;script&gt;x()&lt;/script&gt;" in html
    assert "&lt;b&gt;Weights&lt;/b&gt;" in html
    assert "<b>" not in html


def test_html_is_self_contained() -> None:
    # when
    html = render_report_html(SAMPLE_CONTENT_ZH)

    # then: nothing to fetch, nothing to run; the only URL is the SVG namespace
    assert re.findall(r"https?://[^\s\"'<>]+", html) == ["http://www.w3.org/2000/svg"]
    for marker in ("<script", "<link", "<img", "src=", "href=", "url(", "@import"):
        assert marker not in html, marker


@pytest.mark.parametrize(
    ("status", "signer", "signed_at", "watermark", "statement"),
    [
        pytest.param("in_review", None, None, True, "This version is not signed", id="in-review-draft"),
        pytest.param("approved", None, None, True, "This version is not signed", id="approved-still-draft"),
        pytest.param(
            "signed",
            "Wang Fang",
            "2025-03-20T08:00:00+00:00",
            False,
            "Digitally signed: see the PDF signature.",
            id="signed",
        ),
    ],
)
def test_draft_watermark_shows_until_signed(
    status: str, signer: str | None, signed_at: str | None, watermark: bool, statement: str
) -> None:
    # given
    content = _with(SAMPLE_CONTENT, report__status=status, signature__signer=signer, signature__signed_at=signed_at)

    # when
    html = render_report_html(content)

    # then
    assert ('class="watermark"' in html) is watermark
    assert statement in html


def test_signed_pdf_shows_signer_and_time_without_watermark(tmp_path: Path) -> None:
    # given
    content = _with(
        SAMPLE_CONTENT,
        report__status="signed",
        signature__approver="Zhang Min",
        signature__signer="Wang Fang",
        signature__signed_at="2025-03-20T16:00:17+08:00",
    )
    path = tmp_path / "signed.pdf"

    # when
    path.write_bytes(render_report_pdf(content))
    text = _text(path)

    # then
    assert "Signer Wang Fang" in text
    assert "Signed at: 2025-03-20 08:00:17 UTC" in text  # to the second: the time the PDF signature states
    assert "Digitally signed: see the PDF signature." in text
    assert "DRAFT" not in text


def test_unmeasured_hardware_is_stated_plainly() -> None:
    # given
    content = _with(SAMPLE_CONTENT, hardware={"measured": False}, machines=[])

    # when
    html = render_report_html(content)

    # then
    assert "Not measured: no environment fingerprint of the servers has been taken." in html


def test_chart_bars_are_proportional_to_bytes() -> None:
    # given
    memory = SAMPLE_CONTENT["memory"]

    # when
    svg = ET.fromstring(  # noqa: S314
        memory_bill_svg(
            memory["per_gpu"],
            capacity_bytes=memory["capacity_bytes_per_gpu"],
            budget_bytes=memory["budget_bytes_per_gpu"],
            language="en",
        )
    )

    # then: the card is the widest (capacity is the largest figure), each segment is bytes × the card's scale,
    # the segments follow each other from the card's left edge, and the budget line sits at budget × scale
    card = svg.find(f"{SVG}rect[@class='card']")
    card_x, card_width = float(card.get("x")), float(card.get("width"))
    per_byte = card_width / memory["capacity_bytes_per_gpu"]
    segments = svg.findall(f"{SVG}rect[@class='segment']")
    assert [segment.get("data-key") for segment in segments] == [item["key"] for item in memory["per_gpu"]]
    x = card_x
    for segment, item in zip(segments, memory["per_gpu"], strict=True):
        assert int(segment.get("data-bytes")) == item["bytes"]
        assert float(segment.get("width")) == pytest.approx(item["bytes"] * per_byte, abs=0.001)
        assert float(segment.get("x")) == pytest.approx(x, abs=0.002)
        x += float(segment.get("width"))
    budget = svg.find(f"{SVG}line[@class='budget']")
    assert float(budget.get("x1")) == pytest.approx(card_x + memory["budget_bytes_per_gpu"] * per_byte, abs=0.001)


def test_chart_shows_a_bill_past_the_card_capacity() -> None:
    # given: 60 + 30 bytes on an 80-byte card: the scale is the bill's total, the capacity line inside the bar
    per_gpu = [{"key": "weights", "label": "Weights", "bytes": 60}, {"key": "kv_cache", "label": "KV", "bytes": 30}]

    # when
    svg = ET.fromstring(memory_bill_svg(per_gpu, capacity_bytes=80, budget_bytes=72, language="en"))  # noqa: S314

    # then
    segments = svg.findall(f"{SVG}rect[@class='segment']")
    end = float(segments[-1].get("x")) + float(segments[-1].get("width"))
    capacity_x = float(svg.find(f"{SVG}line[@class='capacity']").get("x1"))
    card = svg.find(f"{SVG}rect[@class='card']")
    assert end > capacity_x
    assert (end - float(card.get("x"))) / (capacity_x - float(card.get("x"))) == pytest.approx(90 / 80, abs=1e-4)


def test_chart_translates_its_marks_and_escapes_labels() -> None:
    # given
    per_gpu = [{"key": "weights", "label": "权重 <BF16> & co", "bytes": 2**30}]

    # when
    svg = memory_bill_svg(per_gpu, capacity_bytes=2 * 2**30, budget_bytes=2**30, language="zh-hans")

    # then
    assert "显卡容量 2.00 GiB" in svg
    assert "引擎预算 1.00 GiB" in svg
    assert "权重 &lt;BF16&gt; &amp; co" in svg
    ET.fromstring(svg)  # noqa: S314 - well-formed XML


def test_a_first_version_without_evidence_renders_every_section() -> None:
    # given: nothing measured, nothing simulated, no load test, no monitoring, no limits, nothing missing
    content = _with(
        SAMPLE_CONTENT,
        report__version=1,
        report__changes=[],
        report__status="draft",
        hardware={"measured": False},
        deployment__gpu=None,
        deployment__gpu_count=None,
        deployment__max_model_len=None,
        deployment__slo={},
        deployment__workload=None,
        commitment__kv_overflow_probability=None,
        protection__max_input_tokens=None,
        protection__queue_limit=None,
        protection__request_timeout_s=None,
        evidence={
            "estimate": {"source": "estimator", "computed_at": "2025-03-09T15:02:11+00:00"},
            "fingerprints": [],
            "load_tests": [],
            "monitoring": None,
        },
        missing=[],
        fallback=[],
    )

    # when
    html = render_report_html(content)

    # then
    for key in REPORT_SECTIONS:
        assert f'id="section-{key}"' in html
    for statement in (
        "First version.",
        "None: all the evidence is present.",
        "No load test run.",
        "No fingerprint taken.",
        "Not started yet.",
        "No fallback plan stated.",
        "not computed (no simulation of the workload)",
        "not set",
    ):
        assert statement in html, statement


def test_a_plan_that_cannot_be_estimated_renders_a_draft_that_says_so() -> None:
    # given the content of a deployment whose plan the estimator refused: no memory bill, commitment 1 or 2
    content = copy.deepcopy(SAMPLE_CONTENT)
    for key in ("memory", "commitment", "protection"):
        content.pop(key)

    # when
    html = render_report_html(content)

    # then the DRAFT renders, with the sections saying there is no estimate instead of a server error
    assert html.count("No memory estimate: the plan cannot be estimated (see the missing evidence).") == 3
    assert "not estimated" in html
    assert render_report_pdf(content).startswith(b"%PDF")
