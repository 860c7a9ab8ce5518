"""`manage.py simulator_register [--url URL] [--model NAME] [--organisation NAME]`: register the bundled simulator
(`manage.py simserve`, started by `make run` on port 8001) as an endpoint of the demo organisation, so a new user's
first load test works out of the box."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from benchmarks_app.services.endpoints import simulator_endpoint_ensure
from sizing.estimator.errors import SizingError
from sizing.models import Deployment, Gpu, LlmModel, Organisation
from sizing.services.deployments import deployment_create

DEMO_DEPLOYMENT = "Demo · simulated deployment"
# a chat service: the first token within 2 s, then ~7 tokens/s (reading speed)
DEMO_SLO = {"ttft_ms": 2000.0, "tpot_ms": 150.0}


class Command(BaseCommand):
    help = "Register the bundled simulator as an endpoint of the demo organisation."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default=settings.SIZING_SIMULATOR_URL, help="the simulator's base URL")
        parser.add_argument("--model", default=settings.SIZING_SIMULATOR_MODEL, help="the model it serves")
        parser.add_argument("--organisation", default=settings.SIZING_DEMO_ORGANISATION)

    def handle(self, *args: Any, **options: Any) -> None:
        organisation = Organisation.objects.filter(name=options["organisation"]).first()
        if organisation is None:
            raise CommandError(f"no organisation {options['organisation']!r}: run `manage.py demo_setup` first")
        try:
            endpoint, created = simulator_endpoint_ensure(
                organisation=organisation, base_url=options["url"], model_name=options["model"]
            )
        except SizingError as error:
            raise CommandError(error.message) from None
        model = LlmModel.objects.filter(slug=options["model"], organisation__isnull=True).first()
        gpu = Gpu.objects.filter(slug=settings.SIZING_SIMULATOR_GPU).first()
        if (
            model is not None
            and gpu is not None
            and not Deployment.objects.filter(organisation=organisation, name=DEMO_DEPLOYMENT).exists()
        ):
            deployment_create(
                organisation=organisation,
                user=None,
                data={
                    "name": DEMO_DEPLOYMENT,
                    "customer": "Demo",
                    "model": model,
                    "gpu": gpu,
                    "gpu_count": 1,
                    "tp": 1,
                    "engine": "vllm",
                    "slo": DEMO_SLO,
                    "notes": "The deployment the bundled simulator serves: load-test it from the Load tests page.",
                },
            )
        verb = "registered" if created else "updated"
        self.stdout.write(
            self.style.SUCCESS(
                f"simulator endpoint {verb}: {endpoint.name} at {endpoint.base_url} (model {endpoint.model_name})"
            )
        )
