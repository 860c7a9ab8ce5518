"""Rotating the signing certificate leaves the reports signed before it valid once the old certificate is listed in
REPORTS_SIGNING_PREVIOUS_CERTIFICATES (docs/operations.md); without it they verify as intact but untrusted."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import weasyprint
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command

from reports.models import Report, ReportVersion
from reports.services.reports import report_verify, signing_identity, trusted_certificates
from reports.signing import identity_certificate_pem, pdf_sha256, sign_pdf
from sizing.models import Deployment, Gpu, LlmModel


@pytest.fixture
def old_signed_pdf(settings, tmp_path: Path) -> tuple[bytes, Path]:
    """A PDF signed with the embedded default certificate of an earlier state directory, and that certificate."""
    settings.VAR_DIR = tmp_path / "before"
    old = signing_identity()
    pdf = weasyprint.HTML(string="<h1>显存承诺 · memory commitment</h1>").write_pdf()
    signed = sign_pdf(pdf, identity=old, reason="approved", location=None, version_label="r1 v1", signer_name="张工")
    certificate = tmp_path / "previous.crt"
    certificate.write_bytes(identity_certificate_pem(old))
    return signed, certificate


def test_a_report_signed_before_a_rotation_stays_valid_with_the_previous_certificate(
    settings, tmp_path, organisation, user, old_signed_pdf
):
    signed, previous = old_signed_pdf
    # when the organisation rotates to a new certificate (a new state directory makes a new self-signed one)
    settings.VAR_DIR = tmp_path / "after"
    assert report_verify(organisation=organisation, user=user, data=signed)["verdict"] == "untrusted"

    # then listing the old certificate makes the earlier report valid again
    settings.REPORTS_SIGNING_PREVIOUS_CERTIFICATES = [str(previous)]
    assert len(trusted_certificates()) == 2
    assert report_verify(organisation=organisation, user=user, data=signed)["verdict"] == "valid"


def test_a_bad_previous_certificate_is_a_configuration_error_naming_the_file(settings, tmp_path, db):
    settings.VAR_DIR = tmp_path
    bad = tmp_path / "not-a-certificate.pem"
    bad.write_text("hello")
    settings.REPORTS_SIGNING_PREVIOUS_CERTIFICATES = [str(bad)]
    with pytest.raises(ImproperlyConfigured, match=r"not-a-certificate\.pem is not an X\.509 certificate"):
        trusted_certificates()


def test_reports_check_finds_a_version_whose_pdf_is_not_the_recorded_one(
    settings, tmp_path, catalog, organisation, user, old_signed_pdf
):
    # given two signed versions as a restore brought them back: one intact, one whose recorded hash differs
    signed, _ = old_signed_pdf  # signed with the certificate of settings.VAR_DIR "before", still current here
    deployment = Deployment.objects.create(
        organisation=organisation,
        name="chat",
        engine="vllm",
        gpu_count=1,
        tp=1,
        model=LlmModel.objects.get(slug="meta-llama/Meta-Llama-3-8B", organisation__isnull=True),
        gpu=Gpu.objects.get(slug="nvidia-l4-24gb"),
    )
    report = Report.objects.create(organisation=organisation, deployment=deployment, title="r", language="en")
    for number, sha in ((1, pdf_sha256(signed)), (2, "0" * 64)):
        ReportVersion.objects.create(report=report, number=number, status="signed", content={}, pdf=signed, sha256=sha)

    # when
    with pytest.raises(CommandError, match="1 signed report versions failed"):
        call_command("reports_check", stdout=(out := io.StringIO()))

    # then the intact one passes and the other is named with both hashes
    text = out.getvalue()
    assert f"report {report.pk} v2 (r): SHA-256 {pdf_sha256(signed)} differs from the recorded {'0' * 64}" in text
    assert "2 signed versions checked, 1 with problems" in text
