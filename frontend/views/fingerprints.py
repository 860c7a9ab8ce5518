"""Server-rendered pages of customer deployments and the fingerprints of their machines: the list and the create form,
a deployment's plan, probe download, upload and fingerprints by host, a fingerprint's findings, effect on the
estimate, GPUs, topology and host, and the comparison of two fingerprints. Every read is scoped to the user's
organisation (another organisation's id is a 404); the writes go through sizing.services.deployments, whose refusals
(SizingError) come back as the page again with the message, status 400, and nothing stored."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.db.models import Max
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import View

from benchmarks_app.models import BenchmarkRun, LoadTest
from frontend.forms import OrganisationRowsForm
from frontend.views.benchmarks import verdict_label
from frontend.views.estimates import engine_label_map, install_label_map, model_option_groups, usage_context_label_map
from frontend.views.reports import deployment_reports
from reports.checklist import checklist_summary, commitment_checklist
from reports.models import Report
from sizing.estimator.engines import ENGINE_CHOICES
from sizing.estimator.errors import SizingError
from sizing.estimator.launch import INSTALLS, USAGE_CONTEXTS
from sizing.fingerprint.identity import row_host_key
from sizing.models import Deployment, Fingerprint, Organisation, WorkloadProfile
from sizing.selectors.deployments import (
    chosen_machines,
    deployment_get_for_organisation,
    deployment_hosts,
    deployment_list_for_organisation,
    fingerprint_get_for_organisation,
    fingerprint_list_for_organisation,
    fingerprint_versions,
)
from sizing.selectors.estimates import gpu_list
from sizing.selectors.workloads import (
    workload_profile_get_for_organisation,
    workload_profile_list_for_organisation,
)
from sizing.services.deployments import (
    MAX_FILES,
    deployment_create,
    deployment_delete,
    deployment_update,
    fingerprint_delete,
    fingerprint_diff_report,
    fingerprint_max_bytes,
    fingerprint_report,
    fingerprint_upload,
    uploads_from,
)
from sizing.services.estimates import organisation_for_user
from sizing.services.machine_checks import machine_contradictions
from sizing.services.machines import deployment_machines_set, fingerprint_host_merge
from sizing.texts.findings import (
    NO_VALUE,
    area_label,
    change_key_label,
    change_text,
    change_value,
    diff_summary,
    finding_text,
    gib,
    severity_label,
    source_label,
    switch_value,
)

MIB = 2**20
MAX_RATE_PER_S = 100_000  # the services' limit (sizing.services.deployments)
RECENT_ROWS = 10  # load tests and benchmark runs the deployment's page lists (newest first)
COMPARE_CHOICES_LIMIT = 500  # fingerprints the compare selects offer (newest first)
SEVERITIES = ("error", "warning", "info")

# ---------------------------------------------------------------------------------------------------------------
# Forms: typed input; the services check the rest (unique name, CUDA version, count a multiple of TP)


class DeploymentForm(OrganisationRowsForm):
    name = forms.CharField(max_length=200, label=gettext_lazy("Name"))
    customer = forms.CharField(max_length=200, required=False, label=gettext_lazy("Customer"))
    model = forms.CharField(max_length=200, required=False, label=gettext_lazy("Model"))
    gpu = forms.CharField(max_length=80, required=False, label=gettext_lazy("GPU"))
    gpu_count = forms.IntegerField(min_value=1, max_value=64, required=False, label=gettext_lazy("GPUs per server"))
    tp = forms.IntegerField(min_value=1, max_value=64, required=False, label=gettext_lazy("TP"))
    engine = forms.ChoiceField(
        choices=[(engine, engine) for engine in ENGINE_CHOICES], initial="vllm", label=gettext_lazy("Engine")
    )
    image_cuda_version = forms.CharField(max_length=20, required=False, label=gettext_lazy("CUDA version of the image"))
    max_model_len = forms.IntegerField(
        min_value=1, max_value=16_777_216, required=False, label=gettext_lazy("Max model length")
    )
    # the engine release the plan is sized for (empty: latest); the service checks it against the engine
    engine_version = forms.CharField(max_length=40, required=False, label=gettext_lazy("Engine version"))
    usage_context = forms.ChoiceField(
        choices=[(value, value) for value in USAGE_CONTEXTS], required=False, label=gettext_lazy("Usage context")
    )
    install = forms.ChoiceField(
        choices=[(value, value) for value in INSTALLS], required=False, label=gettext_lazy("Install")
    )
    notes = forms.CharField(max_length=5000, required=False, widget=forms.Textarea, label=gettext_lazy("Notes"))
    slo_ttft_ms = forms.FloatField(
        min_value=0.001, max_value=3_600_000, required=False, label=gettext_lazy("TTFT SLO (ms)")
    )
    slo_tpot_ms = forms.FloatField(
        min_value=0.001, max_value=3_600_000, required=False, label=gettext_lazy("TPOT SLO (ms)")
    )
    slo_e2e_ms = forms.FloatField(
        min_value=0.001, max_value=3_600_000, required=False, label=gettext_lazy("E2E SLO (ms)")
    )
    workload = forms.IntegerField(required=False, label=gettext_lazy("Workload profile"))
    rate_per_s = forms.FloatField(required=False, label=gettext_lazy("Rate (requests per second)"))

    def clean_tp(self) -> int:
        return self.cleaned_data.get("tp") or 1

    def clean_workload(self) -> WorkloadProfile | None:
        value = self.cleaned_data.get("workload")
        if value is None:
            return None
        profile = workload_profile_get_for_organisation(organisation=self.organisation, workload_profile_id=value)
        if profile is None:
            raise forms.ValidationError(_("Unknown workload profile %(id)s") % {"id": value})
        return profile

    def clean_rate_per_s(self) -> float | None:
        rate = self.cleaned_data.get("rate_per_s")
        if rate is not None and not 0 < rate <= MAX_RATE_PER_S:
            raise forms.ValidationError(
                _("The rate is a number of requests per second above 0, at most %(limit)s")
                % {"limit": f"{MAX_RATE_PER_S:,}"}
            )
        return rate

    def service_data(self) -> dict[str, Any]:
        data = dict(self.cleaned_data)
        for key in ("usage_context", "install"):
            if not data.get(key):
                data.pop(key, None)  # not given: the plan keeps what it has (new plans: serve, pip)
        data["slo"] = {
            key: data.pop(f"slo_{key}")
            for key in ("ttft_ms", "tpot_ms", "e2e_ms")
            if data.get(f"slo_{key}") is not None
        }
        for key in ("ttft_ms", "tpot_ms", "e2e_ms"):
            data.pop(f"slo_{key}", None)
        return data


def _deployment_initial(deployment: Deployment) -> dict[str, Any]:
    return {
        "name": deployment.name,
        "customer": deployment.customer,
        "notes": deployment.notes,
        "model": deployment.model.slug if deployment.model else "",
        "gpu": deployment.gpu.slug if deployment.gpu else "",
        "gpu_count": deployment.gpu_count,
        "tp": deployment.tp,
        "engine": deployment.engine,
        "image_cuda_version": deployment.image_cuda_version,
        "max_model_len": deployment.max_model_len,
        "workload": deployment.workload_id,
        "engine_version": deployment.engine_version,
        "usage_context": deployment.usage_context,
        "install": deployment.install,
        "rate_per_s": deployment.rate_per_s,
        **{f"slo_{key}": (deployment.slo or {}).get(key) for key in ("ttft_ms", "tpot_ms", "e2e_ms")},
    }


class UploadForm(forms.Form):
    label = forms.CharField(max_length=100, required=False, label=gettext_lazy("Label"))
    host = forms.CharField(max_length=255, required=False, label=gettext_lazy("Host"))
    text = forms.CharField(required=False, strip=False, widget=forms.Textarea, label=gettext_lazy("Pasted outputs"))


def _service_messages() -> list[tuple[re.Pattern[str], Any]]:
    """The refusals of sizing.services.deployments a person meets on these pages, as (pattern of the English
    message, its words in the active language from the pattern's groups)."""
    return [
        (
            re.compile(r"^your organisation already has a deployment named '(?P<name>[^']*)'; choose another name$"),
            lambda m: _("your organisation already has a deployment named “%(name)s”; choose another name") % m,
        ),
        (
            re.compile(r"^'(?P<value>[^']*)' is not a CUDA version; write it like 12\.4 or 12\.4\.1$"),
            lambda m: _("“%(value)s” is not a CUDA version; write it like 12.4 or 12.4.1") % m,
        ),
        (
            re.compile(r"^(?P<count>\d+) GPUs are not a whole number of TP (?P<tp>\d+) groups$"),
            lambda m: _("%(count)s GPUs are not a whole number of TP %(tp)s groups") % m,
        ),
        (
            re.compile(r"^upload a probe file or paste at least one nvidia-smi output$"),
            lambda m: _("upload a probe file or paste at least one nvidia-smi output"),
        ),
        (
            re.compile(r"^(?P<count>\d+) files; at most (?P<limit>\d+) per fingerprint \(one machine\)$"),
            lambda m: _("%(count)s files; at most %(limit)s per fingerprint (one machine)") % m,
        ),
        (
            re.compile(
                r"^no GPU is described in what was uploaded: add nvidia-smi -q -x \(or the probe file\); "
                r"nothing was stored$"
            ),
            lambda m: _(
                "no GPU is described in what was uploaded: add nvidia-smi -q -x (or the probe file); nothing was stored"
            ),
        ),
        (
            re.compile(
                r"^these outputs were already uploaded to this deployment as fingerprint (?P<id>\d+) "
                r"\((?P<what>.*)\)$"
            ),
            lambda m: _("these outputs were already uploaded to this deployment as fingerprint %(id)s (%(what)s)") % m,
        ),
    ]


def service_message_text(message: str) -> str:
    """A service's refusal in the active language where its words are known here, else as the service wrote it."""
    for pattern, words in _service_messages():
        match = pattern.match(message)
        if match:
            return str(words(match.groupdict()))
    return message


def _service_errors(form: forms.Form, error: SizingError) -> None:
    """A service refusal onto the form: each of its fields' messages under the field, the rest above the form."""
    fields = (error.extra or {}).get("fields") or {}
    placed = False
    for field, field_messages in fields.items():
        for message in field_messages if isinstance(field_messages, list) else [field_messages]:
            form.add_error(field if field in form.fields else None, service_message_text(str(message)))
            placed = True
    if not placed:
        form.add_error(None, service_message_text(error.message))


_OVERSIZE = re.compile(r"^(?P<name>.*?): the file is [\d,]+ bytes")


def upload_refusal_text(error: SizingError) -> str:
    """The reason an upload was refused in the active language where its words are known here (a file over the
    size limit, no file, a duplicate), else as the service words it (English: what the parsers found)."""
    extra = error.extra or {}
    match = _OVERSIZE.match(error.message)
    if match and isinstance(extra.get("size_bytes"), int) and isinstance(extra.get("limit_bytes"), int):
        return _(
            "%(name)s: the file is %(size)s bytes; the limit is %(limit)s bytes (%(limit_mib)s MiB): upload the "
            "probe's JSON file or one command's output"
        ) % {
            "name": match.group("name"),
            "size": f"{extra['size_bytes']:,}",
            "limit": f"{extra['limit_bytes']:,}",
            "limit_mib": _mib_text(extra["limit_bytes"]),
        }
    return service_message_text(error.message)


def _mib_text(value: int) -> str:
    return f"{value / MIB:,.1f}".removesuffix(".0")


# ---------------------------------------------------------------------------------------------------------------
# Shared pieces


def _organisation(request: HttpRequest) -> Organisation:
    return organisation_for_user(user=request.user)


def _deployment_or_404(request: HttpRequest, deployment_id: int) -> Deployment:
    deployment = deployment_get_for_organisation(organisation=_organisation(request), deployment_id=deployment_id)
    if deployment is None:
        raise Http404(_("No such deployment"))
    return deployment


def _fingerprint_or_404(request: HttpRequest, fingerprint_id: int) -> Fingerprint:
    fingerprint = fingerprint_get_for_organisation(organisation=_organisation(request), fingerprint_id=fingerprint_id)
    if fingerprint is None:
        raise Http404(_("No such fingerprint"))
    return fingerprint


def _plan_form_context(request: HttpRequest, form: DeploymentForm) -> dict[str, Any]:
    """What the plan form's selects need: the model groups with the chosen slug, the GPUs, the engines."""
    catalog, own, _supported = model_option_groups(request.user)
    selected_model = form["model"].value() or ""
    engine_labels = engine_label_map()
    workload = form["workload"].value()
    return {
        "form": form,
        "workloads": list(workload_profile_list_for_organisation(organisation=form.organisation)),
        "selected_workload": str(workload.pk if isinstance(workload, WorkloadProfile) else workload or ""),
        "catalog_models": catalog,
        "own_models": own,
        "default_model": selected_model,
        "selected_gpu": form["gpu"].value() or "",
        "gpus": list(gpu_list().order_by("vendor", "marketed_memory_gb", "name")),
        "engine_choices": [{"value": e, "label": engine_labels.get(e, e)} for e in ENGINE_CHOICES],
        "selected_engine": form["engine"].value() or "vllm",
        "usage_choices": list(usage_context_label_map().items()),
        "install_choices": list(install_label_map().items()),
        "selected_usage_context": form["usage_context"].value() or "",
        "selected_install": form["install"].value() or "",
        "slo_fields": [(key, form[f"slo_{key}"].label, form[f"slo_{key}"]) for key in ("ttft_ms", "tpot_ms", "e2e_ms")],
    }


def _severity_counts(findings: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    counts = dict.fromkeys(SEVERITIES, 0)
    for finding in findings:
        severity = str(finding.get("severity"))
        counts[severity] = counts.get(severity, 0) + 1
    return counts


def _gpu_summary(facts: Mapping[str, Any]) -> str:
    """ "2 × NVIDIA A100-SXM4-80GB" (each model with its count), or the count alone when no name was read."""
    gpus = facts.get("gpus") or []
    names: dict[str, int] = {}
    for gpu in gpus:
        if gpu.get("name"):
            names[gpu["name"]] = names.get(gpu["name"], 0) + 1
    count = int(facts.get("gpu_count") or len(gpus))
    if not names:
        return _("%(count)s GPU(s)") % {"count": count}
    parts = [f"{n} × {name}" for name, n in names.items()]
    unnamed = count - sum(names.values())
    if unnamed > 0:
        parts.append(_("%(count)s unnamed") % {"count": unnamed})
    return ", ".join(parts)


def _versioned(rows: Iterable[Fingerprint]) -> dict[int, int]:
    """Fingerprint id → its version within its deployment and host (1, 2, ... by capture time)."""
    by_host: dict[tuple[int, str], list[Fingerprint]] = {}
    for row in rows:
        by_host.setdefault((row.deployment_id, row_host_key(row.host_key, row.host)), []).append(row)
    versions = {}
    for group in by_host.values():
        for number, row in enumerate(sorted(group, key=lambda r: (r.captured_at, r.pk)), start=1):
            versions[row.pk] = number
    return versions


def _compare_choices(organisation: Organisation) -> list[dict[str, Any]]:
    """The organisation's fingerprints for the compare selects, newest first: id and a label naming each."""
    rows = list(fingerprint_list_for_organisation(organisation=organisation).defer("facts")[:COMPARE_CHOICES_LIMIT])
    versions = _versioned(rows)
    return [
        {
            "id": row.pk,
            "label": " · ".join(
                part
                for part in (
                    row.deployment.name,
                    f"{row.host} v{versions[row.pk]}",
                    row.captured_at.strftime("%Y-%m-%d %H:%M"),
                    row.label,
                )
                if part
            ),
        }
        for row in rows
    ]


def _plan_summary(deployment: Deployment) -> dict[str, Any]:
    return {
        "model": deployment.model.slug if deployment.model else None,
        "gpu": deployment.gpu.name if deployment.gpu else None,
        "gpu_count": deployment.gpu_count,
        "tp": deployment.tp,
        "engine": engine_label_map().get(deployment.engine, deployment.engine),
        "image_cuda_version": deployment.image_cuda_version,
        "max_model_len": deployment.max_model_len,
    }


# ---------------------------------------------------------------------------------------------------------------
# /deployments/


class DeploymentListPageView(LoginRequiredMixin, View):
    template_name = "frontend/deployments.html"

    def _render(self, request: HttpRequest, form: DeploymentForm, status: int = 200) -> HttpResponse:
        organisation = _organisation(request)
        deployments = list(
            deployment_list_for_organisation(organisation=organisation).annotate(
                newest_capture=Max("fingerprints__captured_at")
            )
        )
        rows = [
            {
                "deployment": d,
                "plan": _plan_summary(d),
                "fingerprint_count": d.fingerprint_count,
                "newest_capture": d.newest_capture,
            }
            for d in deployments
        ]
        context = {"rows": rows, **_plan_form_context(request, form)}
        return render(request, self.template_name, context, status=status)

    def get(self, request: HttpRequest) -> HttpResponse:
        return self._render(request, DeploymentForm(organisation=_organisation(request), initial={"tp": 1}))

    def post(self, request: HttpRequest) -> HttpResponse:
        organisation = _organisation(request)
        form = DeploymentForm(request.POST, organisation=organisation)
        if form.is_valid():
            try:
                deployment = deployment_create(organisation=organisation, user=request.user, data=form.service_data())
            except SizingError as error:
                _service_errors(form, error)
            else:
                messages.success(request, _("Deployment %(name)s created") % {"name": deployment.name})
                return HttpResponseRedirect(reverse("frontend:deployment", args=[deployment.pk]))
        return self._render(request, form, status=400)


# ---------------------------------------------------------------------------------------------------------------
# /deployments/<id>/


def _fingerprint_row(fingerprint: Fingerprint, version: int) -> dict[str, Any]:
    facts = fingerprint.facts or {}
    return {
        "fingerprint": fingerprint,
        "version": version,
        "gpu_summary": _gpu_summary(facts),
        "driver_version": facts.get("driver_version"),
        "cuda_version": facts.get("cuda_version"),
        "counts": _severity_counts(fingerprint_report(fingerprint=fingerprint)["findings"]),
    }


def _host_groups(deployment: Deployment, organisation: Organisation) -> tuple[list[dict[str, Any]], list[int]]:
    """The deployment's fingerprints by host (sizing.fingerprint.identity: GPU UUIDs, else the host name; the host
    with the newest capture first), each newest first with its version number and its findings per severity (the
    machine's and the plan's); and their ids, newest first."""
    hosts = deployment_hosts(deployment=deployment)
    groups = [
        {
            "host": host.name,
            "key": host.key,
            "chosen_id": host.chosen.pk if host.chosen else None,
            "rows": [
                _fingerprint_row(row, number) for number, row in reversed(list(enumerate(host.versions, start=1)))
            ],
        }
        for host in hosts
    ]
    newest = sorted((row for host in hosts for row in host.versions), key=lambda r: (r.captured_at, r.pk), reverse=True)
    return groups, [row.pk for row in newest]


def _short_uuid(uuid: str) -> str:
    return uuid[:12] + "…" if len(uuid) > 13 else uuid


def _machine_hosts(deployment: Deployment) -> list[dict[str, Any]]:
    """The hosts for the machines form: name, GPUs (of the newest version), UUIDs, versions and the chosen one."""
    rows = []
    for host in deployment_hosts(deployment=deployment):
        rows.append(
            {
                "key": host.key,
                "name": host.name,
                "named": host.named,
                "uuids": ", ".join(_short_uuid(uuid) for uuid in host.gpu_uuids),
                "uuids_full": ", ".join(host.gpu_uuids),
                "gpus": _gpu_summary(host.versions[-1].facts or {}),
                "chosen_id": host.chosen.pk if host.chosen else None,
                "versions": [
                    {
                        "id": row.pk,
                        "number": number,
                        "captured_at": row.captured_at,
                        "label": row.label,
                        "gpus": _gpu_summary(row.facts or {}),
                    }
                    for number, row in enumerate(host.versions, start=1)
                ],
            }
        )
    return rows


def machine_refusal_text(error: SizingError) -> str:
    """A refusal of sizing.services.machines in the active language (by its `reason`), else as the service wrote
    it."""
    extra = error.extra or {}
    reason = extra.get("reason")
    try:
        if reason == "uuids_differ":
            return _(
                "%(host)s and %(into)s are two machines: their GPUs' UUIDs differ (%(host)s has %(host_uuids)s; "
                "%(into)s has %(into_uuids)s); nothing was merged"
            ) % {
                "host": extra["host"],
                "into": extra["into"],
                "host_uuids": ", ".join(extra["host_uuids"]),
                "into_uuids": ", ".join(extra["into_uuids"]),
            }
        if reason == "both_chosen":
            return _(
                "Both %(host)s and %(into)s have a chosen version, and one host has one: unchoose one of them "
                "first; nothing was merged"
            ) % {"host": extra["host"], "into": extra["into"]}
        if reason == "same_host":
            return _("A host cannot be merged into itself: choose another host")
        if reason == "unknown_host":
            return _("This deployment has no such host")
        if reason == "listed_twice":
            return _("Fingerprint %(id)s is listed twice") % {"id": extra["fingerprints"][0]}
        if reason == "not_this_deployment":
            return _("Fingerprint %(ids)s is not an upload of this deployment: choose among its hosts' versions") % {
                "ids": ", ".join(map(str, extra["fingerprints"]))
            }
        if reason == "two_versions":
            return _(
                "Fingerprints %(a)s and %(b)s are two versions of one host (%(host)s): choose one version per host"
            ) % {"a": extra["fingerprints"][0], "b": extra["fingerprints"][1], "host": extra["host"]}
    except (KeyError, IndexError, TypeError):
        pass
    return error.message


def _checklist_rows(deployment: Deployment) -> list[dict[str, Any]]:
    """The commitment checklist with where to do each item: the upload card, the plan, the load tests, the GPU
    memory logs, the reports."""
    reports = reverse("frontend:reports")
    report = Report.objects.filter(deployment=deployment).order_by("-pk").first()
    links = {
        "fingerprint": ("#upload-card", _("Upload a fingerprint")),
        "machines": ("#machines-card", _("Choose the machines")),
        "plan": ("#plan-card", _("Edit the plan")),
        "workload": ("#plan-card", _("Edit the plan")),
        "monitoring": (reverse("frontend:memory-logs"), _("Upload a monitoring log")),
        "signed_report": (
            reverse("frontend:report", args=[report.pk]) if report else reports,
            _("Open the report") if report else _("Create a report"),
        ),
    }
    load_tests = (reverse("frontend:load-tests"), _("Run a load test"))
    return [
        {**item, "href": links.get(item["code"], load_tests)[0], "action": links.get(item["code"], load_tests)[1]}
        for item in commitment_checklist(deployment)
    ]


def _load_test_rows(deployment: Deployment, organisation: Organisation) -> list[dict[str, Any]]:
    jobs = LoadTest.objects.filter(organisation=organisation, deployment=deployment).order_by("-created_at", "-pk")[
        :RECENT_ROWS
    ]
    rows = []
    for job in jobs:
        verdict = str((job.verdict or {}).get("verdict") or "")
        rows.append(
            {
                "job": job,
                "scenario": job.get_scenario_display(),
                "status": job.get_status_display(),
                "verdict": verdict,
                "verdict_label": verdict_label(verdict) if verdict else "",
                "verdict_class": {"pass": "pass", "fail": "fail"}.get(verdict, "insufficient"),
                "partial": bool((job.verdict or {}).get("partial")),
            }
        )
    return rows


def _benchmark_run_rows(deployment: Deployment, organisation: Organisation) -> list[BenchmarkRun]:
    return list(
        BenchmarkRun.objects.filter(organisation=organisation, deployment=deployment)
        .only("pk", "name", "tool", "status", "started_at", "created_at")
        .order_by("-created_at", "-pk")[:RECENT_ROWS]
    )


class DeploymentDetailPageView(LoginRequiredMixin, View):
    template_name = "frontend/deployment_detail.html"

    def _render(
        self,
        request: HttpRequest,
        deployment: Deployment,
        *,
        form: DeploymentForm | None = None,
        upload_form: UploadForm | None = None,
        upload_error: str = "",
        machines_error: str = "",
        status: int = 200,
    ) -> HttpResponse:
        organisation = _organisation(request)
        form = form or DeploymentForm(organisation=organisation, initial=_deployment_initial(deployment))
        groups, newest = _host_groups(deployment, organisation)
        checklist = _checklist_rows(deployment)
        machines = chosen_machines(deployment)
        context = {
            "deployment": deployment,
            "plan": _plan_summary(deployment),
            "groups": groups,
            "hosts": _machine_hosts(deployment),
            "chosen_count": len(machines),
            "machines_error": machines_error,
            "contradictions": machine_contradictions(deployment, machines),
            "fingerprint_count": len(newest),
            "upload_form": upload_form or UploadForm(),
            "upload_error": upload_error,
            "max_upload_mib": _mib_text(fingerprint_max_bytes()),
            "max_files": MAX_FILES,
            "compare_choices": _compare_choices(organisation),
            "compare_after": newest[0] if newest else None,
            "compare_before": newest[1] if len(newest) > 1 else None,
            "reports": deployment_reports(deployment=deployment),
            "report_languages": Report.Language.choices,
            "checklist": checklist,
            "checklist_summary": checklist_summary(checklist),
            "load_tests": _load_test_rows(deployment, organisation),
            "benchmark_runs": _benchmark_run_rows(deployment, organisation),
            **_plan_form_context(request, form),
        }
        return render(request, self.template_name, context, status=status)

    def get(self, request: HttpRequest, deployment_id: int) -> HttpResponse:
        return self._render(request, _deployment_or_404(request, deployment_id))

    def post(self, request: HttpRequest, deployment_id: int) -> HttpResponse:
        """Save the plan."""
        deployment = _deployment_or_404(request, deployment_id)
        form = DeploymentForm(request.POST, organisation=_organisation(request))
        if form.is_valid():
            try:
                deployment_update(deployment=deployment, data=form.service_data())
            except SizingError as error:
                _service_errors(form, error)
            else:
                messages.success(request, _("Plan saved: the fingerprints are checked against it"))
                return HttpResponseRedirect(reverse("frontend:deployment", args=[deployment.pk]))
        deployment.refresh_from_db()
        return self._render(request, deployment, form=form, status=400)


class DeploymentUploadView(LoginRequiredMixin, View):
    """POST: what one machine measured (probe files and/or pasted outputs) → its detail page; a refusal → the
    deployment's page again with the reason, status 400, nothing stored."""

    def post(self, request: HttpRequest, deployment_id: int) -> HttpResponse:
        deployment = _deployment_or_404(request, deployment_id)
        form = UploadForm(request.POST)
        error_text = ""
        if form.is_valid():
            values = form.cleaned_data
            files = request.FILES.getlist("files")
            texts = [values["text"]] if values["text"].strip() else []
            try:
                fingerprint = fingerprint_upload(
                    deployment=deployment,
                    user=request.user,
                    uploads=uploads_from(files=files, texts=texts),
                    label=values["label"],
                    host=values["host"],
                )
            except SizingError as error:
                error_text = upload_refusal_text(error)
            else:
                messages.success(request, _("Fingerprint of %(host)s stored") % {"host": fingerprint.host})
                return HttpResponseRedirect(reverse("frontend:fingerprint", args=[fingerprint.pk]))
        return DeploymentDetailPageView()._render(
            request, deployment, upload_form=form, upload_error=error_text, status=400
        )


class DeploymentMachinesView(LoginRequiredMixin, View):
    """POST: the machines the deployment runs on (one `fingerprint` version per host; none chosen is allowed) → the
    deployment's page; a refusal → the page again with the reason, status 400, nothing changed."""

    def post(self, request: HttpRequest, deployment_id: int) -> HttpResponse:
        deployment = _deployment_or_404(request, deployment_id)
        values = [value.strip() for value in request.POST.getlist("fingerprint") if value.strip()]
        if not all(value.isdigit() and len(value) <= 18 for value in values):
            return DeploymentDetailPageView()._render(
                request, deployment, status=400, machines_error=_("Choose a version from the list")
            )
        try:
            deployment_machines_set(
                deployment=deployment, fingerprint_ids=[int(value) for value in values], user=request.user
            )
        except SizingError as error:
            return DeploymentDetailPageView()._render(
                request, deployment, status=400, machines_error=machine_refusal_text(error)
            )
        messages.success(request, _("Machines saved: %(count)s chosen") % {"count": len(values)})
        return HttpResponseRedirect(reverse("frontend:deployment", args=[deployment.pk]) + "#machines-card")


class DeploymentHostMergeView(LoginRequiredMixin, View):
    """POST `host` and `into` (host keys): the first host's versions become versions of the second → the
    deployment's page; a refusal (their GPUs' UUIDs differ, ...) → the page again with the reason, status 400,
    nothing saved."""

    def post(self, request: HttpRequest, deployment_id: int) -> HttpResponse:
        deployment = _deployment_or_404(request, deployment_id)
        host, into = request.POST.get("host", "").strip()[:64], request.POST.get("into", "").strip()[:64]
        try:
            merged = fingerprint_host_merge(deployment=deployment, host_key=host, into_host_key=into)
        except SizingError as error:
            return DeploymentDetailPageView()._render(
                request, deployment, status=400, machines_error=machine_refusal_text(error)
            )
        messages.success(
            request,
            _("Hosts merged: %(host)s has %(count)s versions") % {"host": merged[-1].host, "count": len(merged)},
        )
        return HttpResponseRedirect(reverse("frontend:deployment", args=[deployment.pk]) + "#machines-card")


class DeploymentDeleteView(LoginRequiredMixin, View):
    def post(self, request: HttpRequest, deployment_id: int) -> HttpResponse:
        deployment = _deployment_or_404(request, deployment_id)
        name = deployment.name
        deployment_delete(deployment=deployment)
        messages.success(request, _("Deployment %(name)s deleted") % {"name": name})
        return HttpResponseRedirect(reverse("frontend:deployments"))


# ---------------------------------------------------------------------------------------------------------------
# /fingerprints/<id>/


EFFECT_LABELS = {
    "capacity_bytes_per_gpu": gettext_lazy("Card capacity"),
    "budget_bytes_per_gpu": gettext_lazy("Engine budget"),
    "required_bytes_per_gpu": gettext_lazy("Required"),
    "headroom_bytes_per_gpu": gettext_lazy("Headroom"),
    "kv_cache_bytes_per_gpu": gettext_lazy("KV cache"),
    "kv_capacity_tokens": gettext_lazy("KV cache capacity"),
    "max_concurrency": gettext_lazy("Max concurrency at max model length"),
    "fits": gettext_lazy("Fits"),
}


def _number(value: Any, *, decimals: int = 0) -> str:
    if value is None:
        return NO_VALUE
    if isinstance(value, float) and not math.isfinite(value):
        return "∞" if value > 0 else NO_VALUE
    return f"{value:,.{decimals}f}"


def _effect_value(key: str, value: Any) -> str:
    if value is None:
        return NO_VALUE
    if key == "fits":
        return "✓ " + _("Fits") if value else "✕ " + _("Does not fit")
    if key.endswith("_bytes_per_gpu"):
        return gib(value)
    if key == "kv_capacity_tokens":
        return _("%(value)s tokens") % {"value": _number(value)}
    if key == "max_concurrency":
        return _number(value, decimals=0 if float(value).is_integer() else 1)
    return str(value)


def _effect_difference(key: str, catalog: Any, measured: Any) -> str:
    if (
        key == "fits"
        or not isinstance(catalog, int | float)
        or not isinstance(measured, int | float)
        or catalog == measured
    ):
        return ""
    delta = measured - catalog
    sign = "+" if delta > 0 else "−"
    if key.endswith("_bytes_per_gpu"):
        return sign + gib(abs(delta))
    return sign + _number(abs(delta), decimals=0 if float(delta).is_integer() else 1)


def _effect_context(effect: Mapping[str, Any]) -> dict[str, Any]:
    if effect.get("missing"):
        words = {"model": _("model"), "gpu": _("GPU")}
        return {"missing": _(", ").join(str(words.get(key, key)) for key in effect["missing"])}
    if effect.get("error"):
        return {"error": effect["error"]}
    rows = []
    for row in effect.get("rows") or []:
        key = row.get("key")
        rows.append(
            {
                "key": key,
                "label": EFFECT_LABELS.get(key, key),
                "catalog": _effect_value(key, row.get("catalog")),
                "measured": _effect_value(key, row.get("measured")),
                "difference": _effect_difference(key, row.get("catalog"), row.get("measured")),
                "changed": row.get("catalog") != row.get("measured"),
                "bad": key == "fits" and row.get("measured") is False,
            }
        )
    context: dict[str, Any] = {
        "rows": rows,
        "model": effect.get("model"),
        "gpu": effect.get("gpu"),
        "parameters": effect.get("parameters") or {},
        "needed": gib(effect["needed_bytes_per_gpu"]) if effect.get("needed_bytes_per_gpu") is not None else None,
        "needed_is_budget": effect.get("needed_is_budget"),
    }
    performance = effect.get("performance")
    if performance:
        batch = performance.get("batch")
        catalog, measured = performance.get("catalog") or {}, performance.get("measured") or {}

        def figure(side: Mapping[str, Any], key: str, scale: float = 1.0, decimals: int = 0) -> str:
            value = side.get(key)
            return NO_VALUE if value is None else _number(value * scale, decimals=decimals)

        def link(side: Mapping[str, Any]) -> str:
            value = side.get("link_bytes_per_s")
            return NO_VALUE if value is None else _("%(value)s GB/s") % {"value": _number(value / 1e9, decimals=1)}

        context["performance"] = {
            "prompt_tokens": performance.get("prompt_tokens"),
            "batch": batch,
            "catalog_link": performance.get("catalog_link"),
            "measured_link": performance.get("measured_link"),
            "rows": [
                {"label": _("Link bandwidth per direction"), "catalog": link(catalog), "measured": link(measured)},
                {
                    "label": _("Time to first token (ms)"),
                    "catalog": figure(catalog, "ttft_s", 1000, 1),
                    "measured": figure(measured, "ttft_s", 1000, 1),
                },
                {
                    "label": _("Decode tokens/s, batch 1"),
                    "catalog": figure(catalog, "decode_tokens_per_s_batch_1", decimals=1),
                    "measured": figure(measured, "decode_tokens_per_s_batch_1", decimals=1),
                },
                {
                    "label": _("Decode tokens/s, batch %(batch)s") % {"batch": batch},
                    "catalog": figure(catalog, f"decode_tokens_per_s_batch_{batch}", decimals=1),
                    "measured": figure(measured, f"decode_tokens_per_s_batch_{batch}", decimals=1),
                },
            ],
        }
    return context


def _mib_and_gib(value: Any) -> str:
    if value is None:
        return NO_VALUE
    return f"{int(value) // MIB:,} MiB ({value / 2**30:,.1f} GiB)"


def _pair_text(current: Any, maximum: Any, prefix: str = "") -> str:
    if current is None and maximum is None:
        return NO_VALUE
    return f"{prefix}{current if current is not None else '?'} / {prefix}{maximum if maximum is not None else '?'}"


def _gpu_rows(facts: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for gpu in facts.get("gpus") or []:
        rows.append(
            {
                "index": gpu.get("index"),
                "name": gpu.get("name") or NO_VALUE,
                "uuid": gpu.get("uuid"),
                "bus_id": gpu.get("bus_id"),
                "memory_total": _mib_and_gib(gpu.get("memory_total_bytes")),
                "memory_used": (
                    f"{int(gpu['memory_used_bytes']) // MIB:,} MiB"
                    if gpu.get("memory_used_bytes") is not None
                    else NO_VALUE
                ),
                "pcie_generation": _pair_text(
                    gpu.get("pcie_generation_current"), gpu.get("pcie_generation_max"), "Gen"
                ),
                "pcie_width": _pair_text(gpu.get("pcie_width_current"), gpu.get("pcie_width_max"), "x"),
                "pcie_low": any(
                    gpu.get(f"pcie_{what}_current") is not None
                    and gpu.get(f"pcie_{what}_max") is not None
                    and gpu[f"pcie_{what}_current"] < gpu[f"pcie_{what}_max"]
                    for what in ("generation", "width")
                ),
                "mig": _switch(gpu.get("mig_mode")),
                "ecc": _switch(gpu.get("ecc_mode")),
                "persistence": _switch(gpu.get("persistence_mode")),
            }
        )
    return rows


def _switch(value: Any) -> str:
    return NO_VALUE if value is None else switch_value(value)


def link_kind_class(kind: Any) -> str:
    """The colour class of a topology cell: NV# green, PIX/PXB teal, PHB/NODE amber, SYS/SOC red, X grey."""
    text = str(kind or "").strip().upper()
    if text == "X":
        return "link-self"
    if re.fullmatch(r"NV\d+", text):
        return "link-nvlink"
    if text in ("PIX", "PXB"):
        return "link-switch"
    if text in ("PHB", "NODE"):
        return "link-host"
    if text in ("SYS", "SOC"):
        return "link-sys"
    return "link-other"


def link_legend() -> list[dict[str, str]]:
    return [
        {"kind": "NV#", "class": "link-nvlink", "text": _("NVLink, # bonded links")},
        {"kind": "PIX", "class": "link-switch", "text": _("PCIe through at most one PCIe bridge")},
        {"kind": "PXB", "class": "link-switch", "text": _("PCIe through several bridges, not the CPU")},
        {"kind": "PHB", "class": "link-host", "text": _("PCIe through a CPU's host bridge")},
        {"kind": "NODE", "class": "link-host", "text": _("PCIe across host bridges within one NUMA node")},
        {
            "kind": "SYS",
            "class": "link-sys",
            "text": _("PCIe and the link between CPU sockets (QPI/UPI), across NUMA nodes"),
        },
        {"kind": "X", "class": "link-self", "text": _("the device itself")},
    ]


def _matrix(topology: Mapping[str, Any]) -> dict[str, Any] | None:
    devices = [str(device) for device in topology.get("devices") or []]
    matrix = topology.get("matrix") or {}
    if not devices or not matrix:
        return None
    rows = []
    for row in devices:
        cells = [
            {
                "device": column,
                "kind": (matrix.get(row) or {}).get(column, ""),
                "class": link_kind_class((matrix.get(row) or {}).get(column)),
            }
            for column in devices
        ]
        rows.append(
            {
                "device": row,
                "cells": cells,
                "cpu_affinity": (topology.get("cpu_affinity") or {}).get(row),
                "numa_affinity": (topology.get("numa_affinity") or {}).get(row),
            }
        )
    return {
        "devices": devices,
        "rows": rows,
        "has_affinity": bool(topology.get("cpu_affinity") or topology.get("numa_affinity")),
    }


GRAPH_SIZE = 440
GRAPH_NODE_RADIUS = 26


def topology_graph(facts: Mapping[str, Any]) -> dict[str, Any] | None:
    """The GPUs on a circle and their links, as coordinates for an inline SVG: NVLink pairs as thick green lines
    labelled with their bonded links, the other paths as thin dashed lines coloured by kind."""
    topology = facts.get("topology") or {}
    indices = sorted(
        {int(g["index"]) for g in facts.get("gpus") or [] if g.get("index") is not None}
        | {int(i) for c in topology.get("connections") or [] for i in (c["a"], c["b"])}
    )
    if not indices:
        return None
    names = {g.get("index"): g.get("name") for g in facts.get("gpus") or []}
    centre = GRAPH_SIZE / 2
    radius = 0 if len(indices) == 1 else centre - GRAPH_NODE_RADIUS - 24
    places = {}
    for position, index in enumerate(indices):
        angle = -math.pi / 2 + 2 * math.pi * position / len(indices)
        places[index] = (round(centre + radius * math.cos(angle), 1), round(centre + radius * math.sin(angle), 1))
    links = {(min(p["a"], p["b"]), max(p["a"], p["b"])): p.get("links") for p in topology.get("nvlink_pairs") or []}
    edges = []
    for connection in topology.get("connections") or []:
        a, b = min(connection["a"], connection["b"]), max(connection["a"], connection["b"])
        if a not in places or b not in places:
            continue
        kind = str(connection.get("kind"))
        nvlink = (a, b) in links or link_kind_class(kind) == "link-nvlink"
        (x1, y1), (x2, y2) = places[a], places[b]
        count = links.get((a, b)) or (int(kind[2:]) if nvlink and kind[2:].isdigit() else None)
        edges.append(
            {
                "a": a,
                "b": b,
                "kind": kind,
                "nvlink": nvlink,
                "links": count,
                "class": link_kind_class(kind),
                "x1": x1,
                "y1": y1,
                "x2": x2,
                "y2": y2,
                "width": round(3 + min(count or 1, 18) / 3, 1) if nvlink else 1.5,
                # the label a third of the way along: the diameters of an even circle share their midpoint
                "label_x": round(x1 + (x2 - x1) * 0.32, 1),
                "label_y": round(y1 + (y2 - y1) * 0.32, 1),
            }
        )
    edges.sort(key=lambda e: e["nvlink"])  # NVLink drawn over the PCIe paths
    nodes = [{"index": index, "x": x, "y": y, "name": names.get(index) or ""} for index, (x, y) in places.items()]
    return {
        "size": GRAPH_SIZE,
        "node_radius": GRAPH_NODE_RADIUS,
        "nodes": nodes,
        "edges": edges,
        "has_connections": bool(edges),
        "has_nvlink": any(e["nvlink"] for e in edges),
    }


HOST_PROBED_KEYS = (
    "cpu_count",
    "cpu_model",
    "sockets",
    "numa_nodes",
    "memory_total_bytes",
    "cgroup_version",
    "python_version",
)
PACKAGE_NAMES = {
    "torch": "PyTorch",
    "vllm": "vLLM",
    "sglang": "SGLang",
    "tensorrt_llm": "TensorRT-LLM",
    "transformers": "transformers",
}


def _host_context(facts: Mapping[str, Any]) -> dict[str, Any] | None:
    host = facts.get("host")
    if not isinstance(host, Mapping) or all(host.get(key) is None for key in HOST_PROBED_KEYS):
        return None  # pasted outputs: the upload carries a host key with nothing measured in it
    container = host.get("container") if isinstance(host.get("container"), Mapping) else {}
    limit = host.get("cgroup_memory_limit_bytes")
    if limit is not None:
        limit_text = gib(limit)
    elif host.get("cgroup_memory_unlimited") is True:
        limit_text = _("no limit")
    else:
        limit_text = NO_VALUE
    if container.get("detected"):
        container_text = (
            _("yes (%(runtime)s)") % {"runtime": container["runtime"]} if container.get("runtime") else _("yes")
        )
    elif container.get("detected") is False:
        container_text = _("no")
    else:
        container_text = NO_VALUE
    packages = host.get("packages") if isinstance(host.get("packages"), Mapping) else {}
    order = [name for name in PACKAGE_NAMES if name in packages] + sorted(set(packages) - set(PACKAGE_NAMES))
    # a package is "not installed" only where the probe ran Python and asked; otherwise it is not known
    missing = _("not installed") if host.get("python_version") else NO_VALUE
    package_rows = [
        {"name": PACKAGE_NAMES.get(name, name), "version": packages[name] if packages[name] is not None else missing}
        for name in order
    ]
    cpu_model = host.get("cpu_model")
    return {
        "name": host.get("name"),
        "captured_at": host.get("captured_at"),
        "cpu": " · ".join(
            part
            for part in (
                cpu_model,
                _("%(count)s CPUs") % {"count": host["cpu_count"]} if host.get("cpu_count") else None,
                _("%(count)s socket(s)") % {"count": host["sockets"]} if host.get("sockets") else None,
            )
            if part
        )
        or NO_VALUE,
        "memory": gib(host["memory_total_bytes"]) if host.get("memory_total_bytes") else NO_VALUE,
        "numa_nodes": host.get("numa_nodes") if host.get("numa_nodes") is not None else NO_VALUE,
        "container": container_text,
        "container_evidence": ", ".join(container.get("evidence") or []),
        "memory_limit": limit_text,
        "cgroup_version": f"v{host['cgroup_version']}" if host.get("cgroup_version") else NO_VALUE,
        "python_version": host.get("python_version") or NO_VALUE,
        "packages": package_rows,
    }


def _environment_context(environment: Mapping[str, Any]) -> dict[str, Any]:
    link = environment.get("link")
    rate = environment.get("link_bytes_per_s")
    group = environment.get("tp_group")
    return {
        "memory_per_gpu": gib(environment["memory_bytes_per_gpu"])
        if environment.get("memory_bytes_per_gpu")
        else NO_VALUE,
        "memory_used_max": gib(environment["memory_used_bytes_max"])
        if environment.get("memory_used_bytes_max") is not None
        else NO_VALUE,
        "link": {"nvlink": "NVLink", "pcie": "PCIe", "xgmi": "XGMI"}.get(str(link), link) if link else NO_VALUE,
        "link_rate": _("%(value)s GB/s") % {"value": _number(rate / 1e9, decimals=1)} if rate else NO_VALUE,
        "tp_group": ", ".join(str(i) for i in group) if group else NO_VALUE,
        "tp": environment.get("tp"),
        "explanation": list(environment.get("explanation") or []),
    }


class FingerprintDetailPageView(LoginRequiredMixin, View):
    template_name = "frontend/fingerprint_detail.html"

    def get(self, request: HttpRequest, fingerprint_id: int) -> HttpResponse:
        fingerprint = _fingerprint_or_404(request, fingerprint_id)
        report = fingerprint_report(fingerprint=fingerprint)
        facts = report["facts"]
        versions = fingerprint_versions(fingerprint=fingerprint)
        version = next((n for n, row in enumerate(versions, start=1) if row.pk == fingerprint.pk), None)
        previous = versions[version - 2] if version and version > 1 else None
        findings = [
            {
                "severity": f.get("severity"),
                "severity_label": severity_label(f.get("severity")),
                "source": f.get("source"),
                "source_label": source_label(f.get("source")),
                "code": f.get("code"),
                "text": finding_text(f),
            }
            for f in report["findings"]
        ]
        context = {
            "fingerprint": fingerprint,
            "deployment": fingerprint.deployment,
            "version": version,
            "versions": [
                {"id": row.pk, "number": n, "captured_at": row.captured_at, "label": row.label}
                for n, row in enumerate(versions, start=1)
            ],
            "previous": previous,
            "findings": findings,
            "counts": _severity_counts(report["findings"]),
            "effect": _effect_context(report["effect"]),
            "environment": _environment_context(report["environment"]),
            "gpu_summary": _gpu_summary(facts),
            "gpus": _gpu_rows(facts),
            "matrix": _matrix(facts.get("topology") or {}),
            "graph": topology_graph(facts),
            "legend": link_legend(),
            "host": _host_context(facts),
            "software": [
                (_("Driver"), facts.get("driver_version")),
                (_("CUDA version of the driver"), facts.get("cuda_version")),
                (_("CUDA toolkit (nvcc)"), facts.get("cuda_toolkit_version")),
                (_("Kernel module"), facts.get("kernel_module_version")),
            ],
            "pieces": facts.get("pieces") or [],
            "raw_url": reverse("sizing:fingerprint-detail", args=[fingerprint.pk]) + "?raw=1",
        }
        return render(request, self.template_name, context)


class FingerprintDeleteView(LoginRequiredMixin, View):
    def post(self, request: HttpRequest, fingerprint_id: int) -> HttpResponse:
        fingerprint = _fingerprint_or_404(request, fingerprint_id)
        deployment_id, host = fingerprint.deployment_id, fingerprint.host
        fingerprint_delete(fingerprint=fingerprint)
        messages.success(request, _("Fingerprint of %(host)s deleted") % {"host": host})
        return HttpResponseRedirect(reverse("frontend:deployment", args=[deployment_id]))


# ---------------------------------------------------------------------------------------------------------------
# /fingerprints/diff?before=<id>&after=<id>


class FingerprintDiffPageView(LoginRequiredMixin, View):
    template_name = "frontend/fingerprint_diff.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        organisation = _organisation(request)
        choices = _compare_choices(organisation)
        context: dict[str, Any] = {"compare_choices": choices, "problems": []}
        found: dict[str, Fingerprint] = {}
        status = 200
        for key, words in (("before", _("Before")), ("after", _("After"))):
            raw = request.GET.get(key, "").strip()
            context[f"compare_{key}"] = int(raw) if raw.isdigit() else None
            if not raw:
                continue
            row = (
                fingerprint_get_for_organisation(organisation=organisation, fingerprint_id=int(raw))
                if raw.isdigit()
                else None
            )
            if row is None:
                context["problems"].append(
                    _("%(side)s: there is no fingerprint %(id)s in your organisation") % {"side": words, "id": raw}
                )
                status = 404
            else:
                found[key] = row
        if context["compare_after"] is None and choices:  # the organisation's two newest by default
            context["compare_after"] = choices[0]["id"]
        if context["compare_before"] is None and len(choices) > 1:
            context["compare_before"] = choices[1]["id"]
        if context["problems"]:
            return render(request, self.template_name, context, status=status)
        if len(found) < 2:
            if found or request.GET:
                context["problems"].append(_("Choose two fingerprints to compare"))
                status = 400
            return render(request, self.template_name, context, status=status)
        before, after = found["before"], found["after"]
        report = fingerprint_diff_report(before=before, after=after)
        versions = _versioned([*fingerprint_versions(fingerprint=before), *fingerprint_versions(fingerprint=after)])
        changes = [
            {
                "area": area_label(c.get("area")),
                "what": change_key_label(c),
                "where": (
                    f"GPU {c['gpu']}"
                    if c.get("gpu") is not None
                    else f"GPU {c['pair'][0]} ↔ GPU {c['pair'][1]}"
                    if c.get("pair")
                    else NO_VALUE
                ),
                "before": change_value(c, "before"),
                "after": change_value(c, "after"),
                "severity": c.get("severity"),
                "severity_label": severity_label(c.get("severity")),
                "code": c.get("code"),
                "text": change_text(c),
            }
            for c in report["changes"]
        ]
        context.update(
            {
                "before": before,
                "after": after,
                "before_version": versions.get(before.pk),
                "after_version": versions.get(after.pk),
                "same": report["same"],
                "summary": diff_summary(report["changes"]),
                "changes": changes,
                "counts": _severity_counts(report["changes"]),
            }
        )
        return render(request, self.template_name, context)
