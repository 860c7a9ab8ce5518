"""Rotating the signing certificate leaves the reports signed before it valid once the old certificate is listed in
REPORTS_SIGNING_PREVIOUS_CERTIFICATES (docs/operations.md); without it they verify as intact but untrusted."""

from __future__ import annotations

from pathlib import Path

import pytest
import weasyprint
from django.core.exceptions import ImproperlyConfigured

from reports.services import report_verify, signing_identity, trusted_certificates
from reports.signing import identity_certificate_pem, sign_pdf


@pytest.fixture
def old_signed_pdf(settings, tmp_path: Path) -> tuple[bytes, Path]:
    """A PDF signed with the embedded default certificate of an earlier state directory, and that certificate."""
    settings.VAR_DIR = tmp_path / "before"
    old = signing_identity()
    pdf = weasyprint.HTML(string="<h1>显存承诺 · memory commitment</h1>").write_pdf()
    signed = sign_pdf(pdf, identity=old, reason="approved", location=None, version_label="r1 v1",
                      signer_name="张工")
    certificate = tmp_path / "previous.crt"
    certificate.write_bytes(identity_certificate_pem(old))
    return signed, certificate


def test_a_report_signed_before_a_rotation_stays_valid_with_the_previous_certificate(
        settings, tmp_path, organisation, user, old_signed_pdf):
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
