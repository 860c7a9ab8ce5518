"""The organisation's signing identity, PAdES signing of a report PDF, and verification of uploaded copies (no DB)."""

from __future__ import annotations

import asyncio
import io
import os
import stat
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
import weasyprint
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID
from pyhanko.pdf_utils import generic
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import validate_pdf_signature
from pyhanko.sign.validation.status import SignatureCoverageLevel
from pyhanko_certvalidator import ValidationContext

from reports.signing import (
    ReportSigningError,
    SigningErrorCode,
    SigningIdentity,
    Verdict,
    identity_certificate_pem,
    identity_fingerprint,
    identity_subject,
    pdf_sha256,
    sign_pdf,
    signing_identity,
    verify_pdf,
)

ORGANISATION = "上海示例智算科技有限公司"
VERSION_LABEL = "report 12 v3"


@pytest.fixture(scope="module")
def report_pdf() -> bytes:
    """A small two-page PDF with Chinese text, as the report renderer makes it."""
    rows = "".join(f"<p>第 {i} 行：每卡峰值显存 71.3 GiB，KV 缓存余量 12%</p>" for i in range(60))
    return weasyprint.HTML(string=f"<h1>显存承诺 · memory commitment</h1>{rows}").write_pdf()


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("state")


@pytest.fixture(scope="module")
def identity(state_dir: Path) -> SigningIdentity:
    return signing_identity(p12_path=None, passphrase=None, organisation_name=ORGANISATION, state_dir=state_dir)


@pytest.fixture(scope="module")
def signed_pdf(report_pdf: bytes, identity: SigningIdentity) -> bytes:
    return sign_pdf(
        report_pdf,
        identity=identity,
        reason="显存承诺 approved",
        location="上海",
        version_label=VERSION_LABEL,
        signer_name="张工",
    )


def _signature_offsets(pdf: bytes) -> tuple[int, int, int, int]:
    """The /ByteRange of the (first) signature."""
    reader = PdfFileReader(io.BytesIO(pdf))
    start1, len1, start2, len2 = reader.embedded_signatures[0].byte_range
    return start1, len1, start2, len2


def _p12_file(path: Path, *, passphrase: bytes, common_name: str = "Acme Integrator") -> x509.Certificate:
    """Write a PKCS#12 file made with cryptography (RSA 2048, self-signed, document-signing key usage)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=365))
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=True,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    path.write_bytes(
        pkcs12.serialize_key_and_certificates(
            name=b"acme",
            key=key,
            cert=certificate,
            cas=None,
            encryption_algorithm=serialization.BestAvailableEncryption(passphrase),
        )
    )
    return certificate


# --- the identity -----------------------------------------------------------------------------------------------------


def test_embedded_identity_is_created_once_and_reused(tmp_path: Path) -> None:
    # given: an empty state directory
    # when: the identity is asked for twice
    first = signing_identity(p12_path=None, passphrase=None, organisation_name=ORGANISATION, state_dir=tmp_path)
    second = signing_identity(p12_path=None, passphrase=None, organisation_name="Renamed Ltd", state_dir=tmp_path)

    # then: the same certificate both times, CN = O = the organisation
    assert identity_fingerprint(first) == identity_fingerprint(second)
    assert len(identity_fingerprint(first)) == 64
    assert first.common_name == ORGANISATION
    assert identity_subject(first) == f"Organization: {ORGANISATION}, Common Name: {ORGANISATION}"
    assert first.embedded_default is True
    certificate = x509.load_pem_x509_certificate(identity_certificate_pem(first))
    key_usage = certificate.extensions.get_extension_for_class(x509.KeyUsage).value
    assert key_usage.digital_signature is True
    assert key_usage.content_commitment is True  # nonRepudiation
    assert key_usage.key_cert_sign is False
    validity = certificate.not_valid_after_utc - certificate.not_valid_before_utc
    assert timedelta(days=3650) <= validity <= timedelta(days=3653)
    assert isinstance(certificate.public_key(), rsa.RSAPublicKey)
    assert certificate.public_key().key_size == 3072


def test_embedded_identity_files_are_private(tmp_path: Path) -> None:
    # given / when
    signing_identity(p12_path=None, passphrase=None, organisation_name=ORGANISATION, state_dir=tmp_path)

    # then: key material 0600 in a 0700 directory, nothing left from the staging directory
    directory = tmp_path / "signing" / "default"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE((directory / "organisation.p12").stat().st_mode) == 0o600
    assert stat.S_IMODE((directory / "organisation.p12.passphrase").stat().st_mode) == 0o600
    assert sorted(p.name for p in (tmp_path / "signing").iterdir()) == ["default"]
    assert sorted(p.name for p in directory.iterdir()) == [
        "organisation.crt",
        "organisation.p12",
        "organisation.p12.passphrase",
    ]


def test_identity_repr_never_shows_the_key(identity: SigningIdentity) -> None:
    # given: the key's DER bytes
    key_der = identity.private_key.dump()

    # when
    text = repr(identity)

    # then
    assert text.startswith("SigningIdentity(subject=")
    assert identity_fingerprint(identity) in text
    assert key_der.hex()[:32] not in text
    assert "private" not in text


def test_p12_identity_loads_with_the_right_passphrase(tmp_path: Path, report_pdf: bytes) -> None:
    # given: a PKCS#12 file made with cryptography
    path = tmp_path / "org.p12"
    certificate = _p12_file(path, passphrase=b"s3cret-phrase")

    # when
    identity = signing_identity(
        p12_path=str(path), passphrase="s3cret-phrase", organisation_name="ignored", state_dir=tmp_path
    )

    # then: that certificate, and it signs a PDF that verifies against it
    assert identity.certificate.dump() == certificate.public_bytes(serialization.Encoding.DER)
    assert identity.common_name == "Acme Integrator"
    assert identity.source == str(path)
    assert identity.embedded_default is False
    assert not (tmp_path / "signing").exists()
    signed = sign_pdf(
        report_pdf, identity=identity, reason="approved", location=None, version_label="r1 v1", signer_name="A"
    )
    result = verify_pdf(signed, trusted=[certificate])
    assert result.verdict == Verdict.VALID
    assert result.location is None


def test_p12_identity_with_a_wrong_passphrase_names_the_file_not_the_passphrase(tmp_path: Path) -> None:
    # given
    path = tmp_path / "org.p12"
    _p12_file(path, passphrase=b"s3cret-phrase")

    # when
    with pytest.raises(ReportSigningError) as caught:
        signing_identity(p12_path=str(path), passphrase="wrong-guess", organisation_name="x", state_dir=tmp_path)

    # then
    assert caught.value.code == SigningErrorCode.CERTIFICATE_PASSPHRASE
    assert caught.value.path == path
    assert str(caught.value) == (
        f"the passphrase for the signing certificate file {path} is wrong or missing; check REPORTS_SIGNING_PASSPHRASE"
    )
    assert "wrong-guess" not in str(caught.value)
    assert "s3cret" not in str(caught.value)


@pytest.mark.parametrize(
    ("content", "code"),
    [
        pytest.param(None, SigningErrorCode.CERTIFICATE_MISSING, id="missing"),
        pytest.param(
            b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
            SigningErrorCode.CERTIFICATE_NOT_PKCS12,
            id="pem-not-p12",
        ),
        pytest.param(b"", SigningErrorCode.CERTIFICATE_NOT_PKCS12, id="empty"),
    ],
)
def test_p12_identity_that_cannot_be_loaded_names_the_file(
    tmp_path: Path, content: bytes | None, code: SigningErrorCode
) -> None:
    # given
    path = tmp_path / "org.p12"
    if content is not None:
        path.write_bytes(content)

    # when
    with pytest.raises(ReportSigningError) as caught:
        signing_identity(p12_path=str(path), passphrase="whatever", organisation_name="x", state_dir=tmp_path)

    # then
    assert caught.value.code == code
    assert str(path) in str(caught.value)
    assert "whatever" not in str(caught.value)


def test_empty_organisation_name_is_refused(tmp_path: Path) -> None:
    # when
    with pytest.raises(ReportSigningError) as caught:
        signing_identity(p12_path=None, passphrase=None, organisation_name="  ", state_dir=tmp_path)

    # then: nothing was written
    assert caught.value.code == SigningErrorCode.ORGANISATION_NAME_EMPTY
    assert not (tmp_path / "signing" / "default").exists()


# --- signing ----------------------------------------------------------------------------------------------------------


def test_signed_pdf_is_accepted_by_pyhanko(signed_pdf: bytes, report_pdf: bytes, identity: SigningIdentity) -> None:
    # given
    reader = PdfFileReader(io.BytesIO(signed_pdf))
    (embedded,) = reader.embedded_signatures
    context = ValidationContext(trust_roots=[identity.certificate])

    # when
    status = validate_pdf_signature(embedded, context)

    # then: an incremental update of the original (PDF 1.7 kept), PAdES, whole file covered, trusted
    assert signed_pdf.startswith(report_pdf)
    assert signed_pdf.startswith(b"%PDF-1.7")
    assert embedded.field_name == "Signature1"
    assert embedded.sig_object["/SubFilter"] == "/ETSI.CAdES.detached"
    assert status.intact is True
    assert status.valid is True
    assert status.trusted is True
    assert status.coverage == SignatureCoverageLevel.ENTIRE_FILE
    assert status.md_algorithm == "sha256"


def test_pdf_sha256_is_the_hex_digest() -> None:
    # given: the SHA-256 of "abc" (FIPS 180-2 test vector)
    # when / then
    assert pdf_sha256(b"abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


# --- verification -----------------------------------------------------------------------------------------------------


def test_verify_signed_pdf_is_valid(signed_pdf: bytes, identity: SigningIdentity) -> None:
    # when
    result = verify_pdf(signed_pdf, trusted=[identity.certificate])

    # then
    assert result.verdict == Verdict.VALID
    assert (result.signed, result.intact, result.covers_whole_file, result.trusted) == (True, True, True, True)
    assert result.signer == ORGANISATION
    assert result.signer_name == "张工"
    assert result.reason == "显存承诺 approved"
    assert result.location == "上海"
    assert result.signer_fingerprint == identity_fingerprint(identity)
    assert result.version_label == VERSION_LABEL
    assert result.signed_at is not None
    assert abs(datetime.now(UTC) - result.signed_at) < timedelta(minutes=1)
    assert result.sha256 == pdf_sha256(signed_pdf)
    assert result.size_bytes == len(signed_pdf)
    assert result.problems == ()
    payload = result.as_dict()
    assert payload["verdict"] == "valid"
    assert payload["signed_at"] == result.signed_at.isoformat()
    assert payload["problems"] == []


def test_verify_accepts_the_trusted_certificate_in_any_form(signed_pdf: bytes, identity: SigningIdentity) -> None:
    # given: the certificate as DER bytes and as a cryptography object
    der = identity.certificate.dump()

    # when / then
    assert verify_pdf(signed_pdf, trusted=[der]).verdict == Verdict.VALID
    assert verify_pdf(signed_pdf, trusted=[x509.load_der_x509_certificate(der)]).verdict == Verdict.VALID


def test_verify_without_trusted_certificates_is_untrusted(signed_pdf: bytes) -> None:
    # when
    result = verify_pdf(signed_pdf)

    # then
    assert result.verdict == Verdict.UNTRUSTED
    assert (result.intact, result.covers_whole_file, result.trusted) == (True, True, False)


def test_verify_flipped_byte_in_signed_content_is_tampered(signed_pdf: bytes, identity: SigningIdentity) -> None:
    # given: one byte changed inside the first content stream, well before the signature's hex
    _, len1, _, _ = _signature_offsets(signed_pdf)
    position = signed_pdf.index(b"stream\n") + len(b"stream\n") + 20
    assert position < len1
    tampered = bytearray(signed_pdf)
    tampered[position] ^= 0x01

    # when
    result = verify_pdf(bytes(tampered), trusted=[identity.certificate])

    # then
    assert result.verdict == Verdict.TAMPERED
    assert result.signed is True
    assert result.intact is False
    assert result.covers_whole_file is True
    assert result.problems == ("the document was changed after it was signed",)
    assert result.problem_codes == ("CHANGED",)
    assert result.sha256 == pdf_sha256(bytes(tampered))


def test_verify_edited_version_label_is_tampered(signed_pdf: bytes, identity: SigningIdentity) -> None:
    # given: the version label rewritten in place, same length
    assert signed_pdf.count(b"(report 12 v3)") == 1
    forged = signed_pdf.replace(b"(report 12 v3)", b"(report 12 v4)")

    # when
    result = verify_pdf(forged, trusted=[identity.certificate])

    # then
    assert result.verdict == Verdict.TAMPERED
    assert result.intact is False


def test_verify_appended_bytes_is_tampered(signed_pdf: bytes, identity: SigningIdentity) -> None:
    # when
    result = verify_pdf(signed_pdf + b"\n% appended after signing\n", trusted=[identity.certificate])

    # then: the signed part is intact, but the file is more than what was signed
    assert result.verdict == Verdict.TAMPERED
    assert (result.intact, result.covers_whole_file) == (True, False)
    assert result.problems == ("content was added to the file after it was signed",)


def test_verify_incremental_update_after_signing_is_tampered(signed_pdf: bytes, identity: SigningIdentity) -> None:
    # given: a later revision that adds an annotation and rewrites the version label
    writer = IncrementalPdfFileWriter(io.BytesIO(signed_pdf))
    page_ref = writer.root["/Pages"]["/Kids"].raw_get(0)
    page = page_ref.get_object()
    annotation = generic.DictionaryObject(
        {
            generic.pdf_name("/Type"): generic.pdf_name("/Annot"),
            generic.pdf_name("/Subtype"): generic.pdf_name("/Text"),
            generic.pdf_name("/Rect"): generic.ArrayObject([generic.NumberObject(n) for n in (10, 10, 30, 30)]),
            generic.pdf_name("/Contents"): generic.pdf_string("峰值改为 60 GiB"),
        }
    )
    page[generic.pdf_name("/Annots")] = generic.ArrayObject([writer.add_object(annotation)])
    writer.mark_update(page_ref)
    info_ref = writer.trailer.raw_get("/Info")
    info_ref.get_object()[generic.pdf_name("/ReportVersion")] = generic.pdf_string("report 12 v9")
    writer.mark_update(info_ref)
    output = io.BytesIO()
    writer.write(output)
    updated = output.getvalue()

    # when
    result = verify_pdf(updated, trusted=[identity.certificate])

    # then: reported, and the label is the one that was signed
    assert updated.startswith(signed_pdf)
    assert result.verdict == Verdict.TAMPERED
    assert (result.intact, result.covers_whole_file) == (True, False)
    assert result.version_label == VERSION_LABEL
    assert result.problem_codes == ("ADDED_AFTER_SIGNING",)


def test_verify_unsigned_pdf_is_unsigned(report_pdf: bytes, identity: SigningIdentity) -> None:
    # when
    result = verify_pdf(report_pdf, trusted=[identity.certificate])

    # then
    assert result.verdict == Verdict.UNSIGNED
    assert (result.signed, result.intact, result.trusted) == (False, False, False)
    assert result.problems == ("the document has no signature",)
    assert result.signer is None


@pytest.mark.parametrize(
    ("content", "code"),
    [
        pytest.param(b"", "EMPTY", id="empty"),
        pytest.param(os.urandom(4096), "NOT_PDF", id="random-bytes"),
        pytest.param(b"%PDF-1.7\n" + os.urandom(4096), "PDF_UNREADABLE", id="pdf-header-then-garbage"),
        pytest.param("合同.docx".encode() * 100, "NOT_PDF", id="text"),
    ],
)
def test_verify_garbage_is_unreadable(content: bytes, code: str, identity: SigningIdentity) -> None:
    # when
    result = verify_pdf(content, trusted=[identity.certificate])

    # then: an answer, not an exception
    assert result.verdict == Verdict.UNREADABLE
    assert result.problem_codes == (code,)
    assert result.signed is False
    assert result.sha256 == pdf_sha256(content)


def test_verify_truncated_signed_pdf_does_not_raise(signed_pdf: bytes, identity: SigningIdentity) -> None:
    # given: the signed file cut in half
    # when
    result = verify_pdf(signed_pdf[: len(signed_pdf) // 2], trusted=[identity.certificate])

    # then
    assert result.verdict in {Verdict.UNREADABLE, Verdict.UNSIGNED, Verdict.TAMPERED}
    assert result.verdict != Verdict.VALID


def test_verify_refuses_input_above_the_limit(signed_pdf: bytes) -> None:
    # when
    result = verify_pdf(signed_pdf, max_bytes=1000)

    # then
    assert result.verdict == Verdict.UNREADABLE
    assert result.problem_codes == ("TOO_LARGE",)
    assert result.detail == f"{len(signed_pdf)} bytes, limit 1000 bytes"


def test_verify_pdf_signed_by_another_identity_is_untrusted(
    tmp_path: Path, report_pdf: bytes, identity: SigningIdentity
) -> None:
    # given: a PDF signed by a freshly made identity of another organisation
    other = signing_identity(p12_path=None, passphrase=None, organisation_name="Mallory Ltd", state_dir=tmp_path)
    forged = sign_pdf(
        report_pdf, identity=other, reason="approved", location=None, version_label=VERSION_LABEL, signer_name="M"
    )

    # when: verified against our organisation's certificate
    result = verify_pdf(forged, trusted=[identity.certificate])

    # then
    assert result.verdict == Verdict.UNTRUSTED
    assert (result.intact, result.covers_whole_file, result.trusted) == (True, True, False)
    assert result.signer == "Mallory Ltd"
    assert result.signer_fingerprint == identity_fingerprint(other)
    assert result.problem_codes == ("UNTRUSTED",)


def test_verify_inside_a_running_event_loop(signed_pdf: bytes, identity: SigningIdentity) -> None:
    # given: a caller that is itself a coroutine (pyHanko's asyncio.run would refuse to nest)
    async def caller() -> Verdict:
        return verify_pdf(signed_pdf, trusted=[identity.certificate]).verdict

    # when / then
    assert asyncio.run(caller()) == Verdict.VALID


def test_sign_refuses_bytes_that_are_not_a_pdf(identity: SigningIdentity) -> None:
    # when
    with pytest.raises(ReportSigningError) as caught:
        sign_pdf(b"not a pdf", identity=identity, reason="r", location=None, version_label="v", signer_name="n")

    # then
    assert caught.value.code == SigningErrorCode.PDF_UNSIGNABLE


def test_verify_with_a_malformed_trusted_certificate_is_the_callers_bug(signed_pdf: bytes) -> None:
    # when / then: a configuration error raises instead of calling every upload untrusted
    with pytest.raises(ValueError, match=r"a trusted certificate must be an X\.509 certificate"):
        verify_pdf(signed_pdf, trusted=[b"not a certificate"])


@pytest.mark.parametrize(
    "signing_time",
    [
        pytest.param(datetime(2025, 3, 20, 8, 0, 17, tzinfo=UTC), id="utc"),
        pytest.param(datetime(2025, 3, 20, 16, 0, 17, 654_321, tzinfo=timezone(timedelta(hours=8))), id="utc+8-micro"),
    ],
)
def test_the_signature_states_exactly_the_signing_time_given(
    report_pdf: bytes, identity: SigningIdentity, signing_time: datetime
) -> None:
    # given: the time the service records as the version's signed_at (page, audit log and signature share it)
    # when
    signed = sign_pdf(
        report_pdf,
        identity=identity,
        reason="r",
        location=None,
        version_label=VERSION_LABEL,
        signer_name="n",
        signing_time=signing_time,
    )
    result = verify_pdf(signed, trusted=[identity.certificate])

    # then: the CMS signing-time attribute and the signature dictionary's /M both hold it, to the whole second
    assert result.verdict == Verdict.VALID
    assert result.signed_at == signing_time.replace(microsecond=0)
    assert result.signed_at == datetime(2025, 3, 20, 8, 0, 17, tzinfo=UTC)
    embedded = PdfFileReader(io.BytesIO(signed)).embedded_signatures[0]
    assert embedded.self_reported_timestamp == datetime(2025, 3, 20, 8, 0, 17, tzinfo=UTC)


def test_sign_refuses_a_naive_signing_time(report_pdf: bytes, identity: SigningIdentity) -> None:
    # when / then: a time without its zone would be read as the machine's local time by one reader, UTC by another
    with pytest.raises(ValueError, match="aware"):
        sign_pdf(
            report_pdf,
            identity=identity,
            reason="r",
            location=None,
            version_label="v",
            signer_name="n",
            signing_time=datetime(2025, 3, 20, 8, 0),  # noqa: DTZ001 - the naive time under test
        )
