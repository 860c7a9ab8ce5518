"""The signed memory-commitment report end to end in headless Debian Chromium (issue 8): an author creates a Chinese
report for a deployment whose customer is Chinese and submits it; a reviewer approves it; a third engineer, who holds
the signing permission, signs it, and the page follows the worker's progress (a real Celery worker on the `reports`
queue, in this process) until the version is signed; the signed PDF downloads with the SHA-256 the page shows, the
verification page accepts it as valid, and the page reads in Chinese."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery.contrib.testing.worker import start_worker
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from deploy.celery import app as celery_app
from sizing.models import Deployment, Gpu, LlmModel, Membership, Organisation

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

CUSTOMER = "深圳市某某科技有限公司"
MODEL = "meta-llama/Meta-Llama-3-8B"
L4 = "nvidia-l4-24gb"
PASSWORD = "correct horse battery"
SIGN_TIMEOUT_MS = 60_000  # rendering and signing the PDF takes a few seconds


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
def deployment(catalog: None, organisation: Organisation) -> Deployment:
    return Deployment.objects.create(
        organisation=organisation, name="客服大模型", customer=CUSTOMER, engine="vllm", gpu_count=1, tp=1,
        model=LlmModel.objects.get(slug=MODEL, organisation__isnull=True), gpu=Gpu.objects.get(slug=L4),
        slo={"ttft_ms": 2000.0, "tpot_ms": 150.0})


def _sign_in(page: Page, base: str, username: str) -> None:
    page.goto(f"{base}/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("#login-button")
    page.wait_for_url(f"{base}/")


def _sign_out(page: Page, base: str) -> None:
    page.click(".topbar-actions form[action='/logout/'] button")
    page.wait_for_url(re.compile(r".*/login/"))


def test_a_chinese_report_is_created_reviewed_signed_downloaded_and_verified(
        live_server, worker, team, deployment: Deployment, page: Page, tmp_path: Path) -> None:
    base = live_server.url

    # the author creates a Chinese report for the deployment and submits it
    _sign_in(page, base, "engineer")
    page.click("nav.topnav >> text=Reports")
    page.select_option("#field-deployment", str(deployment.pk))
    page.select_option("#field-language", "zh-hans")
    page.click("#create-button")
    page.wait_for_url(re.compile(r".*/reports/\d+/$"))
    report_url = page.url
    expect(page.locator("#report-title")).to_have_text(f"内存承诺报告 · {CUSTOMER}")
    expect(page.locator("#report-customer")).to_have_text(CUSTOMER)
    expect(page.locator("#version-status")).to_have_text("Draft")
    expect(page.locator("#missing-list li").first).to_be_visible()
    page.click("#submit-button")
    expect(page.locator("#version-status")).to_have_text("In review")
    expect(page.locator("#approve-refused-role")).to_be_visible()  # an engineer (the author) does not approve
    _sign_out(page, base)

    # a reviewer approves it
    _sign_in(page, base, "reviewer")
    page.goto(report_url)
    page.click("#approve-button")
    expect(page.locator("#version-status")).to_have_text("Approved")
    expect(page.locator("#sign-refused")).to_be_visible()  # no signing permission
    _sign_out(page, base)

    # the signer signs it: the page follows the worker until the version is signed
    _sign_in(page, base, "signer")
    page.goto(report_url)
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#sign-button")
    expect(page.locator("#signing-progress")).to_be_visible()  # rendering the PDF takes the worker over a second
    expect(page.locator("#version-status")).to_have_text("Signed", timeout=SIGN_TIMEOUT_MS)
    expect(page.locator("#signed-banner")).to_be_visible()
    expect(page.locator('#report-steps [data-step="signed"]')).to_have_class(re.compile(r"is-current"))
    expect(page.locator('#audit-table tr[data-action="signed"]')).to_have_count(1)
    sha256 = page.locator("#version-sha256").inner_text().strip()
    assert re.fullmatch(r"[0-9a-f]{64}", sha256)

    # the signed PDF downloads with the SHA-256 shown
    with page.expect_download() as download_info:
        page.click("#pdf-link")
    pdf = Path(download_info.value.path()).read_bytes()
    assert pdf.startswith(b"%PDF")
    assert hashlib.sha256(pdf).hexdigest() == sha256
    saved = tmp_path / "signed.pdf"
    saved.write_bytes(pdf)

    # the verification page accepts it as valid and links the version
    page.goto(f"{base}/reports/verify/")
    page.set_input_files("#verify-file", str(saved))
    page.click("#verify-button")
    expect(page.locator("#verify-result")).to_have_attribute("data-verdict", "valid")
    expect(page.locator("#verdict-name")).to_have_text("Valid")
    expect(page.locator("#verify-sha256")).to_have_text(sha256)
    page.click("#version-link")
    page.wait_for_url(re.compile(r".*/reports/\d+/\?version=1$"))

    # the page in Chinese
    page.click('.language-switch button[value="zh-hans"]')
    page.wait_for_selector('html[lang="zh-hans"]')
    expect(page.locator("#version-status")).to_have_text("已签署")
    expect(page.locator("#pdf-link")).to_have_text("下载已签署的 PDF")
    expect(page.locator('#report-steps [data-step="in_review"]')).to_have_text("审核中")
