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
    return subprocess.run([executable, *args], capture_output=True, text=True, check=True).stdout


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


# --- issue 20: a PDF a customer's lawyer can read ---------------------------------------------------------------------


def _pdf_text(tmp_path: Path, content: dict[str, Any], name: str = "report.pdf") -> str:
    """The rendered PDF's text, spaces collapsed and blank lines dropped."""
    path = tmp_path / name
    path.write_bytes(render_report_pdf(content))
    return "\n".join(line for line in _text(path).splitlines() if line.strip())


def _old_content(content: dict[str, Any]) -> dict[str, Any]:
    """The content of a version made before issue 20: no machines, checklist, waivers, confidence or acceptance, and
    criteria with their English detail only."""
    old = copy.deepcopy(content)
    for key in ("machines", "checklist", "waivers", "confidence", "acceptance"):
        old.pop(key)
    for test in old["evidence"]["load_tests"]:
        test["criteria"] = [{k: c[k] for k in ("code", "verdict", "detail")} for c in test["criteria"]]
        test["figures"].pop("gpu_peak_bytes", None)
        test["figures"].pop("tolerance_bytes", None)
    return old


def test_every_figure_is_rounded_to_its_precision_with_its_unit(tmp_path: Path) -> None:
    # given the raw floats a new user found in a signed PDF
    content = copy.deepcopy(SAMPLE_CONTENT)
    figures = content["evidence"]["load_tests"][2]["figures"]
    figures["ttft_p99_ms"], figures["tpot_p99_ms"] = 1115.4901699999996, 166.8841406451613
    figures["recovery_s"], figures["attainment"] = 41.23456789, 0.91234567
    content["evidence"]["monitoring"]["hours"] = 18.4999999

    # when
    text = _pdf_text(tmp_path, content)

    # then: ms to one decimal, seconds to one, shares to one between 1% and 99%, GiB to two, thousands separated
    assert "1,115.5 ms" in text
    assert "166.9 ms" in text
    assert "41.2 s" in text
    assert "91.2%" in text
    assert "Sampled: 18.5 h" in text
    assert "1,712.4 ms 61.8 ms 72.00 GiB" in text  # the pulse test's raw 1712.4000000000001 and 61.83614
    assert "Max model length 32,768 tokens" in text
    assert "TTFT ≤ 2,000 ms; TPOT ≤ 80 ms" in text  # limits as they were set
    # no figure with four or more decimals anywhere (versions such as 550.127.05 have three at most)
    assert re.findall(r"\d\.\d{4,}", text) == []


@pytest.mark.parametrize(
    ("language", "count", "concurrency", "queue", "tokens"),
    [
        pytest.param(
            "en",
            1,
            "Concurrency per tenant 1 request",
            "Queue limit 1 request",
            "Max input tokens 1 token",
            id="en-one",
        ),
        pytest.param(
            "en",
            49,
            "Concurrency per tenant 49 requests",
            "Queue limit 49 requests",
            "Max input tokens 49 tokens",
            id="en-many",
        ),
        pytest.param(
            "zh-hans",
            1,
            "每租户并发数 1 个请求",
            "队列上限 1 个请求",
            "最大输入 token 数 1 个 token",
            id="zh-no-plural",
        ),
    ],
)
def test_counts_take_their_plural_form(
    tmp_path: Path, language: str, count: int, concurrency: str, queue: str, tokens: str
) -> None:
    # given
    sample = SAMPLE_CONTENT_ZH if language == "zh-hans" else SAMPLE_CONTENT
    content = _with(
        sample,
        protection__per_tenant_concurrency=count,
        protection__queue_limit=count,
        protection__max_input_tokens=count,
    )

    # when
    text = _pdf_text(tmp_path, content)

    # then
    assert concurrency in text
    assert queue in text
    assert tokens in text


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_no_internal_code_or_file_name_is_printed(tmp_path: Path, language: str) -> None:
    # given: the content's criteria, findings, checklist items and waivers all carry codes
    content = SAMPLE_CONTENT_ZH if language == "zh-hans" else SAMPLE_CONTENT
    codes = {criterion["code"] for test in content["evidence"]["load_tests"] for criterion in test["criteria"]}
    codes |= {finding["code"] for machine in content["machines"] for finding in machine["findings"]}
    codes |= {finding["code"] for finding in content["hardware"]["findings"]}
    codes |= {item["code"] for item in content["checklist"]} | {waiver["item"] for waiver in content["waivers"]}

    # when
    text = _pdf_text(tmp_path, content)

    # then: none of the codes with an underscore (those without are ordinary words: "memory", "machines")
    printed = {code for code in codes if "_" in code and code in text}
    assert printed == set()
    assert "METRICS.md" not in text
    assert "client_fidelity" not in text


def test_criteria_are_worded_from_their_code_and_figures(tmp_path: Path) -> None:
    # when
    text = _pdf_text(tmp_path, SAMPLE_CONTENT)

    # then
    assert "Client fidelity Pass The client sent the load it was asked to" in text
    assert "SLO attainment Pass 98.7% of the requests met every SLO; at least 95% required" in text
    assert "Memory verdict Pass The memory checks passed: GPU memory peaked at 72.00 GiB (± 1 MiB)" in text
    assert "Failure injected Pass 1 failure injected" in text
    assert (
        "Time to recover Fail Requests succeeded again 41.2 s after the failure; recovery within 30 s required" in text
    )
    # an unknown code: its English detail, in an English report only
    assert "Other criterion Pass A check this renderer has no words for passed." in text


def test_a_chinese_report_never_shows_an_english_detail(tmp_path: Path) -> None:
    # given: an unknown criterion and a finding the evidence could not word in Chinese
    content = copy.deepcopy(SAMPLE_CONTENT_ZH)
    content["machines"][0]["findings"].append(
        {"code": "some_new_check", "severity": "warning", "text": "a new check the translation does not know yet"}
    )

    # when
    text = _pdf_text(tmp_path, content)

    # then: a generic line in Chinese for each
    assert "其他判定项 通过 压测的另一项判定：通过" in text
    assert "A check this renderer has no words for" not in text
    assert "指纹检查的一项发现，尚无中文表述" in text
    assert "a new check the translation does not know yet" not in text


# Latin words a Chinese report may carry: product, engine and unit names, abbreviations and the identifiers of
# the deployment (hosts, model, GPUs, flags, the breaker's metric), besides the verbatim configuration blocks
_LATIN_ALLOWED = {
    "GiB",
    "GB",
    "MiB",
    "KV",
    "GPU",
    "CUDA",
    "vLLM",
    "vllm",
    "SLO",
    "P99",
    "UTC",
    "UTC+08:00",
    "SHA-256",
    "BF16",
    "HTTP",
    "XID",
    "ECC",
    "bfloat16",
    "TP",
    "B",
    "UUID",
    "LoRA",
    "non-torch",
    "token",
    "v1",
    "v3",
    "Qwen2.5-32B-Instruct",
    "vllm:kv_cache_usage_perc",
    "Acme",
    "Integrator",
    "customer-service-prod",
    "Qwen/Qwen2.5-72B-Instruct",
    "Qwen2.5-72B-Instruct",
    "NVIDIA",
    "H100",
    "80GB",
    "HBM3",
    "x",
    "gpu-node-01",
    "gpu-node-02",
}


def test_a_chinese_report_has_no_english_fragment(zh_pdf: Path) -> None:
    # given: the verbatim blocks (configuration, launch command) are the engine's words and stay as they are
    verbatim = {
        " ".join(line.split())
        for block in (SAMPLE_CONTENT_ZH["protection"]["config"], "\n".join(SAMPLE_CONTENT_ZH["launch_args"]))
        for line in block.splitlines()
    }
    verbatim |= {
        " ".join(f"{a} {b}".split()) + " \\"
        for a, b in zip(SAMPLE_CONTENT_ZH["launch_args"][::2], SAMPLE_CONTENT_ZH["launch_args"][1::2], strict=False)
    }

    # when
    lines = [line for line in _text(zh_pdf).splitlines() if line not in verbatim and not line.startswith("--")]
    words = {
        word.strip(".,;:()")
        for line in lines
        for word in re.findall(r"[A-Za-z][A-Za-z0-9_.:/+\-]*", re.sub(r"--[\w-]+", "", line))
    }

    # then: apart from the allowed names, flags (--...) and hexadecimal ids, nothing Latin is left
    stray = {
        word
        for word in words
        if word not in _LATIN_ALLOWED
        and not word.startswith("GPU-")
        and not re.fullmatch(r"[0-9a-f]{8,}", word)
        and len(word) > 1  # the DRAFT watermark's letters come out one per line
    }
    assert stray == set()


@pytest.mark.parametrize(
    ("language", "page_text"), [("zh-hans", "第{page}页/共{pages}页"), ("en", "Page {page} of {pages}")]
)
def test_every_page_carries_its_number(tmp_path: Path, language: str, page_text: str) -> None:
    # given
    path = tmp_path / "report.pdf"
    path.write_bytes(render_report_pdf(SAMPLE_CONTENT_ZH if language == "zh-hans" else SAMPLE_CONTENT))
    pages = int(re.search(r"^Pages:\s+(\d+)$", _poppler("pdfinfo", str(path)), re.MULTILINE).group(1))

    # when / then: each page's own text ends with "page X of Y" (pdftotext drops the CJK font's narrow spaces)
    for page in range(1, pages + 1):
        text = _poppler("pdftotext", "-f", str(page), "-l", str(page), "-layout", str(path), "-")
        compact = text.replace(" ", "") if language == "zh-hans" else " ".join(text.split())
        assert page_text.format(page=page, pages=pages) in compact, page


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_exceptions_are_printed_under_their_own_heading(tmp_path: Path, language: str) -> None:
    # when
    content = SAMPLE_CONTENT_ZH if language == "zh-hans" else SAMPLE_CONTENT
    text = _pdf_text(tmp_path, content)
    none_text = _pdf_text(tmp_path, _with(content, waivers=[]), "none.pdf")
    absent = copy.deepcopy(content)
    absent.pop("waivers")
    absent_text = _pdf_text(tmp_path, absent, "absent.pdf")

    # then: who asked, who granted, when and why; "None" without waivers
    if language == "en":
        lines = text.splitlines()
        heading = lines.index("Exceptions")
        assert lines[heading + 1] == "The workload profile and the rate (for the KV overflow probability)"
        assert "Requested by Li Wei, 2025-03-13 02:15 UTC" in text
        assert "Granted by Zhang Min, 2025-03-13 07:40 UTC" in text
        assert "Reason for granting The contract caps the rate at 12 requests per second; the gateway" in text
        for other in (none_text, absent_text):
            assert "Exceptions\nNone\n" in other
    else:
        assert "\n例外\n负载画像与速率（用于 KV 缓存溢出概率）\n" in text
        assert "申请人 李伟，2025-03-13 10:15 UTC+08:00" in text
        assert "批准人 张敏，2025-03-13 15:40 UTC+08:00" in text
        assert "批准理由 合同将速率上限定为每秒 12 个请求，由网关强制执行" in text
        for other in (none_text, absent_text):
            assert "\n例外\n无\n" in other


@pytest.mark.parametrize(
    ("language", "statement", "evidence"),
    [
        pytest.param(
            "en",
            "Peak GPU memory ≤ 72.19 GiB per GPU, confidence 99.9%",
            "Load test “Pulse: 50% of peak concurrency within 10 s, held 3 min”: measured 72.00 GiB, within",
            id="en",
        ),
        pytest.param(
            "zh-hans",
            "显存峰值 ≤ 72.19 GiB（每卡），置信度 99.9%",
            "压测“脉冲：10 秒内升至峰值并发的 50%，保持 3 分钟”：实测 72.00 GiB，在上限之内",
            id="zh",
        ),
    ],
)
def test_commitment_one_states_the_peak_with_its_confidence(
    tmp_path: Path, language: str, statement: str, evidence: str
) -> None:
    # when
    text = _pdf_text(tmp_path, SAMPLE_CONTENT_ZH if language == "zh-hans" else SAMPLE_CONTENT)

    # then: the line, then the method and the measurement that moved it
    section = text[text.index("4 ") :]
    assert section.index(statement) < section.index(evidence)
    assert statement in text
    assert evidence in text
    if language == "zh-hans":
        assert "实测误差 vllm 0.8–0.10：7 份启动日志，最大误差 1.2%" in text
        assert "这是排队与抢占的风险，而不是显存耗尽的风险" in text
    else:
        assert "Measured error vllm 0.8–0.10: 7 boot logs, largest error 1.2%" in text
        assert "Margin 0.01 GiB (0.01 GB)" in text


def test_the_checklist_states_are_translated(zh_pdf: Path) -> None:
    # when
    text = _text(zh_pdf)

    # then
    assert "证据检查清单" in text
    for row in (
        "已选定客户的机器（每台主机及其指纹版本） 完成",
        "故障注入场景的压测已通过 失败 故障注入场景尚无通过的压测",
        "负载画像与速率（用于 KV 缓存溢出概率） 豁免",
        "缺失 尚无上线后监控日志",
    ):
        assert row in text, row


def test_the_final_acceptance_names_the_memory_health_report(zh_pdf: Path) -> None:
    # when
    # (the DRAFT watermark comes out one letter a line)
    text = "\n".join(line for line in _text(zh_pdf).splitlines() if len(line.strip()) > 1)

    # then
    assert "12 最终验收\n最终验收以显存健康报告 5 为依据" in text
    assert "显存健康报告 编号 5" in text
    assert "覆盖时长 72.2 小时" in text
    assert f"SHA-256 {SAMPLE_CONTENT_ZH['acceptance']['health_report']['sha256']}" in text


def test_the_chosen_machines_replace_the_single_host(tmp_path: Path) -> None:
    # when
    text = _pdf_text(tmp_path, SAMPLE_CONTENT)

    # then: every chosen host with its fingerprint version, GPUs with their UUIDs
    hardware = text[text.index("1 Hardware, driver and CUDA") : text.index("2 Model, formats")]
    assert "gpu-node-01, fingerprint version 3" in hardware
    assert "gpu-node-02, fingerprint version 1" in hardware
    assert "GPU-023a7c9e2-5b1f-4d3a-9e8c-7f6b5a4c3d2e" in hardware
    assert "GPUs measured" not in hardware


def test_old_content_renders_as_before(tmp_path: Path) -> None:
    # given a version signed before issue 20
    old = _old_content(SAMPLE_CONTENT)

    # when
    html = render_report_html(old)
    text = _pdf_text(tmp_path, old)

    # then: sections 1-11, the single host, the old statement of commitment 1, criteria still without codes
    for key in REPORT_SECTIONS[:-1]:
        assert f'id="section-{key}"' in html, key
    assert 'id="section-acceptance"' not in html
    assert "GPUs measured" in text
    assert "At the stated load, the GPU memory used on each card of this deployment" in text
    assert "Evidence checklist" not in text
    assert "Exceptions\nNone\n" in text
    assert "SLO attainment Pass 98.7% of the requests met every SLO" in text  # the figures' attainment
    assert "client_fidelity" not in text


@pytest.mark.parametrize(
    ("language", "zone", "created", "signed", "note"),
    [
        pytest.param(
            "zh-hans",
            None,
            "日期 2025-03-14 17:30 UTC+08:00",
            "签署时间：2025-03-20 16:00:17 UTC+08:00",
            "时间均为 UTC+08:00",
            id="zh-default",
        ),
        pytest.param(
            "en",
            None,
            "Date 2025-03-14 09:30 UTC",
            "Signed at: 2025-03-20 08:00:17 UTC",
            "Times are in UTC.",
            id="en-default",
        ),
        pytest.param(
            "en",
            "Europe/Berlin",
            "Date 2025-03-14 10:30 UTC+01:00",
            "Signed at: 2025-03-20 09:00:17 UTC+01:00",
            "Times are in Europe/Berlin.",
            id="en-iana",
        ),
    ],
)
def test_times_are_shown_in_the_reports_zone(
    tmp_path: Path, language: str, zone: str | None, created: str, signed: str, note: str
) -> None:
    # given a signed version: one signing time, the one the PDF signature states
    sample = SAMPLE_CONTENT_ZH if language == "zh-hans" else SAMPLE_CONTENT
    content = _with(
        sample, report__status="signed", signature__signer="Wang Fang", signature__signed_at="2025-03-20T08:00:17+00:00"
    )
    if zone:
        content["report"]["timezone"] = zone

    # when
    text = _pdf_text(tmp_path, content)

    # then
    assert created in text
    assert signed in text
    assert note in text


def test_the_configuration_is_never_wrapped_mid_token(tmp_path: Path) -> None:
    # given a configuration line of 158 characters with no space to break at (5 pt, the smallest size, fits it)
    long_line = (
        "--override-generation-config=" + '{"temperature":0.7,"top_p":0.8,"repetition_penalty":1.05,'
        '"max_new_tokens":1024,"stop":["<|im_end|>","<|endoftext|>"],"seed":1234}'
    )
    content = _with(SAMPLE_CONTENT, protection__config=SAMPLE_CONTENT["protection"]["config"] + "\n" + long_line)

    # when
    lines = _pdf_text(tmp_path, content).splitlines()

    # then: the line comes out whole, as one line, so copying it gives the exact text
    assert len(long_line) == 158
    assert long_line in lines


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        pytest.param("en", "GPU memory peaked at 72.00 GiB (± 1 MiB), within the committed 72.19 GiB per GPU", id="en"),
        pytest.param("zh-hans", "显存峰值为 72.00 GiB（± 1 MiB），在每张 GPU 承诺的 72.19 GiB 之内", id="zh"),
    ],
)
def test_a_memory_check_is_worded_from_its_extra_numbers(language: str, expected: str) -> None:
    # given a memory check of benchmarks_app.results.loadverdict with its reason and numbers (its detail in English)
    content = copy.deepcopy(SAMPLE_CONTENT_ZH if language == "zh-hans" else SAMPLE_CONTENT)
    content["evidence"]["load_tests"][1]["criteria"] = [
        {
            "code": "peak_within_commitment",
            "verdict": "pass",
            "value": 77_309_411_328,
            "reason": "within_commitment",
            "extra": {
                "committed_bytes_per_gpu": 77_513_904_128,
                "tolerance_bytes": 1_048_576,
                "gpu_peak_bytes": 77_309_411_328,
            },
            "detail": "GPU memory peaked at 72.00 GiB on GPU 0 at 2025-03-12T11:02:00Z, within the committed 72.19 GiB",
        }
    ]

    # when (the HTML: pdftotext -layout interleaves the lines of a wrapped table row)
    html = render_report_html(content)

    # then
    assert f"<td>{expected}</td>" in html
    assert "2025-03-12T11:02:00Z" not in html
