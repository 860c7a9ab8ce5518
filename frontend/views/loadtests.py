"""Server-rendered pages of load tests (issue 7): the list with a "New load test" form, and a test's page with its
progress, shards, verdict and the servers' metrics over time. Every read is scoped to the user's organisation
(another organisation's id is a 404; anonymous users are sent to sign in); the writes go through
benchmarks_app.services.loadtests, the same as the API.

The form posts to the list: `loadtest_create` either refuses (the page again, status 400, each reason under its field
in the active language where its words are known here, nothing saved) or queues the test, and the browser goes to
its page. The page script (loadtests.js) fills a deployment's SLOs, peak concurrency and committed memory from
/api/v1/load-tests/defaults, follows a running test every second through /api/v1/load-tests/ID/ and, once it has
ended, swaps in the page's verdict and draws the servers' KV-cache usage and requests (benchmarks.js's chart)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import View

from benchmarks_app.models import LoadTest
from benchmarks_app.selectors.endpoints import endpoint_list_for_organisation
from benchmarks_app.selectors.loadtests import (
    loadtest_get_for_organisation,
    loadtest_list_for_organisation,
    loadtest_progress,
)
from benchmarks_app.services.loadtests import loadtest_cancel, loadtest_create, loadtest_delete
from frontend.presenters.labels import page_labels
from frontend.views.benchmarks import (
    load_text,
    number_text,
    run_verdict_context,
    slo_summary,
    verdict_label,
)
from frontend.views.memory_logs import gib
from sizing.estimator.errors import SizingError
from sizing.models import Organisation
from sizing.selectors.deployments import deployment_list_for_organisation
from sizing.services.estimates import organisation_for_user
from sizing.texts.findings import NO_VALUE

GIB = 2**30
LIST_LIMIT = 200  # tests the list shows (newest first)
PLAN_COMMAND = "python -m llm_sizing_loadgen run plan.json --out result.json"
SLO_KEYS = ("ttft_ms", "tpot_ms", "e2e_ms")
# the service's field names → the form's
SERVICE_FIELDS = {
    "ttft_ms": "slo_ttft_ms",
    "tpot_ms": "slo_tpot_ms",
    "e2e_ms": "slo_e2e_ms",
    "committed_bytes_per_gpu": "committed_gib_per_gpu",
    "max_requests": "duration_s",
}
TIME_FORMAT = "%Y-%m-%d %H:%M:%S UTC"


# ---------------------------------------------------------------------------------------------------------------
# Words


def scenario_words() -> dict[str, tuple[str, str]]:
    """Each scenario → (its name, what it does and when it passes), in the active language (the figures are
    benchmarks_app.loadtests.scenarios.SHAPES')."""
    return {
        "pulse": (
            _("Pulse"),
            _(
                "Half the peak concurrency arrives within 10 s and is held for 3 minutes. Passes when "
                "at least 99% of the requests meet the SLOs, none fails, and the memory checks "
                "pass."
            ),
        ),
        "long_tail": (
            _("Long tail"),
            _(
                "A tenth of the peak concurrency for 10 minutes, one request in ten carrying "
                "4,096 input tokens. Passes when at least 99% of the requests meet the SLOs, "
                "none fails, and the memory checks pass."
            ),
        ),
        "failure": (
            _("Failure injection"),
            _(
                "Half the peak concurrency for 2 minutes, a worker killed a third of "
                "the way in (on the bundled simulator, one replica; elsewhere, the "
                "endpoint's failure command). Passes when requests succeed again "
                "within 30 s of the failure and at least 99% of the requests outside "
                "the outage meet the SLOs."
            ),
        ),
        "custom": (
            _("Custom load"),
            _(
                "Your own load: a number of concurrent clients (closed loop) or a request "
                "rate (open loop), for a duration. Passes when at least 99% of the requests "
                "meet the SLOs."
            ),
        ),
    }


def status_label(status: str) -> str:
    return {
        "queued": _("Queued"),
        "running": _("Running"),
        "done": _("Done"),
        "cancelled": _("Cancelled"),
        "failed": _("Failed"),
    }.get(status, status)


# ---------------------------------------------------------------------------------------------------------------
# The form


class LoadTestForm(forms.Form):
    """Typed input; loadtest_create checks the rest (the endpoint and deployment are the organisation's, the
    scenario's plan, the duration limit, the workers)."""

    name = forms.CharField(max_length=255, required=False, label=gettext_lazy("Name"))
    endpoint = forms.IntegerField(
        min_value=1,
        label=gettext_lazy("Endpoint"),
        error_messages={"required": gettext_lazy("Choose the endpoint to test")},
    )
    scenario = forms.ChoiceField(
        choices=LoadTest.Scenario.choices, initial=LoadTest.Scenario.PULSE, label=gettext_lazy("Scenario")
    )
    deployment = forms.IntegerField(min_value=1, required=False, label=gettext_lazy("Deployment"))
    peak_concurrency = forms.IntegerField(
        min_value=1, max_value=1_000_000, required=False, label=gettext_lazy("Peak concurrency")
    )
    slo_ttft_ms = forms.FloatField(min_value=0.001, required=False, label=gettext_lazy("TTFT limit (ms)"))
    slo_tpot_ms = forms.FloatField(min_value=0.001, required=False, label=gettext_lazy("TPOT limit (ms)"))
    slo_e2e_ms = forms.FloatField(min_value=0.001, required=False, label=gettext_lazy("E2E limit (ms)"))
    committed_gib_per_gpu = forms.FloatField(
        min_value=0.001, max_value=1_000_000, required=False, label=gettext_lazy("Committed memory per GPU (GiB)")
    )
    # the deployment's exact figure behind the GiB shown (two decimals lose up to 5 MiB: enough to turn a peak
    # equal to the commitment into a violation); used while the GiB field still shows it
    committed_bytes_per_gpu = forms.IntegerField(min_value=1, required=False, widget=forms.HiddenInput)
    input_tokens = forms.IntegerField(
        min_value=1, max_value=1_000_000, required=False, initial=512, label=gettext_lazy("Input tokens per request")
    )
    output_tokens = forms.IntegerField(
        min_value=1, max_value=100_000, required=False, initial=128, label=gettext_lazy("Output tokens per request")
    )
    workers = forms.IntegerField(
        min_value=1, max_value=settings.LOADTEST_MAX_WORKERS, required=False, initial=1, label=gettext_lazy("Workers")
    )
    scale = forms.FloatField(
        min_value=0.001, max_value=1.0, required=False, initial=1.0, label=gettext_lazy("Time scale")
    )
    concurrency = forms.IntegerField(
        min_value=1, max_value=100_000, required=False, label=gettext_lazy("Concurrent clients")
    )
    rate = forms.FloatField(
        min_value=0.001, max_value=100_000, required=False, label=gettext_lazy("Request rate (requests/s)")
    )
    duration_s = forms.FloatField(
        min_value=1, max_value=settings.LOADTEST_MAX_DURATION_S, required=False, label=gettext_lazy("Duration (s)")
    )

    def service_data(self) -> dict[str, Any]:
        """The cleaned form as loadtest_create's `data` (committed memory in bytes; no SLO given: the deployment's)."""
        values = self.cleaned_data
        data: dict[str, Any] = {
            "endpoint": values["endpoint"],
            "scenario": values["scenario"],
            "deployment": values.get("deployment"),
            "name": values.get("name") or "",
            "peak_concurrency": values.get("peak_concurrency"),
            "workers": values.get("workers") or 1,
            "scale": values.get("scale") or 1.0,
            "input_tokens": values.get("input_tokens"),
            "output_tokens": values.get("output_tokens"),
        }
        slo = {key: values[f"slo_{key}"] for key in SLO_KEYS if values.get(f"slo_{key}") is not None}
        if slo:
            data["slo"] = slo
        committed = values.get("committed_gib_per_gpu")
        exact = values.get("committed_bytes_per_gpu")
        if committed and exact and round(exact / GIB, 2) == round(committed, 2):
            data["committed_bytes_per_gpu"] = exact  # the deployment's figure, as the GiB field shows it rounded
        elif committed:
            data["committed_bytes_per_gpu"] = round(committed * GIB)
        if values["scenario"] == LoadTest.Scenario.CUSTOM:
            data.update(
                concurrency=values.get("concurrency"), rate=values.get("rate"), duration_s=values.get("duration_s")
            )
        return data


_REFUSALS: tuple[tuple[re.Pattern[str], Callable[[Mapping[str, str]], str]], ...] = (
    (
        re.compile(r"^no endpoint .* is registered in your organisation"),
        lambda m: _(
            "Choose one of your organisation's registered endpoints: load tests reach registered endpoints only"
        ),
    ),
    (re.compile(r"^no deployment "), lambda m: _("Choose one of your organisation's deployments")),
    (
        re.compile(r"^give the deployment's peak concurrency"),
        lambda m: _(
            "Give the deployment's peak concurrency (the scenarios load a share of it), or choose a "
            "deployment whose estimate gives it"
        ),
    ),
    (
        re.compile(r"^a custom load needs a concurrency"),
        lambda m: _("A custom load needs a number of concurrent clients (closed loop) or a request rate (open loop)"),
    ),
    (re.compile(r"^a custom load needs a duration"), lambda m: _("A custom load needs a duration")),
    (
        re.compile(r"^the test would last (?P<total>[\d.e+]+) s; the limit is (?P<limit>[\d.e+]+) s"),
        lambda m: _("The test would last %(total)s s; the limit is %(limit)s s: lower the time scale or the duration")
        % {"total": number_text(float(m["total"])), "limit": number_text(float(m["limit"]))},
    ),
    (
        re.compile(
            r"^a failure-injection test needs a way to cause the failure: .* on endpoint "
            r"(?P<quote>['\"])(?P<name>.*)(?P=quote) "
        ),
        lambda m: _(
            "A failure-injection test needs a way to cause the failure: an admin registers the command that "
            "kills a worker or drops a replica on the endpoint %(name)s (its failure command, on the "
            "Endpoints page); the bundled simulator needs none"
        )
        % {"name": m["name"]},
    ),
)


def refusal_text(message: str) -> tuple[str, bool]:
    """A service refusal in the active language where its words are known here: (text, translated)."""
    for pattern, words in _REFUSALS:
        match = pattern.match(message)
        if match:
            return words(match.groupdict()), True
    return message, False


def _service_error(form: LoadTestForm, error: SizingError) -> bool:
    """The refusal under its field (the form's name for it); returns whether it was translated."""
    fields = (error.extra or {}).get("fields") or {}
    field = next(iter(fields), None)
    field = SERVICE_FIELDS.get(str(field), field)
    text, translated = refusal_text(error.message)
    form.add_error(field if field in form.fields else None, text)
    return translated


# ---------------------------------------------------------------------------------------------------------------
# Shared pieces


def _organisation(request: HttpRequest) -> Organisation:
    return organisation_for_user(user=request.user)


def _job_or_404(request: HttpRequest, job_id: int) -> LoadTest:
    job = loadtest_get_for_organisation(organisation=_organisation(request), job_id=job_id)
    if job is None:
        raise Http404(_("No such load test"))
    return job


def _time(value: Any) -> str:
    return value.strftime(TIME_FORMAT) if value else NO_VALUE


def _fraction(job: LoadTest) -> float | None:
    """How far the test is, from its shards' progress (the slowest shard's fraction of its bounds)."""
    if job.status in LoadTest.FINAL:
        return 1.0
    shards = list(job.shards.all())
    known = [(shard.progress or {}).get("fraction") for shard in shards]
    if not shards or any(not isinstance(value, int | float) for value in known):
        return None
    return max(0.0, min(1.0, float(min(known))))


def _percent(fraction: float | None) -> int:
    return round((fraction or 0.0) * 100)


def _verdict_of(job: LoadTest) -> str:
    return str((job.verdict or {}).get("verdict") or "")


def _list_row(job: LoadTest) -> dict[str, Any]:
    words = scenario_words()
    verdict = _verdict_of(job)
    return {
        "job": job,
        "scenario": words.get(job.scenario, (job.scenario, ""))[0],
        "status_label": status_label(job.status),
        "percent": _percent(_fraction(job)),
        "verdict": verdict,
        "verdict_label": verdict_label(verdict) if verdict else "",
        "partial": bool((job.verdict or {}).get("partial")),
        "created": _time(job.created_at),
    }


def progress_context(progress: Mapping[str, Any]) -> dict[str, Any]:
    """The progress figures as the page shows them (loadtests.js writes the same ones as they change)."""
    live = progress.get("live") or {}
    fraction = progress.get("fraction")
    return {
        "done": number_text(progress.get("done") or 0),
        "sent": number_text(progress.get("sent") or 0),
        "ok": number_text(progress.get("ok") or 0),
        "failed": number_text(progress.get("failed") or 0),
        "failed_value": progress.get("failed") or 0,
        "in_flight": number_text(progress.get("in_flight") or 0),
        "stored": number_text(progress.get("stored") or 0),
        "rate": _("%(value)s requests/s") % {"value": f"{float(progress.get('rate_per_s') or 0):,.1f}"},
        "elapsed": _("%(value)s s") % {"value": f"{float(progress.get('elapsed_s') or 0):,.1f}"},
        "ttft": _("%(p50)s / %(p99)s ms")
        % {"p50": number_text(live.get("ttft_p50_ms"), "ms"), "p99": number_text(live.get("ttft_p99_ms"), "ms")},
        "tpot": _("%(p50)s / %(p99)s ms")
        % {"p50": number_text(live.get("tpot_p50_ms"), "ms"), "p99": number_text(live.get("tpot_p99_ms"), "ms")},
        "percent": _percent(fraction if isinstance(fraction, int | float) else None),
        "fraction_known": isinstance(fraction, int | float),
    }


def _load_words(plan: Mapping[str, Any]) -> str:
    load = plan.get("load") or {}
    if load.get("mode") == "open" and load.get("rate") is not None:
        text = load_text({"kind": "rate", "rate": load.get("rate"), "concurrency": load.get("concurrency")})
    elif load.get("concurrency") is not None:
        text = load_text({"kind": "concurrency", "concurrency": load.get("concurrency")})
    else:
        return NO_VALUE
    ramp = load.get("ramp_up_s")
    if isinstance(ramp, int | float) and ramp > 0:
        text += " · " + _("started over %(value)s s") % {"value": number_text(ramp)}
    return text


def _requests_words(plan: Mapping[str, Any]) -> str:
    requests = plan.get("requests") or {}
    if isinstance(requests.get("input_tokens"), int) and isinstance(requests.get("output_tokens"), int):
        return _("%(input)s input and %(output)s output tokens") % {
            "input": number_text(requests["input_tokens"]),
            "output": number_text(requests["output_tokens"]),
        }
    profile = requests.get("profile") or {}
    return str(profile.get("name") or NO_VALUE) if isinstance(profile, Mapping) else NO_VALUE


def _facts(job: LoadTest) -> list[tuple[str, str]]:
    plan = job.plan or {}
    duration = (plan.get("bounds") or {}).get("max_duration_s")
    return [
        (_("Scenario"), scenario_words().get(job.scenario, (job.scenario, ""))[0]),
        (_("Endpoint"), job.endpoint_name + (f" ({job.endpoint.get_kind_display()})" if job.endpoint else "")),
        (_("Load"), _load_words(plan)),
        (
            _("Duration"),
            _("%(value)s s") % {"value": number_text(round(duration, 2))}
            if isinstance(duration, int | float) and math.isfinite(duration)
            else NO_VALUE,
        ),
        (_("Requests"), _requests_words(plan)),
        (_("Peak concurrency"), number_text(job.peak_concurrency) if job.peak_concurrency else NO_VALUE),
        (_("SLOs"), slo_summary(job.slo or {}) or _("none")),
        (_("Committed memory per GPU"), gib(job.committed_bytes_per_gpu) if job.committed_bytes_per_gpu else NO_VALUE),
        (_("Workers"), number_text(job.workers)),
        (_("Created"), _time(job.created_at) + (f" · {job.created_by.get_username()}" if job.created_by else "")),
        (_("Started"), _time(job.started_at)),
        (_("Ended"), _time(job.finished_at)),
    ]


def _shard_rows(job: LoadTest) -> list[dict[str, Any]]:
    return [
        {
            "shard": shard,
            "number": shard.index + 1,
            "status_label": status_label(shard.status),
            "worker": shard.worker or NO_VALUE,
            "heartbeat": _time(shard.heartbeat_at),
            "started": _time(shard.started_at),
            "stored": number_text(shard.stored),
            "error": shard.error,
        }
        for shard in job.shards.all()
    ]


# ---------------------------------------------------------------------------------------------------------------
# /load-tests/


class LoadTestListPageView(LoginRequiredMixin, View):
    """GET: the organisation's load tests and the form; POST: start one (its page; a refusal: this page, status 400,
    nothing saved)."""

    template_name = "frontend/loadtests.html"

    def _render(
        self, request: HttpRequest, *, form: LoadTestForm | None = None, translated: bool = True, status: int = 200
    ) -> HttpResponse:
        organisation = _organisation(request)
        jobs = list(loadtest_list_for_organisation(organisation=organisation)[: LIST_LIMIT + 1])
        form = form or LoadTestForm(initial={"scenario": LoadTest.Scenario.PULSE})
        words = scenario_words()
        chosen = str(form["scenario"].value() or LoadTest.Scenario.PULSE)
        context = {
            "rows": [_list_row(job) for job in jobs[:LIST_LIMIT]],
            "truncated": len(jobs) > LIST_LIMIT,
            "list_limit": LIST_LIMIT,
            "form": form,
            "refusal_translated": translated,
            "endpoints": list(endpoint_list_for_organisation(organisation=organisation)),
            "deployments": list(deployment_list_for_organisation(organisation=organisation)),
            "scenarios": [
                {"value": value, "label": words[value][0], "description": words[value][1], "checked": value == chosen}
                for value in LoadTest.Scenario.values
            ],
            "chosen_scenario": chosen,
            "values": {name: form[name].value() for name in form.fields},
            "max_workers": settings.LOADTEST_MAX_WORKERS,
            "running": any(job.status not in LoadTest.FINAL for job in jobs[:LIST_LIMIT]),
            "labels": page_labels(),
        }
        return render(request, self.template_name, context, status=status)

    def get(self, request: HttpRequest) -> HttpResponse:
        return self._render(request)

    def post(self, request: HttpRequest) -> HttpResponse:
        form = LoadTestForm(request.POST)
        translated = True
        if form.is_valid():
            try:
                job = loadtest_create(organisation=_organisation(request), user=request.user, data=form.service_data())
            except SizingError as error:
                translated = _service_error(form, error)
            else:
                messages.success(
                    request, _("Load test %(name)s queued: a worker starts it in a few seconds") % {"name": job.name}
                )
                return HttpResponseRedirect(reverse("frontend:load-test", args=[job.pk]))
        return self._render(request, form=form, translated=translated, status=400)


# ---------------------------------------------------------------------------------------------------------------
# /load-tests/<id>/


class LoadTestDetailPageView(LoginRequiredMixin, View):
    template_name = "frontend/loadtest_detail.html"

    def get(self, request: HttpRequest, job_id: int) -> HttpResponse:
        job = _job_or_404(request, job_id)
        final = job.status in LoadTest.FINAL
        context = {
            "job": job,
            "final": final,
            "status_label": status_label(job.status),
            "scenario": scenario_words().get(job.scenario, (job.scenario, ""))[0],
            "facts": _facts(job),
            "progress": progress_context(loadtest_progress(job=job)),
            "shards": _shard_rows(job),
            "verdict": run_verdict_context(job.verdict),
            "plan_command": PLAN_COMMAND,
            "page_data": {
                "status": job.status,
                "api_url": reverse("benchmarks:load-test-detail", args=[job.pk]),
                "run_url": reverse("benchmarks:benchmark-run-detail", args=[job.run_id]) if job.run_id else None,
            },
            "labels": page_labels(),
        }
        return render(request, self.template_name, context)


class LoadTestCancelView(LoginRequiredMixin, View):
    def post(self, request: HttpRequest, job_id: int) -> HttpResponse:
        job = _job_or_404(request, job_id)
        job = loadtest_cancel(job=job)
        if job.status in LoadTest.FINAL and job.status != LoadTest.Status.CANCELLED:
            messages.info(request, _("The test had already ended"))
        else:
            messages.success(request, _("Cancelling the test: what was measured is kept"))
        return HttpResponseRedirect(reverse("frontend:load-test", args=[job.pk]))


class LoadTestDeleteView(LoginRequiredMixin, View):
    def post(self, request: HttpRequest, job_id: int) -> HttpResponse:
        job = _job_or_404(request, job_id)
        name = job.name
        try:
            loadtest_delete(job=job)
        except SizingError:
            messages.error(request, _("Cancel the test and let it end before deleting it"))
            return HttpResponseRedirect(reverse("frontend:load-test", args=[job.pk]))
        messages.success(request, _("Load test %(name)s deleted, with its benchmark run") % {"name": name})
        return HttpResponseRedirect(reverse("frontend:load-tests"))
