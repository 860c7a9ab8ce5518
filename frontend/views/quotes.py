"""The quote page for sales people: a model, the customer's traffic, SLOs and the GPU types allowed; its script posts
a quote to the API, follows the job and shows the cheapest deployments meeting the SLOs, with their costs, and why
the cheaper ones do not."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.mixins import LoginRequiredMixin
from django.utils.translation import gettext as _
from django.views.generic import TemplateView

from frontend.views.estimates import (
    PERFORMANCE_DEFAULT_TPOT_MS,
    PERFORMANCE_DEFAULT_TTFT_S,
    SEARCH_WEIGHT_FORMATS,
    SLO_PERCENTILES,
    engine_label_map,
    engine_name_map,
    profile_choices,
    select_choices,
    sizing_form_context,
    weight_format_choices,
)
from sizing.estimator.engines import ENGINE_CHOICES
from sizing.services.estimates import organisation_for_user
from sizing.services.quotes import QUOTE_DEFAULT_MAX_GPUS, QUOTE_DEFAULT_TOP, QUOTE_MAX_GPUS, QUOTE_MAX_TOP

QUOTE_DEFAULT_RATE_PER_S = 1.0
QUOTE_DEFAULT_INPUT_TOKENS = 1000
QUOTE_DEFAULT_OUTPUT_TOKENS = 200


def quote_page_strings() -> dict[str, Any]:
    """Every string the quote page's script shows, translated into the active language."""
    return {
        "network_error": _("The server could not be reached; please try again"),
        "download_plot": _("Download plot as a PNG"),
        "engine_names": engine_name_map(),
        "quote_number": _("Quote {id}"),
        "running": _("Running…"),
        "status_queued": _("Waiting for a worker…"),
        "queued_long": _("No worker has taken the job yet: please check that a worker serves the simulations queue"),
        "status_running": _("Running…"),
        "status_done": _("Done"),
        "status_failed": _("Failed"),
        "progress_candidate": _("Candidate {done} of {total}"),
        "progress_parts": _("Part {done} of {total} finished"),
        "start_failed": _("The quote could not be started"),
        "job_failed": _("The quote failed"),
        "poll_failed": _("The job's progress could not be read"),
        "ms_value": _("{value} ms"),
        "usd_per_hour_value": _("{value}/h"),
        "rate_value": _("{value} requests/s"),
        "tokens_value": _("{value} tokens"),
        "candidate_label": _(
            "{gpus} × {gpu_name} · TP {tp} × {replicas} replica(s) · {engine} · weights {weights} · KV {kv_dtype}"
        ),
        "deployment_summary": _("{gpus} × {gpu_name} · TP {tp} × {replicas} replica(s) · {engine}"),
        "weights_value": _("weights {value}"),
        "reason_over": _("{metric} P{percentile} {value} s > {limit} s"),
        "reason_rejected": _("{count} of {requests} requests rejected or failed"),
        "reason_does_not_fit": _("Does not fit: {detail}"),
        "reason_cannot_run": _("Cannot run: {detail}"),
        "metric_ttft": _("TTFT"),
        "metric_tpot": _("TPOT"),
        "metric_e2e": _("E2E"),
        "quote_summary": _(
            "{offers} offer(s) from {candidates} deployments sized: {fitting} fit in memory, {meeting} meet the SLOs"
        ),
        "quote_cheapest": _("Cheapest: {label}, {cost}, {per_million} per million tokens"),
        "quote_none": _(
            "No deployment meets the SLOs at this load: allow more GPUs or other GPU types, or relax the SLOs"
        ),
        "cheaper": _("Cheaper than the best offer"),
        "chart_offers": _("Offers"),
        "chart_rejected": _("Not offered"),
        "latency_head": _("{metric} P{percentile} (ms)"),
        "assumption_prices": _(
            "Prices are list prices from the GPU catalog, in USD per GPU-hour: no discounts, no "
            "host, network, storage or staff costs."
        ),
        "assumption_requests": _("Each deployment was simulated with {requests} requests at {rate}."),
        "assumption_profile": _(
            "Traffic: the workload profile “{name}” at its busiest hour ({hour}:00), a mean "
            "of {input} input and {output} output tokens per request."
        ),
        "assumption_lengths": _("Traffic: {input} input and {output} output tokens per request."),
        "assumption_tokens": _(
            "{tokens} tokens per hour (input and output); cost per million tokens = the cost per "
            "hour ÷ the tokens of an hour in millions."
        ),
        "assumption_gpus": _("GPU counts tried: 1 to {max}; tensor parallel sizes: {tps}."),
    }


class QuotePageView(LoginRequiredMixin, TemplateView):
    """A quote for a customer: the script posts it to the quotes API and polls it until the worker is done."""

    template_name = "frontend/quotes.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        form = sizing_form_context(self.request.user)
        context.update(
            form,
            priced_gpus=[gpu for gpu in form["gpus"] if gpu.price_per_hour_usd is not None],
            unpriced_gpus=[gpu for gpu in form["gpus"] if gpu.price_per_hour_usd is None],
            engine_choices=select_choices(ENGINE_CHOICES, engine_label_map()),
            weight_choices=[c for c in weight_format_choices() if c["value"] in SEARCH_WEIGHT_FORMATS],
            profiles=profile_choices(organisation_for_user(user=self.request.user)),
            slo_percentiles=SLO_PERCENTILES,
            default_rate=QUOTE_DEFAULT_RATE_PER_S,
            default_input_tokens=QUOTE_DEFAULT_INPUT_TOKENS,
            default_output_tokens=QUOTE_DEFAULT_OUTPUT_TOKENS,
            default_ttft_s=PERFORMANCE_DEFAULT_TTFT_S,
            default_tpot_ms=PERFORMANCE_DEFAULT_TPOT_MS,
            default_max_gpus=QUOTE_DEFAULT_MAX_GPUS,
            max_gpus=QUOTE_MAX_GPUS,
            default_top=QUOTE_DEFAULT_TOP,
            max_top=QUOTE_MAX_TOP,
            i18n_strings=quote_page_strings(),
        )
        return context
