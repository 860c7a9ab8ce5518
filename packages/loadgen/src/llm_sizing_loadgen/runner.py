"""The run: asyncio orchestration of a plan's requests, with bounds, cancellation, progress and client fidelity.

Loops:

- closed (`load.mode` "closed"): `concurrency` clients, each sending its next request as soon as its last one ended.
  A request's `t_sched` is the moment its client became free, so the schedule lag is the client's own overhead.
  With `ramp_up_s` the clients start evenly spread over it (client i at i·ramp/C). With `error_pause_s` a client
  whose request failed waits that long before its next one (its next t_sched is after the pause).
- open (`load.mode` "open"): the send times are computed before the run from the arrival process (Poisson,
  constant, or Poisson plus a burst; `llm_sizing_loadgen.workload.arrival_times`), ramped linearly from 0 to the rate
  over `ramp_up_s`. Each request is launched at its `t_sched` whatever the server does; with a `concurrency` cap a
  request waits for a free slot and the wait shows as schedule lag (coordinated omission is never hidden).

Bounds are hard: no request beyond `max_requests` is sent; at `max_duration_s` everything stops and requests in
flight become `incomplete_at_end` with what was measured. `cancel()` (Ctrl-C, a job's cancel) does the same at once.

With `plan.metrics` the server's Prometheus endpoint is scraped from t = 0 to right after the stop
(`scrape.MetricsScraper`); `plan.faults` are executed at their times (`faults.FaultInjector`). Both run in the same
event loop as the requests and are stopped with the run: faults not yet due are skipped, one still executing gets
2 s, then is killed.

The measurement window is [warmup_s, T_stop − cooldown_s], T_stop being when the generator stopped sending (the last
send, the duration bound, or the cancel). Client fidelity (METRICS.md) is computed over the requests sent in it:
schedule lag p50/p99 (`t_send − t_sched`), the offered rate (scheduled in the window) against the achieved send
rate, and the process's CPU use. An open loop is INVALID as a measurement of the requested load when the lag p99
exceeds 10 ms or the achieved rate is below 95% of the offered one. A closed loop has no schedule to be late for: its
load is C busy clients, so it is INVALID when the clients were idle more than 5% of their time between requests
(Σ lag / Σ (lag + E2E): their achieved concurrency below 95% of C). A closed loop's lag is the event loop handling
the other streams' tokens before the freed client sends (an engine step delivers a token to every running stream at
once): a few milliseconds at tens of streams, negligible against requests of seconds, decisive against requests of
tens of milliseconds, which is what the share measures.

Percentiles here are numpy's linear interpolation.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
import math
import os
import ssl
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import numpy as np

from llm_sizing_loadgen import TOOL_NAME, __version__
from llm_sizing_loadgen.client import (
    ClientSettings,
    Clock,
    PreparedRequest,
    RequestResult,
    Status,
    StreamClient,
)
from llm_sizing_loadgen.faults import FaultEvent, FaultInjector
from llm_sizing_loadgen.plan import LoadMode, LoadSpec, TestPlan
from llm_sizing_loadgen.prompts import PromptFactory, request_body
from llm_sizing_loadgen.scrape import MetricsScraper, ScrapeSample
from llm_sizing_loadgen.workload import ArrivalKind, ArrivalPattern, SampledRequests, arrival_times, workload_sample

logger = logging.getLogger(__name__)

SCHEDULE_LAG_LIMIT_MS = 10.0  # METRICS.md: INVALID above a 10 ms p99 schedule lag
ACHIEVED_RATE_FLOOR = 0.95  # ... or an achieved rate below 95% of the offered one
PROGRESS_INTERVAL_S = 0.5  # the progress callback is called at most this often
LIVE_SAMPLES = 2048  # recent requests behind the live percentiles
RATE_WINDOW_S = 5.0  # the live rate counts completions over this trailing window
SAMPLE_BLOCK = 1024  # requests drawn from the profile at a time
SHARD_CONNECTIONS = 8  # connections per httpx client (see _Pools)


class RunError(Exception):
    """The run cannot start (e.g. the API key's environment variable is not set)."""


@dataclass(frozen=True, kw_only=True)
class Progress:
    """What the run has done so far (for a progress bar or a job's status)."""

    elapsed_s: float
    sent: int
    done: int
    ok: int
    failed: int
    in_flight: int
    rate_per_s: float  # completions per second over the last few seconds
    ttft_p50_ms: float | None
    ttft_p99_ms: float | None
    tpot_p50_ms: float | None
    tpot_p99_ms: float | None
    max_requests: int | None
    max_duration_s: float | None

    @property
    def fraction(self) -> float | None:
        """How far along the bounds the run is (0–1), the closer bound deciding; None without bounds."""
        parts = []
        if self.max_requests:
            parts.append(self.done / self.max_requests)
        if self.max_duration_s:
            parts.append(self.elapsed_s / self.max_duration_s)
        return min(1.0, max(parts)) if parts else None


@dataclass(frozen=True, kw_only=True)
class Fidelity:
    """METRICS.md's client fidelity over the measurement window."""

    lag_n: int
    lag_p50_ms: float | None
    lag_p99_ms: float | None
    offered_rate_per_s: float | None  # open loop: requests scheduled in the window / its length
    achieved_rate_per_s: float | None  # requests sent in the window / its length
    achieved_ratio: float | None  # achieved / offered (open loop)
    cpu_percent: float | None  # the generator process's CPU time over the run's wall time
    valid: bool
    reasons: tuple[str, ...] = ()
    idle_share: float | None = None  # closed loop: Σ lag / Σ (lag + E2E), the clients' time lost to the generator


@dataclass(kw_only=True)
class RunOutcome:
    """One run (one sweep point): the per-request records and what the result document needs."""

    plan: TestPlan
    label: str
    started_at: datetime  # wall clock at t0
    t0_ns: int
    records: list[RequestResult]
    send_end_ns: int  # when the generator stopped sending
    end_ns: int  # the last request's end (or the stop)
    window_s: tuple[float, float]
    stop_reason: str  # "completed", "max_duration", "cancelled"
    fidelity: Fidelity
    notes: list[str] = field(default_factory=list)
    scrapes: list[ScrapeSample] = field(default_factory=list)  # plan.metrics: every scrape, in time order
    fault_events: list[FaultEvent] = field(default_factory=list)  # plan.faults: one event per fault, in time order

    def seconds(self, instant_ns: int) -> float:
        return (instant_ns - self.t0_ns) / 1e9


class RequestSource:
    """The plan's requests by index: lengths and class from the workload profile (deterministic per seed, drawn in
    blocks), the prompt from `PromptFactory`, the body ready to send."""

    def __init__(self, plan: TestPlan) -> None:
        self._plan = plan
        self._prompts = PromptFactory(plan.seed)
        self._blocks: dict[int, SampledRequests] = {}
        self._block(0)  # drawn now, before the run's clock starts

    def _block(self, number: int) -> SampledRequests:
        block = self._blocks.get(number)
        if block is None:
            if len(self._blocks) > 4:
                self._blocks.pop(min(self._blocks))
            block = workload_sample(
                self._plan.requests.profile,
                rate_per_s=None,
                requests=SAMPLE_BLOCK,
                seed=self._plan.seed * 1_000_003 + number,
                hour=self._plan.requests.hour,
            )
            self._blocks[number] = block
        return block

    def prepare(self, index: int) -> PreparedRequest:
        block = self._block(index // SAMPLE_BLOCK)
        at = index % SAMPLE_BLOCK
        input_tokens = int(block.input_tokens[at])
        output_tokens = int(block.output_tokens[at])
        class_index = int(block.class_index[at])
        prompt = self._prompts.text(
            index=index, class_index=class_index, input_tokens=input_tokens, prefix_tokens=int(block.prefix_tokens[at])
        )
        plan = self._plan
        body = request_body(
            api=plan.endpoint.api,
            model=plan.endpoint.model,
            prompt=prompt,
            max_tokens=output_tokens,
            stream=plan.stream,
            continuous_usage_stats=plan.continuous_usage_stats,
            ignore_eos=plan.ignore_eos,
            min_tokens=plan.min_tokens,
            extra=plan.extra_body,
        )
        return PreparedRequest(
            index=index,
            body=body,
            input_tokens_sent=input_tokens,
            output_tokens_target=output_tokens,
            class_name=block.class_names[class_index],
        )


class _Pools:
    """The run's connection pool, as httpx clients of at most SHARD_CONNECTIONS connections each.

    httpcore's pool does O(connections²) bookkeeping per request (`_assign_requests_to_connections` scans every
    connection for every connection), which at 64 connections costs more CPU than the rest of a request. So the pool
    is split: a request goes to the least busy client that has a free connection, and a client is added only when
    all are full. The total never exceeds the requests in flight (the concurrency, or the open loop's peak), no
    request ever waits for a connection, and connections are kept alive and reused within each client.
    """

    def __init__(self, factory: Callable[[], tuple[httpx.AsyncClient, StreamClient]], *, ready: int = 1) -> None:
        self._factory = factory
        self._http: list[httpx.AsyncClient] = []
        self._clients: list[StreamClient] = []
        self._busy: list[int] = []
        for _ in range(ready):
            self._add()

    def _add(self) -> int:
        http, client = self._factory()
        self._http.append(http)
        self._clients.append(client)
        self._busy.append(0)
        return len(self._busy) - 1

    def acquire(self) -> tuple[int, StreamClient]:
        best = -1
        for number, busy in enumerate(self._busy):
            if busy < SHARD_CONNECTIONS and (best < 0 or busy < self._busy[best]):
                best = number
                if busy == 0:
                    break
        if best < 0:
            best = self._add()
        self._busy[best] += 1
        return best, self._clients[best]

    def release(self, number: int) -> None:
        self._busy[number] -= 1

    async def aclose(self) -> None:
        for http in self._http:
            await http.aclose()


def _warm_imports() -> None:
    """httpcore loads its async backend (anyio) and HTTP/1.1 machinery on the first request, about 20 ms that would
    land in the first requests' schedule lag: load them before the clock starts."""
    for module in ("httpcore", "h11", "httpcore._backends.anyio", "anyio._backends._asyncio"):
        try:
            importlib.import_module(module)
        except ImportError:  # another httpcore layout: the first request pays, nothing breaks
            pass


def tls_context(plan: TestPlan) -> ssl.SSLContext | bool:
    """One TLS context for the run (building one costs ~20 ms: never per client): the plan's CA file, else
    certifi's bundle (httpx's default); False when the plan turns verification off."""
    if not plan.endpoint.tls_verify:
        return False
    if plan.endpoint.ca_file:
        try:
            return ssl.create_default_context(cafile=plan.endpoint.ca_file)
        except (OSError, ssl.SSLError) as error:
            raise RunError(f"endpoint.ca_file {plan.endpoint.ca_file}: {error}") from None
    import certifi  # httpx's own dependency

    return ssl.create_default_context(cafile=certifi.where())


def open_schedule(load: LoadSpec, *, max_requests: int | None, max_duration_s: float | None, seed: int) -> np.ndarray:
    """Send times in seconds from t0 for an open loop, sorted, within the bounds.

    The base process (Poisson or constant at `load.rate`) is warped so the rate rises linearly from 0 to the rate
    over `ramp_up_s` (an arrival at s of the steady process moves to √(2·T·s) while s < T/2, else to s + T/2: the
    expected count matches the ramped rate). Burst extras (uniform in [burst_at_s, burst_at_s + burst_window_s])
    are added unwarped.
    """
    rate = load.rate
    if rate is None:
        raise RunError("an open loop needs a rate")
    ramp = load.ramp_up_s
    burst = load.burst_requests if load.arrival is ArrivalKind.BURST else 0
    if max_requests is not None:
        count = max_requests
    else:
        assert max_duration_s is not None  # noqa: S101 - the plan has at least one bound
        expected = rate * (max_duration_s + ramp / 2)
        count = math.ceil(expected + 6 * math.sqrt(expected) + 16) + burst
    rng = np.random.default_rng([seed, 0x4152])  # "AR": arrivals apart from the lengths' stream
    burst = min(burst, count - 1)
    base_kind = ArrivalKind.CONSTANT if load.arrival is ArrivalKind.CONSTANT else ArrivalKind.POISSON
    times = arrival_times(ArrivalPattern(kind=base_kind), rate_per_s=rate, requests=count - burst, rng=rng)
    if ramp > 0:
        times = np.where(times < ramp / 2, np.sqrt(2 * ramp * np.maximum(times, 0)), times + ramp / 2)
    if burst:
        extra = load.burst_at_s + rng.random(burst) * load.burst_window_s
        times = np.sort(np.concatenate([times, extra]))
    if max_duration_s is not None:
        times = times[times < max_duration_s]
    if max_requests is not None:
        times = times[:max_requests]
    return times


def api_key_for(plan: TestPlan) -> str | None:
    """The key from the environment variable the plan names; RunError when it is named but not set."""
    name = plan.endpoint.api_key_env
    if not name:
        return None
    key = os.environ.get(name)
    if not key:
        raise RunError(f"endpoint.api_key_env names {name}, but that environment variable is not set")
    return key


class LoadRunner:
    """Runs one plan point (no sweep: see `run_plan`). Call `await run()` once; `cancel()` stops it cleanly from
    anywhere (thread-safe).

    `transport` replaces the network (tests); `clock` must be monotonic nanoseconds (tests may inject one);
    `on_progress(Progress)` is called at most every `progress_interval_s` (never more often than every 0.5 s; it
    may also be set as an attribute before `run`); `on_request(RequestResult)` after each request ends (also those
    cut by the end), e.g. to stream records into a stored run; `on_scrape(ScrapeSample)` after each scrape of
    `plan.metrics`; `on_fault(FaultEvent)` as each fault of `plan.faults` is done or skipped. Exceptions in callbacks
    are logged, not raised. `transport` also carries the scrapes and the HTTP faults.
    """

    def __init__(
        self,
        plan: TestPlan,
        *,
        label: str = "",
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock = time.perf_counter_ns,
        api_key: str | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        on_request: Callable[[RequestResult], None] | None = None,
        progress_interval_s: float = PROGRESS_INTERVAL_S,
        on_scrape: Callable[[ScrapeSample], None] | None = None,
        on_fault: Callable[[FaultEvent], None] | None = None,
    ) -> None:
        if plan.sweep is not None:
            raise RunError("LoadRunner runs one point; use run_plan for a sweep")
        self.plan = plan
        self.label = label
        self._transport = transport
        self._clock = clock
        self._api_key = api_key if api_key is not None else api_key_for(plan)
        self._verify = tls_context(plan)
        self.on_progress = on_progress
        self._on_request = on_request
        self._on_scrape = on_scrape
        self._on_fault = on_fault
        self._progress_interval_s = max(PROGRESS_INTERVAL_S, progress_interval_s)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pools: _Pools | None = None
        self._records: list[RequestResult] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._stop_reason: str | None = None
        self._cancel_requested = False
        self._send_end_ns: int | None = None
        self._next_index = 0
        self._sent = 0
        self._done = 0
        self._ok = 0
        self._failed = 0
        self._in_flight = 0
        self._ttft_ms: deque[float] = deque(maxlen=LIVE_SAMPLES)
        self._tpot_ms: deque[float] = deque(maxlen=LIVE_SAMPLES)
        self._finished_ns: deque[int] = deque()
        self._t0_ns = 0

    # -- control --------------------------------------------------------------------------------------------

    @property
    def started(self) -> bool:
        """Whether the run's clock has started (the clients are made and the collector has run before it)."""
        return self._t0_ns != 0

    def cancel(self) -> None:
        """Stop sending, cut the requests in flight (`incomplete_at_end`), keep everything measured."""
        self._cancel_requested = True
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._stop("cancelled")
        else:
            loop.call_soon_threadsafe(self._stop, "cancelled")

    def _stop(self, reason: str) -> None:
        if self._stop_reason is not None:
            return
        self._stop_reason = reason
        self._send_end_ns = self._clock()
        for task in list(self._tasks):
            task.cancel()

    # -- the run --------------------------------------------------------------------------------------------

    async def run(self) -> RunOutcome:
        """Run the plan point to its end (bounds or cancel) and return what was measured."""
        plan = self.plan
        self._loop = asyncio.get_running_loop()
        source = RequestSource(plan)
        timeout = httpx.Timeout(connect=plan.timeouts.connect_s, read=None, write=plan.timeouts.connect_s, pool=None)
        headers = {
            "Content-Type": "application/json",
            "User-Agent": f"{TOOL_NAME}/{__version__}",
            "Accept": "text/event-stream" if plan.stream else "application/json",
        }
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        schedule = None
        if plan.load.mode is LoadMode.OPEN:
            schedule = open_schedule(
                plan.load,
                max_requests=plan.bounds.max_requests,
                max_duration_s=plan.bounds.max_duration_s,
                seed=plan.seed,
            )
        settings = ClientSettings(
            stream=plan.stream,
            ignore_eos=plan.ignore_eos,
            min_tokens=plan.min_tokens,
            truncation_tolerance=plan.requests.truncation_tolerance,
            ttft_timeout_s=plan.timeouts.ttft_s,
            stream_timeout_s=plan.timeouts.stream_s,
        )

        verify = self._verify
        _warm_imports()

        def new_client() -> tuple[httpx.AsyncClient, StreamClient]:
            limits = httpx.Limits(max_connections=SHARD_CONNECTIONS, max_keepalive_connections=SHARD_CONNECTIONS)
            http = httpx.AsyncClient(
                transport=self._transport, limits=limits, timeout=timeout, headers=headers, verify=verify
            )
            return http, StreamClient(http, url=plan.endpoint.url, settings=settings, clock=self._clock)

        # the clients the load needs are made before the clock starts (each costs a fraction of a millisecond)
        self._pools = _Pools(new_client, ready=math.ceil((plan.load.concurrency or 1) / SHARD_CONNECTIONS))
        scraper, injector = self._side_tasks(headers)
        try:
            gc.collect()
            gc.freeze()  # what exists now is never scanned again: shorter collector pauses during the run
            cpu_start = time.process_time()
            self._t0_ns = self._clock()
            started_at = datetime.now(UTC)
            if scraper is not None:
                scraper.start(t0_ns=self._t0_ns, wall_t0_s=started_at.timestamp())
            if injector is not None:
                injector.start(t0_ns=self._t0_ns)
            timer = None
            if plan.bounds.max_duration_s is not None:
                timer = self._loop.call_later(plan.bounds.max_duration_s, self._stop, "max_duration")
            ticker = asyncio.create_task(self._ticker()) if self.on_progress else None
            if self._cancel_requested:
                self._stop("cancelled")
            try:
                if plan.load.mode is LoadMode.CLOSED:
                    await self._closed(source)
                else:
                    assert schedule is not None  # noqa: S101 - computed above for an open loop
                    await self._open(source, schedule)
            finally:
                if timer is not None:
                    timer.cancel()
                if ticker is not None:
                    ticker.cancel()
                for task in list(self._tasks):
                    task.cancel()
                if self._tasks:
                    await asyncio.gather(*self._tasks, return_exceptions=True)
                end_ns = self._clock()
                cpu_s = time.process_time() - cpu_start
                # the run has stopped: skip the faults not yet due, and take the last scrape (the end state)
                await asyncio.gather(*(side.stop() for side in (scraper, injector) if side is not None))
        finally:
            gc.unfreeze()
            await self._pools.aclose()
        outcome = self._outcome(started_at=started_at, end_ns=end_ns, cpu_s=cpu_s, schedule=schedule)
        outcome.scrapes = list(scraper.samples) if scraper is not None else []
        outcome.fault_events = list(injector.events) if injector is not None else []
        outcome.notes.extend(_side_notes(outcome))
        return outcome

    def _side_tasks(self, headers: dict[str, str]) -> tuple[MetricsScraper | None, FaultInjector | None]:
        """The scraper and the fault injector the plan asks for (None otherwise), made before the clock starts."""
        plan = self.plan
        scraper = injector = None
        if plan.metrics is not None:
            scrape_headers = {key: value for key, value in headers.items() if key in ("User-Agent", "Authorization")}
            scraper = MetricsScraper(
                plan.metrics,
                clock=self._clock,
                headers=scrape_headers,
                verify=self._verify,
                transport=self._transport,
                on_sample=self._on_scrape,
            )
        if plan.faults:
            injector = FaultInjector(
                plan.faults, clock=self._clock, verify=self._verify, transport=self._transport, on_event=self._on_fault
            )
        return scraper, injector

    async def _closed(self, source: RequestSource) -> None:
        concurrency = self.plan.load.concurrency or 1
        ramp_ns = int(self.plan.load.ramp_up_s * 1e9)
        workers = [
            asyncio.create_task(self._worker(source, number, self._t0_ns + ramp_ns * number // concurrency))
            for number in range(concurrency)
        ]
        self._tasks.update(workers)
        await asyncio.gather(*workers, return_exceptions=True)

    async def _worker(self, source: RequestSource, number: int, start_ns: int) -> None:
        await self._sleep_until(start_ns)
        t_sched: int | None = start_ns  # the client's first request is due at its start
        max_requests = self.plan.bounds.max_requests
        while self._stop_reason is None:
            if max_requests is not None and self._next_index >= max_requests:
                return
            index = self._next_index
            self._next_index += 1
            if t_sched is None:
                t_sched = self._clock()  # the client is free now: that is its scheduled send time
            record = await self._one(source.prepare(index), t_sched)
            t_sched = None
            pause = self.plan.load.error_pause_s
            if pause and record.status not in (Status.OK, None) and self._stop_reason is None:
                # a real client backs off after an error; the pause is not schedule lag: t_sched is set after it
                await asyncio.sleep(pause)

    async def _open(self, source: RequestSource, schedule: np.ndarray) -> None:
        launcher = asyncio.create_task(self._launch(source, schedule))
        self._tasks.add(launcher)
        launcher.add_done_callback(self._tasks.discard)
        await asyncio.gather(launcher, return_exceptions=True)
        while self._tasks:  # the requests still in flight (cancelled at once by a stop)
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _launch(self, source: RequestSource, schedule: np.ndarray) -> None:
        """Launch each request at its scheduled time (prepared beforehand, so the lag is the launch alone)."""
        cap = self.plan.load.concurrency
        slots = asyncio.Semaphore(cap) if cap else None
        offsets = (schedule * 1e9).astype(np.int64).tolist()
        for index, offset in enumerate(offsets):
            if self._stop_reason is not None:
                return
            prepared = source.prepare(index)
            t_sched = self._t0_ns + offset
            await self._sleep_until(t_sched)
            if slots is not None:
                await slots.acquire()
            task = asyncio.create_task(self._one_open(prepared, t_sched, slots))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _one_open(self, prepared: PreparedRequest, t_sched: int, slots: asyncio.Semaphore | None) -> None:
        try:
            await self._one(prepared, t_sched)
        finally:
            if slots is not None:
                slots.release()

    async def _one(self, prepared: PreparedRequest, t_sched: int) -> RequestResult:
        record = RequestResult(
            index=prepared.index,
            t_sched_ns=t_sched,
            input_tokens_sent=prepared.input_tokens_sent,
            output_tokens_target=prepared.output_tokens_target,
            class_name=prepared.class_name,
        )
        self._records.append(record)
        self._sent += 1
        self._in_flight += 1
        pools = self._pools
        assert pools is not None  # noqa: S101 - set by run()
        number, client = pools.acquire()
        try:
            await client.send(prepared, record)
        finally:
            pools.release(number)
            self._in_flight -= 1
            self._finished(record)
        return record

    async def _sleep_until(self, instant_ns: int) -> None:
        delay = (instant_ns - self._clock()) / 1e9
        while delay > 0:  # the loop's timer never fires early; a coarse clock may need a second wait
            await asyncio.sleep(delay)
            delay = (instant_ns - self._clock()) / 1e9

    # -- progress -------------------------------------------------------------------------------------------

    def _finished(self, record: RequestResult) -> None:
        if record.status is Status.INCOMPLETE_AT_END:
            pass
        elif record.status is Status.OK:
            self._ok += 1
            self._done += 1
            ttft = record.ttft_ns
            if ttft is not None:
                self._ttft_ms.append(ttft / 1e6)
            tpot = record.tpot_ms
            if tpot is not None:
                self._tpot_ms.append(tpot)
            if self.on_progress is not None:
                self._finished_ns.append(self._clock())
        else:
            self._failed += 1
            self._done += 1
            if self.on_progress is not None:
                self._finished_ns.append(self._clock())
        if self._on_request is not None:
            try:
                self._on_request(record)
            except Exception:
                logger.exception("the on_request callback failed")

    def progress(self) -> Progress:
        """The run's state now."""
        now = self._clock()
        horizon = now - int(RATE_WINDOW_S * 1e9)
        while self._finished_ns and self._finished_ns[0] < horizon:
            self._finished_ns.popleft()
        span = min(RATE_WINDOW_S, max((now - self._t0_ns) / 1e9, 1e-9))
        ttft = _percentiles(self._ttft_ms)
        tpot = _percentiles(self._tpot_ms)
        return Progress(
            elapsed_s=(now - self._t0_ns) / 1e9,
            sent=self._sent,
            done=self._done,
            ok=self._ok,
            failed=self._failed,
            in_flight=self._in_flight,
            rate_per_s=len(self._finished_ns) / span,
            ttft_p50_ms=ttft[0],
            ttft_p99_ms=ttft[1],
            tpot_p50_ms=tpot[0],
            tpot_p99_ms=tpot[1],
            max_requests=self.plan.bounds.max_requests,
            max_duration_s=self.plan.bounds.max_duration_s,
        )

    async def _ticker(self) -> None:
        assert self.on_progress is not None  # noqa: S101 - started only with a callback
        while True:
            await asyncio.sleep(self._progress_interval_s)
            try:
                self.on_progress(self.progress())
            except Exception:
                logger.exception("the progress callback failed")

    # -- the outcome ----------------------------------------------------------------------------------------

    def _outcome(self, *, started_at: datetime, end_ns: int, cpu_s: float, schedule: np.ndarray | None) -> RunOutcome:
        plan = self.plan
        t0 = self._t0_ns
        records = sorted(self._records, key=lambda r: r.index)
        sends = [r.t_send_ns for r in records if r.t_send_ns is not None]
        if self._stop_reason is None:
            reason = "completed"
            send_end = max(sends) if sends else end_ns
        else:
            reason = self._stop_reason
            send_end = self._send_end_ns or end_ns
        send_end_s = (send_end - t0) / 1e9
        notes: list[str] = []
        start_s = plan.warmup_s
        end_s = send_end_s - plan.cooldown_s
        if end_s <= start_s:
            notes.append(
                f"The warm-up ({plan.warmup_s:g} s) and cool-down ({plan.cooldown_s:g} s) leave no "
                f"measurement window in the {send_end_s:.3g} s of sending: the window is the whole run."
            )
            start_s, end_s = 0.0, max(send_end_s, 1e-6)
        ends = [r.t_end_ns for r in records if r.t_end_ns is not None]
        last_ns = max([end_ns if reason != "completed" else 0, *ends, send_end])
        wall_s = max((last_ns - t0) / 1e9, 1e-9)
        fidelity = _fidelity(
            records,
            t0=t0,
            window=(start_s, end_s),
            schedule=schedule,
            cpu_percent=100 * cpu_s / wall_s if cpu_s >= 0 else None,
            clients=plan.load.concurrency or 1,
        )
        if reason == "max_duration":
            notes.append(f"Stopped at max_duration_s ({plan.bounds.max_duration_s:g} s).")
        elif reason == "cancelled":
            notes.append("Cancelled: what was measured is kept; requests in flight are incomplete_at_end.")
        return RunOutcome(
            plan=plan,
            label=self.label,
            started_at=started_at,
            t0_ns=t0,
            records=records,
            send_end_ns=send_end,
            end_ns=last_ns,
            window_s=(start_s, end_s),
            stop_reason=reason,
            fidelity=fidelity,
            notes=notes,
        )


def _side_notes(outcome: RunOutcome) -> list[str]:
    """Notes on the scrapes and faults, in words."""
    notes = []
    failed = [sample for sample in outcome.scrapes if not sample.ok]
    if failed:
        notes.append(
            f"{len(failed)} of {len(outcome.scrapes)} metrics scrape(s) failed (first at "
            f"{failed[0].t_s:.3f} s: {failed[0].error}); they are gaps in the timeline, not zeros."
        )
    for event in outcome.fault_events:
        if event.skipped:
            notes.append(f"Fault '{event.label}' was not executed: {event.detail}.")
        elif not event.ok:
            notes.append(f"Fault '{event.label}' at {event.t_s:.3f} s failed: {event.detail[:300]}")
    return notes


def _percentiles(values: deque[float] | list[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    p50, p99 = np.percentile(np.fromiter(values, dtype=np.float64, count=len(values)), [50, 99])
    return float(p50), float(p99)


def _fidelity(
    records: list[RequestResult],
    *,
    t0: int,
    window: tuple[float, float],
    schedule: np.ndarray | None,
    cpu_percent: float | None,
    clients: int = 1,
) -> Fidelity:
    start_s, end_s = window
    length = end_s - start_s
    start_ns, end_ns = t0 + round(start_s * 1e9), t0 + round(end_s * 1e9)
    inside = [r for r in records if r.t_send_ns is not None and start_ns <= r.t_send_ns <= end_ns]
    lags = [(r.t_send_ns - r.t_sched_ns) / 1e6 for r in inside if r.t_send_ns is not None]
    p50, p99 = _percentiles(lags)
    achieved = len(inside) / length if length > 0 else None
    offered = ratio = idle = None
    reasons = []
    if schedule is not None:  # open loop: the schedule is the load; sending late is coordinated omission
        if length > 0:
            offered = int(np.count_nonzero((schedule >= start_s) & (schedule <= end_s))) / length
            ratio = achieved / offered if achieved is not None and offered else None
        if p99 is not None and p99 > SCHEDULE_LAG_LIMIT_MS:
            reasons.append(
                f"the schedule lag p99 is {p99:.2f} ms, over {SCHEDULE_LAG_LIMIT_MS:g} ms: the client did "
                "not send when it should have"
            )
        if ratio is not None and ratio < ACHIEVED_RATE_FLOOR:
            reasons.append(
                f"the achieved send rate is {ratio:.1%} of the offered rate, below {ACHIEVED_RATE_FLOOR:.0%}"
            )
    else:  # closed loop: the load is C clients busy; the generator's gap between requests idles them
        # each client's first request (indices below C) opens its connection: a one-off, not the steady state
        idle = closed_loop_idle_share(
            [
                (r.t_send_ns - r.t_sched_ns, r.t_end_ns - r.t_send_ns)
                for r in inside
                if r.t_send_ns is not None and r.t_end_ns is not None and r.index >= clients
            ]
        )
        if idle is not None and idle > 1 - ACHIEVED_RATE_FLOOR:
            reasons.append(
                f"the clients were idle {idle:.1%} of the time between their requests (the generator's "
                f"own delay), over {1 - ACHIEVED_RATE_FLOOR:.0%}: fewer than {ACHIEVED_RATE_FLOOR:.0%} of "
                "the requested clients were busy"
            )
    return Fidelity(
        lag_n=len(lags),
        lag_p50_ms=p50,
        lag_p99_ms=p99,
        offered_rate_per_s=offered,
        achieved_rate_per_s=achieved,
        achieved_ratio=ratio,
        cpu_percent=cpu_percent,
        valid=not reasons,
        reasons=tuple(reasons),
        idle_share=idle,
    )


def closed_loop_idle_share(pairs: list[tuple[int, int]] | list[tuple[float, float]]) -> float | None:
    """The share of a closed loop's client time lost to the generator: Σ lag / Σ (lag + E2E) over (lag, E2E) pairs
    (any one unit; each client's first request, which opens its connection, left out by the caller). A client's
    concurrency is C × (1 − this share), so METRICS.md's "achieved below 95% of offered" is a share above 5%. Error
    pauses are not lag (t_sched is set after them).

    >>> closed_loop_idle_share([(2, 98), (3, 97)])
    0.025
    """
    total = sum(max(0, lag) + max(0, e2e) for lag, e2e in pairs)
    return sum(max(0, lag) for lag, _ in pairs) / total if total > 0 else None


async def run_points(
    plan: TestPlan, *, on_runner: Callable[[LoadRunner], None] | None = None, **options: Any
) -> list[RunOutcome]:
    """Every point of the plan (its sweep, or itself), one after the other, in this event loop; a cancelled point
    ends the sweep. `options` go to `LoadRunner`; `on_runner(runner)` is called as each point starts (to wire its
    cancel to a signal or a job)."""
    outcomes = []
    for label, point in plan.points():
        runner = LoadRunner(point, label=label, **options)
        if on_runner is not None:
            on_runner(runner)
        outcome = await runner.run()
        outcomes.append(outcome)
        if outcome.stop_reason == "cancelled":
            break
    return outcomes


def run_plan(plan: TestPlan, **options: Any) -> list[RunOutcome]:
    """`run_points` in a new event loop (for callers without one: a Celery task, a script)."""
    return asyncio.run(run_points(plan, **options))
