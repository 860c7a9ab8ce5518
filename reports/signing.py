"""The organisation's signing certificate, PAdES signatures of report PDFs, and verification of uploaded copies.

No Django here: the caller reads the settings (``REPORTS_SIGNING_P12``, ``REPORTS_SIGNING_PASSPHRASE``, the state
directory) and passes them in, so everything below is testable without a database.

- ``signing_identity()`` loads the organisation's certificate and key from a PKCS#12 file, or creates (once) and then
  reuses a self-signed organisation certificate under ``state_dir/signing/default/``.
- ``sign_pdf()`` adds a PAdES baseline-B signature as an incremental update, with the report's version label in the
  signed revision's document information.
- ``verify_pdf()`` answers, for uploaded bytes, whether a signature is present, intact, covers the whole file and
  chains to a trusted certificate, and never raises on bad input.

pyHanko runs its work on an asyncio loop (``asyncio.run``); when called from inside a running event loop the work is
moved to a short-lived thread, so both functions are safe from sync views, Celery tasks and async contexts alike.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any, TypeVar

from asn1crypto import keys as asn1_keys
from asn1crypto import pkcs12 as asn1_pkcs12
from asn1crypto import x509 as asn1_x509
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID
from pyhanko.pdf_utils import generic
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign import fields, signers
from pyhanko.sign.validation.pdf_embedded import EmbeddedPdfSignature, async_validate_pdf_signature
from pyhanko.sign.validation.status import PdfSignatureStatus, SignatureCoverageLevel
from pyhanko_certvalidator import ValidationContext
from pyhanko_certvalidator.registry import SimpleCertificateStore

T = TypeVar("T")

SIGNATURE_FIELD = "Signature1"
VERSION_LABEL_KEY = "/ReportVersion"  # custom entry of the signed revision's /Info dictionary
MAX_VERIFY_BYTES = 64 * 1024 * 1024  # hard stop; callers enforce their own, smaller upload limit before this
DEFAULT_VALIDITY = timedelta(days=3652)  # 10 years, leap days included
RSA_KEY_BITS = 3072  # RSA keeps WeasyPrint's PDF 1.7; an ECDSA key makes pyHanko move the file to PDF 2.0
X509_NAME_MAX_CHARS = 64  # ub-common-name and ub-organization-name in RFC 5280

_SUPPORTED_KEYS = (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey, ed25519.Ed25519PrivateKey, ed448.Ed448PrivateKey)
_DEFAULT_DIR = "default"
_P12_FILE = "organisation.p12"
_PASSPHRASE_FILE = "organisation.p12.passphrase"  # noqa: S105 (a file name, not a secret)
_CERT_PEM_FILE = "organisation.crt"  # public; the one to hand customers for their PDF reader's trust list


class SigningErrorCode(Enum):
    """Stable codes for what went wrong with the signing certificate or the PDF to sign."""

    CERTIFICATE_MISSING = "certificate_missing"
    CERTIFICATE_UNREADABLE = "certificate_unreadable"
    CERTIFICATE_NOT_PKCS12 = "certificate_not_pkcs12"
    CERTIFICATE_PASSPHRASE = "certificate_passphrase"  # noqa: S105 (an error code)
    CERTIFICATE_INCOMPLETE = "certificate_incomplete"
    STATE_UNUSABLE = "state_unusable"
    ORGANISATION_NAME_EMPTY = "organisation_name_empty"
    PDF_UNSIGNABLE = "pdf_unsignable"


class ReportSigningError(Exception):
    """The signing certificate cannot be loaded or created, or the PDF cannot be signed.

    The message names the file and what to change; it never contains a passphrase or key material.
    """

    def __init__(self, *, code: SigningErrorCode, message: str, path: Path | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path


@dataclass(frozen=True, kw_only=True, repr=False)
class SigningIdentity:
    """The organisation's certificate and private key, in the form pyHanko needs.

    ``repr`` shows the subject, fingerprint and source only, so logging an identity never prints the key;
    ``private_key`` is also left out of comparisons. ``source`` says where it came from (the PKCS#12 path or the
    embedded default's directory); ``chain`` holds the other certificates of the PKCS#12 file, embedded in signatures.
    """

    certificate: asn1_x509.Certificate
    private_key: asn1_keys.PrivateKeyInfo = field(repr=False, compare=False)
    chain: tuple[asn1_x509.Certificate, ...] = ()
    source: str
    embedded_default: bool

    def __repr__(self) -> str:
        return (
            f"SigningIdentity(subject={self.subject!r}, fingerprint={certificate_fingerprint(self.certificate)!r}, "
            f"source={self.source!r}, embedded_default={self.embedded_default!r})"
        )

    @property
    def subject(self) -> str:
        """The certificate's subject in words, e.g. "Common Name: Acme, Organization: Acme"."""
        return self.certificate.subject.human_friendly

    @property
    def common_name(self) -> str:
        """The subject's CN, or the whole subject in words when it has none."""
        return _common_name(self.certificate)


class Verdict(StrEnum):
    """The one-word answer of a verification, from worst to best."""

    UNREADABLE = "unreadable"  # not a PDF, truncated, encrypted, too large
    UNSIGNED = "unsigned"  # a readable PDF without a signature
    TAMPERED = "tampered"  # a signature whose hash or cryptography fails, or content added after signing
    UNTRUSTED = "untrusted"  # intact and whole, but not signed by a trusted certificate
    VALID = "valid"


class Problem(Enum):
    """Fixed English sentences for what verification found; the name is a stable code the UI can translate."""

    EMPTY = "the file is empty"
    TOO_LARGE = "the file is larger than the verification limit"
    NOT_PDF = "the file is not a PDF"
    PDF_UNREADABLE = "the PDF could not be read"
    ENCRYPTED = "the PDF is encrypted and cannot be checked"
    NO_SIGNATURE = "the document has no signature"
    SIGNATURE_UNREADABLE = "the signature could not be read"
    CHANGED = "the document was changed after it was signed"
    SIGNATURE_MISMATCH = "the signature does not match the document"
    ADDED_AFTER_SIGNING = "content was added to the file after it was signed"
    UNTRUSTED = "the signer's certificate is not the organisation's certificate or signed by it"


@dataclass(frozen=True, kw_only=True)
class Verification:
    """What ``verify_pdf`` found in an uploaded PDF.

    ``intact``: the signed byte range hashes to the digest in the signature and the signature verifies with the
    signer's key. ``covers_whole_file``: nothing (an incremental update, appended bytes) follows the signature.
    ``trusted``: the signer's certificate chains to one of the trusted certificates passed in. ``signed_at`` is the
    signing time the signer put in the signature (no timestamp authority: it is the signer's clock). ``sha256`` and
    ``size_bytes`` describe the uploaded bytes, so the caller can match them against its records. ``problems`` are
    fixed sentences (``problem_codes`` their stable codes); ``detail`` is the technical reason, if any, in English.
    """

    verdict: Verdict
    signed: bool
    intact: bool
    covers_whole_file: bool
    trusted: bool
    signer: str | None = None
    signer_subject: str | None = None
    signer_name: str | None = None
    signer_fingerprint: str | None = None
    signed_at: datetime | None = None
    version_label: str | None = None
    reason: str | None = None
    location: str | None = None
    sha256: str
    size_bytes: int
    problems: tuple[str, ...] = ()
    problem_codes: tuple[str, ...] = ()
    detail: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary: the verdict as its string, ``signed_at`` as ISO 8601, tuples as lists."""
        return {
            "verdict": self.verdict.value,
            "signed": self.signed,
            "intact": self.intact,
            "covers_whole_file": self.covers_whole_file,
            "trusted": self.trusted,
            "signer": self.signer,
            "signer_subject": self.signer_subject,
            "signer_name": self.signer_name,
            "signer_fingerprint": self.signer_fingerprint,
            "signed_at": self.signed_at.isoformat() if self.signed_at is not None else None,
            "version_label": self.version_label,
            "reason": self.reason,
            "location": self.location,
            "sha256": self.sha256,
            "size_bytes": self.size_bytes,
            "problems": list(self.problems),
            "problem_codes": list(self.problem_codes),
            "detail": self.detail,
        }


# --- the identity -----------------------------------------------------------------------------------------------------


def signing_identity(
    *, p12_path: str | None, passphrase: str | None, organisation_name: str, state_dir: Path
) -> SigningIdentity:
    """Load the organisation's signing identity: the PKCS#12 file if one is configured, else the embedded default.

    With ``p12_path`` (setting ``REPORTS_SIGNING_P12``), the file is loaded with ``passphrase``
    (``REPORTS_SIGNING_PASSPHRASE``); every failure raises ``ReportSigningError`` naming the file.
    Without it, a self-signed certificate (RSA 3072, CN = O = ``organisation_name`` cut to 64 characters, key usage
    digitalSignature + nonRepudiation, valid 10 years) is created on first use in ``state_dir/signing/default/``: the
    PKCS#12 file and its random passphrase in two 0600 files, the certificate in PEM beside them, the directory 0700.
    Later calls reuse it, whatever ``organisation_name`` says then: PDFs already signed stay verifiable. Delete the
    directory to issue a new one. Creation is atomic (a directory rename), so concurrent first calls agree.
    """
    if p12_path:
        return _identity_from_p12(Path(p12_path), passphrase, embedded_default=False)
    return _embedded_default_identity(organisation_name=organisation_name, state_dir=state_dir)


def identity_fingerprint(identity: SigningIdentity) -> str:
    """The SHA-256 of the certificate's DER encoding, lowercase hex (64 characters)."""
    return certificate_fingerprint(identity.certificate)


def identity_subject(identity: SigningIdentity) -> str:
    """The certificate's subject in words."""
    return identity.subject


def identity_certificate_pem(identity: SigningIdentity) -> bytes:
    """The certificate in PEM, for customers who add it to their PDF reader's trusted certificates."""
    return x509.load_der_x509_certificate(identity.certificate.dump()).public_bytes(serialization.Encoding.PEM)


def certificate_fingerprint(certificate: asn1_x509.Certificate) -> str:
    """The SHA-256 of a certificate's DER encoding, lowercase hex."""
    return hashlib.sha256(certificate.dump()).hexdigest()


def _identity_from_p12(path: Path, passphrase: str | None, *, embedded_default: bool) -> SigningIdentity:
    """Load key, certificate and chain from a PKCS#12 file; raise ``ReportSigningError`` naming the file."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ReportSigningError(
            code=SigningErrorCode.CERTIFICATE_MISSING,
            message=f"the signing certificate file {path} does not exist; check REPORTS_SIGNING_P12",
            path=path,
        ) from None
    except OSError as exc:
        raise ReportSigningError(
            code=SigningErrorCode.CERTIFICATE_UNREADABLE,
            message=f"the signing certificate file {path} cannot be read ({exc.strerror})",
            path=path,
        ) from None
    loaded = _load_pkcs12(data, passphrase)
    if loaded is None:
        if not _looks_like_pkcs12(data):
            raise ReportSigningError(
                code=SigningErrorCode.CERTIFICATE_NOT_PKCS12,
                message=f"the signing certificate file {path} is not a PKCS#12 (.p12/.pfx) file",
                path=path,
            )
        raise ReportSigningError(
            code=SigningErrorCode.CERTIFICATE_PASSPHRASE,
            message=(
                f"the passphrase for the signing certificate file {path} is wrong or missing; "
                "check REPORTS_SIGNING_PASSPHRASE"
            ),
            path=path,
        )
    key, cert, extra = loaded
    if key is None or cert is None:
        raise ReportSigningError(
            code=SigningErrorCode.CERTIFICATE_INCOMPLETE,
            message=f"the signing certificate file {path} must hold both a private key and its certificate",
            path=path,
        )
    if not isinstance(key, _SUPPORTED_KEYS):
        raise ReportSigningError(
            code=SigningErrorCode.CERTIFICATE_INCOMPLETE,
            message=f"the key in the signing certificate file {path} is not an RSA, ECDSA or EdDSA key",
            path=path,
        )
    public_der = serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    if key.public_key().public_bytes(*public_der) != cert.public_key().public_bytes(*public_der):
        raise ReportSigningError(
            code=SigningErrorCode.CERTIFICATE_INCOMPLETE,
            message=f"the private key in the signing certificate file {path} does not belong to its certificate",
            path=path,
        )
    key_der = key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return SigningIdentity(
        certificate=asn1_x509.Certificate.load(cert.public_bytes(serialization.Encoding.DER)),
        private_key=asn1_keys.PrivateKeyInfo.load(key_der),
        chain=tuple(asn1_x509.Certificate.load(c.public_bytes(serialization.Encoding.DER)) for c in extra),
        source=str(path.parent if embedded_default else path),
        embedded_default=embedded_default,
    )


def _load_pkcs12(data: bytes, passphrase: str | None) -> tuple[Any, Any, list[x509.Certificate]] | None:
    """Try the passphrase (and, when none is given, both "no password" and the empty password); None if all fail."""
    candidates: list[bytes | None] = [passphrase.encode()] if passphrase else [None, b""]
    for candidate in candidates:
        try:
            return pkcs12.load_key_and_certificates(data, candidate)
        except (ValueError, TypeError):
            continue
    return None


def _looks_like_pkcs12(data: bytes) -> bool:
    """Whether the bytes parse as a PKCS#12 PFX structure (so a load failure means a wrong passphrase)."""
    try:
        pfx = asn1_pkcs12.Pfx.load(data, strict=True)
        return pfx["version"].native == "v3" and pfx["auth_safe"]["content_type"].native in {"data", "signed_data"}
    except Exception:  # asn1crypto raises ValueError, TypeError, KeyError... on arbitrary bytes
        return False


def _embedded_default_identity(*, organisation_name: str, state_dir: Path) -> SigningIdentity:
    """Load the self-signed default from ``state_dir/signing/default/``, creating it on first use."""
    target = Path(state_dir) / "signing" / _DEFAULT_DIR
    if not (target / _P12_FILE).exists():
        _create_embedded_default(target=target, organisation_name=organisation_name)
    try:
        passphrase = (target / _PASSPHRASE_FILE).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        raise ReportSigningError(
            code=SigningErrorCode.STATE_UNUSABLE,
            message=f"the passphrase file {target / _PASSPHRASE_FILE} of the embedded signing certificate is missing "
            f"or unreadable; delete {target} to issue a new certificate",
            path=target,
        ) from None
    return _identity_from_p12(target / _P12_FILE, passphrase, embedded_default=True)


def _create_embedded_default(*, target: Path, organisation_name: str) -> None:
    """Write a new self-signed identity into a private temporary directory, then rename it into place."""
    name = " ".join(organisation_name.split())[:X509_NAME_MAX_CHARS]
    if not name:
        raise ReportSigningError(
            code=SigningErrorCode.ORGANISATION_NAME_EMPTY,
            message="the organisation name is empty; the signing certificate needs it as its subject",
        )
    try:
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".default-", dir=target.parent))  # mode 0700
    except OSError as exc:
        raise ReportSigningError(
            code=SigningErrorCode.STATE_UNUSABLE,
            message=f"cannot create the signing certificate directory under {target.parent} ({exc.strerror})",
            path=target.parent,
        ) from None
    try:
        key = rsa.generate_private_key(public_exponent=65537, key_size=RSA_KEY_BITS)
        certificate = _self_signed_certificate(key=key, name=name)
        passphrase = secrets.token_urlsafe(32)
        p12 = pkcs12.serialize_key_and_certificates(
            name=name.encode(),
            key=key,
            cert=certificate,
            cas=None,
            encryption_algorithm=serialization.BestAvailableEncryption(passphrase.encode()),
        )
        _write_private(staging / _PASSPHRASE_FILE, passphrase.encode() + b"\n", mode=0o600)
        _write_private(staging / _P12_FILE, p12, mode=0o600)
        _write_private(staging / _CERT_PEM_FILE, certificate.public_bytes(serialization.Encoding.PEM), mode=0o644)
        try:
            staging.rename(target)  # atomic; fails when another process created the default first
        except OSError:
            if not (target / _P12_FILE).exists():
                raise
    except OSError as exc:
        raise ReportSigningError(
            code=SigningErrorCode.STATE_UNUSABLE,
            message=f"cannot write the embedded signing certificate to {target} ({exc.strerror})",
            path=target,
        ) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _self_signed_certificate(*, key: rsa.RSAPrivateKey, name: str) -> x509.Certificate:
    """A 10-year self-signed end-entity certificate for document signing (CN = O = the organisation)."""
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, name),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, name),
        ]
    )
    now = datetime.now(UTC)
    public_key = key.public_key()
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))  # tolerate small clock differences between machines
        .not_valid_after(now + DEFAULT_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=True,  # nonRepudiation
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
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
        .sign(key, hashes.SHA256())
    )


def _write_private(path: Path, data: bytes, *, mode: int) -> None:
    """Create ``path`` exclusively with ``mode`` (not subject to the umask) and write ``data``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)
        os.write(fd, data)
    finally:
        os.close(fd)


# --- signing ----------------------------------------------------------------------------------------------------------


def sign_pdf(
    pdf: bytes,
    *,
    identity: SigningIdentity,
    reason: str,
    location: str | None,
    version_label: str,
    signer_name: str,
    signing_time: datetime | None = None,
) -> bytes:
    """Sign a PDF with the organisation's identity: PAdES baseline-B, SHA-256, one incremental update.

    The signature goes into a new invisible field ``Signature1``; ``reason``, ``location`` and ``signer_name`` go
    into the signature dictionary (/Reason, /Location, /Name), and ``version_label`` (e.g. "report 12 v3") into the
    document information as /ReportVersion, written in the same revision so the signature covers it and
    ``verify_pdf`` reads it back. ``signing_time`` (an aware datetime; default: now) is the time the signature states,
    written both as the CMS signing-time attribute and as the signature dictionary's /M, to the whole second (both
    formats hold seconds: microseconds are dropped, so pass the same whole-second time to whatever else records the
    signing, e.g. ``signing_time=when.replace(microsecond=0)``); ``verify_pdf`` reads exactly that time back. A naive
    datetime is refused (ValueError): a signing time must say its zone. There is no timestamp authority (the service
    runs offline), so the time is the signer's word and the signature is B-B, not B-T. Standard validators (Adobe,
    pyHanko) accept it as intact; they call it trusted once the organisation's certificate is in their trust list.
    Raises ``ReportSigningError`` when the bytes are not a PDF that can be signed (e.g. encrypted).
    """
    when = signing_moment(signing_time)
    signer = signers.SimpleSigner(
        signing_cert=identity.certificate,
        signing_key=identity.private_key,
        cert_registry=SimpleCertificateStore.from_certs(identity.chain),
    )
    metadata = signers.PdfSignatureMetadata(
        field_name=SIGNATURE_FIELD,
        subfilter=fields.SigSeedSubFilter.PADES,
        md_algorithm="sha256",
        reason=reason,
        name=signer_name,
        location=location,
    )
    try:
        writer = IncrementalPdfFileWriter(io.BytesIO(pdf), strict=False)
        if writer.security_handler is not None:
            raise ValueError("the PDF is encrypted")
        _write_version_label(writer, version_label)
        pdf_signer = _FixedTimePdfSigner(metadata, signer=signer, signing_time=when)
        output = _run(lambda: pdf_signer.async_sign_pdf(writer))
    except ReportSigningError:
        raise
    except Exception as exc:  # pyHanko raises PdfReadError, SigningError, ValueError... on a PDF it cannot sign
        raise ReportSigningError(
            code=SigningErrorCode.PDF_UNSIGNABLE, message=f"the PDF cannot be signed: {exc}"
        ) from exc
    return output.getvalue()


def signing_moment(signing_time: datetime | None = None) -> datetime:
    """The signing time as a signature states it: aware, to the whole second (now when None); ValueError if naive."""
    when = datetime.now(UTC) if signing_time is None else signing_time
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValueError("signing_time must be an aware datetime (with its zone)")
    return when.replace(microsecond=0)


class _FixedTimePdfSigner(signers.PdfSigner):
    """A PdfSigner whose session uses the given signing time instead of the machine's clock.

    pyHanko's ``PdfSigningSession.system_time`` is the one time a session uses: the CMS signing-time attribute, the
    signature dictionary's /M and the size estimate all read it, and ``init_signing_session`` takes no time argument,
    so the session it returns gets ours before anything reads it.
    """

    def __init__(self, *args: Any, signing_time: datetime, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._signing_time = signing_time

    def init_signing_session(self, pdf_out: Any, existing_fields_only: bool = False) -> Any:
        session = super().init_signing_session(pdf_out, existing_fields_only=existing_fields_only)
        session.system_time = self._signing_time
        return session


def _write_version_label(writer: IncrementalPdfFileWriter, version_label: str) -> None:
    """Put the version label into the /Info dictionary of the revision about to be signed."""
    label = generic.pdf_string(version_label)
    try:
        info_ref = writer.trailer.raw_get("/Info")
    except KeyError:
        writer.set_info(writer.add_object(generic.DictionaryObject({generic.pdf_name(VERSION_LABEL_KEY): label})))
        return
    info = info_ref.get_object()
    info[generic.pdf_name(VERSION_LABEL_KEY)] = label
    writer.mark_update(info_ref)


def pdf_sha256(pdf: bytes) -> str:
    """The SHA-256 of the bytes, lowercase hex: what the report version stores for its signed PDF."""
    return hashlib.sha256(pdf).hexdigest()


# --- verification -----------------------------------------------------------------------------------------------------


def verify_pdf(
    pdf: bytes,
    *,
    trusted: Sequence[asn1_x509.Certificate | x509.Certificate | bytes] = (),
    max_bytes: int = MAX_VERIFY_BYTES,
) -> Verification:
    """Check the first signature of an uploaded PDF; never raises on bad input.

    ``trusted`` are the certificates (asn1crypto, cryptography or DER bytes) a signer must chain to, normally the
    organisation's current certificate (and any earlier ones still honoured); with none, a sound signature is
    "untrusted". Nothing is fetched from the network (no CRL, OCSP or AIA). The first signature is the one the
    service made; anything added after it (another signature, an annotation, appended bytes) makes the document
    "tampered", because a signed report never changes.

    Input size: the caller must refuse uploads above its own limit before reading them into memory (the API uses a
    few MiB); as a last guard, anything above ``max_bytes`` (64 MiB by default) is "unreadable" without parsing.
    Parsing is pyHanko's lenient reader; a ~200 KB report verifies in about 6 ms. A malformed ``trusted`` entry is
    the caller's bug and raises ``ValueError``; nothing about the uploaded bytes does.
    """
    trust_roots = [_as_asn1(certificate) for certificate in trusted]
    sha256 = pdf_sha256(pdf)
    size_bytes = len(pdf)

    def unreadable(problem: Problem, detail: str | None = None) -> Verification:
        return Verification(
            verdict=Verdict.UNREADABLE,
            signed=False,
            intact=False,
            covers_whole_file=False,
            trusted=False,
            sha256=sha256,
            size_bytes=size_bytes,
            problems=(problem.value,),
            problem_codes=(problem.name,),
            detail=detail,
        )

    if size_bytes == 0:
        return unreadable(Problem.EMPTY)
    if size_bytes > max_bytes:
        return unreadable(Problem.TOO_LARGE, f"{size_bytes} bytes, limit {max_bytes} bytes")
    if b"%PDF-" not in pdf[:1024]:  # the header may follow up to 1 KiB of junk (ISO 32000-1, annex H)
        return unreadable(Problem.NOT_PDF)
    try:
        reader = PdfFileReader(io.BytesIO(pdf), strict=False)
        if reader.security_handler is not None:
            return unreadable(Problem.ENCRYPTED)
        filled_fields = list(fields.enumerate_sig_fields(reader, filled_status=True))
    except Exception as exc:  # a malformed PDF can raise almost anything from the parser
        return unreadable(Problem.PDF_UNREADABLE, _describe(exc))
    facts: dict[str, Any] = {"sha256": sha256, "size_bytes": size_bytes}
    try:
        embedded = reader.embedded_regular_signatures  # parses each signature's CMS blob
    except Exception as exc:  # a signature field whose value is not a readable signature
        return _verification(
            facts | {"signed": True},
            intact=False,
            covers=False,
            is_trusted=False,
            problems=[Problem.SIGNATURE_UNREADABLE],
            detail=_describe(exc),
        )
    if not filled_fields or not embedded:
        return Verification(
            verdict=Verdict.UNSIGNED,
            signed=False,
            intact=False,
            covers_whole_file=False,
            trusted=False,
            sha256=sha256,
            size_bytes=size_bytes,
            problems=(Problem.NO_SIGNATURE.value,),
            problem_codes=(Problem.NO_SIGNATURE.name,),
        )
    return _verify_signature(embedded[0], reader=reader, trust_roots=trust_roots, facts=facts)


def _verify_signature(
    embedded: EmbeddedPdfSignature,
    *,
    reader: PdfFileReader,
    trust_roots: list[asn1_x509.Certificate],
    facts: dict[str, Any],
) -> Verification:
    """Validate one embedded signature and turn pyHanko's status into a ``Verification``."""
    facts = facts | {"signed": True}
    try:
        certificate = embedded.signer_cert
        facts |= {
            "signer": _common_name(certificate),
            "signer_subject": certificate.subject.human_friendly,
            "signer_fingerprint": certificate_fingerprint(certificate),
        }
        facts |= _signature_dictionary_facts(embedded, reader=reader)
    except Exception as exc:  # a damaged CMS blob or signature dictionary
        return _verification(
            facts,
            intact=False,
            covers=False,
            is_trusted=False,
            problems=[Problem.SIGNATURE_UNREADABLE],
            detail=_describe(exc),
        )
    try:
        context = ValidationContext(trust_roots=trust_roots, allow_fetching=False)
        status: PdfSignatureStatus = _run(
            lambda: async_validate_pdf_signature(embedded, signer_validation_context=context)
        )
    except Exception as exc:  # e.g. a byte range that does not fit the file, an unsupported SubFilter
        return _verification(
            facts,
            intact=False,
            covers=False,
            is_trusted=False,
            problems=[Problem.SIGNATURE_UNREADABLE],
            detail=_describe(exc),
        )

    if status.signer_reported_dt is not None:
        facts["signed_at"] = status.signer_reported_dt.astimezone(UTC)
    problems: list[Problem] = []
    if not status.intact:
        problems.append(Problem.CHANGED)
    elif not status.valid:
        problems.append(Problem.SIGNATURE_MISMATCH)
    covers = status.coverage == SignatureCoverageLevel.ENTIRE_FILE
    if not covers:
        problems.append(Problem.ADDED_AFTER_SIGNING)
    if status.intact and status.valid and not status.trusted:
        problems.append(Problem.UNTRUSTED)
    return _verification(
        facts,
        intact=status.intact and status.valid,
        covers=covers,
        is_trusted=status.trusted,
        problems=problems,
        detail=None if not status.trust_problem_indic else f"trust: {status.trust_problem_indic.name}",
    )


def _verification(
    facts: dict[str, Any], *, intact: bool, covers: bool, is_trusted: bool, problems: list[Problem], detail: str | None
) -> Verification:
    """Assemble the result; the verdict follows from the three checks, worst first."""
    if not intact or not covers:
        verdict = Verdict.TAMPERED
    elif not is_trusted:
        verdict = Verdict.UNTRUSTED
    else:
        verdict = Verdict.VALID
    return Verification(
        verdict=verdict,
        intact=intact,
        covers_whole_file=covers,
        trusted=is_trusted,
        problems=tuple(p.value for p in problems),
        problem_codes=tuple(p.name for p in problems),
        detail=detail,
        **facts,
    )


def _signature_dictionary_facts(embedded: EmbeddedPdfSignature, *, reader: PdfFileReader) -> dict[str, Any]:
    """Signer name, reason, location and signing time from the signature dictionary; the label from the signed /Info.

    The label is read from the revision the signature covers, so an /Info rewritten in a later update is ignored.
    """
    sig = embedded.sig_object
    facts: dict[str, Any] = {
        "signer_name": _text(sig["/Name"] if "/Name" in sig else None),
        "reason": _text(sig["/Reason"] if "/Reason" in sig else None),
        "location": _text(sig["/Location"] if "/Location" in sig else None),
    }
    signed_at = embedded.self_reported_timestamp
    if signed_at is not None:
        facts["signed_at"] = signed_at.astimezone(UTC)
    signed = reader.get_historical_resolver(embedded.signed_revision)
    info_ref = signed.trailer_view.raw_get("/Info") if "/Info" in signed.trailer_view else None
    # resolve through the historical resolver: a plain lookup would read the object's latest version
    info = signed.get_object(info_ref.reference) if isinstance(info_ref, generic.IndirectObject) else info_ref
    if isinstance(info, generic.DictionaryObject):
        facts["version_label"] = _text(info[VERSION_LABEL_KEY] if VERSION_LABEL_KEY in info else None)
    return facts


# --- small pieces -----------------------------------------------------------------------------------------------------


def _run(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a pyHanko coroutine to completion, in a worker thread if this thread already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def _as_asn1(certificate: asn1_x509.Certificate | x509.Certificate | bytes) -> asn1_x509.Certificate:
    """Accept a certificate as asn1crypto, cryptography or DER bytes; raise ``ValueError`` for anything else."""
    if isinstance(certificate, asn1_x509.Certificate):
        return certificate
    if isinstance(certificate, x509.Certificate):
        return asn1_x509.Certificate.load(certificate.public_bytes(serialization.Encoding.DER))
    try:
        return asn1_x509.Certificate.load(
            x509.load_der_x509_certificate(bytes(certificate)).public_bytes(serialization.Encoding.DER)
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "a trusted certificate must be an X.509 certificate (asn1crypto, cryptography or DER)"
        ) from exc


def _common_name(certificate: asn1_x509.Certificate) -> str:
    """The subject's CN, or the whole subject in words when it has none."""
    common_name = certificate.subject.native.get("common_name")
    if isinstance(common_name, list):  # several CNs: the last is the most specific
        common_name = common_name[-1]
    return str(common_name) if common_name else certificate.subject.human_friendly


def _text(value: object) -> str | None:
    """A PDF string (text or bytes) as ``str``, or None."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return str(value)


def _describe(exc: BaseException) -> str:
    """A short technical description of a parser error, for ``Verification.detail``."""
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."
