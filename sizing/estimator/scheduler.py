"""One scheduler step of continuous batching (vLLM V1's rules), the one copy the offline simulator
(`sizing.estimator.simulator`) and the simulator server (`benchmarks_app.simserver.engine`) both run.

At a step boundary, in this order:

1. Decodes first: every decoding request needs KV for one more token; while that does not fit, the most recently
   admitted running request is preempted (back to the head of the queue, recomputed later), or, alone on the
   replica, fails.
2. The step's token budget is `max_num_batched_tokens` less the decodes. Prompts part-way through their prefill
   continue in admission order, each taking what the budget and the free KV allow (chunked prefill; without it a
   prompt is prefilled whole or waits).
3. Waiting requests are admitted first come, first served (no overtaking) while the budget lasts, fewer than
   `max_num_seqs` run and none was preempted in this step (vLLM V1 admits nothing in a step that preempted). A
   request that needs more KV than the whole cache fails; with a full-sequence reservation (TensorRT-LLM's
   guaranteed-no-evict) a request waits until its whole sequence can be reserved.
4. When nothing can run, a prompt stuck half-way with the cache full frees room: the latest admitted is preempted
   (or a lone one fails). A queue head an empty replica cannot take is left to the caller (`HEAD_BLOCKED`).

How KV is counted is the caller's: the simulator counts tokens with half a block of padding per request, the
server whole blocks. A `KvLedger` answers the questions the rules ask and applies what they decide.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from sizing.estimator.perf import prefill_pairs

R = TypeVar("R")


class StepOutcome(Enum):
    WORK = "work"  # decodes or prefill chunks to run
    FREED = "freed"  # nothing could run; a stuck prompt was preempted or failed: schedule again
    HEAD_BLOCKED = "head_blocked"  # nothing runs and the queue's head cannot be admitted by an empty replica
    IDLE = "idle"  # nothing running, nothing waiting


class FailReason(Enum):
    DECODE_NO_FIT = "the sequence no longer fits in the KV cache"  # alone, its next token does not fit
    PROMPT_NO_FIT = "the prompt no longer fits in the KV cache"  # alone, its prefill is stuck half-way


@dataclass(frozen=True, kw_only=True)
class StepLimits:
    """The scheduler's limits per replica and step."""

    max_num_seqs: int
    max_num_batched_tokens: int
    chunked_prefill: bool = True


class StepPlan(NamedTuple, Generic[R]):
    """What one scheduler pass decided: the outcome, the decodes' count and the prefill chunks (request, tokens).
    (A named tuple, immutable: the simulator makes one per step, and a frozen dataclass costs several times more.)"""

    outcome: StepOutcome
    decodes: int = 0
    chunks: tuple[tuple[R, int], ...] = ()
    preempted: bool = False  # a request was preempted in this step (step 1)


_IDLE: StepPlan[Any] = StepPlan(StepOutcome.IDLE)
_FREED: StepPlan[Any] = StepPlan(StepOutcome.FREED)
_HEAD_BLOCKED: StepPlan[Any] = StepPlan(StepOutcome.HEAD_BLOCKED)


class KvLedger(Protocol[R]):
    """A replica's queues and KV accounting, as the scheduling rules see them."""

    @property
    def running(self) -> list[R]:
        """Running requests in admission order (preemption takes the last)."""
        ...

    @property
    def waiting(self) -> deque[R]:
        """Waiting requests, first come first served."""
        ...

    def decodes_overflow(self) -> bool:
        """Whether there are decodes and their next tokens' KV does not fit."""
        ...

    def preempt(self, request: R) -> None:
        """Free a running request's KV and put it back at the head of the queue (counted as a preemption)."""
        ...

    def fail_running(self, request: R, reason: FailReason) -> None:
        """Free a running request's KV and end it as failed."""
        ...

    def start_decodes(self) -> int:
        """Reserve the decodes' next tokens; return how many decode."""
        ...

    def prefilling(self) -> Iterable[R]:
        """Running requests part-way through their prefill, in admission order."""
        ...

    def prefill_remaining(self, request: R) -> int:
        """Prompt tokens a partly prefilled request still has to compute."""
        ...

    def prefill_room(self, request: R) -> float:
        """Tokens of KV a partly prefilled request can still take in this step."""
        ...

    def take(self, request: R, size: int) -> None:
        """Hold KV for a chunk of `size` tokens of a partly prefilled request."""
        ...

    def never_fits(self, request: R) -> bool:
        """Whether the waiting request needs more KV than the whole cache."""
        ...

    def fail_waiting(self, request: R) -> None:
        """End a request taken off the queue's head because it can never fit."""
        ...

    def claim(self, request: R) -> float | None:
        """The KV its whole sequence reserves (0 without reservation); None: it cannot be reserved now."""
        ...

    def admit_remaining(self, request: R) -> int:
        """Prompt tokens a waiting request has to compute once admitted (after a cached prefix)."""
        ...

    def admit_room(self, request: R) -> float:
        """Tokens of KV a newly admitted request can take in this step."""
        ...

    def admit(self, request: R, size: int, claim: float) -> None:
        """Start a request taken off the queue's head: running, a first chunk of `size` tokens, its claim."""
        ...


def chunk_size(remaining: int, budget: int, room: float, *, chunked: bool) -> int:
    """Tokens a prefill takes in this step: what is left of the prompt within the budget (whole or nothing
    without chunked prefill), within the KV room."""
    size = min(remaining, budget) if chunked else (remaining if remaining <= budget else 0)
    return int(min(size, max(0.0, room)))


def _free_stuck(ledger: KvLedger[R], reason: FailReason) -> bool:
    """Preempt the latest admitted running request, or fail a lone one; True: a preemption."""
    running = ledger.running
    if len(running) > 1:
        ledger.preempt(running[-1])
        return True
    ledger.fail_running(running[0], reason)
    return False


def schedule_step(ledger: KvLedger[R], limits: StepLimits) -> StepPlan[R]:
    """Choose one step's work (rules 1-4 of the module docstring), applying it to the ledger."""
    running, waiting = ledger.running, ledger.waiting
    if not running and not waiting:
        return _IDLE
    # 1. decodes first, preempting the latest admitted while their next tokens do not fit
    preempted = False
    while ledger.decodes_overflow():
        preempted = _free_stuck(ledger, FailReason.DECODE_NO_FIT) or preempted
    decodes = ledger.start_decodes()
    budget = limits.max_num_batched_tokens - decodes
    chunked = limits.chunked_prefill
    chunks: list[tuple[R, int]] = []
    # 2. prompts part-way through their prefill, in admission order
    for request in ledger.prefilling():
        if budget <= 0:
            break
        size = chunk_size(ledger.prefill_remaining(request), budget, ledger.prefill_room(request), chunked=chunked)
        if size <= 0:
            break
        ledger.take(request, size)
        chunks.append((request, size))
        budget -= size
    # 3. waiting requests, first come first served, none in a step that preempted
    while waiting and budget > 0 and len(running) < limits.max_num_seqs and not preempted:
        request = waiting[0]
        if ledger.never_fits(request):
            waiting.popleft()
            ledger.fail_waiting(request)
            continue
        claim = ledger.claim(request)
        if claim is None:
            break  # its whole sequence cannot be reserved yet
        size = chunk_size(ledger.admit_remaining(request), budget, ledger.admit_room(request), chunked=chunked)
        if size <= 0:
            break  # head of line: the next request waits for KV or budget
        waiting.popleft()
        ledger.admit(request, size, claim)
        chunks.append((request, size))
        budget -= size
    if decodes or chunks:
        return StepPlan(StepOutcome.WORK, decodes, tuple(chunks), preempted)
    # 4. nothing can run: prompts stuck half-way with the cache full free the latest (or a lone one fails)
    if running:
        _free_stuck(ledger, FailReason.PROMPT_NO_FIT)
        return _FREED
    return _HEAD_BLOCKED if waiting else _IDLE


@dataclass(frozen=True, kw_only=True)
class PrefillWork:
    """The prefill a step computes, as `StepModel.step_s` takes it."""

    tokens: int
    pairs: float  # Σ attention pairs of the chunks (perf.prefill_pairs)
    context_tokens: float  # Σ tokens each chunk's request had computed before it


def prefill_work(chunks: Iterable[tuple[int, int]]) -> PrefillWork:
    """Sum the chunks, each (tokens, tokens of its request already computed), in step order."""
    tokens = 0
    pairs = offsets = 0.0
    for size, done in chunks:
        tokens += size
        pairs += prefill_pairs(size, done)
        offsets += done
    return PrefillWork(tokens=tokens, pairs=pairs, context_tokens=offsets)


__all__ = [
    "FailReason",
    "KvLedger",
    "PrefillWork",
    "StepLimits",
    "StepOutcome",
    "StepPlan",
    "chunk_size",
    "prefill_work",
    "schedule_step",
]
