"""Server-rendered pages of the signed memory-commitment report (issue 8): the organisation's reports with a "New
report" form, a report's page (its versions, the selected version's workflow step, the evidence still missing, the key
figures, what changed, the audit log and the actions the user may take), and the verification of an uploaded PDF.

Every read is scoped to the user's organisation (another organisation's report is a 404; anonymous users are sent to
sign in); every write goes through reports.services.reports, the same as the API, as a POST form that comes back to the
report's page with a message: a refusal (SizingError, or PermissionDenied: the author approving, a user without the
signing permission signing) is said in the active language where its words are known here, and nothing is saved.
The page script (reports.js) follows a signing every second through GET /api/v1/reports/ID/versions/N/ and reloads
the page once the version is signed or the signing failed."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import View

from frontend.presenters.labels import page_labels
from reports.models import Report, ReportVersion
from reports.services.reports import (
    TITLE_MAX_LENGTH,
    report_create,
    report_verify,
    report_version_new,
    version_approve,
    version_edit,
    version_return,
    version_sign_start,
    version_submit,
    waiver_decide,
    waiver_request,
    waiver_withdraw,
)
from sizing.estimator.errors import SizingError
from sizing.estimator.units import GB, GiB
from sizing.kernel.access import may_name
from sizing.models import Deployment, Organisation
from sizing.selectors.deployments import deployment_list_for_organisation
from sizing.services.estimates import organisation_for_user
from sizing.texts.findings import NO_VALUE

LIST_LIMIT = 200  # reports the list shows (newest first)
EDIT_MAX_LINES = 50  # sentences per list, as the API's VersionEditSerializer
EDIT_MAX_LINE_CHARS = 2000
REASON_MAX_CHARS = 2000
TIME_FORMAT = "%Y-%m-%d %H:%M:%S UTC"
STEPS = (
    ReportVersion.Status.DRAFT,
    ReportVersion.Status.IN_REVIEW,
    ReportVersion.Status.APPROVED,
    ReportVersion.Status.SIGNED,
)
VERDICTS = ("valid", "tampered", "unsigned", "untrusted", "unreadable")
EDITABLE = ("assumptions", "exclusions", "fallback")


# ---------------------------------------------------------------------------------------------------------------
# Words


def status_label(status: str) -> str:
    return {"draft": _("Draft"), "in_review": _("In review"), "approved": _("Approved"), "signed": _("Signed")}.get(
        status, status
    )


def action_label(action: str) -> str:
    return {
        "created": _("Created"),
        "submitted": _("Submitted for review"),
        "returned": _("Returned to draft"),
        "approved": _("Approved"),
        "signed": _("Signed"),
        "downloaded": _("Downloaded"),
        "verified": _("Verified"),
        "waiver_ask": _("Waiver requested"),
        "waiver_grant": _("Waiver granted"),
        "waiver_deny": _("Waiver refused"),
    }.get(action, action)


def state_label(state: str) -> str:
    """A checklist item's state in the active language."""
    return {"done": _("Done"), "failed": _("Failed"), "missing": _("Missing"), "waived": _("Waived")}.get(state, state)


def waiver_status_label(status: str) -> str:
    return {"requested": _("Waiver requested"), "granted": _("Waiver granted"), "refused": _("Waiver refused")}.get(
        status, status
    )


def verdict_words(verdict: str) -> tuple[str, str]:
    """A verification's verdict → (its name, what it means), in the active language."""
    return {
        "valid": (
            _("Valid"),
            _(
                "The signature is intact and made with the organisation's certificate: this is the "
                "document as it was signed"
            ),
        ),
        "tampered": (
            _("Tampered"),
            _("The document was changed after it was signed: do not rely on it, ask for the signed original"),
        ),
        "unsigned": (_("Unsigned"), _("The document carries no signature: it commits to nothing")),
        "untrusted": (
            _("Untrusted"),
            _("The signature is intact, but it was not made with the organisation's certificate"),
        ),
        "unreadable": (_("Unreadable"), _("The file could not be read as a PDF: nothing could be checked")),
    }.get(verdict, (verdict, ""))


def problem_text(code: str) -> str | None:
    """A verification problem (reports.signing.Problem's name) in the active language."""
    return {
        "EMPTY": _("The file is empty"),
        "TOO_LARGE": _("The file is larger than the verification limit"),
        "NOT_PDF": _("The file is not a PDF"),
        "PDF_UNREADABLE": _("The PDF could not be read"),
        "ENCRYPTED": _("The PDF is encrypted and cannot be checked"),
        "NO_SIGNATURE": _("The document has no signature"),
        "SIGNATURE_UNREADABLE": _("The signature could not be read"),
        "CHANGED": _("The document was changed after it was signed"),
        "SIGNATURE_MISMATCH": _("The signature does not match the document"),
        "ADDED_AFTER_SIGNING": _("Content was added to the file after it was signed"),
        "UNTRUSTED": _("The signer's certificate is not the organisation's certificate or signed by it"),
    }.get(code)


_SECTION_WORDS: dict[str, Callable[[], str]] = {
    "the deployment's plan": lambda: _("the deployment's plan"),
    "the measured hardware": lambda: _("the measured hardware"),
    "the memory bill": lambda: _("the memory bill"),
    "commitment 1 (peak and KV overflow)": lambda: _("commitment 1 (peak and KV overflow)"),
    "commitment 2 (protection)": lambda: _("commitment 2 (protection)"),
    "commitment 3 (fallback)": lambda: _("commitment 3 (fallback)"),
    "the evidence": lambda: _("the evidence"),
    "the missing evidence": lambda: _("the missing evidence"),
    "the assumptions": lambda: _("the assumptions"),
    "the exclusions": lambda: _("the exclusions"),
    "the launch arguments": lambda: _("the launch arguments"),
    "the customer": lambda: _("the customer"),
}

_SCENARIOS: dict[str, Callable[[], str]] = {
    "pulse": lambda: _("pulse"),
    "long-tail": lambda: _("long-tail"),
    "failure": lambda: _("failure-injection"),
    "failure-injection": lambda: _("failure-injection"),
}

Words = tuple[tuple[re.Pattern[str], Callable[[Mapping[str, str]], str | None]], ...]

_MISSING: Words = (
    (
        re.compile(r"^No fingerprint of the customer's machines"),
        lambda m: _(
            "No fingerprint of the customer's machines: the hardware, driver and CUDA are the plan's, not "
            "measured. Run the probe on a server and upload it on the deployment's page"
        ),
    ),
    (
        re.compile(r"^The deployment names no model or GPU"),
        lambda m: _("The deployment names no model or GPU: there is no memory estimate"),
    ),
    (
        re.compile(r"^No KV overflow probability"),
        lambda m: _("No KV overflow probability: give the deployment its workload profile and rate"),
    ),
    (
        re.compile(r"^No passed (?:(?P<scenario>[\w-]+) load test|load test of the (?P<named>[\w-]+) scenario)\.?$"),
        lambda m: _("No passed %(scenario)s load test")
        % {"scenario": _SCENARIOS.get(m["scenario"] or m["named"], lambda: m["scenario"] or m["named"])()},
    ),
    (
        re.compile(r"^No post-launch monitoring log yet"),
        lambda m: _("No post-launch monitoring log yet (72 hours of sampling: no OOM, no sustained climb)"),
    ),
)

_CHANGES: Words = (
    (
        re.compile(r"^Changed: (?P<words>.+?)\.?$"),
        lambda m: _("Changed: %(what)s") % {"what": _SECTION_WORDS[m["words"]]()}
        if m["words"] in _SECTION_WORDS
        else None,
    ),
    (re.compile(r"^No change in content: re-issued\.?$"), lambda m: _("No change in content: re-issued")),
)

_REFUSALS: Words = (
    (
        re.compile(r"^cannot .+: version (?P<number>\d+) is (?P<status>[\w ]+), not (?P<expected>[\w ]+)$"),
        lambda m: _("Version %(number)s is %(status)s, not %(expected)s: that step is not open now")
        % {"number": m["number"], "status": _status_words(m["status"]), "expected": _status_words(m["expected"])},
    ),
    (re.compile(r"^say why the version goes back to draft"), lambda m: _("Say why the version goes back to draft")),
    (
        re.compile(
            r"^only a version in review or approved goes back to draft \(version (?P<number>\d+) is "
            r"(?P<status>[\w ]+)\)"
        ),
        lambda m: _("Only a version in review or approved goes back to draft (version %(number)s is %(status)s)")
        % {"number": m["number"], "status": _status_words(m["status"])},
    ),
    (
        re.compile(r"^a signed report version never changes"),
        lambda m: _("A signed version never changes: draft a new version instead"),
    ),
    (
        re.compile(r"^version (?P<number>\d+) is (?P<status>[\w ]+): return it to draft or sign it"),
        lambda m: _("Version %(number)s is %(status)s: return it to draft or sign it before drafting another")
        % {"number": m["number"], "status": _status_words(m["status"])},
    ),
    (re.compile(r"^no deployment "), lambda m: _("Choose one of your organisation's deployments")),
    (
        re.compile(r"^cannot submit it for review: (?P<count>\d+) checklist items? not done"),
        lambda m: _(
            "Submission refused: %(count)s checklist items are not done and carry no waiver request. Gather "
            "the evidence, or request a waiver of each with the reason"
        )
        % dict(m),
    ),
    (
        re.compile(r"^cannot approve it: (?P<count>\d+) checklist items? not done"),
        lambda m: _(
            "Approval refused: %(count)s checklist items are not done and their waiver is not granted. Decide "
            "each waiver request first"
        )
        % dict(m),
    ),
    (
        re.compile(r"^cannot [\w ]+: the evidence of version (?P<number>\d+) is still being gathered"),
        lambda m: _("The evidence of version %(number)s is still being gathered: wait for it") % dict(m),
    ),
    (
        re.compile(r"^say why the commitment may stand without this evidence"),
        lambda m: _("Say why the commitment may stand without this evidence"),
    ),
    (re.compile(r"^say why the waiver is granted or refused"), lambda m: _("Say why the waiver is granted or refused")),
    (
        re.compile(r"^a waiver is granted or refused by a reviewer other than"),
        lambda m: _("A reviewer other than the version's author and the one who asked grants or refuses a waiver"),
    ),
    (re.compile(r"^language must be one of"), lambda m: _("Choose English or Simplified Chinese")),
    (
        re.compile(r"^the title has (?P<count>\d+) characters; the limit is (?P<limit>\d+)"),
        lambda m: _("The title has %(count)s characters; the limit is %(limit)s") % dict(m),
    ),
)


def _status_words(english: str) -> str:
    """A status as the services write it ("in review") in the active language, lower case."""
    return status_label(english.strip().replace(" ", "_")).lower()


def known_text(rules: Words, message: str) -> tuple[str, bool]:
    """A backend sentence in the active language where its words are known here: (text, translated)."""
    for pattern, words in rules:
        match = pattern.match(message)
        if match:
            text = words(match.groupdict())
            if text is not None:
                return text, True
    return message, False


def refusal_text(error: SizingError) -> str:
    """A service's refusal in the active language where its words are known here, else as it came."""
    return known_text(_REFUSALS, error.message)[0]


def _texts(rules: Words, items: Any, *, language: str) -> list[dict[str, Any]]:
    """A version's sentences (written in the report's language): an English one whose words are known here is shown
    in the active language; any other as written, marked with the report's language."""
    rows = []
    for item in items or ():
        text, translated = known_text(rules, str(item)) if language == Report.Language.ENGLISH else (str(item), False)
        rows.append({"text": text, "translated": translated})
    return rows


# ---------------------------------------------------------------------------------------------------------------
# Forms


class ReportForm(forms.Form):
    deployment = forms.IntegerField(
        min_value=1,
        label=gettext_lazy("Deployment"),
        error_messages={
            "required": gettext_lazy("Choose the deployment to report on"),
            "invalid": gettext_lazy("Choose the deployment to report on"),
        },
    )
    language = forms.ChoiceField(
        choices=Report.Language.choices, initial=Report.Language.ENGLISH, label=gettext_lazy("Language of the report")
    )
    title = forms.CharField(max_length=TITLE_MAX_LENGTH, required=False, label=gettext_lazy("Title (optional)"))


def _lines(text: str) -> list[str]:
    return [line.strip() for line in str(text or "").splitlines() if line.strip()]


class EditForm(forms.Form):
    """A draft's assumptions, exclusions and fallback plan, one sentence per line."""

    assumptions = forms.CharField(required=False, widget=forms.Textarea, label=gettext_lazy("Assumptions"))
    exclusions = forms.CharField(required=False, widget=forms.Textarea, label=gettext_lazy("Exclusions"))
    fallback = forms.CharField(required=False, widget=forms.Textarea, label=gettext_lazy("Fallback plan"))

    def _clean_lines(self, name: str) -> list[str]:
        lines = _lines(self.cleaned_data.get(name) or "")
        if len(lines) > EDIT_MAX_LINES:
            raise forms.ValidationError(
                _("%(count)s sentences; at most %(limit)s") % {"count": len(lines), "limit": EDIT_MAX_LINES}
            )
        if any(len(line) > EDIT_MAX_LINE_CHARS for line in lines):
            raise forms.ValidationError(
                _("A sentence is longer than %(limit)s characters") % {"limit": EDIT_MAX_LINE_CHARS}
            )
        return lines

    def clean_assumptions(self) -> list[str]:
        return self._clean_lines("assumptions")

    def clean_exclusions(self) -> list[str]:
        return self._clean_lines("exclusions")

    def clean_fallback(self) -> list[str]:
        return self._clean_lines("fallback")


# ---------------------------------------------------------------------------------------------------------------
# Shared pieces


def _organisation(request: HttpRequest) -> Organisation:
    return organisation_for_user(user=request.user)


def _report_or_404(request: HttpRequest, report_id: int) -> Report:
    report = (
        Report.objects.select_related("deployment").filter(organisation=_organisation(request), pk=report_id).first()
    )
    if report is None:
        raise Http404(_("No such report"))
    return report


def _version_or_404(report: Report, number: int) -> ReportVersion:
    version = (
        ReportVersion.objects.select_related("report", "author", "reviewer", "signer")
        .filter(report=report, number=number)
        .first()
    )
    if version is None:
        raise Http404(_("No such version"))
    return version


def _time(value: Any) -> str:
    return value.strftime(TIME_FORMAT) if value else NO_VALUE


def _user_name(user: Any) -> str:
    return (user.get_full_name() or user.get_username()) if user is not None else NO_VALUE


def _bytes_text(n_bytes: Any) -> str:
    """Bytes as GiB and GB for people: "14.96 GiB (16.06 GB)"."""
    if not isinstance(n_bytes, int | float):
        return NO_VALUE
    return _("%(gib)s (%(gb)s)") % {"gib": f"{n_bytes / GiB:,.2f} GiB", "gb": f"{n_bytes / GB:,.2f} GB"}


def report_rows(reports: Any) -> list[dict[str, Any]]:
    """Each report with its newest version (one query for the versions)."""
    reports = list(reports)
    newest: dict[int, ReportVersion] = {}
    for version in ReportVersion.objects.filter(report__in=reports).order_by("report_id", "-number"):
        newest.setdefault(version.report_id, version)
    rows = []
    for report in reports:
        version = newest.get(report.pk)
        status = version.status if version else ""
        rows.append(
            {
                "report": report,
                "version": version,
                "status": status,
                "status_label": status_label(status) if status else NO_VALUE,
                "signed": status == ReportVersion.Status.SIGNED,
                "language": report.get_language_display(),
                "created": _time(report.created_at),
            }
        )
    return rows


def _figures(content: Mapping[str, Any]) -> list[dict[str, str]]:
    commitment = content.get("commitment") or {}
    memory = content.get("memory") or {}
    protection = content.get("protection") or {}
    probability = commitment.get("kv_overflow_probability")
    budget = protection.get("engine_budget")
    if isinstance(memory.get("budget_bytes_per_gpu"), int):
        budget_text = (
            f"{budget} · {_bytes_text(memory['budget_bytes_per_gpu'])}"
            if budget
            else _bytes_text(memory["budget_bytes_per_gpu"])
        )
    else:
        budget_text = str(budget or NO_VALUE)
    confidence = content.get("confidence") or {}
    peak = _bytes_text(commitment.get("peak_bytes_per_gpu"))
    if isinstance(confidence.get("probability"), int | float):
        peak = _("≤ %(peak)s, confidence %(percent)s") % {"peak": peak, "percent": f"{confidence['probability']:.1%}"}
    return [
        {"key": "peak", "label": _("Peak GPU memory per card"), "value": peak},
        {"key": "capacity", "label": _("Card capacity"), "value": _bytes_text(memory.get("capacity_bytes_per_gpu"))},
        {
            "key": "overflow",
            "label": _("KV overflow probability"),
            "value": f"{probability * 100:.2f} %" if isinstance(probability, int | float) else _("not simulated"),
        },
        {"key": "budget", "label": _("Engine budget"), "value": budget_text},
    ]


def _checklist_rows(
    content: Mapping[str, Any], waivers: Mapping[str, Any], *, version: ReportVersion, user: Any
) -> list[dict[str, Any]]:
    """The version's checklist as it stood, each item with its waiver (requested, granted, refused) and what the user
    may do with it: the author requests or withdraws on a draft, a reviewer other than the author decides in review."""
    is_author = version.author_id is not None and version.author_id == getattr(user, "pk", None)
    may_decide = may_name(user, "frontend:report-version-waiver-decide", "POST") and not is_author
    rows = []
    for item in content.get("checklist") or ():
        waiver = waivers.get(item.get("code"))
        state = str(item.get("state") or "missing")
        if state != "done" and waiver is not None and waiver.status == "granted":
            state = "waived"
        open_item = item.get("state") != "done"
        rows.append(
            {
                "code": item.get("code"),
                "text": item.get("text"),
                "detail": item.get("detail"),
                "state": state,
                "state_label": state_label(state),
                "waiver": waiver,
                "waiver_label": waiver_status_label(waiver.status) if waiver else "",
                "waiver_requested": _time(waiver.requested_at) if waiver else "",
                "waiver_decided": _time(waiver.decided_at) if waiver and waiver.decided_at else "",
                "may_request": open_item and is_author and version.status == ReportVersion.Status.DRAFT,
                "may_decide": open_item
                and waiver is not None
                and may_decide
                and version.status == ReportVersion.Status.IN_REVIEW
                and waiver.requested_by_id != getattr(user, "pk", 0),
            }
        )
    return rows


def _audit_rows(version: ReportVersion) -> list[dict[str, Any]]:
    texts = {item.get("code"): item.get("text") for item in (version.content or {}).get("checklist") or ()}
    rows = []
    for event in version.audit.all():
        detail = event.detail or {}
        parts = []
        if detail.get("reason"):
            parts.append(_("Reason: %(reason)s") % {"reason": detail["reason"]})
        if detail.get("sha256"):
            parts.append(f"SHA-256 {detail['sha256']}")
        if detail.get("verdict"):
            parts.append(_("Verdict: %(verdict)s") % {"verdict": verdict_words(str(detail["verdict"]))[0]})
        if detail.get("item"):  # the checklist item in the report's words, not its code
            parts.append(_("Item: %(item)s") % {"item": texts.get(detail["item"], detail["item"])})
        if detail.get("refreshed"):
            parts.append(_("The open draft was gathered again"))
        # a signing is logged at the signature's own time (the PDF's and the verification's), not when the row was
        # written a moment later
        at = event.at
        if event.action == "signed" and detail.get("signed_at"):
            at = datetime.fromisoformat(str(detail["signed_at"]))
        rows.append({"event": event, "label": action_label(event.action), "detail": " · ".join(parts), "at": _time(at)})
    return rows


def _steps(status: str) -> list[dict[str, Any]]:
    index = STEPS.index(status) if status in STEPS else 0
    return [
        {"key": step.value, "label": status_label(step.value), "done": i < index, "current": i == index}
        for i, step in enumerate(STEPS)
    ]


def _signing(version: ReportVersion) -> bool:
    """Whether a signing is queued or running (the task clears the message only when it fails)."""
    return version.status == ReportVersion.Status.APPROVED and bool(version.progress_message) and not version.error


def _redirect(report: Report, number: int | None = None) -> HttpResponseRedirect:
    url = reverse("frontend:report", args=[report.pk])
    return HttpResponseRedirect(f"{url}?version={number}" if number else url)


# ---------------------------------------------------------------------------------------------------------------
# /reports/


class ReportListPageView(LoginRequiredMixin, View):
    """GET: the organisation's reports and the form; POST: create one (its page; a refusal: this page, status 400,
    nothing saved)."""

    template_name = "frontend/reports.html"

    def _render(
        self, request: HttpRequest, *, form: ReportForm | None = None, refusal: str = "", status: int = 200
    ) -> HttpResponse:
        organisation = _organisation(request)
        reports = list(Report.objects.select_related("deployment").filter(organisation=organisation)[: LIST_LIMIT + 1])
        form = form or ReportForm(
            initial={"language": Report.Language.ENGLISH, "deployment": request.GET.get("deployment") or None}
        )
        context = {
            "rows": report_rows(reports[:LIST_LIMIT]),
            "truncated": len(reports) > LIST_LIMIT,
            "list_limit": LIST_LIMIT,
            "form": form,
            "refusal": refusal,
            "values": {name: form[name].value() for name in form.fields},
            "deployments": list(deployment_list_for_organisation(organisation=organisation)),
            "languages": Report.Language.choices,
        }
        return render(request, self.template_name, context, status=status)

    def get(self, request: HttpRequest) -> HttpResponse:
        return self._render(request)

    def post(self, request: HttpRequest) -> HttpResponse:
        form = ReportForm(request.POST)
        refusal = ""
        if form.is_valid():
            try:
                report = report_create(
                    organisation=_organisation(request), user=request.user, data=dict(form.cleaned_data)
                )
            except SizingError as error:
                field = next(iter((error.extra or {}).get("fields") or {}), None)
                if field in form.fields:
                    form.add_error(field, refusal_text(error))
                else:
                    refusal = refusal_text(error)
            else:
                messages.success(request, _("Report created: a worker is gathering the evidence of version 1"))
                return _redirect(report)
        return self._render(request, form=form, refusal=refusal, status=400)


# ---------------------------------------------------------------------------------------------------------------
# /reports/<id>/


class ReportDetailPageView(LoginRequiredMixin, View):
    template_name = "frontend/report_detail.html"

    def get(self, request: HttpRequest, report_id: int) -> HttpResponse:
        report = _report_or_404(request, report_id)
        return self.render_page(request, report)

    def render_page(
        self,
        request: HttpRequest,
        report: Report,
        *,
        edit_form: EditForm | None = None,
        number: int | None = None,
        status: int = 200,
    ) -> HttpResponse:
        versions = list(report.versions.select_related("author", "reviewer", "signer").order_by("-number"))
        if not versions:
            raise Http404(_("No such version"))
        if number is None:
            requested = request.GET.get("version", "")
            number = int(requested) if requested.isdigit() else versions[0].number
        version = next((row for row in versions if row.number == number), None)
        if version is None:
            raise Http404(_("No such version"))
        content = version.content or {}
        is_author = version.author_id is not None and version.author_id == request.user.pk
        can_sign = may_name(request.user, "frontend:report-version-sign", "POST")
        draft = version.status == ReportVersion.Status.DRAFT
        if edit_form is None and draft:
            edit_form = EditForm(
                initial={key: "\n".join(str(line) for line in content.get(key) or ()) for key in EDITABLE}
            )
        newest = versions[0]
        missing = _texts(_MISSING, content.get("missing"), language=report.language)
        waivers = {w.item: w for w in version.waivers.all()}
        checklist = _checklist_rows(content, waivers, version=version, user=request.user)
        context = {
            "report": report,
            "deployment": report.deployment,
            "version": version,
            "content": content,
            "versions": [
                {
                    "version": row,
                    "status_label": status_label(row.status),
                    "author": _user_name(row.author),
                    "created": _time(row.created_at),
                    "selected": row.number == version.number,
                }
                for row in versions
            ],
            "newest": newest,
            "is_newest": version.number == newest.number,
            "status_label": status_label(version.status),
            "steps": _steps(version.status),
            "customer": (content.get("customer") or {}).get("name") or report.deployment.customer,
            "missing": missing,
            "figures": _figures(content),
            "checklist": checklist,
            "has_checklist": "checklist" in content,
            "drafting": version.drafting,
            "draft_failed": version.drafting and bool(version.error),
            "changes": _texts(_CHANGES, version.changes, language=report.language),
            "audit": _audit_rows(version),
            "people": [
                (_("Author"), _user_name(version.author)),
                (_("Reviewer"), _user_name(version.reviewer)),
                (_("Signer"), _user_name(version.signer)),
                (_("Submitted"), _time(version.submitted_at)),
                (_("Approved"), _time(version.approved_at)),
                (_("Signed"), _time(version.signed_at)),
            ],
            "signer_name": _user_name(version.signer),
            "signed_time": _time(version.signed_at),
            "is_author": is_author,
            "can_sign": can_sign,
            "draft": draft,
            "edit_form": edit_form,
            "can_review": may_name(request.user, "frontend:report-version-approve", "POST"),
            "can_write": may_name(request.user, "frontend:report-version-edit", "POST"),
            "can_new_version": newest.status in (ReportVersion.Status.DRAFT, ReportVersion.Status.SIGNED),
            "signing": _signing(version),
            "progress_percent": round((version.progress or 0.0) * 100),
            "progress_message": version.progress_message,
            "pdf_url": reverse("reports:report-version-pdf", args=[report.pk, version.number]),
            "page_data": {
                "signing": _signing(version),
                "status": version.status,
                "drafting": version.drafting and not version.error,
                "api_url": reverse("reports:report-version-detail", args=[report.pk, version.number]),
            },
            "labels": page_labels(),
        }
        return render(request, self.template_name, context, status=status)


class ReportVersionActionView(LoginRequiredMixin, View):
    """POST …/versions/N/<action>/: submit, return (with a reason), approve, sign or edit; back to the version's
    page with a message. A refusal changes nothing."""

    action_name = ""

    def post(self, request: HttpRequest, report_id: int, number: int) -> HttpResponse:
        report = _report_or_404(request, report_id)
        version = _version_or_404(report, number)
        user = request.user
        try:
            if self.action_name == "submit":
                version_submit(version=version, user=user)
                messages.success(
                    request,
                    _("Version %(number)s submitted for review: a colleague other than its author approves it")
                    % {"number": number},
                )
            elif self.action_name == "return":
                reason = str(request.POST.get("reason") or "").strip()
                if len(reason) > REASON_MAX_CHARS:
                    messages.error(
                        request,
                        _("The reason has %(count)s characters; the limit is %(limit)s")
                        % {"count": len(reason), "limit": REASON_MAX_CHARS},
                    )
                    return _redirect(report, number)
                version_return(version=version, user=user, reason=reason)
                messages.success(request, _("Version %(number)s returned to draft") % {"number": number})
            elif self.action_name == "approve":
                version_approve(version=version, user=user)
                messages.success(
                    request,
                    _("Version %(number)s approved: a signer of your organisation can sign it now")
                    % {"number": number},
                )
            elif self.action_name == "sign":
                version_sign_start(version=version, user=user)
                messages.success(
                    request,
                    _("Signing version %(number)s: the PDF is rendered and signed by a worker") % {"number": number},
                )
            elif self.action_name == "edit":
                form = EditForm(request.POST)
                if not form.is_valid():
                    return ReportDetailPageView().render_page(
                        request, report, edit_form=form, number=number, status=400
                    )
                version_edit(version=version, user=user, data={key: form.cleaned_data[key] for key in EDITABLE})
                messages.success(request, _("Assumptions, exclusions and fallback plan saved"))
        except SizingError as error:
            messages.error(request, _with_items(error))
        except PermissionDenied:
            messages.error(request, self._denied_text())
        return _redirect(report, number)

    def _denied_text(self) -> str:
        if self.action_name == "approve":
            return _(
                "You wrote this version: a reviewer other than its author approves it. Ask a colleague to review it"
            )
        if self.action_name == "sign":
            return _("You wrote this version, or your role cannot sign: a signer other than its author signs it")
        return _("You are not allowed to do this")


def _with_items(error: SizingError) -> str:
    """A refusal in the active language, with the checklist items it names (their texts are the report's)."""
    text = refusal_text(error)
    items = (error.extra or {}).get("items") or ()
    if items:
        text += ": " + "; ".join(f"{item['text']} ({state_label(item['state'])})" for item in items)
    return text


class ReportWaiverView(LoginRequiredMixin, View):
    """POST …/versions/N/waivers/<item>/<action>/: the author requests (with the reason) or withdraws a waiver of a
    checklist item; a reviewer grants or refuses it (with the reason). Back to the version's page with a message."""

    action_name = ""

    def post(self, request: HttpRequest, report_id: int, number: int, item: str) -> HttpResponse:
        report = _report_or_404(request, report_id)
        version = _version_or_404(report, number)
        reason = str(request.POST.get("reason") or "").strip()
        try:
            if self.action_name == "request":
                waiver_request(version=version, user=request.user, item=item, reason=reason)
                messages.success(
                    request, _("Waiver requested: a reviewer grants or refuses it when the version is in review")
                )
            elif self.action_name == "withdraw":
                waiver_withdraw(version=version, user=request.user, item=item)
                messages.success(request, _("Waiver request withdrawn"))
            else:
                grant = request.POST.get("grant") == "1"
                waiver_decide(version=version, user=request.user, item=item, grant=grant, reason=reason)
                messages.success(request, _("Waiver granted") if grant else _("Waiver refused"))
        except SizingError as error:
            messages.error(request, _with_items(error))
        except PermissionDenied:
            messages.error(
                request,
                _(
                    "Only the version's author requests or withdraws a waiver; a reviewer other "
                    "than the author decides it"
                ),
            )
        return _redirect(report, number)


class ReportVersionNewView(LoginRequiredMixin, View):
    """POST: gather the evidence again: a new draft (or the open draft refreshed)."""

    def post(self, request: HttpRequest, report_id: int) -> HttpResponse:
        report = _report_or_404(request, report_id)
        try:
            version = report_version_new(report=report, user=request.user)
        except SizingError as error:
            messages.error(request, refusal_text(error))
            return _redirect(report)
        messages.success(
            request, _("Version %(number)s: a worker is gathering the evidence") % {"number": version.number}
        )
        return _redirect(report, version.number)


# ---------------------------------------------------------------------------------------------------------------
# /reports/verify/


def size_text(n_bytes: int) -> str:
    """A file size for people: MiB from 1 MiB up, else bytes."""
    if n_bytes >= 2**20:
        value = n_bytes / 2**20
        return _("%(value)s MiB") % {"value": f"{value:,.0f}" if n_bytes % 2**20 == 0 else f"{value:,.2f}"}
    return _("%(value)s bytes") % {"value": f"{n_bytes:,}"}


def verification_context(answer: Mapping[str, Any]) -> dict[str, Any]:
    """The service's answer as the page shows it: the verdict's name and its sentence in both languages."""
    verdict = str(answer.get("verdict") or "unreadable")
    name, sentence = verdict_words(verdict)
    other = "en" if translation.get_language() != "en" else "zh-hans"
    with translation.override(other):
        other_name, other_sentence = verdict_words(verdict)
    problems = []
    codes = list(answer.get("problem_codes") or ())
    texts = list(answer.get("problems") or ())
    for index, code in enumerate(codes):
        text = problem_text(str(code))
        problems.append({"text": text or (texts[index] if index < len(texts) else code), "translated": bool(text)})
    version = answer.get("version")
    return {
        "verdict": verdict,
        "name": name,
        "sentence": sentence,
        "other_language": other,
        "other_name": other_name,
        "other_sentence": other_sentence,
        "ok": verdict == "valid",
        "signer": answer.get("signer_name") or answer.get("signer") or NO_VALUE,
        "signed_at": str(answer.get("signed_at") or NO_VALUE).replace("T", " "),
        "version_label": (version or {}).get("label") or answer.get("version_label") or NO_VALUE,
        "version": version,
        "matches_record": bool(answer.get("matches_record")),
        "sha256": answer.get("sha256") or "",
        "problems": problems,
        "version_url": (
            reverse("frontend:report", args=[version["report"]]) + f"?version={version['number']}" if version else None
        ),
    }


class ReportVerifyPageView(LoginRequiredMixin, View):
    template_name = "frontend/report_verify.html"

    def _render(
        self, request: HttpRequest, *, result: Mapping[str, Any] | None = None, error: str = "", status: int = 200
    ) -> HttpResponse:
        limit = settings.REPORTS_MAX_VERIFY_BYTES
        return render(
            request,
            self.template_name,
            {"result": result, "error": error, "limit_bytes": limit, "limit_text": size_text(limit)},
            status=status,
        )

    def get(self, request: HttpRequest) -> HttpResponse:
        return self._render(request)

    def post(self, request: HttpRequest) -> HttpResponse:
        upload = request.FILES.get("file")
        limit = settings.REPORTS_MAX_VERIFY_BYTES
        if upload is None:
            return self._render(request, error=_("Choose the PDF to verify"), status=400)
        if upload.size > limit:
            return self._render(
                request,
                error=_("The file is %(size)s; the limit is %(limit)s: nothing was checked")
                % {"size": size_text(upload.size), "limit": size_text(limit)},
                status=400,
            )
        try:
            answer = report_verify(organisation=_organisation(request), user=request.user, data=upload.read())
        except SizingError as error:
            return self._render(request, error=refusal_text(error), status=400)
        return self._render(request, result=verification_context(answer))


def deployment_reports(*, deployment: Deployment) -> list[dict[str, Any]]:
    """The deployment's reports with their newest version, for the deployment's page."""
    return report_rows(Report.objects.filter(deployment=deployment).select_related("deployment"))
