"""The server's Prometheus metrics, scraped during a run (issue 7): KV-cache usage, running and waiting requests,
preemptions and GPU memory over time, on the same clock as the requests.

`MetricsScraper` GETs `MetricsSpec.url` every `interval_s` with its own httpx client (the plan's TLS settings and
API key header, a timeout of min(interval, 5 s)): the first scrape at the run's t = 0, then at t = k·interval (a
tick missed by a slow scrape is skipped, never caught up), the last right after the run stops so its end state is
seen. Each scrape becomes a `ScrapeSample`:

- `t_s`: seconds from the run's t = 0 on its monotonic clock, when the GET was sent (the requests' `t_send_s`
  share that zero); `time`: the same moment in POSIX seconds (the run's wall-clock anchor + `t_s`);
- `text`: only the exposition lines of the metrics a timeline reads (`KEPT_METRICS`: vLLM, SGLang, TGI,
  TensorRT-LLM and DCGM names, `process_start_time_seconds`); HELP/TYPE lines, histograms and everything else are
  dropped, which keeps a result small (a vLLM scrape of ~100 kB becomes a few hundred bytes);
- `error`: why a scrape failed (connection refused, a non-200 status, no answer in time). A failed scrape never
  stops the run and is never read as zeros: it is a gap in the timeline.

The scraper runs in the run's event loop; a scrape costs one small HTTP exchange and a line filter (well under a
millisecond for a large exposition), so it does not disturb the requests' timings. Parsing the scrapes into a
timeline happens later, in the importer (`benchmarks_app.results.timeline.parse_scrape_records`). No Django here: this
module ships in the load generator's wheel.

>>> keep_known_lines('# HELP vllm:num_requests_running x\\nvllm:num_requests_running{engine="0"} 3\\nother 1\\n')
'vllm:num_requests_running{engine="0"} 3\\n'
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import httpx

from llm_sizing_loadgen.plan import MetricsSpec

logger = logging.getLogger(__name__)

MAX_SCRAPE_TIMEOUT_S = 5.0  # a scrape that takes longer tells nothing the next one will not
ERROR_BODY_CHARS = 200  # of a non-200 answer, kept in the error

# Every metric name `benchmarks_app.results.timeline` reads from a Prometheus exposition (a test keeps the two in step;
# the timeline module is not imported here because the wheel ships without it).
KEPT_METRICS: frozenset[str] = frozenset(
    {
        # vLLM
        "vllm:kv_cache_usage_perc",
        "vllm:gpu_cache_usage_perc",
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
        "vllm:num_preemptions_total",
        "vllm:num_preemptions",
        "vllm:generation_tokens_total",
        # SGLang
        "sglang:token_usage",
        "sglang:num_running_reqs",
        "sglang:num_queue_reqs",
        # TGI (no KV-cache gauge exists)
        "tgi_queue_size",
        "tgi_batch_current_size",
        # TensorRT-LLM: trtllm-serve, and the Triton backend's labelled families
        "trtllm_kv_cache_utilization",
        "trtllm_num_requests_running",
        "trtllm_num_requests_waiting",
        "trtllm_generation_tokens_total",
        "trtllm_kv_cache_used_blocks",
        "trtllm_kv_cache_max_blocks",
        "nv_trt_llm_kv_cache_block_metrics",
        "nv_trt_llm_request_metrics",
        # DCGM exporter
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_FB_FREE",
        "DCGM_FI_DEV_FB_RESERVED",
        "DCGM_FI_DEV_FB_TOTAL",
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_XID_ERRORS",
        # a restart shows as a new process start time
        "process_start_time_seconds",
    }
)


@dataclass(frozen=True, kw_only=True)
class ScrapeSample:
    """One scrape: when (`t_s` on the run's clock, `time` POSIX seconds), and the kept lines or the error.

    >>> ScrapeSample(t_s=1.0, time=1767225601.0, text=None, error="HTTP 503").ok
    False
    """

    t_s: float
    time: float
    text: str | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def keep_known_lines(text: str) -> str:
    """The sample lines of `KEPT_METRICS` in an exposition, each ending with a newline ("" when there is none)."""
    kept: list[str] = []
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        brace = line.find("{")
        name = line[:brace] if brace >= 0 else line.split(None, 1)[0]
        if name in KEPT_METRICS:
            kept.append(line)
    return "".join(line + "\n" for line in kept)


def scrape_timeout_s(interval_s: float) -> float:
    """A scrape's timeout: its interval, at most 5 s (the next scrape is due then).

    >>> scrape_timeout_s(1.0), scrape_timeout_s(30.0)
    (1.0, 5.0)
    """
    return min(interval_s, MAX_SCRAPE_TIMEOUT_S)


def _failure(error: Exception, timeout_s: float) -> str:
    if isinstance(error, httpx.TimeoutException):
        return f"no answer within {timeout_s:g} s ({type(error).__name__})"
    if isinstance(error, httpx.ConnectError):
        return f"cannot connect: {error or type(error).__name__}"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


class MetricsScraper:
    """Scrapes `spec.url` from `start()` until `stop()`; `samples` holds every scrape in order. Made before the run's
    clock starts (building an httpx client costs a fraction of a millisecond that would land in the first requests'
    schedule lag); `start(t0_ns=, wall_t0_s=)` gives the run's zero on `clock` (monotonic nanoseconds) and the same
    moment in POSIX seconds.

    `headers` are sent with every GET (the API key's Authorization, if any: never recorded); `verify` is the plan's
    TLS setting; `transport` replaces the network (tests); `on_sample(ScrapeSample)` is called after each scrape
    (exceptions logged, not raised).
    """

    def __init__(
        self,
        spec: MetricsSpec,
        *,
        clock: Callable[[], int] = time.perf_counter_ns,
        headers: Mapping[str, str] | None = None,
        verify: ssl.SSLContext | bool = True,
        transport: httpx.AsyncBaseTransport | None = None,
        on_sample: Callable[[ScrapeSample], None] | None = None,
    ) -> None:
        self.spec = spec
        self.samples: list[ScrapeSample] = []
        self._t0_ns = 0
        self._wall_t0_s = 0.0
        self._clock = clock
        self._timeout_s = scrape_timeout_s(spec.interval_s)
        self._on_sample = on_sample
        self._http = httpx.AsyncClient(
            transport=transport,
            verify=verify,
            headers=dict(headers or {}),
            timeout=httpx.Timeout(self._timeout_s),
            follow_redirects=True,
        )
        self._task: asyncio.Task[None] | None = None

    def start(self, *, t0_ns: int, wall_t0_s: float) -> None:
        """Begin scraping in the running event loop: the first scrape at once, then every interval after `t0_ns`."""
        if self._task is None:
            self._t0_ns = t0_ns
            self._wall_t0_s = wall_t0_s
            self._task = asyncio.get_running_loop().create_task(self._every_interval())

    async def stop(self, *, final: bool = True) -> None:
        """Stop scraping (a scrape in flight is dropped, not recorded), take one last scrape unless `final` is
        False, and close the client."""
        try:
            if self._task is not None:
                self._task.cancel()
                await asyncio.gather(self._task, return_exceptions=True)
            if final:
                await self.scrape()
        finally:
            await self._http.aclose()

    async def scrape(self) -> ScrapeSample:
        """One scrape, recorded in `samples` (a failure too) and passed to `on_sample`."""
        sent_ns = self._clock()
        t_s = (sent_ns - self._t0_ns) / 1e9
        text: str | None = None
        error: str | None = None
        try:
            response = await self._http.get(self.spec.url, headers={"Accept": "text/plain"})
        except httpx.HTTPError as failure:
            error = _failure(failure, self._timeout_s)
        else:
            if response.status_code != 200:
                snippet = " ".join(response.text[:ERROR_BODY_CHARS].split())
                error = f"HTTP {response.status_code}" + (f": {snippet}" if snippet else "")
            else:
                text = keep_known_lines(response.text)
        sample = ScrapeSample(t_s=round(t_s, 6), time=round(self._wall_t0_s + t_s, 6), text=text, error=error)
        self.samples.append(sample)
        if self._on_sample is not None:
            try:
                self._on_sample(sample)
            except Exception:
                logger.exception("the on_scrape callback failed")
        return sample

    async def _every_interval(self) -> None:
        interval_ns = round(self.spec.interval_s * 1e9)
        tick = 0
        await asyncio.sleep(0)  # the requests due at t = 0 go first; this scrape follows within the same moment
        while True:
            await self.scrape()
            # the next tick still ahead: a scrape slower than the interval skips ticks rather than bunching them
            tick = max(tick + 1, (self._clock() - self._t0_ns) // interval_ns + 1)
            due = self._t0_ns + tick * interval_ns
            delay = (due - self._clock()) / 1e9
            while delay > 0:
                await asyncio.sleep(delay)
                delay = (due - self._clock()) / 1e9


def scrape_counts(samples: list[ScrapeSample]) -> tuple[int, int]:
    """(scrapes taken, of which failed).

    >>> scrape_counts([ScrapeSample(t_s=0, time=0, text=""), ScrapeSample(t_s=1, time=1, text=None, error="x")])
    (2, 1)
    """
    return len(samples), sum(1 for sample in samples if not sample.ok)
