"""The report's workflow (issue 8, part 3): draft → in review → approved → signed, with the audit log.

- `report_create` makes a report for a deployment and its version 1, a draft gathered from the evidence now.
- `report_version_new` gathers the evidence again: a new draft version saying what changed from the previous one
  (a draft still open is refreshed in place instead: nobody reviewed it yet).
- `version_submit` (the author, or anyone of the organisation) sends a draft for review; `version_return` sends it
  back with the reason; `version_approve` needs a reviewer other than the author.
- `version_sign_start` queues the signing (a Celery task with progress: render the PDF, sign it with the
  organisation's certificate, keep it with its SHA-256); only a user with the signer role (sizing/kernel/access.py)
  signs. Once signed, a version never changes (`reports.models`).
- `version_pdf` gives the signed PDF (or renders a draft's, marked DRAFT) and logs the download;
  `report_verify` checks an uploaded PDF's signature and finds the version it is.

A refusal is a SizingError (400) naming the field, or PermissionDenied (403); nothing is half-saved.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.db import transaction
from django.utils import timezone

from reports.evidence import content_changes, report_content
from reports.models import ChecklistWaiver, Report, ReportAuditEvent, ReportVersion
from reports.tasks import report_draft_task, report_sign_task
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.kernel.access import SIGN, may
from sizing.kernel.job_budgets import JobKind, over_budget_error
from sizing.kernel.jobs import job_publish_on_commit
from sizing.kernel.uploads import upload_size_check
from sizing.models import Deployment, Organisation

logger = logging.getLogger(__name__)

TITLE_MAX_LENGTH = 255


def _invalid(field: str, message: str) -> SizingError:
    return SizingError(code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={"fields": {field: [message]}})


def _name(user: Any) -> str:
    return (user.get_full_name() or user.get_username()) if user is not None else "system"


def audit(version: ReportVersion, user: Any, action: str, **detail: Any) -> ReportAuditEvent:
    return ReportAuditEvent.objects.create(
        version=version,
        actor=user if getattr(user, "pk", None) else None,
        actor_name=_name(user)[:150],
        action=action,
        detail=detail,
    )


def report_create(*, organisation: Organisation, user: Any, data: Mapping[str, Any]) -> Report:
    """A report of one of the organisation's deployments (`deployment` id, `language` en or zh-hans, optional
    `title`) with its version 1 drafted from the evidence now."""
    deployment = Deployment.objects.filter(pk=data.get("deployment"), organisation=organisation).first()
    if deployment is None:
        raise _invalid("deployment", f"no deployment {data.get('deployment')!r} in your organisation")
    language = str(data.get("language") or Report.Language.ENGLISH)
    if language not in Report.Language.values:
        raise _invalid("language", f"language must be one of {', '.join(Report.Language.values)}")
    title = str(data.get("title") or "").strip() or (
        f"显存承诺书 · {deployment.customer or deployment.name}"
        if language == Report.Language.CHINESE
        else f"Memory commitment · {deployment.customer or deployment.name}"
    )
    if len(title) > TITLE_MAX_LENGTH:
        raise _invalid("title", f"the title has {len(title)} characters; the limit is {TITLE_MAX_LENGTH}")
    with transaction.atomic():
        report = Report.objects.create(
            organisation=organisation, deployment=deployment, language=language, title=title, created_by=user
        )
        version = ReportVersion.objects.create(report=report, number=1, author=user, content={})
        audit(version, user, ReportAuditEvent.Action.CREATED)
        _draft_start(version, user)
    return report


def _draft_start(version: ReportVersion, user: Any) -> None:
    """Queue the gathering of a version's evidence (`reports.tasks.report_draft_task`): the estimate, the KV overflow
    simulation and the checklist are a worker's job, never the web request's."""
    version.drafted_at, version.draft_requested_at = None, timezone.now()
    version.progress, version.progress_message, version.error = 0.0, "queued: gathering the evidence", None
    version.save()
    version_id, user_id = version.pk, getattr(user, "pk", None)

    def enqueue() -> None:
        report_draft_task.delay(version_id, user_id)

    def fail(error: dict[str, Any]) -> None:
        ReportVersion.objects.filter(pk=version_id, status=ReportVersion.Status.DRAFT).update(
            progress=0.0, progress_message="", error=error
        )

    job_publish_on_commit(kind="report_draft", job_id=version_id, publish=enqueue, fail=fail)


def version_draft(*, version_id: int, user_id: int | None) -> None:
    """The worker's part of drafting: gather the evidence into the version's content, with progress; what changed
    from the previous version; the waivers' decisions start again (the evidence they judged may have moved). A
    failure leaves the version a draft without content, with the reason (draft it again)."""
    from django.contrib.auth import get_user_model

    version = (
        ReportVersion.objects.select_related("report", "report__deployment", "report__organisation")
        .filter(pk=version_id)
        .first()
    )
    if version is None or not version.drafting:
        return
    user = get_user_model().objects.filter(pk=user_id).first() if user_id else None
    try:
        _progress(version_id, 0.1, "gathering the evidence: the estimate, the KV overflow simulation")
        report = version.report
        content = report_content(report=report, number=version.number, changes=[], author=_name(user))
        _progress(version_id, 0.9, "comparing with the previous version")
        previous = ReportVersion.objects.filter(report=report, number__lt=version.number).order_by("-number").first()
        changes = content_changes(previous.content if previous and previous.content else None, content)
        content["report"]["changes"] = changes
        with transaction.atomic():
            locked = _locked(version)
            if not locked.drafting:
                return
            locked.content, locked.changes, locked.drafted_at = content, changes, timezone.now()
            # the message is cleared: an approved version with a message is one being signed (the page follows it)
            locked.progress, locked.progress_message, locked.error = 1.0, "", None
            locked.save()
            # a waiver of an item now done is moot; the others go back to requested: the reviewer judges anew
            done = {item["code"] for item in content.get("checklist") or () if item["state"] == "done"}
            ChecklistWaiver.objects.filter(version=locked, item__in=done).delete()
            ChecklistWaiver.objects.filter(version=locked).exclude(status=ChecklistWaiver.Status.REQUESTED).update(
                status=ChecklistWaiver.Status.REQUESTED,
                decided_by=None,
                decided_by_name="",
                decided_at=None,
                decision_reason="",
            )
    except SoftTimeLimitExceeded:
        ReportVersion.objects.filter(pk=version_id, drafted_at__isnull=True).update(
            progress=0.0, progress_message="", error=over_budget_error(JobKind.REPORT_DRAFT)
        )
    except Exception as exc:  # the version stays a draft without content, with the reason
        logger.exception("drafting report version %s failed", version_id)
        ReportVersion.objects.filter(pk=version_id, drafted_at__isnull=True).update(
            progress=0.0, progress_message="", error={"code": "drafting_failed", "message": str(exc)[:500], "extra": {}}
        )


def report_version_new(*, report: Report, user: Any) -> ReportVersion:
    """The evidence gathered again: a new draft saying what changed from the latest version, or the open draft
    refreshed (a version in review or approved must be returned or signed first)."""
    with transaction.atomic():
        latest = ReportVersion.objects.select_for_update().filter(report=report).order_by("-number").first()
        if latest is not None and latest.status in (ReportVersion.Status.IN_REVIEW, ReportVersion.Status.APPROVED):
            raise _invalid(
                "status",
                f"version {latest.number} is {latest.get_status_display().lower()}: return it "
                "to draft or sign it before drafting another",
            )
        if latest is not None and latest.status == ReportVersion.Status.DRAFT:
            latest.author = user
            audit(latest, user, ReportAuditEvent.Action.CREATED, refreshed=True)
            _draft_start(latest, user)
            return latest
        number = (latest.number + 1) if latest else 1
        version = ReportVersion.objects.create(report=report, number=number, author=user, content={})
        audit(version, user, ReportAuditEvent.Action.CREATED, previous=latest.number if latest else None)
        _draft_start(version, user)
        return version


EDITABLE = ("assumptions", "exclusions", "fallback")


def version_edit(*, version: ReportVersion, user: Any, data: Mapping[str, Any]) -> ReportVersion:
    """Change a draft's assumptions, exclusions or fallback plan (lists of sentences); anything but a draft is
    refused: a signed version never changes (the model refuses it too), others go back to draft first."""
    with transaction.atomic():
        locked = _locked(version)
        if locked.status == ReportVersion.Status.SIGNED:
            raise _invalid("status", "a signed report version never changes: draft a new version instead")
        _expect(locked, ReportVersion.Status.DRAFT, "edit it")
        _drafted(locked, "edit it")
        content = dict(locked.content)
        for key in EDITABLE:
            if key in data:
                content[key] = [str(item).strip() for item in data[key] if str(item).strip()]
        locked.content = content
        locked.save()
    return locked


def _locked(version: ReportVersion) -> ReportVersion:
    return ReportVersion.objects.select_for_update().select_related("report").get(pk=version.pk)


def _expect(version: ReportVersion, status: str, doing: str) -> None:
    if version.status != status:
        expected = ReportVersion.Status(status).label.lower()
        raise _invalid(
            "status",
            f"cannot {doing}: version {version.number} is {version.get_status_display().lower()}, not {expected}",
        )


def _drafted(version: ReportVersion, doing: str) -> None:
    if version.drafting:
        raise _invalid(
            "status",
            f"cannot {doing}: the evidence of version {version.number} is still being gathered (see its progress)",
        )


def _checklist(version: ReportVersion) -> list[dict[str, Any]]:
    return list((version.content or {}).get("checklist") or ())


def _open_items(version: ReportVersion, *, waivers: Mapping[str, ChecklistWaiver], accepted: set[str]) -> list[dict]:
    """The checklist items not done whose waiver is not in `accepted` states."""
    return [
        item
        for item in _checklist(version)
        if item.get("state") != "done" and (item["code"] not in waivers or waivers[item["code"]].status not in accepted)
    ]


def _evidence_refusal(doing: str, items: list[dict[str, Any]], needs: str) -> SizingError:
    lines = [f"{item['text']} ({item['state']}): {item['detail']}" for item in items]
    message = f"cannot {doing}: {len(items)} checklist item{'s' if len(items) != 1 else ''} {needs}"
    return SizingError(
        code=SizingErrorCode.INVALID_ARGUMENT,
        message=message,
        extra={
            "fields": {"checklist": lines},
            "items": [
                {"code": item["code"], "state": item["state"], "text": item["text"], "detail": item["detail"]}
                for item in items
            ],
        },
    )


def _waivers(version: ReportVersion) -> dict[str, ChecklistWaiver]:
    return {w.item: w for w in ChecklistWaiver.objects.filter(version=version)}


def version_submit(*, version: ReportVersion, user: Any) -> ReportVersion:
    """A draft goes for review only when every checklist item is done or carries its author's waiver request (a
    400 listing the others)."""
    with transaction.atomic():
        locked = _locked(version)
        _expect(locked, ReportVersion.Status.DRAFT, "submit it for review")
        _drafted(locked, "submit it for review")
        if locked.error and not locked.content:
            raise _invalid("status", "cannot submit it for review: gathering its evidence failed; draft it again")
        open_items = _open_items(
            locked,
            waivers=_waivers(locked),
            accepted={ChecklistWaiver.Status.REQUESTED, ChecklistWaiver.Status.GRANTED},
        )
        if open_items:
            raise _evidence_refusal(
                "submit it for review",
                open_items,
                "not done and without a waiver request (request a waiver with the reason, or "
                "gather the evidence and draft again)",
            )
        locked.status, locked.submitted_at = ReportVersion.Status.IN_REVIEW, timezone.now()
        locked.save()
        audit(locked, user, ReportAuditEvent.Action.SUBMITTED)
    return locked


WAIVER_REASON_MAX = 2000


def waiver_request(*, version: ReportVersion, user: Any, item: str, reason: str) -> ChecklistWaiver:
    """The author asks to waive a checklist item that is not done, saying why; a draft only. Asking again replaces
    the reason."""
    reason = str(reason or "").strip()
    if not reason:
        raise _invalid("reason", "say why the commitment may stand without this evidence")
    if len(reason) > WAIVER_REASON_MAX:
        raise _invalid("reason", f"the reason has {len(reason):,} characters; the limit is {WAIVER_REASON_MAX:,}")
    with transaction.atomic():
        locked = _locked(version)
        _expect(locked, ReportVersion.Status.DRAFT, "request a waiver")
        _drafted(locked, "request a waiver")
        if locked.author_id is None or locked.author_id != getattr(user, "pk", None):
            raise PermissionDenied("only the version's author requests a waiver of its evidence")
        found = next((entry for entry in _checklist(locked) if entry.get("code") == item), None)
        if found is None:
            codes = ", ".join(entry["code"] for entry in _checklist(locked))
            raise _invalid(
                "item", f"version {locked.number} has no checklist item {str(item)[:64]!r} (its items: {codes})"
            )
        if found.get("state") == "done":
            raise _invalid("item", f"{found['text']} is done: there is nothing to waive")
        waiver, _created = ChecklistWaiver.objects.update_or_create(
            version=locked,
            item=item,
            defaults={
                "reason": reason,
                "requested_by": user,
                "requested_by_name": _name(user)[:150],
                "requested_at": timezone.now(),
                "status": ChecklistWaiver.Status.REQUESTED,
                "decided_by": None,
                "decided_by_name": "",
                "decided_at": None,
                "decision_reason": "",
            },
        )
        audit(locked, user, ReportAuditEvent.Action.WAIVER_REQUESTED, item=item, reason=reason[:2000])
    return waiver


def waiver_withdraw(*, version: ReportVersion, user: Any, item: str) -> None:
    """The author withdraws a waiver request of a draft."""
    with transaction.atomic():
        locked = _locked(version)
        _expect(locked, ReportVersion.Status.DRAFT, "withdraw a waiver request")
        if locked.author_id is None or locked.author_id != getattr(user, "pk", None):
            raise PermissionDenied("only the version's author withdraws its waiver requests")
        deleted, _rows = ChecklistWaiver.objects.filter(version=locked, item=item).delete()
        if not deleted:
            raise _invalid("item", f"no waiver request of {str(item)[:64]!r} on version {locked.number}")


def waiver_decide(*, version: ReportVersion, user: Any, item: str, grant: bool, reason: str) -> ChecklistWaiver:
    """A reviewer grants or refuses a waiver request of a version in review, saying why; never the version's author
    or the one who asked (a 400), admins included."""
    reason = str(reason or "").strip()
    if not reason:
        raise _invalid("reason", "say why the waiver is granted or refused")
    if len(reason) > WAIVER_REASON_MAX:
        raise _invalid("reason", f"the reason has {len(reason):,} characters; the limit is {WAIVER_REASON_MAX:,}")
    with transaction.atomic():
        locked = _locked(version)
        _expect(locked, ReportVersion.Status.IN_REVIEW, "decide a waiver")
        waiver = ChecklistWaiver.objects.select_for_update().filter(version=locked, item=item).first()
        if waiver is None:
            raise _invalid("item", f"no waiver of {str(item)[:64]!r} was requested on version {locked.number}")
        me = getattr(user, "pk", None)
        if me is not None and me in (locked.author_id, waiver.requested_by_id):
            raise _invalid(
                "reviewer",
                "a waiver is granted or refused by a reviewer other than the version's author "
                "and the one who asked for it",
            )
        waiver.status = ChecklistWaiver.Status.GRANTED if grant else ChecklistWaiver.Status.REFUSED
        waiver.decided_by, waiver.decided_by_name = user, _name(user)[:150]
        waiver.decided_at, waiver.decision_reason = timezone.now(), reason
        waiver.save()
        audit(
            locked,
            user,
            ReportAuditEvent.Action.WAIVER_GRANTED if grant else ReportAuditEvent.Action.WAIVER_REFUSED,
            item=item,
            reason=reason[:2000],
        )
    return waiver


def version_return(*, version: ReportVersion, user: Any, reason: str) -> ReportVersion:
    reason = str(reason or "").strip()
    if not reason:
        raise _invalid("reason", "say why the version goes back to draft")
    with transaction.atomic():
        locked = _locked(version)
        if locked.status not in (ReportVersion.Status.IN_REVIEW, ReportVersion.Status.APPROVED):
            raise _invalid(
                "status",
                f"only a version in review or approved goes back to draft (version "
                f"{locked.number} is {locked.get_status_display().lower()})",
            )
        locked.status, locked.reviewer, locked.approved_at = ReportVersion.Status.DRAFT, None, None
        locked.save()
        audit(locked, user, ReportAuditEvent.Action.RETURNED, reason=reason[:2000])
    return locked


def _not_author(version: ReportVersion, user: Any, doing: str) -> None:
    if version.author_id is not None and version.author_id == getattr(user, "pk", None):
        raise PermissionDenied(f"nobody {doing} a version they authored (admins included): ask another reviewer")


def version_approve(*, version: ReportVersion, user: Any) -> ReportVersion:
    """Approval needs a reviewer other than the author and every checklist item done or its waiver granted (a 400
    listing the others: refused, or still to decide)."""
    with transaction.atomic():
        locked = _locked(version)
        _expect(locked, ReportVersion.Status.IN_REVIEW, "approve it")
        _not_author(locked, user, "approves")
        open_items = _open_items(locked, waivers=_waivers(locked), accepted={ChecklistWaiver.Status.GRANTED})
        if open_items:
            raise _evidence_refusal(
                "approve it",
                open_items,
                "not done and without a granted waiver (decide each waiver request; with one "
                "refused, return the version to draft)",
            )
        locked.status, locked.reviewer, locked.approved_at = ReportVersion.Status.APPROVED, user, timezone.now()
        locked.save()
        audit(locked, user, ReportAuditEvent.Action.APPROVED)
    return locked


def content_with_decisions(version: ReportVersion) -> dict[str, Any]:
    """The version's content with its waivers as they stand: the granted ones under `waivers` (printed under
    "Exceptions") and their items' state "waived" in the checklist."""
    content = dict(version.content or {})
    granted = {
        w.item: w for w in ChecklistWaiver.objects.filter(version=version, status=ChecklistWaiver.Status.GRANTED)
    }
    checklist = []
    for item in content.get("checklist") or ():
        entry = dict(item)
        if entry.get("state") != "done" and entry.get("code") in granted:
            entry["state"] = "waived"
        checklist.append(entry)
    if "checklist" in content:
        content["checklist"] = checklist
    texts = {item.get("code"): item.get("text") for item in content.get("checklist") or ()}
    content["waivers"] = [
        {
            "item": w.item,
            "item_text": str(texts.get(w.item) or w.item),
            "reason": w.reason,
            "requested_by": w.requested_by_name,
            "requested_at": w.requested_at.isoformat(),
            "granted_by": w.decided_by_name,
            "granted_at": w.decided_at.isoformat() if w.decided_at else None,
            "decision_reason": w.decision_reason,
        }
        for w in granted.values()
    ]
    return content


@functools.cache
def _identity(p12: str | None, passphrase: str | None, organisation: str, state_dir: str) -> Any:
    from reports.signing import signing_identity as load

    return load(p12_path=p12, passphrase=passphrase, organisation_name=organisation, state_dir=Path(state_dir))


@functools.cache
def _previous_certificates(paths: tuple[str, ...]) -> tuple[Any, ...]:
    from cryptography import x509

    certificates = []
    for path in paths:
        try:
            data = Path(path).read_bytes()
        except OSError as error:
            raise ImproperlyConfigured(f"REPORTS_SIGNING_PREVIOUS_CERTIFICATES: cannot read {path}: {error}") from None
        try:
            certificates.append(
                x509.load_pem_x509_certificate(data) if b"-----BEGIN" in data else x509.load_der_x509_certificate(data)
            )
        except ValueError:
            raise ImproperlyConfigured(
                f"REPORTS_SIGNING_PREVIOUS_CERTIFICATES: {path} is not an X.509 certificate (PEM or DER)"
            ) from None
    return tuple(certificates)


def trusted_certificates() -> list[Any]:
    """The certificates a report's signature may chain to: the current signing certificate and the organisation's
    earlier ones (`REPORTS_SIGNING_PREVIOUS_CERTIFICATES`, PEM or DER files), so that rotating the certificate
    leaves the reports signed before still valid (docs/operations.md)."""
    previous = _previous_certificates(tuple(settings.REPORTS_SIGNING_PREVIOUS_CERTIFICATES))
    return [signing_identity().certificate, *previous]


def signing_identity() -> Any:
    """The organisation's signing identity from the settings (loaded once per process and settings)."""
    return _identity(
        settings.REPORTS_SIGNING_P12 or None,
        settings.REPORTS_SIGNING_PASSPHRASE or None,
        settings.REPORTS_SIGNING_ORGANISATION,
        str(settings.VAR_DIR),
    )


def version_sign_start(*, version: ReportVersion, user: Any) -> ReportVersion:
    """Queue the signing of an approved version (`reports.tasks.report_sign_task`); 403 unless a signer."""
    if not may(user, SIGN, "POST"):
        raise PermissionDenied("signing needs the signer role in your organisation")
    with transaction.atomic():
        locked = _locked(version)
        _expect(locked, ReportVersion.Status.APPROVED, "sign it")
        _not_author(locked, user, "signs")
        locked.progress, locked.progress_message, locked.error = 0.0, "queued for signing", None
        locked.sign_requested_at = timezone.now()
        locked.save()
        version_id, user_id = locked.pk, user.pk

        def enqueue() -> None:
            report_sign_task.delay(version_id, user_id)

        def fail(error: dict[str, Any]) -> None:  # it stays approved, with the reason: sign it again
            ReportVersion.objects.filter(pk=version_id, status=ReportVersion.Status.APPROVED).update(
                progress=0.0, progress_message="", error=error
            )

        job_publish_on_commit(kind="report_sign", job_id=version_id, publish=enqueue, fail=fail)
    return locked


def _progress(version_id: int, fraction: float, message: str) -> None:
    ReportVersion.objects.filter(pk=version_id).exclude(status=ReportVersion.Status.SIGNED).update(
        progress=fraction, progress_message=message
    )


def _signed_content(version: ReportVersion, signer: Any, when: Any) -> dict[str, Any]:
    content = content_with_decisions(version)
    content["report"] = {**content.get("report", {}), "status": "signed"}
    content["signature"] = {
        **content.get("signature", {}),
        "author": _name(version.author) if version.author else content.get("signature", {}).get("author"),
        "reviewer": _name(version.reviewer) if version.reviewer else None,
        "approver": _name(version.reviewer) if version.reviewer else None,
        "signer": _name(signer),
        "signed_at": when.isoformat(),
    }
    return content


def version_sign(*, version_id: int, user_id: int) -> None:
    """The worker's part: render, sign, keep. A failure leaves the version approved with the reason, never half
    signed."""
    from django.contrib.auth import get_user_model

    from reports.document import render_report_pdf
    from reports.signing import identity_fingerprint, sign_pdf

    version = ReportVersion.objects.select_related("report", "author", "reviewer").filter(pk=version_id).first()
    signer = get_user_model().objects.filter(pk=user_id).first()
    if version is None or version.status != ReportVersion.Status.APPROVED or signer is None:
        return
    if version.author_id is not None and version.author_id == signer.pk:  # the service refused it; so does the worker
        return
    try:
        # one signing time: the page's, the signature's (CMS signing-time and /M, to the second) and the record's
        when = timezone.now().replace(microsecond=0)
        content = _signed_content(version, signer, when)
        _progress(version_id, 0.2, "rendering the PDF")
        pdf = render_report_pdf(content)
        _progress(version_id, 0.6, "signing")
        identity = signing_identity()
        signed = sign_pdf(
            pdf,
            identity=identity,
            reason=f"Memory commitment {version.label}",
            location=None,
            version_label=version.label,
            signer_name=_name(signer),
            signing_time=when,
        )
        with transaction.atomic():
            locked = _locked(version)
            if locked.status != ReportVersion.Status.APPROVED:
                return
            locked.content = content
            locked.pdf = signed
            locked.sha256 = hashlib.sha256(signed).hexdigest()
            locked.signer_certificate_sha256 = identity_fingerprint(identity)
            locked.signer, locked.signed_at = signer, when
            locked.progress, locked.progress_message, locked.error = 1.0, "signed", None
            locked.status = ReportVersion.Status.SIGNED
            locked.save()  # approved → signed: the last write this row takes
            audit(locked, signer, ReportAuditEvent.Action.SIGNED, sha256=locked.sha256, signed_at=when.isoformat())
    except SoftTimeLimitExceeded:  # over its time budget (sizing.kernel.job_budgets): approved, with the budget
        ReportVersion.objects.filter(pk=version_id, status=ReportVersion.Status.APPROVED).update(
            progress=0.0, progress_message="", error=over_budget_error(JobKind.REPORT_SIGN)
        )
    except Exception as exc:  # the version stays approved, with the reason
        logger.exception("signing report version %s failed", version_id)
        ReportVersion.objects.filter(pk=version_id, status=ReportVersion.Status.APPROVED).update(
            progress=0.0, progress_message="", error={"code": "signing_failed", "message": str(exc)[:500], "extra": {}}
        )


def version_pdf(*, version: ReportVersion, user: Any) -> bytes:
    """The signed PDF as kept, or an unsigned version rendered now (marked DRAFT); the download is logged."""
    if version.status == ReportVersion.Status.SIGNED and version.pdf:
        data = bytes(version.pdf)
    else:
        from reports.document import render_report_pdf

        if version.drafting:
            raise _invalid(
                "status",
                f"version {version.number}'s evidence is still being gathered: its PDF comes when it is drafted",
            )
        content = content_with_decisions(version)
        content["report"] = {**content.get("report", {}), "status": version.status}
        data = render_report_pdf(content)
    audit(
        version,
        user,
        ReportAuditEvent.Action.DOWNLOADED,
        sha256=hashlib.sha256(data).hexdigest(),
        signed=version.status == ReportVersion.Status.SIGNED,
    )
    return data


def report_verify(*, organisation: Organisation, user: Any, data: bytes) -> dict[str, Any]:
    """Is an uploaded PDF one of the organisation's signed report versions, intact? The signature's verdict (valid,
    tampered, unsigned, untrusted, unreadable), who signed and when, and the version it is (by its SHA-256)."""
    from reports.signing import verify_pdf

    upload_size_check(len(data), limit_bytes=settings.REPORTS_MAX_VERIFY_BYTES, field="file", limit_unit=False)
    result = verify_pdf(data, trusted=trusted_certificates())
    answer = dict(result.as_dict())
    match = (
        ReportVersion.objects.select_related("report")
        .filter(
            report__organisation=organisation,
            status=ReportVersion.Status.SIGNED,
            sha256=hashlib.sha256(data).hexdigest(),
        )
        .first()
    )
    answer["version"] = (
        {
            "report": match.report_id,
            "number": match.number,
            "label": match.label,
            "title": match.report.title,
            "signed_at": match.signed_at.isoformat() if match.signed_at else None,
        }
        if match
        else None
    )
    answer["matches_record"] = match is not None
    if match is not None:
        audit(match, user, ReportAuditEvent.Action.VERIFIED, verdict=answer.get("verdict"))
    return answer


def signed_versions_check(*, signatures: bool = True) -> dict[str, Any]:
    """Every signed version across organisations: its PDF is stored, its SHA-256 is the recorded one, and (with
    `signatures`) the signature is valid against `trusted_certificates()`. The check an operator runs after a
    restore: `manage.py reports_check`."""
    from reports.signing import pdf_sha256, verify_pdf

    trusted = trusted_certificates() if signatures else []
    problems, checked = [], 0
    rows = ReportVersion.objects.filter(status=ReportVersion.Status.SIGNED).select_related("report").order_by("pk")
    for version in rows.iterator(chunk_size=50):
        checked += 1
        label = f"report {version.report_id} v{version.number} ({version.report.title})"
        pdf = bytes(version.pdf) if version.pdf is not None else b""
        if not pdf:
            problems.append({"version": version.pk, "label": label, "problem": "the signed PDF is missing"})
            continue
        if pdf_sha256(pdf) != version.sha256:
            problems.append(
                {
                    "version": version.pk,
                    "label": label,
                    "problem": f"SHA-256 {pdf_sha256(pdf)} differs from the recorded {version.sha256}",
                }
            )
            continue
        if signatures:
            verdict = verify_pdf(pdf, trusted=trusted).as_dict().get("verdict")
            if verdict != "valid":
                problems.append(
                    {
                        "version": version.pk,
                        "label": label,
                        "problem": f"the signature is {verdict} (list earlier certificates in "
                        "REPORTS_SIGNING_PREVIOUS_CERTIFICATES)",
                    }
                )
    return {"checked": checked, "problems": problems}
