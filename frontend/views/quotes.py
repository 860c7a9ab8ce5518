"""The quote page for sales people: a model, the customer's traffic, SLOs and the GPU types allowed; its script posts
a quote to the API, follows the job and shows the cheapest deployments meeting the SLOs, with their costs, and why
the cheaper ones do not."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.mixins import LoginRequiredMixin
from django.views.generic import TemplateView

from frontend.presenters.labels import page_labels
from frontend.views.estimates import (
    PERFORMANCE_DEFAULT_TPOT_MS,
    PERFORMANCE_DEFAULT_TTFT_S,
    SEARCH_WEIGHT_FORMATS,
    SLO_PERCENTILES,
    engine_label_map,
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
            labels=page_labels(),
        )
        return context
