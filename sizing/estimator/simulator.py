"""Serving simulator: a discrete-event simulation of continuous batching on each replica (DESIGN §9).

The scheduler is vLLM V1's, in outline: every step has a token budget (`max_num_batched_tokens`); sequences that are
decoding take one token each first, then partly prefilled prompts continue, then waiting requests are admitted in
arrival order (first come, first served, no overtaking) while the budget, `max_num_seqs` and the KV cache allow;
prompts longer than the remaining budget are prefilled in chunks. KV memory is paged: a request holds its own tokens,
a shared prefix is held once per replica once computed (prefix caching), and each running request wastes half a block
on average (`block_size` / 2 tokens). When a step's decodes need more KV than is free, the most recently admitted
request is preempted (its KV freed; it is recomputed later, prompt and generated tokens together), as vLLM's default
recompute mode does. Waiting beyond `max_queue` requests per replica, a new request is rejected.

Steps where nothing but decoding happens are taken in bulk up to the next event (an arrival, a completion, the KV
cache filling up), with their durations computed as a vector: that is what makes 100,000 requests cheap.

Replicas sit behind a round-robin load balancer: request i goes to replica i mod R (closed loops give each replica
its share of the clients). Per request the result holds TTFT, TPOT, E2E; over the run the ITL distribution (token
weighted), throughputs over the measurement window, goodput under SLOs, the KV usage, running and waiting counts over
time, and the share of time the KV demand (running requests' KV plus the prompts waiting for it) exceeds the cache:
`kv_overflow_probability`, the figure the memory commitment quotes.

Deterministic: the only randomness is in `workload_sample`'s seed.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from llm_sizing_loadgen.workload import SampledRequests
from sizing.estimator.errors import invalid_argument
from sizing.estimator.perf import StepModel
from sizing.estimator.scheduler import FailReason, StepLimits, StepOutcome, prefill_work, schedule_step

PERCENTILES = (50, 90, 95, 99)
MIN_SAMPLES = {99: 100, 95: 20, 90: 10, 50: 1}  # below this many samples the percentile is reported as insufficient

PROGRESS_EVERY = 4096  # scheduler iterations between progress reports
SCALAR_STEPS = 16  # decode runs this short are stepped one by one, longer ones as a vector
WARM_UP_SHARE = 0.1  # open-loop runs measure between the 10% and the 90% arrival

WAITING, PREFILL, DECODE, DONE, REJECTED, FAILED = range(6)


class LoadKind(StrEnum):
    RATE = "rate"  # open loop: requests arrive at the profile's arrival process, at a rate
    CONCURRENCY = "concurrency"  # closed loop: C clients each send the next request when the last one ends
    OFFLINE = "offline"  # every request arrives at time 0 (maximum-throughput runs)


@dataclass(frozen=True, kw_only=True)
class ServingConfig:
    """One replica's scheduler limits and KV cache, and how many replicas there are."""

    kv_capacity_tokens: int  # per replica, from the memory estimate
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 8192
    block_size: int = 16
    replicas: int = 1
    max_queue: int | None = None  # waiting requests per replica before rejecting; None: 4 × max_num_seqs
    chunked_prefill: bool = True
    prefix_caching: bool = True
    # TensorRT-LLM's default GUARANTEED_NO_EVICT: admit a request only when the KV of its whole sequence (prompt
    # and every output token it may generate) can be reserved; it is then never preempted
    reserve_full_sequence: bool = False

    def __post_init__(self) -> None:
        for name in ("kv_capacity_tokens", "max_num_seqs", "max_num_batched_tokens", "block_size", "replicas"):
            if getattr(self, name) < 1:
                raise invalid_argument(name, f"{name} must be ≥ 1")
        if self.max_queue is not None and self.max_queue < 0:
            raise invalid_argument("max_queue", "max_queue must be ≥ 0")

    @property
    def queue_limit(self) -> int:
        return self.max_queue if self.max_queue is not None else 4 * self.max_num_seqs


@dataclass(frozen=True, kw_only=True)
class Slo:
    """Service-level objectives a request must meet to count in goodput (each optional), in seconds."""

    ttft_s: float | None = None
    tpot_s: float | None = None
    e2e_s: float | None = None
    percentile: int = 95  # the percentile SLO searches hold to (e.g. TTFT P95 ≤ 2 s)

    def met(self, ttft: np.ndarray, tpot: np.ndarray, e2e: np.ndarray) -> np.ndarray:
        ok = np.ones(len(ttft), dtype=bool)
        if self.ttft_s is not None:
            ok &= ttft <= self.ttft_s
        if self.tpot_s is not None:
            ok &= np.nan_to_num(tpot, nan=0.0) <= self.tpot_s
        if self.e2e_s is not None:
            ok &= e2e <= self.e2e_s
        return ok

    def as_dict(self) -> dict[str, Any]:
        return {"ttft_s": self.ttft_s, "tpot_s": self.tpot_s, "e2e_s": self.e2e_s, "percentile": self.percentile}


@dataclass(frozen=True, kw_only=True)
class Distribution:
    """Mean and percentiles of a latency, in milliseconds; a percentile is None when n is too small for it."""

    n: int
    mean: float | None
    p50: float | None
    p90: float | None
    p95: float | None
    p99: float | None
    max: float | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "mean": self.mean,
            "p50": self.p50,
            "p90": self.p90,
            "p95": self.p95,
            "p99": self.p99,
            "max": self.max,
        }

    def at(self, percentile: int) -> float | None:
        value: float | None = getattr(self, f"p{percentile}")
        return value


def _distribution_ms(values_s: np.ndarray, weights: np.ndarray | None = None) -> Distribution:
    values = np.asarray(values_s, dtype=np.float64)
    keep = ~np.isnan(values)
    values = values[keep]
    n = len(values)
    if not n:
        return Distribution(n=0, mean=None, p50=None, p90=None, p95=None, p99=None, max=None)
    ms = values * 1000
    if weights is None:
        quantiles = [float(q) for q in np.percentile(ms, PERCENTILES)]  # linear interpolation between closest ranks
        mean = float(ms.mean())
        count = n
    else:
        w = np.asarray(weights, dtype=np.float64)[keep]
        order = np.argsort(ms)
        ms, w = ms[order], w[order]
        cumulative = np.cumsum(w)
        total = cumulative[-1]
        quantiles = [float(ms[min(len(ms) - 1, np.searchsorted(cumulative, total * q / 100))]) for q in PERCENTILES]
        mean = float((ms * w).sum() / total)
        count = int(total)
    values_by = dict(zip(PERCENTILES, quantiles, strict=True))
    return Distribution(
        n=count,
        mean=mean,
        max=float(ms.max()),
        **{f"p{q}": (values_by[q] if count >= MIN_SAMPLES[q] else None) for q in PERCENTILES},
    )


@dataclass(frozen=True, kw_only=True)
class SimulationResult:
    load: LoadKind
    offered: float | None  # requests per second (rate), clients (concurrency), None (offline)
    requests: int
    completed: int
    rejected: int  # the queue was full on arrival
    failed: int  # one request needs more KV than the replica's whole cache
    preempted: int  # preemption events (a request can be preempted more than once)
    duration_s: float  # first arrival to last completion
    window_s: float  # the measurement window throughputs are computed over
    ttft: Distribution
    tpot: Distribution
    itl: Distribution  # token-weighted step gaps seen by decoding sequences
    e2e: Distribution
    output_tokens_per_s: float
    input_tokens_per_s: float
    requests_per_s: float  # completed in the window / window
    arrivals_per_s: float  # realised offered rate: arrivals in the window / window (a Poisson sample varies)
    offered_output_tokens_per_s: float  # output tokens those arrivals ask for / window
    goodput_requests_per_s: float | None
    slo_attainment: float | None  # share of requests (rejected ones included) meeting every SLO
    slo: Slo | None
    kv_overflow_probability: float  # share of time the KV demand exceeds the cache
    kv_peak_fraction: float
    max_running: int
    max_waiting: int
    kv_capacity_tokens: int
    timeline: dict[str, list[float]]  # t_s, kv_used_fraction, running, waiting (downsampled)
    histograms: dict[str, dict[str, list[float]]]  # ttft_ms, itl_ms: edges and counts
    per_class: dict[str, dict[str, Any]]
    per_request: dict[str, np.ndarray] = field(repr=False, compare=False)  # ttft_s, tpot_s, e2e_s, status

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (the CLI contract's keys plus everything the UI charts)."""
        return {
            "load": self.load.value,
            "offered": self.offered,
            "requests": self.requests,
            "completed": self.completed,
            "rejected": self.rejected,
            "failed": self.failed,
            "preempted": self.preempted,
            "duration_s": self.duration_s,
            "window_s": self.window_s,
            "ttft_ms": self.ttft.as_dict(),
            "tpot_ms": self.tpot.as_dict(),
            "itl_ms": self.itl.as_dict(),
            "e2e_ms": self.e2e.as_dict(),
            "output_tokens_per_s": self.output_tokens_per_s,
            "input_tokens_per_s": self.input_tokens_per_s,
            "requests_per_s": self.requests_per_s,
            "arrivals_per_s": self.arrivals_per_s,
            "offered_output_tokens_per_s": self.offered_output_tokens_per_s,
            "goodput_requests_per_s": self.goodput_requests_per_s,
            "slo_attainment": self.slo_attainment,
            "slo": self.slo.as_dict() if self.slo else None,
            "kv_overflow_probability": self.kv_overflow_probability,
            "kv_peak_fraction": self.kv_peak_fraction,
            "max_running": self.max_running,
            "max_waiting": self.max_waiting,
            "kv_capacity_tokens": self.kv_capacity_tokens,
            "timeline": self.timeline,
            "histograms": self.histograms,
            "per_class": self.per_class,
            "percentile_method": "linear interpolation between closest ranks (ITL: token-weighted nearest rank)",
        }


@dataclass
class _ReplicaRun:
    """What one replica's simulation produced, before the replicas are merged."""

    index: np.ndarray  # request indices (into SampledRequests)
    arrival: np.ndarray
    first: np.ndarray
    finish: np.ndarray
    status: np.ndarray
    preempted: int
    itl_durations: list[np.ndarray]
    itl_weights: list[np.ndarray]
    timeline: list[tuple[float, float, int, int]]  # (t, kv_used_tokens, running, waiting)
    tokens_timeline: list[tuple[float, float]]  # (t, cumulative output tokens)
    overflow_s: float
    busy_s: float
    kv_peak: float
    max_running: int
    max_waiting: int


class _Replica:
    """One replica's state while it is simulated: its queues, its KV ledger (tokens, with half a block of padding
    per running request; a shared prefix held once), the clock and what is recorded. The scheduling rules are
    `sizing.estimator.scheduler`'s, which calls the ledger methods below; the rest of the step is this class's."""

    __slots__ = (
        "arrived_at",
        "base_step",
        "busy_s",
        "cached_prefixes",
        "capacity",
        "clients",
        "computed",
        "dec_ctx",
        "dec_n",
        "done_count",
        "finish",
        "finish_heap",
        "first",
        "free",
        "gen",
        "half_block",
        "in_prefill",
        "itl_durations",
        "itl_scalar_d",
        "itl_scalar_w",
        "itl_weights",
        "kv_own",
        "kv_peak",
        "max_running",
        "max_waiting",
        "n",
        "need",
        "next_request",
        "out_l",
        "out_tokens",
        "overflow_s",
        "pending",
        "preempted",
        "prefix_l",
        "prefix_tokens_held",
        "prompt_l",
        "queue_limit",
        "reservation",
        "reserve",
        "reserved",
        "running",
        "shared",
        "state",
        "step",
        "t",
        "timeline",
        "tokens_timeline",
        "version",
        "waiting",
        "waiting_tokens",
    )

    def __init__(
        self,
        config: ServingConfig,
        *,
        arrival: np.ndarray,
        prompt: np.ndarray,
        output: np.ndarray,
        prefix: np.ndarray,
        clients: int | None,
        bounded_queue: bool,
    ) -> None:
        n = self.n = len(arrival)
        self.capacity: int = config.kv_capacity_tokens
        self.half_block: float = config.block_size / 2  # expected padding of a request's last block
        self.queue_limit = config.queue_limit if bounded_queue else n
        self.clients = clients
        self.prompt_l: list[int] = prompt.tolist()
        self.out_l: list[int] = output.tolist()
        self.prefix_l: list[int] = prefix.tolist() if config.prefix_caching else [0] * n
        self.state: list[int] = [WAITING] * n
        self.need: list[int] = self.prompt_l[
            :
        ]  # tokens to hold after prefill (prompt, plus generated tokens after a preemption)
        self.computed: list[int] = [0] * n  # tokens of `need` already in the KV cache
        self.shared: list[int] = [
            0
        ] * n  # of those, tokens of a cached shared prefix (held once per replica, not per request)
        self.gen: list[int] = [0] * n
        self.base_step: list[int] = [0] * n
        self.version: list[int] = [0] * n
        self.first: list[float] = [math.nan] * n
        self.finish: list[float] = [math.nan] * n
        self.arrived_at: list[float] = [math.nan] * n
        self.cached_prefixes: set[int] = set()
        self.prefix_tokens_held: int = 0
        self.reserve = config.reserve_full_sequence
        self.reservation: list[float] = [0.0] * n
        self.reserved = 0.0
        self.pending: deque[tuple[float, int]] = deque()
        if clients is None:
            self.pending.extend(zip(arrival.tolist(), range(n), strict=True))
            self.next_request = n
        else:
            start = min(clients, n)
            self.pending.extend((0.0, i) for i in range(start))
            self.next_request = start
        self.waiting: deque[int] = deque()
        self.waiting_tokens = 0
        self.running: list[int] = []  # admission order (preemption takes the last)
        self.in_prefill: list[int] = []
        self.finish_heap: list[tuple[int, int, int]] = []  # (finish step, request, version)
        self.dec_n = 0
        self.dec_ctx = 0.0  # Σ KV tokens (incl. shared prefix) of decoding requests, after the last step
        self.kv_own = 0.0  # Σ KV tokens requests hold themselves (shared prefixes excluded)
        self.free = 0.0  # KV tokens still free while a step is scheduled
        self.t = 0.0
        self.step = 0
        self.preempted = 0
        self.out_tokens = 0.0
        self.itl_durations: list[np.ndarray] = []
        self.itl_weights: list[np.ndarray] = []
        self.itl_scalar_d: list[float] = []  # single steps, gathered into one array at the end
        self.itl_scalar_w: list[int] = []
        self.timeline: list[tuple[float, float, int, int]] = []
        self.tokens_timeline: list[tuple[float, float]] = [(0.0, 0.0)]
        self.overflow_s = self.busy_s = 0.0
        self.kv_peak = 0.0
        self.max_running = self.max_waiting = 0
        self.done_count = 0

    # -- arrivals and endings ----------------------------------------------------------------------------

    def used(self) -> float:
        return self.kv_own + self.prefix_tokens_held + self.half_block * len(self.running)

    def release(self, i: int, status: int, when: float) -> None:
        """End request i; a closed loop's client sends its next request at once."""
        self.state[i] = status
        self.finish[i] = when
        self.done_count += 1
        if self.clients is not None and self.next_request < self.n:
            self.pending.append((when, self.next_request))
            self.next_request += 1

    def admit_arrivals(self) -> None:
        """Requests that arrived by now join the queue, or are rejected when it is full."""
        pending, waiting, t = self.pending, self.waiting, self.t
        while pending and pending[0][0] <= t:
            when, i = pending.popleft()
            self.arrived_at[i] = when
            if len(waiting) >= self.queue_limit:
                self.release(i, REJECTED, when)
                continue
            waiting.append(i)
            self.waiting_tokens += self.need[i]
        self.max_waiting = max(self.max_waiting, len(waiting))

    def wait_for_arrival(self) -> None:
        """Nothing can run before the next arrival: the clock moves to it."""
        self.t = max(self.t, self.pending[0][0])

    def fail_head(self) -> None:
        """An empty replica cannot take the head of the queue, and nothing else will free memory."""
        i = self.waiting.popleft()
        self.waiting_tokens -= self.need[i]
        self.release(i, FAILED, self.t)

    def _drop(self, i: int, *, requeue: bool) -> None:
        """Take running request i off the replica, freeing its KV: back to the queue's head (a preemption,
        recomputed later with its generated tokens) or failed (it cannot fit even alone)."""
        self.reserved -= self.reservation[i]
        self.reservation[i] = 0.0
        if self.state[i] == DECODE:
            held = self.need[i] + (self.step - self.base_step[i])
            self.dec_n -= 1
            self.dec_ctx -= held
            self.version[i] += 1
        else:
            held = self.computed[i]
            self.in_prefill.remove(i)
        self.running.remove(i)
        self.kv_own -= held - self.shared[i]
        self.computed[i] = 0
        self.shared[i] = 0
        if requeue:
            self.state[i] = WAITING
            self.need[i] = self.prompt_l[i] + self.gen[i]
            self.waiting.appendleft(i)
            self.waiting_tokens += self.need[i]
        else:
            self.release(i, FAILED, self.t)

    # -- the KV ledger the scheduler asks (sizing.estimator.scheduler.KvLedger) ------------------------------

    def decodes_overflow(self) -> bool:
        dec_n = self.dec_n  # (used() inlined: the simulator asks this every step)
        return dec_n > 0 and self.kv_own + self.prefix_tokens_held + self.half_block * len(self.running) + dec_n > (
            self.capacity
        )

    def preempt(self, request: int) -> None:
        self._drop(request, requeue=True)
        self.preempted += 1

    def fail_running(self, request: int, reason: FailReason) -> None:
        self._drop(request, requeue=False)

    def start_decodes(self) -> int:
        self.free = self.capacity - self.used() - self.dec_n
        return self.dec_n

    def prefilling(self) -> list[int]:
        return self.in_prefill

    def prefill_remaining(self, request: int) -> int:
        return self.need[request] - self.computed[request]

    def prefill_room(self, request: int) -> float:
        return self.free

    def take(self, request: int, size: int) -> None:
        self.free -= size

    def _hit(self, i: int) -> int:
        """Tokens of a cached shared prefix request i starts with."""
        prefix = self.prefix_l[i]
        return prefix if (prefix and prefix in self.cached_prefixes and self.need[i] > prefix) else 0

    def never_fits(self, request: int) -> bool:
        return self.need[request] - self._hit(request) + self.half_block > self.capacity - self.prefix_tokens_held

    def fail_waiting(self, request: int) -> None:
        self.waiting_tokens -= self.need[request]
        self.release(request, FAILED, self.t)

    def claim(self, request: int) -> float | None:
        if not self.reserve:
            return 0.0
        claim = self.admit_remaining(request) + (self.out_l[request] - self.gen[request]) + self.half_block
        return None if self.reserved + claim > self.capacity - self.prefix_tokens_held else claim

    def admit_remaining(self, request: int) -> int:
        return self.need[request] - self._hit(request)

    def admit_room(self, request: int) -> float:
        return self.free - self.half_block

    def admit(self, request: int, size: int, claim: float) -> None:
        hit = self._hit(request)
        self.waiting_tokens -= self.need[request]
        self.reservation[request] = claim
        self.reserved += claim
        self.state[request] = PREFILL
        self.computed[request] = hit
        self.shared[request] = hit
        self.running.append(request)
        self.in_prefill.append(request)
        self.free -= size + self.half_block

    # -- running a step ----------------------------------------------------------------------------------

    def _account(self, elapsed: float, demand: float) -> None:
        if demand > self.capacity:
            self.overflow_s += elapsed
        self.busy_s += elapsed
        self.t += elapsed

    def run_decodes(self, model: StepModel, *, preempted: bool) -> None:
        """Decode only: nothing can be admitted until a completion (or an arrival when the queue is empty), so
        take the steps in bulk up to that event."""
        demand = self.used() + self.waiting_tokens
        dec_n, heap, version = self.dec_n, self.finish_heap, self.version
        while heap and version[heap[0][1]] != heap[0][2]:
            heapq.heappop(heap)
        steps = heap[0][0] - self.step if heap else 1
        if preempted and self.waiting:
            # a preemption holds admission for this one step only (vLLM; the docstring's rule): the preempted
            # request may be admitted again at the next step, not only after the next completion
            steps = 1
        steps = max(1, min(steps, int((self.capacity - self.used()) // dec_n), 200_000))
        context = self.dec_ctx + dec_n
        first_step = model.step_s(decode=dec_n, context_tokens=context)
        gap = self.pending[0][0] - self.t if (self.pending and not self.waiting) else None
        if gap is not None:
            # steps only lengthen as contexts grow: no more than gap / first step start before the arrival
            steps = min(steps, max(1, int(gap / first_step) + 1))
        if steps <= SCALAR_STEPS:
            steps, elapsed = self._decode_one_by_one(model, steps=steps, first_step=first_step, gap=gap)
        else:
            steps, elapsed = self._decode_vector(model, steps=steps, gap=gap)
        self._account(elapsed, demand)
        self.step += steps
        self.dec_ctx += dec_n * steps
        self.kv_own += dec_n * steps
        self.out_tokens += dec_n * steps

    def _decode_one_by_one(
        self, model: StepModel, *, steps: int, first_step: float, gap: float | None
    ) -> tuple[int, float]:
        """A few decode steps, one by one (numpy's per-call overhead would dominate): (steps taken, seconds)."""
        dec_n = self.dec_n
        context = self.dec_ctx + dec_n
        elapsed = 0.0
        taken = 0
        while taken < steps and (gap is None or taken == 0 or elapsed < gap):
            duration = first_step if taken == 0 else model.step_s(decode=dec_n, context_tokens=context + dec_n * taken)
            self.itl_scalar_d.append(duration)
            self.itl_scalar_w.append(dec_n)
            elapsed += duration
            taken += 1
        return taken, elapsed

    def _decode_vector(self, model: StepModel, *, steps: int, gap: float | None) -> tuple[int, float]:
        """Many decode steps as one vector, cut at the next arrival: (steps taken, seconds)."""
        dec_n = self.dec_n
        durations = model.decode_steps_s(decode=dec_n, context_tokens=self.dec_ctx + dec_n, steps=steps)
        ends = np.cumsum(durations)
        if gap is not None:
            steps = min(steps, 1 + int(np.searchsorted(ends[:-1], gap, side="left")) if gap > 0 else 1)
        self.itl_durations.append(durations[:steps])
        self.itl_weights.append(np.full(steps, float(dec_n)))
        return steps, float(ends[steps - 1])

    def run_prefill_step(self, model: StepModel, chunks: tuple[tuple[int, int], ...]) -> None:
        """One step with prefill (and the decodes); prompts whose prefill completes emit their next token."""
        demand = self.used() + self.waiting_tokens
        dec_n, computed = self.dec_n, self.computed
        work = prefill_work((size, computed[i]) for i, size in chunks)
        duration = model.step_s(
            decode=dec_n,
            context_tokens=self.dec_ctx + dec_n,
            prefill=work.tokens,
            prefill_pairs=work.pairs,
            prefill_context_tokens=work.context_tokens,
        )
        if dec_n:
            self.itl_scalar_d.append(duration)
            self.itl_scalar_w.append(dec_n)
        self._account(duration, demand)
        self.step += 1
        self.dec_ctx += dec_n
        self.kv_own += dec_n
        self.out_tokens += dec_n
        for i, size in chunks:
            computed[i] += size
            self.kv_own += size
            if computed[i] >= self.need[i]:
                self._prefilled(i)

    def _prefilled(self, i: int) -> None:
        """Request i computed its whole prompt: its prefix is cached, it emits a token, then decodes or ends."""
        self.in_prefill.remove(i)
        prefix, need = self.prefix_l[i], self.need[i]
        if prefix and prefix not in self.cached_prefixes and need > prefix and not self.shared[i]:
            self.cached_prefixes.add(prefix)  # held once per replica from now on
            self.prefix_tokens_held += prefix
            self.kv_own -= prefix
            self.shared[i] = prefix
        self.gen[i] += 1
        self.out_tokens += 1
        if math.isnan(self.first[i]):
            self.first[i] = self.t
        if self.gen[i] >= self.out_l[i]:
            self.running.remove(i)
            self.kv_own -= need - self.shared[i]
            self.reserved -= self.reservation[i]
            self.release(i, DONE, self.t)
            return
        self.state[i] = DECODE
        self.base_step[i] = self.step
        self.dec_n += 1
        self.dec_ctx += need
        heapq.heappush(self.finish_heap, (self.step + self.out_l[i] - self.gen[i], i, self.version[i]))

    def complete_finished(self) -> None:
        """A request decoding since step s with g tokens finishes after step s + (out - g)."""
        heap = self.finish_heap
        while heap and heap[0][0] <= self.step:
            finish_step, i, ver = heapq.heappop(heap)
            if self.version[i] != ver or self.state[i] != DECODE:
                continue
            held = self.need[i] + (finish_step - self.base_step[i])
            self.gen[i] = self.out_l[i]
            self.dec_n -= 1
            self.dec_ctx -= held
            self.kv_own -= held - self.shared[i]
            self.reserved -= self.reservation[i]
            self.running.remove(i)
            self.release(i, DONE, self.t)

    def record(self) -> None:
        """The KV use, running and waiting counts and tokens so far, after a step."""
        now_used = self.used()
        self.kv_peak = max(self.kv_peak, now_used)
        self.max_running = max(self.max_running, len(self.running))
        self.timeline.append((self.t, now_used, len(self.running), len(self.waiting)))
        self.tokens_timeline.append((self.t, self.out_tokens))

    def result(self, index: np.ndarray) -> _ReplicaRun:
        if self.itl_scalar_d:
            self.itl_durations.append(np.array(self.itl_scalar_d))
            self.itl_weights.append(np.array(self.itl_scalar_w, dtype=np.float64))
        return _ReplicaRun(
            index=index,
            arrival=np.array(self.arrived_at),
            first=np.array(self.first),
            finish=np.array(self.finish),
            status=np.array(self.state, dtype=np.int64),
            preempted=self.preempted,
            itl_durations=self.itl_durations,
            itl_weights=self.itl_weights,
            timeline=self.timeline,
            tokens_timeline=self.tokens_timeline,
            overflow_s=self.overflow_s,
            busy_s=self.busy_s,
            kv_peak=self.kv_peak,
            max_running=self.max_running,
            max_waiting=self.max_waiting,
        )


def _simulate_replica(
    model: StepModel,
    config: ServingConfig,
    *,
    index: np.ndarray,
    arrival: np.ndarray,
    prompt: np.ndarray,
    output: np.ndarray,
    prefix: np.ndarray,
    clients: int | None,
    bounded_queue: bool,
    progress: Callable[[int], None] | None = None,
) -> _ReplicaRun:
    """Simulate one replica: admit the arrivals, schedule a step, advance the clock through it, record; until
    every request has ended. `clients` set: a closed loop (arrival times are ignored). An unbounded queue for
    offline runs and closed loops (their queue is the backlog by design, or at most the clients)."""
    replica = _Replica(
        config,
        arrival=arrival,
        prompt=prompt,
        output=output,
        prefix=prefix,
        clients=clients,
        bounded_queue=bounded_queue,
    )
    limits = StepLimits(
        max_num_seqs=config.max_num_seqs,
        max_num_batched_tokens=max(config.max_num_batched_tokens, 1),
        chunked_prefill=config.chunked_prefill,
    )
    n = len(index)
    loops = 0
    while replica.done_count < n:
        loops += 1
        if progress is not None and not loops % PROGRESS_EVERY:
            progress(replica.done_count)
        replica.admit_arrivals()
        plan = schedule_step(replica, limits)
        if plan.outcome is StepOutcome.FREED:
            continue
        if plan.outcome is not StepOutcome.WORK:
            if replica.pending:
                replica.wait_for_arrival()
                continue
            if plan.outcome is StepOutcome.HEAD_BLOCKED:
                replica.fail_head()
                continue
            break
        if plan.chunks:
            replica.run_prefill_step(model, plan.chunks)
        else:
            replica.run_decodes(model, preempted=plan.preempted)
        replica.complete_finished()
        replica.record()
    return replica.result(index)


def _histogram_ms(values_s: np.ndarray, weights: np.ndarray | None = None, bins: int = 40) -> dict[str, list[float]]:
    values = np.asarray(values_s, dtype=np.float64) * 1000
    keep = ~np.isnan(values)
    if not keep.any():
        return {"edges": [], "counts": []}
    kept = values[keep]
    low, high = float(kept.min()), float(kept.max())
    if high - low < 1e-9 * max(1.0, abs(high)):  # one value: one bin around it
        low, high = low - 0.5, high + 0.5
    counts, edges = np.histogram(kept, bins=bins, range=(low, high), weights=None if weights is None else weights[keep])
    return {"edges": edges.tolist(), "counts": counts.astype(float).tolist()}


def _downsample(timeline: list[tuple[float, float, int, int]], capacity: float, points: int) -> dict[str, list[float]]:
    if not timeline:
        return {"t_s": [], "kv_used_fraction": [], "running": [], "waiting": []}
    data = np.array(timeline, dtype=np.float64)
    if len(data) > points:
        # keep each bucket's maximum so peaks survive the thinning
        buckets = np.array_split(np.arange(len(data)), points)
        data = np.array([[data[b[-1], 0], *data[b, 1:].max(axis=0)] for b in buckets if len(b)])
    return {
        "t_s": data[:, 0].round(4).tolist(),
        "kv_used_fraction": (data[:, 1] / capacity).round(4).tolist(),
        "running": data[:, 2].astype(int).tolist(),
        "waiting": data[:, 3].astype(int).tolist(),
    }


def _progress_from(progress: Callable[[int, int], None], *, before: int, total: int) -> Callable[[int], None]:
    """One replica's progress (requests it has ended) as the run's: (requests ended so far, all requests)."""

    def report(done: int) -> None:
        progress(before + done, total)

    return report


def simulate(
    *,
    model: StepModel,
    config: ServingConfig,
    requests: SampledRequests,
    load: LoadKind,
    concurrency: int | None = None,
    rate_per_s: float | None = None,
    slo: Slo | None = None,
    timeline_points: int = 300,
    progress: Callable[[int, int], None] | None = None,
) -> SimulationResult:
    """Run the requests through `config.replicas` replicas and measure them (see the module docstring).

    `load` says how `requests.arrival_s` is meant: RATE and OFFLINE use it as is (OFFLINE samples carry zeros);
    CONCURRENCY ignores it and runs a closed loop of `concurrency` clients. `rate_per_s` is only reported.
    """
    total = len(requests)
    if total < 1:
        raise invalid_argument("requests", "the number of requests must be ≥ 1")
    if load is LoadKind.CONCURRENCY and (concurrency is None or concurrency < 1):
        raise invalid_argument("concurrency", "a closed loop needs concurrency ≥ 1")
    replicas = config.replicas
    runs: list[_ReplicaRun] = []
    finished_before = 0
    for replica in range(replicas):
        members = np.arange(replica, total, replicas)
        if not len(members):
            continue
        clients = None
        if load is LoadKind.CONCURRENCY and concurrency is not None:
            clients = concurrency // replicas + (1 if replica < concurrency % replicas else 0)
            if clients == 0:
                continue
        runs.append(
            _simulate_replica(
                model,
                config,
                index=members,
                arrival=requests.arrival_s[members],
                prompt=requests.input_tokens[members],
                output=requests.output_tokens[members],
                prefix=requests.prefix_tokens[members],
                clients=clients,
                bounded_queue=load is LoadKind.RATE,
                progress=_progress_from(progress, before=finished_before, total=total) if progress else None,
            )
        )
        finished_before += len(members)
    if load is LoadKind.CONCURRENCY:  # replicas without a client ran nothing: their requests were never sent
        served = np.concatenate([r.index for r in runs])
    else:
        served = np.arange(total)
    order = np.concatenate([r.index for r in runs])
    arrival = np.concatenate([r.arrival for r in runs])
    first = np.concatenate([r.first for r in runs])
    finish = np.concatenate([r.finish for r in runs])
    status = np.concatenate([r.status for r in runs])
    outputs = requests.output_tokens[order].astype(np.float64)
    inputs = requests.input_tokens[order].astype(np.float64)
    ok = status == DONE
    ttft = np.where(ok, first - arrival, np.nan)
    e2e = np.where(ok, finish - arrival, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        tpot = np.where(ok & (outputs > 1), (finish - first) / (outputs - 1), np.nan)
    itl_d = (
        np.concatenate([d for r in runs for d in r.itl_durations])
        if any(r.itl_durations for r in runs)
        else np.array([])
    )
    itl_w = (
        np.concatenate([w for r in runs for w in r.itl_weights]) if any(r.itl_weights for r in runs) else np.array([])
    )

    start = float(np.nanmin(arrival)) if len(arrival) else 0.0
    end = float(np.nanmax(finish)) if len(finish) else 0.0
    duration = max(0.0, end - start)
    if load is LoadKind.RATE and total > 1:
        # steady state: between the arrivals of the 10th and the 90th percentile requests (warm-up from an empty
        # server and the drain after the last arrival are not the offered load)
        arrived = np.sort(arrival[~np.isnan(arrival)])
        window_start = float(arrived[int(WARM_UP_SHARE * (len(arrived) - 1))])
        window_end = float(arrived[int((1 - WARM_UP_SHARE) * (len(arrived) - 1))])
        if window_end - window_start <= 0:
            window_start, window_end = start, end
    else:
        window_start, window_end = start, end
    window = max(window_end - window_start, 1e-9)

    def in_window(timeline: list[tuple[float, float]]) -> float:
        times = np.array([p[0] for p in timeline])
        tokens = np.array([p[1] for p in timeline])
        return float(np.interp(window_end, times, tokens) - np.interp(window_start, times, tokens))

    generated = sum(in_window(r.tokens_timeline) for r in runs)
    completed_in_window = ok & (finish >= window_start) & (finish <= window_end)
    requests_per_s = float(completed_in_window.sum() / window)
    arrived_in_window = (arrival >= window_start) & (arrival <= window_end)
    arrivals_per_s = float(arrived_in_window.sum() / window)
    offered_tokens_per_s = float(outputs[arrived_in_window].sum() / window)
    input_per_s = float(inputs[completed_in_window].sum() / window)
    goodput = attainment = None
    if slo is not None:
        met = ok & slo.met(np.nan_to_num(ttft, nan=np.inf), tpot, np.nan_to_num(e2e, nan=np.inf))
        goodput = float((met & completed_in_window).sum() / window)
        attainment = float(met.sum() / len(met)) if len(met) else None
    busy = sum(r.busy_s for r in runs)
    overflow = sum(r.overflow_s for r in runs) / busy if busy else 0.0
    capacity = float(config.kv_capacity_tokens)
    timeline = max(runs, key=lambda r: r.kv_peak).timeline if runs else []
    per_class: dict[str, dict[str, Any]] = {}
    class_of = requests.class_index[order]
    for index, name in enumerate(requests.class_names):
        members = class_of == index
        if not members.any():
            continue
        per_class[name] = {
            "requests": int(members.sum()),
            "completed": int((ok & members).sum()),
            "rejected": int((status[members] == REJECTED).sum()),
            "ttft_ms": _distribution_ms(ttft[members]).as_dict(),
            "tpot_ms": _distribution_ms(tpot[members]).as_dict(),
            "e2e_ms": _distribution_ms(e2e[members]).as_dict(),
        }
    return SimulationResult(
        load=load,
        offered=rate_per_s if load is LoadKind.RATE else (concurrency if load is LoadKind.CONCURRENCY else None),
        requests=len(served),
        completed=int(ok.sum()),
        rejected=int((status == REJECTED).sum()),
        failed=int((status == FAILED).sum()),
        preempted=sum(r.preempted for r in runs),
        duration_s=duration,
        window_s=window,
        ttft=_distribution_ms(ttft),
        tpot=_distribution_ms(tpot),
        itl=_distribution_ms(itl_d, itl_w),
        e2e=_distribution_ms(e2e),
        output_tokens_per_s=generated / window,
        input_tokens_per_s=input_per_s,
        requests_per_s=requests_per_s,
        arrivals_per_s=arrivals_per_s,
        offered_output_tokens_per_s=offered_tokens_per_s,
        goodput_requests_per_s=goodput,
        slo_attainment=attainment,
        slo=slo,
        kv_overflow_probability=float(overflow),
        kv_peak_fraction=float(max((r.kv_peak for r in runs), default=0.0) / capacity),
        max_running=max((r.max_running for r in runs), default=0),
        max_waiting=max((r.max_waiting for r in runs), default=0),
        kv_capacity_tokens=config.kv_capacity_tokens,
        timeline=_downsample(timeline, capacity, timeline_points),
        histograms={
            "ttft_ms": _histogram_ms(ttft),
            "itl_ms": _histogram_ms(itl_d, itl_w),
            "e2e_ms": _histogram_ms(e2e),
        },
        per_class=per_class,
        per_request={"ttft_s": ttft, "tpot_s": tpot, "e2e_s": e2e, "status": status, "index": order},
    )
