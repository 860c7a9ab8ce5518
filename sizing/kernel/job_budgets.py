"""Every job's budget, known before it is queued (issue 19): how long a task of each kind may run, how much a job may
simulate, how long its requests may be, and how many jobs of a kind one organisation may have waiting or running.

Time limits. Celery enforces a task's `soft_time_limit` and `time_limit` under the prefork pool only; our workers run
`--pool=threads` (deploy/run-dev.sh, deploy/entrypoint.sh), where Celery enforces neither. So every task body runs
inside `time_budget(kind)`: at the soft limit a timer raises `SoftTimeLimitExceeded` in the task's thread
(`PyThreadState_SetAsyncExc`: it lands at the thread's next Python bytecode, as prefork's signal would), and the
task marks its row failed with `over_budget_message()`. A thread cannot be killed, so the hard limit only applies
under prefork (there the pool kills the child process); under threads the soft limit is the budget. Work running in C
for a long time (one huge numpy call) is stopped when it returns.

The other bounds keep a job inside its time budget: lengths within the model's context (`context_tokens_check`) and
simulated requests × tokens per request within SIMULATED_TOKENS_MAX (`simulated_tokens_check`), both refused with a
400 before anything is queued; per-organisation limits on jobs at once (`running_jobs_check`) answer 429, so one
organisation's quotes cannot fill the workers that another's estimates wait for.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from billiard.process import current_process
from celery.exceptions import SoftTimeLimitExceeded

from sizing.estimator.errors import SizingError, SizingErrorCode, invalid_argument


class JobKind(StrEnum):
    ESTIMATE = "estimate"
    SIMULATION = "simulation"  # simulate, sweep, SLO search, deployment search, calibration
    SEARCH_PART = "search_part"  # one chunk of a fanned-out deployment search
    QUOTE = "quote"
    BENCHMARK_IMPORT = "benchmark_import"
    LOADTEST_SHARD = "loadtest_shard"
    LOADTEST_REAP = "loadtest_reap"
    REPORT_SIGN = "report_sign"
    REPORT_DRAFT = "report_draft"
    SENTINEL_HEALTH = "sentinel_health"


@dataclass(frozen=True, kw_only=True)
class TimeBudget:
    """Seconds a task may run: at `soft_s` it is stopped and its row marked failed; `hard_s` (prefork only) kills
    the process if the task ignores the soft limit."""

    soft_s: int
    hard_s: int

    def task_options(self) -> dict[str, int]:
        return {"soft_time_limit": self.soft_s, "time_limit": self.hard_s}


TIME_BUDGETS: dict[JobKind, TimeBudget] = {
    # one memory report: milliseconds; a minute covers a cold catalog and a slow database
    JobKind.ESTIMATE: TimeBudget(soft_s=60, hard_s=90),
    # a simulation of at most SIMULATED_TOKENS_MAX tokens: ~1-40 M simulated tokens/s measured on one core, so
    # 15 minutes cover the slowest mix at the cap
    JobKind.SIMULATION: TimeBudget(soft_s=900, hard_s=960),
    # a chunk of SIZING_SEARCH_CHUNK candidates, each a short simulation
    JobKind.SEARCH_PART: TimeBudget(soft_s=600, hard_s=660),
    # a quote is a deployment search held to the same token cap; sales wait for it, so it is shorter
    JobKind.QUOTE: TimeBudget(soft_s=600, hard_s=660),
    # storing a benchmark file's per-request records (files are capped by the upload limit)
    JobKind.BENCHMARK_IMPORT: TimeBudget(soft_s=600, hard_s=660),
    # a load-test shard runs for its plan's duration (at most LOADTEST_MAX_DURATION_S, 4 h by default) plus the
    # common start and the drain: 4 h 15 min; a longer LOADTEST_MAX_DURATION_S needs this raised with it
    JobKind.LOADTEST_SHARD: TimeBudget(soft_s=4 * 3600 + 900, hard_s=4 * 3600 + 960),
    # the reaper reads and updates a few rows every 30 s
    JobKind.LOADTEST_REAP: TimeBudget(soft_s=60, hard_s=90),
    # rendering (WeasyPrint, charts through Chromium) and signing one report PDF
    JobKind.REPORT_SIGN: TimeBudget(soft_s=300, hard_s=360),
    # gathering one version's evidence: an estimate, the KV overflow simulation (2,000 requests) and the checklist
    JobKind.REPORT_DRAFT: TimeBudget(soft_s=300, hard_s=360),
    # judging a 72-hour sentinel file (~1 s for 26,000 samples) and rendering and signing its health report
    JobKind.SENTINEL_HEALTH: TimeBudget(soft_s=300, hard_s=360),
}

# A job's simulated work: requests simulated × tokens per request (input + output), summed over every simulation
# the job runs (a sweep's points, an SLO search's probes, a search's candidates). The simulator does ~1-40 M
# tokens/s on one core (bulk decode steps), so 10^9 tokens stay within the SIMULATION budget in the slow case.
SIMULATED_TOKENS_MAX = 1_000_000_000
# The longest request any catalog model takes (Llama 4 Scout: max_position_embeddings 10,485,760): the serializers'
# maximum for token lengths; each job is then held to its own model's context
MAX_CONTEXT_TOKENS = 10_485_760

# Jobs one organisation may have queued or running at once, per kind; over it the API answers 429
RUNNING_JOBS_MAX: dict[JobKind, int] = {
    JobKind.QUOTE: 3,  # a quote is up to a few minutes of a worker: three keep a sales team going
    JobKind.SIMULATION: 6,
    JobKind.ESTIMATE: 20,  # short: a burst of saved estimates is normal
}


def over_budget_message(kind: JobKind) -> str:
    return f"stopped: over its time budget of {TIME_BUDGETS[kind].soft_s} s"


def over_budget_error(kind: JobKind) -> dict[str, object]:
    """The stored error of a job stopped at its soft limit (the API's error shape)."""
    return {
        "code": "over_time_budget",
        "message": over_budget_message(kind),
        "extra": {"time_budget_s": TIME_BUDGETS[kind].soft_s, "job_kind": kind.value},
    }


def _raise_in_thread(thread_id: int) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(SoftTimeLimitExceeded))


def _clear_in_thread(thread_id: int) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), None)


@contextlib.contextmanager
def time_budget(kind: JobKind, *, soft_s: float | None = None) -> Iterator[TimeBudget]:
    """Run the body within the kind's soft limit (`soft_s` overrides it, for tests): past it, SoftTimeLimitExceeded
    is raised in this thread. Under the prefork pool Celery's own signal does that, so no timer is armed there."""
    budget = TIME_BUDGETS[kind]
    if current_process().name.startswith("ForkPoolWorker") and soft_s is None:
        yield budget
        return
    thread_id, lock, state = threading.get_ident(), threading.Lock(), {"done": False, "fired": False}

    def fire() -> None:
        with lock:
            if not state["done"]:
                state["fired"] = True
                _raise_in_thread(thread_id)

    timer = threading.Timer(budget.soft_s if soft_s is None else soft_s, fire)
    timer.daemon = True
    timer.start()
    try:
        yield budget
    finally:
        with lock:
            state["done"] = True
            timer.cancel()
            if state["fired"]:
                _clear_in_thread(thread_id)  # not delivered yet (the body ended first): never raise it later


# ---------------------------------------------------------------------------------------------------------------
# Bounds checked before a job is queued


def context_tokens_check(
    *,
    input_tokens: int,
    output_tokens: int,
    context_tokens: int | None,
    source: str,
    input_field: str = "input_tokens",
    output_field: str = "output_tokens",
) -> None:
    """Refuse a request longer than the model's context (an engine refuses prompt + max_tokens > max_model_len).
    `source` says where the limit comes from ("max_position_embeddings of <model>", "max_model_len")."""
    limit = context_tokens or MAX_CONTEXT_TOKENS
    if input_tokens + output_tokens <= limit:
        return
    if input_tokens >= limit:
        raise invalid_argument(
            input_field,
            f"{input_field} {input_tokens:,} leaves no room in the context of "
            f"{limit:,} tokens ({source}); at most {limit - 1:,} input tokens",
        )
    raise invalid_argument(
        output_field,
        f"{input_field} {input_tokens:,} + {output_field} {output_tokens:,} = "
        f"{input_tokens + output_tokens:,} tokens exceed the context of {limit:,} "
        f"tokens ({source}); at most {limit - input_tokens:,} output tokens with "
        f"{input_tokens:,} input tokens",
    )


def simulated_tokens_check(*, runs: int, requests: int, tokens_per_request: float, field: str = "requests") -> None:
    """Refuse a job that would simulate more than SIMULATED_TOKENS_MAX tokens (runs × requests × tokens)."""
    total = int(runs * requests * tokens_per_request)
    if total <= SIMULATED_TOKENS_MAX:
        return
    runs_text = f"{runs:,} simulations × " if runs > 1 else ""
    raise SizingError(
        code=SizingErrorCode.INVALID_ARGUMENT,
        message=(
            f"this job would simulate {runs_text}{requests:,} requests × {tokens_per_request:,.0f} tokens = "
            f"{total:,} tokens; at most {SIMULATED_TOKENS_MAX:,} per job: simulate fewer requests, shorter "
            "requests or fewer candidates"
        ),
        extra={
            "fields": {field: [f"{total:,} simulated tokens; at most {SIMULATED_TOKENS_MAX:,} per job"]},
            "simulated_tokens": total,
            "max_simulated_tokens": SIMULATED_TOKENS_MAX,
        },
    )


def running_jobs_check(*, kind: JobKind, running: int, what: str) -> None:
    """Refuse a new job when the organisation already has RUNNING_JOBS_MAX[kind] of `what` queued or running (429)."""
    limit = RUNNING_JOBS_MAX[kind]
    if running < limit:
        return
    raise SizingError(
        code=SizingErrorCode.TOO_MANY_JOBS,
        message=f"your organisation already has {running} {what} queued or running; at most {limit} at "
        "once: wait for one to finish",
        extra={"running": running, "limit": limit, "job_kind": kind.value},
    )
