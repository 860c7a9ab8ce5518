"""A real-time continuous-batching engine for one simulated deployment (all its replicas), driven by our
performance model. Pure asyncio and `sizing.estimator`: no Django, no web framework.

It follows the scheduling rules of the offline simulator (`sizing.estimator.simulator`), step by step and in real
time, so that a client measuring it sees the latencies the simulator predicts for the same arrivals.

Requests
    `submit(prompt_tokens, max_tokens, output_tokens=...)` stamps the arrival on the engine clock (the event loop's
    monotonic clock, the same CLOCK_MONOTONIC as `time.perf_counter` on Linux), routes the request to a replica and
    returns a `SimRequest` whose `next_events()` yields the tokens as the steps that produce them end. A request
    generates `output_tokens` tokens (at most `max_tokens`; the HTTP layer decides how many: see `app.py`), then
    finishes with reason "length" when that is `max_tokens`, else "stop".

Routing
    To the live replica with the fewest requests (pending + waiting + running), ties in turn; or, with
    `routing="round_robin"`, to each live replica in turn, as the offline simulator deals request i to replica
    i mod R (use it to compare with the simulator's predictions for several replicas). Each replica has a bounded
    queue: `ServingConfig.queue_limit` waiting requests (default 4 × max_num_seqs); beyond it `submit` raises
    `QueueFull` (HTTP 429). With no live replica it raises `Unavailable` (HTTP 503).

A step (one replica, at a step boundary t; vLLM V1's scheduler as the offline simulator models it)
    0. Requests that arrived at or before t join the waiting queue (first come, first served); requests that arrive
       while a step runs wait for its end, as on a real engine.
    1. Decodes first: every running request past its prefill decodes one token and needs KV for one more token.
       KV is paged in blocks of `block_size` tokens (`kv_capacity_tokens // block_size` blocks per replica); a
       request holds ceil(its tokens / block_size) blocks. While the decodes' new blocks do not fit in the free
       blocks, the most recently admitted running request is preempted: its blocks are freed and it goes back to
       the head of the queue, to be recomputed later (prompt and generated tokens together: vLLM's recompute
       mode). A request alone on its replica that no longer fits fails (an error event).
    2. The step's token budget is `max_num_batched_tokens` minus the decodes. Partly prefilled prompts continue,
       in admission order, each taking as many tokens as the budget and the free blocks allow (chunked prefill;
       with `chunked_prefill=False` a prompt is prefilled whole in one step or waits).
    3. Then waiting requests are admitted in arrival order (no overtaking) while the budget lasts, the replica runs
       fewer than `max_num_seqs` requests and the free blocks hold at least one token of their prompt; none is
       admitted in a step that had to preempt. A request whose prompt needs more blocks than the whole cache fails.
       With `reserve_full_sequence` (TensorRT-LLM's guaranteed-no-evict) a request is admitted only when the blocks
       of its whole sequence (prompt and every output token) can be reserved, and is then never preempted.
    4. The step lasts `StepModel.step_s(decode=d, context_tokens=Σ(kv + 1) over the decodes, prefill=Σ chunk,
       prefill_pairs=Σ chunk × (done + (chunk + 1) / 2), prefill_context_tokens=Σ done)` seconds of model time,
       divided by `speedup` on the wall clock (0 in zero-delay mode). When it ends every decode emits its next
       token, and every prompt whose prefill completed emits its first token (or, after a preemption, its next
       one); a request that has emitted its last token finishes and frees its blocks.
    The next step starts when this one ends (its nominal end time: the engine keeps a nominal timeline, so sleeping
    late by a fraction of a millisecond does not accumulate; more than `max_lag_s` late and it starts afresh from
    the wall clock, counted in `late_steps`); an idle replica starts at the arrival that wakes it. Sleeps end with
    a short spin (`spin_s`) so steps end within tens of microseconds of their nominal time instead of the event
    loop's millisecond granularity.

    `replay()` runs these rules in virtual time; without preemption it reproduces `sizing.estimator.simulator`
    request by request. Under KV pressure the two part: the offline simulator accounts KV as half a block of
    padding per request instead of whole blocks, and its bulk decode path keeps a preempted request waiting until
    the next completion rather than for one step (tests/benchmarks/simserver_truth.py, scenario l4-kv).

    Prefix caching is not simulated: every request computes and holds its whole prompt (the offline simulator's
    shared-prefix model needs the workload's prefix lengths, which live requests do not declare).

Timestamps and statistics
    Token events carry their step's nominal end time on the engine clock. The histograms (TTFT, inter-token
    latency, time per output token, end-to-end, queue time) are in wall-clock seconds, i.e. what a client measures:
    model times divided by `speedup`. Counters: prompt tokens (a request's prompt, counted when its first token is
    emitted), generated tokens, preemptions, finished requests by reason, rejections, failures.

Zero-delay mode (`zero_delay=True` or `speedup=math.inf`)
    Steps take no time; the scheduling rules still apply. The engine yields to the event loop about every
    millisecond, so token events pile up and the HTTP layer writes them in batches: the mode for measuring a load
    generator's own throughput and overhead, not latency.

Failure injection (for tests and failure-injection scenarios)
    `kill_replica(index, seconds=None)`: the replica stops at once; its pending, waiting and running requests end
        with an error event; new requests go to the other replicas (503 when none is left). It comes back empty
        after `seconds`, or on `recover()`.
    `fail_next(count, status=500, message=None)`: the next `count` submissions raise `InjectedFailure` with that
        HTTP status instead of being queued.
    `stall(seconds)`: every replica freezes until then: a step in flight ends `seconds` from now at the earliest,
        no new step starts, arrivals queue up (a hung GPU, a long pause).
    `recover()`: revives killed replicas, ends a stall and forgets pending injected failures.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import uuid
from bisect import bisect_left
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sizing.estimator.perf import StepModel
from sizing.estimator.scheduler import FailReason, StepLimits, StepOutcome, prefill_work, schedule_step
from sizing.estimator.simulator import ServingConfig

# vLLM's histogram bucket boundaries (seconds), from its Prometheus stat logger
TTFT_BUCKETS = (
    0.001,
    0.005,
    0.01,
    0.02,
    0.04,
    0.06,
    0.08,
    0.1,
    0.25,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
    40.0,
    80.0,
    160.0,
    640.0,
    2560.0,
)
ITL_BUCKETS = (
    0.01,
    0.025,
    0.05,
    0.075,
    0.1,
    0.15,
    0.2,
    0.3,
    0.4,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
    40.0,
    80.0,
)
REQUEST_LATENCY_BUCKETS = (
    0.3,
    0.5,
    0.8,
    1.0,
    1.5,
    2.0,
    2.5,
    5.0,
    10.0,
    15.0,
    20.0,
    30.0,
    40.0,
    50.0,
    60.0,
    120.0,
    240.0,
    480.0,
    960.0,
    1920.0,
    7680.0,
)
ITERATION_TOKENS_BUCKETS = (1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)

PENDING, WAITING, PREFILL, DECODE, FINISHED, FAILED, ABORTED = range(7)
ZERO_DELAY_SLICE_S = 0.001  # zero-delay mode: run steps back to back for this long, then let the event loop run
STALL_POLL_S = 0.05  # longest single sleep, so a stall or a recover takes effect within it


class EngineError(Exception):
    """A request the engine will not take; `status` is the HTTP status the server answers with."""

    status = 500
    kind = "InternalServerError"

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class QueueFull(EngineError):
    status = 429
    kind = "TooManyRequests"


class Unavailable(EngineError):
    status = 503
    kind = "ServiceUnavailable"


class InjectedFailure(EngineError):
    kind = "InjectedFailure"


class TooLarge(EngineError):
    status = 400
    kind = "BadRequestError"


@dataclass(slots=True)
class Event:
    """One thing that happened to a request: a token (`index` ≥ 1, the last one with `finish_reason`), an error,
    or the end of a request its consumer cancelled. `t` is the engine clock (seconds, `loop.time()`)."""

    t: float
    index: int = 0
    finish_reason: str | None = None
    error: str | None = None
    status: int = 0
    cancelled: bool = False


class Histogram:
    """A Prometheus histogram: cumulative bucket counts are computed when read."""

    __slots__ = ("bounds", "count", "counts", "sum")

    def __init__(self, bounds: Iterable[float]) -> None:
        self.bounds = tuple(float(b) for b in bounds)
        self.counts = [0] * (len(self.bounds) + 1)  # the last one: above every bound (+Inf)
        self.count = 0
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.count += 1
        self.sum += value

    def cumulative(self) -> list[tuple[float, int]]:
        """(upper bound, observations ≤ it) per bucket, ending with (inf, count)."""
        running = 0
        result = []
        for bound, count in zip((*self.bounds, math.inf), self.counts, strict=True):
            running += count
            result.append((bound, running))
        return result


@dataclass
class ReplicaStats:
    """Counters and histograms of one replica (vLLM's per-engine metrics). Times in wall-clock seconds."""

    prompt_tokens: int = 0
    generation_tokens: int = 0
    preemptions: int = 0
    steps: int = 0
    late_steps: int = 0  # steps that ended more than max_lag_s after their nominal end (the host fell behind)
    max_lateness_s: float = 0.0
    finished: dict[str, int] = field(default_factory=lambda: {"length": 0, "stop": 0, "abort": 0, "error": 0})
    ttft: Histogram = field(default_factory=lambda: Histogram(TTFT_BUCKETS))
    itl: Histogram = field(default_factory=lambda: Histogram(ITL_BUCKETS))
    tpot: Histogram = field(default_factory=lambda: Histogram(ITL_BUCKETS))
    e2e: Histogram = field(default_factory=lambda: Histogram(REQUEST_LATENCY_BUCKETS))
    queue: Histogram = field(default_factory=lambda: Histogram(REQUEST_LATENCY_BUCKETS))
    iteration_tokens: Histogram = field(default_factory=lambda: Histogram(ITERATION_TOKENS_BUCKETS))


class SimRequest:
    """One request's state in the engine and its event channel (read with `next_events`)."""

    __slots__ = (
        "_items",
        "_waiter",
        "admitted_at",
        "arrival",
        "blocks",
        "claim",
        "computed",
        "finish_reason",
        "finished_at",
        "first_token_at",
        "gen",
        "id",
        "kv_tokens",
        "last_token_at",
        "max_tokens",
        "need",
        "output_tokens",
        "preemptions",
        "prompt_tokens",
        "replica",
        "state",
    )

    def __init__(
        self, *, request_id: str, prompt_tokens: int, max_tokens: int, output_tokens: int, arrival: float, replica: int
    ) -> None:
        self.id = request_id
        self.prompt_tokens = prompt_tokens
        self.max_tokens = max_tokens
        self.output_tokens = output_tokens
        self.finish_reason = "length" if output_tokens >= max_tokens else "stop"
        self.arrival = arrival
        self.replica = replica
        self.state = PENDING
        self.need = prompt_tokens  # tokens to hold once prefilled (after a preemption: prompt + generated)
        self.computed = 0  # of `need`, tokens whose KV is computed
        self.kv_tokens = 0  # tokens in the KV cache once decoding
        self.blocks = 0  # KV blocks held
        self.claim = 0  # blocks reserved for the whole sequence (reserve_full_sequence only)
        self.gen = 0  # tokens generated
        self.preemptions = 0
        self.admitted_at: float | None = None
        self.first_token_at: float | None = None
        self.last_token_at: float | None = None
        self.finished_at: float | None = None
        self._items: list[Event] = []
        self._waiter: asyncio.Future[None] | None = None

    @property
    def done(self) -> bool:
        return self.state >= FINISHED

    def _push(self, event: Event) -> None:
        self._items.append(event)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def next_events(self) -> list[Event]:
        """Every event since the last call, waiting for at least one."""
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        items, self._items = self._items, []
        return items

    def timings(self) -> dict[str, Any]:
        """The engine's own timestamps (engine clock, seconds) and counts, for clients checking their overhead."""
        return {
            "replica": self.replica,
            "arrival_s": self.arrival,
            "admitted_s": self.admitted_at,
            "first_token_s": self.first_token_at,
            "finished_s": self.finished_at,
            "preemptions": self.preemptions,
            "generated_tokens": self.gen,
        }


@dataclass(slots=True)
class _Step:
    decodes: list[SimRequest]
    chunks: list[tuple[SimRequest, int]]
    seconds: float  # model time


class _Replica:
    """One replica's queues, KV blocks and step loop."""

    def __init__(self, engine: SimEngine, index: int) -> None:
        self.engine = engine
        self.index = index
        self.stats = ReplicaStats()
        self.alive = True
        self.task: asyncio.Task[None] | None = None
        self.revive_handle: asyncio.TimerHandle | None = None
        self.wake = asyncio.Event()
        self._reset()

    def _reset(self) -> None:
        config = self.engine.config
        self.total_blocks = max(1, config.kv_capacity_tokens // config.block_size)
        self.free_blocks = self.total_blocks
        self.reserved_blocks = 0
        self.pending: deque[SimRequest] = deque()  # arrived, not yet seen by a step
        self.waiting: deque[SimRequest] = deque()
        self.running: list[SimRequest] = []  # admission order: preemption takes the last
        self._decodes: list[SimRequest] = []  # the step being scheduled: its decodes
        self._t = 0.0  # the step being scheduled: its start

    # -- state seen from outside -------------------------------------------------------------------------

    @property
    def load(self) -> int:
        return len(self.pending) + len(self.waiting) + len(self.running)

    @property
    def queued(self) -> int:
        return len(self.pending) + len(self.waiting)

    @property
    def kv_usage(self) -> float:
        return 1.0 - self.free_blocks / self.total_blocks

    # -- lifecycle ---------------------------------------------------------------------------------------

    def start(self) -> None:
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run(), name=f"simserver-replica-{self.index}")

    def kill(self, message: str) -> None:
        """Stop now: every request on the replica ends with an error event; the state is cleared."""
        self.alive = False
        if self.task is not None:
            self.task.cancel()
            self.task = None
        now = self.engine.clock()
        for request in (*self.pending, *self.waiting, *self.running):
            self._end(request, FAILED, now, error=message, status=503)
        self._reset()

    def revive(self) -> None:
        if self.revive_handle is not None:
            self.revive_handle.cancel()
            self.revive_handle = None
        if not self.alive:
            self.alive = True
            self._reset()
            self.start()

    def add(self, request: SimRequest) -> None:
        self.pending.append(request)
        self.wake.set()

    def cancel(self, request: SimRequest) -> None:
        """The client went away: drop the request, freeing what it holds."""
        if request.state in (PENDING, WAITING):
            with contextlib.suppress(ValueError):
                (self.pending if request.state == PENDING else self.waiting).remove(request)
        elif request.state in (PREFILL, DECODE):
            self.running.remove(request)
            self._free(request)
        else:
            return
        self._end(request, ABORTED, self.engine.clock(), reason="abort")

    # -- the step loop -----------------------------------------------------------------------------------

    async def _run(self) -> None:
        engine = self.engine
        clock = engine.clock
        next_start: float | None = None  # the nominal end of the last step, while the replica stays busy
        last_yield = clock()
        while True:
            if not (self.pending or self.waiting or self.running):
                next_start = None
                self.wake.clear()
                await self.wake.wait()
                last_yield = clock()
                continue
            if engine.zero_delay:
                t = clock()
            elif next_start is None:
                # an idle replica starts at the first arrival (as the offline simulator does), not at the moment
                # this task got the event loop back, unless that is longer ago than the lag allowed
                now = clock()
                t = self.pending[0].arrival if self.pending else now
                if now - t > engine.max_lag_s:
                    t = now
            else:
                t = next_start
            step = self._schedule(t)
            if step is None:  # only arrivals after the nominal start: start again from the first of them
                next_start = None
                continue
            end = t if engine.zero_delay else t + step.seconds / engine.speedup
            end = await self._sleep_until(end)
            now = clock()
            self._complete(step, end)
            stats = self.stats
            stats.steps += 1
            if engine.zero_delay:
                next_start = None
                if now - last_yield >= ZERO_DELAY_SLICE_S:
                    await asyncio.sleep(0)
                    last_yield = clock()
                continue
            lateness = now - end
            if lateness > stats.max_lateness_s:
                stats.max_lateness_s = lateness
            if lateness > engine.max_lag_s:
                stats.late_steps += 1
                next_start = now
            else:
                next_start = end

    async def _sleep_until(self, deadline: float) -> float:
        """Sleep to the deadline (later during a stall); return the time the step ends at."""
        engine = self.engine
        clock = engine.clock
        spin = engine.spin_s
        while True:
            target = max(deadline, engine.stalled_until)
            remaining = target - clock()
            if remaining <= 0:
                return target
            if remaining > spin:
                await asyncio.sleep(min(remaining - spin, STALL_POLL_S))
            else:
                await asyncio.sleep(0)  # spin, letting the event loop serve I/O between checks

    def _blocks(self, tokens: int) -> int:
        return -(-tokens // self.engine.config.block_size)

    def _free(self, request: SimRequest) -> None:
        self.free_blocks += request.blocks
        request.blocks = 0
        self.reserved_blocks -= request.claim
        request.claim = 0

    def _preempt(self, request: SimRequest) -> None:
        self.running.remove(request)
        self._free(request)
        request.state = WAITING
        request.need = request.prompt_tokens + request.gen
        request.computed = 0
        request.kv_tokens = 0
        request.preemptions += 1
        self.stats.preemptions += 1
        self.waiting.appendleft(request)

    def _fail_running(self, request: SimRequest, now: float, message: str) -> None:
        self.running.remove(request)
        self._free(request)
        self._end(request, FAILED, now, error=message, status=500)

    def _schedule(self, t: float) -> _Step | None:
        """Choose the next step's work at time t (rules 0-3 of the module docstring, `sizing.estimator.scheduler`'s
        rules on this replica's block ledger); None: nothing to run."""
        config = self.engine.config
        while self.pending and self.pending[0].arrival <= t:
            request = self.pending.popleft()
            request.state = WAITING
            self.waiting.append(request)
        self._t = t
        limits = StepLimits(
            max_num_seqs=config.max_num_seqs,
            max_num_batched_tokens=config.max_num_batched_tokens,
            chunked_prefill=config.chunked_prefill,
        )
        while True:
            plan = schedule_step(self, limits)
            if plan.outcome is StepOutcome.WORK:
                break
            if plan.outcome is StepOutcome.FREED:
                continue
            if plan.outcome is StepOutcome.HEAD_BLOCKED:  # a queue head an empty replica cannot take never runs
                self._end(self.waiting.popleft(), FAILED, t, error="the request cannot fit in the KV cache", status=500)
                continue
            return None
        decodes = self._decodes
        context = 0
        for request in decodes:
            context += request.kv_tokens + 1
        work = prefill_work((size, request.computed) for request, size in plan.chunks)
        seconds = self.engine.model.step_s(
            decode=len(decodes),
            context_tokens=context,
            prefill=work.tokens,
            prefill_pairs=work.pairs,
            prefill_context_tokens=work.context_tokens,
        )
        self.stats.iteration_tokens.observe(len(decodes) + work.tokens)
        return _Step(decodes=decodes, chunks=list(plan.chunks), seconds=seconds)

    # -- the block ledger the scheduler asks (sizing.estimator.scheduler.KvLedger) --------------------------

    def decodes_overflow(self) -> bool:
        growth = 0
        decoding = False
        for request in self.running:
            if request.state == DECODE:
                decoding = True
                growth += self._blocks(request.kv_tokens + 1) - request.blocks
        return decoding and growth > self.free_blocks

    def preempt(self, request: SimRequest) -> None:
        self._preempt(request)

    def fail_running(self, request: SimRequest, reason: FailReason) -> None:
        self._fail_running(request, self._t, reason.value)

    def start_decodes(self) -> int:
        decodes = self._decodes = [request for request in self.running if request.state == DECODE]
        for request in decodes:
            blocks = self._blocks(request.kv_tokens + 1)
            self.free_blocks -= blocks - request.blocks
            request.blocks = blocks
        return len(decodes)

    def prefilling(self) -> list[SimRequest]:
        return [request for request in self.running if request.state == PREFILL]

    def prefill_remaining(self, request: SimRequest) -> int:
        return request.need - request.computed

    def prefill_room(self, request: SimRequest) -> float:
        return (request.blocks + self.free_blocks) * self.engine.config.block_size - request.computed

    def take(self, request: SimRequest, size: int) -> None:
        self._take(request, size)

    def never_fits(self, request: SimRequest) -> bool:
        return self._blocks(request.need) > self.total_blocks

    def fail_waiting(self, request: SimRequest) -> None:
        self._end(request, FAILED, self._t, error="the prompt needs more KV than the whole cache", status=400)

    def claim(self, request: SimRequest) -> float | None:
        if not self.engine.config.reserve_full_sequence:
            return 0
        claim = self._blocks(request.need + request.output_tokens - request.gen)
        return None if self.reserved_blocks + claim > self.total_blocks else claim

    def admit_remaining(self, request: SimRequest) -> int:
        return request.need

    def admit_room(self, request: SimRequest) -> float:
        return self.free_blocks * self.engine.config.block_size

    def admit(self, request: SimRequest, size: int, claim: float) -> None:
        t = self._t
        request.state = PREFILL
        request.computed = 0
        request.claim = int(claim)
        self.reserved_blocks += request.claim
        if request.admitted_at is None:
            request.admitted_at = t
            self.stats.queue.observe(t - request.arrival)
        self.running.append(request)
        self._take(request, size)

    def _take(self, request: SimRequest, size: int) -> None:
        """Allocate the blocks a prefill chunk of `size` tokens needs (the caller checked they are free)."""
        blocks = self._blocks(request.computed + size)
        self.free_blocks -= blocks - request.blocks
        request.blocks = blocks

    def _complete(self, step: _Step, end: float) -> None:
        """The step ended at `end`: emit its tokens, finish the requests that are done (rule 4)."""
        for request in step.decodes:
            if request.state != DECODE:
                continue  # cancelled by its client during the step
            request.kv_tokens += 1
            self._emit(request, end)
        for request, size in step.chunks:
            if request.state != PREFILL:
                continue
            request.computed += size
            if request.computed < request.need:
                continue
            request.kv_tokens = request.need
            request.state = DECODE
            self._emit(request, end)

    def _emit(self, request: SimRequest, t: float) -> None:
        stats = self.stats
        request.gen += 1
        stats.generation_tokens += 1
        if request.first_token_at is None:
            request.first_token_at = t
            stats.prompt_tokens += request.prompt_tokens
            stats.ttft.observe(t - request.arrival)
        elif request.last_token_at is not None:
            stats.itl.observe(t - request.last_token_at)
        request.last_token_at = t
        if request.gen < request.output_tokens:
            request._push(Event(t=t, index=request.gen))
            return
        self.running.remove(request)
        self._free(request)
        if request.gen > 1 and request.first_token_at is not None:
            stats.tpot.observe((t - request.first_token_at) / (request.gen - 1))
        stats.e2e.observe(t - request.arrival)
        request.state = FINISHED
        request.finished_at = t
        stats.finished[request.finish_reason] += 1
        request._push(Event(t=t, index=request.gen, finish_reason=request.finish_reason))

    def _end(
        self,
        request: SimRequest,
        state: int,
        t: float,
        *,
        error: str | None = None,
        status: int = 0,
        reason: str = "error",
    ) -> None:
        """End a request that did not finish normally (its blocks are already free)."""
        request.state = state
        request.finished_at = t
        self.stats.finished[reason] += 1
        request._push(Event(t=t, index=request.gen, error=error, status=status, cancelled=state == ABORTED))


@dataclass(frozen=True)
class SimGpuMemory:
    """The memory of each simulated GPU as a GPU exporter would report it: the estimate's peak per card (for engines
    that reserve at start, as vLLM does: the budget plus CUDA graphs and non-torch memory outside it, held from the
    first second whatever the load). A killed replica's GPUs hold nothing until it is back."""

    used_bytes: int
    total_bytes: int
    gpus_per_replica: int


class SimEngine:
    """The simulated deployment: `config.replicas` replicas of `model` (see the module docstring for the rules).

    Use inside a running event loop: `await engine.start()` (or `async with engine:`); `submit` starts it lazily.
    """

    def __init__(
        self,
        model: StepModel,
        config: ServingConfig,
        *,
        speedup: float = 1.0,
        zero_delay: bool = False,
        spin_s: float = 0.0015,
        max_lag_s: float = 0.02,
        routing: str = "least_loaded",
        gpu_memory: SimGpuMemory | None = None,
    ) -> None:
        if not speedup > 0:
            raise ValueError(f"speedup must be > 0, got {speedup}")
        if routing not in ("least_loaded", "round_robin"):
            raise ValueError(f"routing must be least_loaded or round_robin, got {routing!r}")
        self.model = model
        self.config = config
        self.gpu_memory = gpu_memory
        self.zero_delay = zero_delay or math.isinf(speedup)
        self.speedup = math.inf if self.zero_delay else float(speedup)
        self.spin_s = max(0.0, spin_s)
        self.max_lag_s = max_lag_s
        self.routing = routing
        self.stalled_until = 0.0
        self.fail_remaining = 0
        self.fail_status = 500
        self.fail_message = ""
        self.rejected: dict[str, int] = {"queue_full": 0, "unavailable": 0, "injected": 0}
        self._replicas: list[_Replica] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._turn = itertools.count()

    @classmethod
    def from_plan(cls, plan: Any, **options: Any) -> SimEngine:
        """From a `sizing.estimator.serving.ServingPlan` (its memory estimate gives the simulated GPUs' memory)."""
        memory = plan.memory
        options.setdefault(
            "gpu_memory",
            SimGpuMemory(
                used_bytes=int(memory.required_bytes_per_gpu),
                total_bytes=int(memory.capacity_bytes_per_gpu),
                gpus_per_replica=max(1, memory.tp * memory.pp),
            ),
        )
        return cls(plan.model, plan.config, **options)

    # -- lifecycle ---------------------------------------------------------------------------------------

    def clock(self) -> float:
        """The engine clock: the event loop's monotonic time in seconds."""
        loop = self._loop
        return loop.time() if loop is not None else asyncio.get_running_loop().time()

    @property
    def replicas(self) -> list[_Replica]:
        if self._replicas is None:
            raise RuntimeError("the engine is not started: await engine.start() inside the event loop")
        return self._replicas

    async def start(self) -> None:
        self._ensure_started()

    def _ensure_started(self) -> list[_Replica]:
        if self._replicas is None:
            self._loop = asyncio.get_running_loop()
            self._replicas = [_Replica(self, index) for index in range(self.config.replicas)]
            for replica in self._replicas:
                replica.start()
        return self._replicas

    async def stop(self) -> None:
        """Stop every replica; requests still in flight end with an error event."""
        if self._replicas is None:
            return
        tasks = [replica.task for replica in self._replicas if replica.task is not None]
        for replica in self._replicas:
            if replica.revive_handle is not None:
                replica.revive_handle.cancel()
            replica.kill("the server is shutting down")
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._replicas = None
        self._loop = None

    async def __aenter__(self) -> SimEngine:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- requests ----------------------------------------------------------------------------------------

    def submit(
        self, prompt_tokens: int, max_tokens: int, *, output_tokens: int | None = None, request_id: str | None = None
    ) -> SimRequest:
        """Queue a request of `prompt_tokens` that generates `output_tokens` (default and at most `max_tokens`).
        Raises QueueFull, Unavailable, InjectedFailure or TooLarge (each carrying its HTTP status)."""
        replicas = self._ensure_started()
        if prompt_tokens < 1 or max_tokens < 1:
            raise TooLarge("a request needs at least one prompt token and max_tokens ≥ 1")
        if self.fail_remaining > 0:
            self.fail_remaining -= 1
            self.rejected["injected"] += 1
            raise InjectedFailure(
                self.fail_message or f"injected failure (HTTP {self.fail_status})", status=self.fail_status
            )
        live = [replica for replica in replicas if replica.alive]
        if not live:
            self.rejected["unavailable"] += 1
            raise Unavailable("no replica of the simulated deployment is running")
        if self.routing == "round_robin":
            replica = live[next(self._turn) % len(live)]
        else:
            least = min(replica.load for replica in live)
            candidates = [replica for replica in live if replica.load == least]
            replica = candidates[next(self._turn) % len(candidates)]
        if replica.queued >= self.config.queue_limit:
            self.rejected["queue_full"] += 1
            raise QueueFull(f"the queue is full ({replica.queued} requests waiting on replica {replica.index})")
        output = max_tokens if output_tokens is None else max(1, min(output_tokens, max_tokens))
        total = prompt_tokens + output
        if -(-total // self.config.block_size) > replica.total_blocks:
            raise TooLarge(
                f"the request's {total} tokens exceed the KV cache of a replica "
                f"({self.config.kv_capacity_tokens} tokens)"
            )
        request = SimRequest(
            request_id=request_id or uuid.uuid4().hex,
            prompt_tokens=prompt_tokens,
            max_tokens=max_tokens,
            output_tokens=output,
            arrival=self.clock(),
            replica=replica.index,
        )
        replica.add(request)
        return request

    def cancel(self, request: SimRequest) -> None:
        """Abort a request (its client disconnected); a no-op once it has ended."""
        if self._replicas is None or request.done:
            return
        self._replicas[request.replica].cancel(request)

    # -- failure injection -------------------------------------------------------------------------------

    def kill_replica(self, index: int, seconds: float | None = None) -> None:
        replicas = self._ensure_started()
        if not 0 <= index < len(replicas):
            raise ValueError(f"replica {index} does not exist (0..{len(replicas) - 1})")
        replica = replicas[index]
        if replica.revive_handle is not None:
            replica.revive_handle.cancel()
            replica.revive_handle = None
        if replica.alive:
            replica.kill(f"replica {index} was killed")
        if seconds is not None:
            replica.revive_handle = asyncio.get_running_loop().call_later(seconds, replica.revive)

    def fail_next(self, count: int, status: int = 500, message: str | None = None) -> None:
        if count < 0 or not 100 <= status <= 599:
            raise ValueError("count must be ≥ 0 and status an HTTP status (100-599)")
        self.fail_remaining = count
        self.fail_status = status
        self.fail_message = message or ""

    def stall(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("seconds must be ≥ 0")
        self._ensure_started()
        self.stalled_until = max(self.stalled_until, self.clock() + seconds)

    def recover(self) -> None:
        replicas = self._ensure_started()
        self.stalled_until = 0.0
        self.fail_remaining = 0
        for replica in replicas:
            replica.revive()

    # -- statistics --------------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """What the control endpoint reports: replicas, queues, KV usage, injected faults."""
        replicas = self._ensure_started()
        now = self.clock()
        return {
            "speedup": None if self.zero_delay else self.speedup,
            "zero_delay": self.zero_delay,
            "stalled_for_s": max(0.0, self.stalled_until - now),
            "fail_next": {"remaining": self.fail_remaining, "status": self.fail_status},
            "rejected": dict(self.rejected),
            "replicas": [
                {
                    "index": r.index,
                    "alive": r.alive,
                    "running": len(r.running),
                    "waiting": r.queued,
                    "kv_usage": r.kv_usage,
                    "preemptions": r.stats.preemptions,
                    "steps": r.stats.steps,
                    "late_steps": r.stats.late_steps,
                    "max_lateness_s": r.stats.max_lateness_s,
                }
                for r in replicas
            ],
        }


@dataclass(frozen=True, kw_only=True)
class Replay:
    """Per request (in input order): first-token and finish times, seconds of model time (NaN: failed); and every
    inter-token gap of every request, pooled."""

    first_s: list[float]
    finish_s: list[float]
    gaps_s: list[float]
    preemptions: int


def replay(
    model: StepModel,
    config: ServingConfig,
    *,
    arrival_s: Iterable[float],
    prompt_tokens: Iterable[int],
    output_tokens: Iterable[int],
) -> Replay:
    """Run requests through the engine's scheduling rules in virtual time, without an event loop or sleeping:
    request i goes to replica i mod R (as in the offline simulator), arrivals at their times, each step lasting
    its model time. This checks the rules themselves against `sizing.estimator.simulator`; the live engine adds
    only real time."""
    arrivals = [float(a) for a in arrival_s]
    prompts = [int(p) for p in prompt_tokens]
    outputs = [int(o) for o in output_tokens]
    engine = SimEngine(model, config, zero_delay=True)
    first = [math.nan] * len(arrivals)
    finish = [math.nan] * len(arrivals)
    gaps: list[float] = []
    preemptions = 0
    for index in range(config.replicas):
        replica = _Replica(engine, index)
        members = sorted(range(index, len(arrivals), config.replicas), key=lambda i: arrivals[i])
        requests = [
            SimRequest(
                request_id=str(i),
                prompt_tokens=prompts[i],
                max_tokens=outputs[i],
                output_tokens=outputs[i],
                arrival=arrivals[i],
                replica=index,
            )
            for i in members
        ]
        position = 0
        t = 0.0
        while position < len(requests) or replica.waiting or replica.running:
            while position < len(requests) and requests[position].arrival <= t:
                replica.pending.append(requests[position])
                position += 1
            step = replica._schedule(t)
            if step is None:
                if position < len(requests):
                    t = max(t, requests[position].arrival)
                continue
            t += step.seconds
            replica._complete(step, t)
        for i, request in zip(members, requests, strict=True):
            times = [event.t for event in request._items if event.error is None]
            if request.state == FINISHED and times:
                first[i], finish[i] = times[0], times[-1]
                gaps.extend(b - a for a, b in itertools.pairwise(times))
        preemptions += replica.stats.preemptions
    return Replay(first_s=first, finish_s=finish, gaps_s=gaps, preemptions=preemptions)


__all__ = [
    "ITL_BUCKETS",
    "REQUEST_LATENCY_BUCKETS",
    "TTFT_BUCKETS",
    "EngineError",
    "Event",
    "Histogram",
    "InjectedFailure",
    "QueueFull",
    "Replay",
    "ReplicaStats",
    "SimEngine",
    "SimRequest",
    "TooLarge",
    "Unavailable",
    "replay",
]
