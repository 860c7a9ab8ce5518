"""The signed memory commitment end to end in headless Debian Chromium (issues 8 and 20): on a plan for a Chinese
customer the author chooses the deployment's machine, creates a Chinese report whose evidence a real Celery worker
(the `reports` queue, in this process) gathers while the page follows it; with a failed pulse load test and evidence
missing the submission is refused with the list; the author asks to waive each open item with the reason, submits; a
reviewer grants each waiver and approves; the signer signs and the page follows the signing; the signed PDF (its
SHA-256 the page shows) prints the waivers under 例外, the committed peak with its confidence and method, and the
chosen machine; the verification page accepts it; the page reads in Chinese."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery.contrib.testing.worker import start_worker
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from benchmarks_app.models import LoadTest
from deploy.celery import app as celery_app
from reports.models import Report
from sizing.models import Deployment, Fingerprint, Gpu, LlmModel, Membership, Organisation
from sizing.services.deployments import Upload, fingerprint_upload

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

CUSTOMER = "深圳市某某科技有限公司"
MODEL = "meta-llama/Meta-Llama-3-8B"
H100 = "nvidia-h100-sxm-80gb"
PASSWORD = "correct horse battery"
SCENARIO = Path(__file__).resolve().parents[1] / "sizing" / "fingerprint" / "scenarios" / "h100_sxm_8x_nvswitch"
WORKER_TIMEOUT_MS = 90_000  # gathering the evidence or rendering and signing the PDF takes seconds on a busy box
REASON = "试点期间仅有一次脉冲压测，上线后补测"


@pytest.fixture
def worker(transactional_db, settings, tmp_path) -> Iterator[None]:
    """A Celery worker on the reports queue, in this process, signing with a fresh self-signed certificate."""
    settings.VAR_DIR = tmp_path
    with start_worker(celery_app, queues=["reports"], pool="solo", perform_ping_check=False, shutdown_timeout=30):
        yield


@pytest.fixture
def team(organisation: Organisation, user) -> None:
    """The `user` fixture's engineer writes; a reviewer approves; a signer signs (their roles)."""
    for name in ("reviewer", "signer"):
        account = get_user_model().objects.create_user(username=name, password=PASSWORD)
        Membership.objects.create(user=account, organisation=organisation, role=name)


@pytest.fixture
def deployment(catalog: None, organisation: Organisation, user) -> Deployment:
    """The plan, a fingerprint of its server (uploaded, not yet chosen) and one failed pulse load test."""
    deployment = Deployment.objects.create(
        organisation=organisation,
        name="客服大模型",
        customer=CUSTOMER,
        engine="vllm",
        gpu_count=1,
        tp=1,
        model=LlmModel.objects.get(slug=MODEL, organisation__isnull=True),
        gpu=Gpu.objects.get(slug=H100),
        slo={"ttft_ms": 2000.0, "tpot_ms": 150.0},
    )
    probe = {
        "probe": "llm-sizing gpu_probe 1",
        "host": (SCENARIO / "hostname.txt").read_text().strip(),
        "captured_at": "2026-11-30T10:00:00Z",
        "pieces": [
            {"name": name, "command": name, "exit_code": 0, "output": (SCENARIO / file).read_text()}
            for name, file in (("nvidia_smi_xml", "nvidia_smi_q_x.xml"), ("nvidia_smi_topo", "topo.txt"))
        ],
    }
    fingerprint_upload(
        deployment=deployment, user=user, uploads=[Upload("fingerprint.json", json.dumps(probe).encode())]
    )
    LoadTest.objects.create(
        organisation=organisation,
        deployment=deployment,
        endpoint_name="sim",
        name="脉冲压测 1",
        scenario="pulse",
        plan={},
        status=LoadTest.Status.DONE,
        verdict={"verdict": "fail", "criteria": [], "figures": {"requests": 100, "errors": 9}},
    )
    return deployment


def _sign_in(page: Page, base: str, username: str) -> None:
    page.goto(f"{base}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("#login-button")
    page.wait_for_url(f"{base}/")


def _sign_out(page: Page, base: str) -> None:
    page.click(".topbar-actions form[action='/logout/'] button")
    page.wait_for_url(re.compile(r".*/login/"))


def _text(pdf: bytes) -> str:
    done = subprocess.run(["pdftotext", "-layout", "-", "-"], input=pdf, capture_output=True, check=True)
    return done.stdout.decode()


def test_a_chinese_commitment_is_gated_waived_approved_signed_and_verified(
    live_server, worker, team, deployment: Deployment, page: Page, tmp_path: Path
) -> None:
    base = live_server.url
    fingerprint = Fingerprint.objects.get(deployment=deployment)

    # the author chooses the deployment's machine: the host with its fingerprint version
    _sign_in(page, base, "engineer")
    page.goto(f"{base}/deployments/{deployment.pk}/")
    page.select_option(f'#machines-table tr[data-host-key="{fingerprint.host_key}"] select', str(fingerprint.pk))
    page.click("#save-machines")
    expect(page.locator(f'#machines-table tr[data-host-key="{fingerprint.host_key}"]')).to_have_attribute(
        "data-chosen", str(fingerprint.pk)
    )

    # creates a Chinese report: the page follows the worker gathering the evidence
    page.click("nav.topnav >> text=Reports")
    page.select_option("#field-deployment", str(deployment.pk))
    page.select_option("#field-language", "zh-hans")
    page.click("#create-button")
    page.wait_for_url(re.compile(r".*/reports/\d+/$"))
    report_url = page.url
    expect(page.locator("#report-title")).to_have_text(f"显存承诺书 · {CUSTOMER}")
    expect(page.locator("#checklist")).to_be_visible(timeout=WORKER_TIMEOUT_MS)
    expect(page.locator('#checklist [data-item="machines"]')).to_have_attribute("data-state", "done")
    expect(page.locator('#checklist [data-item="load_test_pulse"]')).to_have_attribute("data-state", "failed")
    open_items = page.locator('#checklist li:not([data-state="done"])').evaluate_all(
        "items => items.map(item => item.dataset.item)"
    )
    assert "load_test_pulse" in open_items
    assert "machines" not in open_items

    # submitting with the failed and missing items is refused, listing them
    page.click("#submit-button")
    refusal = page.locator(".alert-error").first
    expect(refusal).to_contain_text("Submission refused")
    expect(refusal).to_contain_text("脉冲")
    expect(page.locator("#version-status")).to_have_text("Draft")

    # the author asks to waive each open item with the reason, then submits
    for item in open_items:
        form = page.locator(f'#checklist [data-item="{item}"] form[data-form="waiver-request"]')
        form.locator("textarea").fill(REASON if item == "load_test_pulse" else "上线后补齐")
        form.locator("button").click()
        expect(page.locator(f'#checklist [data-item="{item}"] [data-waiver="requested"]')).to_be_visible()
    page.click("#submit-button")
    expect(page.locator("#version-status")).to_have_text("In review")
    _sign_out(page, base)

    # the reviewer grants each waiver and approves
    _sign_in(page, base, "reviewer")
    page.goto(report_url)
    for item in open_items:
        form = page.locator(f'#checklist [data-item="{item}"] form[data-form="waiver-decide"]')
        form.locator("textarea").fill("客户书面同意")
        form.locator('button[value="1"]').click()
        expect(page.locator(f'#checklist [data-item="{item}"]')).to_have_attribute("data-state", "waived")
    page.click("#approve-button")
    expect(page.locator("#version-status")).to_have_text("Approved")
    _sign_out(page, base)

    # the signer signs: the page follows the worker until the version is signed
    _sign_in(page, base, "signer")
    page.goto(report_url)
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#sign-button")
    expect(page.locator("#version-status")).to_have_text("Signed", timeout=WORKER_TIMEOUT_MS)
    expect(page.locator("#signed-banner")).to_be_visible()
    sha256 = page.locator("#version-sha256").inner_text().strip()
    assert re.fullmatch(r"[0-9a-f]{64}", sha256)

    # the signed PDF: the waivers under 例外, the confidence with its method, the chosen machine
    with page.expect_download() as download_info:
        page.click("#pdf-link")
    pdf = Path(download_info.value.path()).read_bytes()
    assert hashlib.sha256(pdf).hexdigest() == sha256
    text = _text(pdf)
    squeezed = re.sub(r"\s+", "", text)
    assert "例外" in text
    assert re.sub(r"\s+", "", REASON) in squeezed
    assert "置信度" in text
    assert "99.9%" in text
    confidence = Report.objects.get().versions.get(number=1).content["confidence"]
    assert re.sub(r"\s+", "", confidence["method_text"])[:40] in squeezed  # how the confidence was obtained
    assert "hgx-h100-01" in text
    saved = tmp_path / "signed.pdf"
    saved.write_bytes(pdf)

    # the verification page accepts it as valid
    page.goto(f"{base}/reports/verify/")
    page.set_input_files("#verify-file", str(saved))
    page.click("#verify-button")
    expect(page.locator("#verify-result")).to_have_attribute("data-verdict", "valid")

    # the report's page in Chinese
    page.goto(report_url)
    page.click('.language-switch button[value="zh-hans"]')
    page.wait_for_selector('html[lang="zh-hans"]')
    expect(page.locator("#version-status")).to_have_text("已签署")
    expect(page.locator('#checklist [data-item="load_test_pulse"] .status-pill').first).to_have_text("已豁免")
