"""The load tests' scrape-time metric at /metrics: `sizing_loadtests_active{status}` (sizing.kernel.observability's
docstring lists every metric). BenchmarksAppConfig.ready adds it to the scrape registry with `scrape_collector_add`,
so that sizing, the lower layer, never imports this app."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator

from django.db.models import Count
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from benchmarks_app.models import LoadTest
from sizing.kernel.observability import error_text

logger = logging.getLogger(__name__)


class LoadTestsCollector(Collector):
    """Load tests queued and running, counted in the database when scraped."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("sizing_loadtests_active", "Load tests queued or running", labels=["status"])
        counts = dict.fromkeys((LoadTest.Status.QUEUED, LoadTest.Status.RUNNING), math.nan)
        try:
            found = dict(
                LoadTest.objects.filter(status__in=list(counts))
                .order_by()
                .values_list("status")
                .annotate(n=Count("pk"))
                .values_list("status", "n")
            )
            counts = {status: float(found.get(status, 0)) for status in counts}
        except Exception as exc:  # NaN rather than a failed scrape
            logger.warning("active load tests not counted: %s", error_text(exc))
        for status, count in counts.items():
            family.add_metric([str(status)], count)
        yield family
