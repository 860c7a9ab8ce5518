"""Failure injection during a run (issue 7): each `FaultSpec` of the plan executed at its `at_s` after t = 0.

- HTTP (`FaultKind.HTTP`): one request with httpx (`method`, `url`, optional JSON `body`), timeout `timeout_s`, the
  plan's TLS settings. ok = a 2xx answer. The endpoint's API key is *not* sent: a fault URL is often another
  service (a simulator's /control, an orchestrator), and a key must not leak to it.
- Command (`FaultKind.COMMAND`): `asyncio.create_subprocess_exec(*argv)` (no shell, so nothing in a label or an
  argument is interpreted), in a session of its own so that killing it kills its children too; stdout and stderr
  are captured and kept to 2,000 characters each; still running at `timeout_s`, it is killed. ok = exit status 0.
  A plan is the operator's own, run on their own machine: its commands are theirs.

Each fault gives a `FaultEvent` (when it started on the run's clock, what it was, whether it worked, what it said,
how long it took). A fault whose time comes after the run stopped is not executed: it is recorded as skipped. When
the run stops, a fault still executing gets up to `STOP_GRACE_S` (2 s) to finish, then is killed or cut. Nothing
here logs or records an Authorization header (none is sent).

>>> event = FaultEvent(t_s=1.0, label="kill replica 0", kind="http", ok=True, detail="HTTP 200", duration_s=0.01)
>>> event.skipped
False
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx

from llm_sizing_loadgen import TOOL_NAME, __version__
from llm_sizing_loadgen.plan import FaultKind, FaultSpec

logger = logging.getLogger(__name__)

OUTPUT_CHARS = 2000  # of a command's stdout and stderr, and of an HTTP answer's body
STOP_GRACE_S = 2.0  # a fault still executing when the run stops gets this long before it is killed
DRAIN_AFTER_EXIT_S = 1.0  # a command's children may hold its pipes open after it exits: read at most this long


@dataclass(frozen=True, kw_only=True)
class FaultEvent:
    """One fault as it happened: `t_s` seconds from the run's t = 0 when it started (its planned time when it was
    skipped), `label` in words, `kind` "http" or "command", `ok` whether it worked, `detail` what it answered or
    printed (cut to 2,000 characters a stream), `duration_s` how long it took, `skipped` when it never ran."""

    t_s: float
    label: str
    kind: str
    ok: bool
    detail: str
    duration_s: float
    skipped: bool = False


def _cut(text: str, limit: int = OUTPUT_CHARS) -> str:
    """The text stripped and cut to `limit` characters (an ellipsis says it was cut).

    >>> _cut("  abc  "), _cut("abcdef", 3)
    ('abc', 'abc…')
    """
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "…"


async def http_fault(fault: FaultSpec, client: httpx.AsyncClient) -> tuple[bool, str]:
    """(ok, detail) of an HTTP fault: ok for a 2xx answer; the detail is the status and the answer's body."""
    try:
        response = await client.request(
            fault.method, fault.url or "", json=fault.body, timeout=httpx.Timeout(fault.timeout_s)
        )
    except httpx.TimeoutException as error:
        return False, f"no answer within {fault.timeout_s:g} s ({type(error).__name__})"
    except httpx.HTTPError as error:
        return False, f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    body = _cut(response.text)
    return response.is_success, f"HTTP {response.status_code}" + (f": {body}" if body else "")


async def _drain(stream: asyncio.StreamReader | None, sink: bytearray) -> None:
    if stream is None:
        return
    while chunk := await stream.read(65536):
        if len(sink) < 4 * OUTPUT_CHARS:  # room for multi-byte characters; the rest is read and dropped
            sink.extend(chunk)


def _kill(process: asyncio.subprocess.Process) -> None:
    """Kill the command and everything it started (its own session: one process group)."""
    if process.returncode is not None:
        return
    try:
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)
        else:  # pragma: no cover - not POSIX
            process.kill()
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            process.kill()


def _output(code: int | None, out: bytearray, err: bytearray) -> str:
    parts = [f"exit {code}" if code is not None else "no exit status"]
    for name, data in (("stdout", out), ("stderr", err)):
        text = _cut(data.decode("utf-8", errors="replace"))
        if text:
            parts.append(f"{name}: {text}")
    return "; ".join(parts)


async def command_fault(fault: FaultSpec) -> tuple[bool, str]:
    """(ok, detail) of a command fault: ok for exit status 0; the detail is the status, stdout and stderr. Killed
    (with its children) at `timeout_s`, or when the task running it is cancelled (the run stopped), and reaped
    before this returns or re-raises."""
    try:
        process = await asyncio.create_subprocess_exec(
            *fault.argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=hasattr(os, "setsid"),
        )
    except OSError as error:
        return False, f"cannot run {fault.argv[0]!r}: {error.strerror or error}"
    out, err = bytearray(), bytearray()
    readers = [asyncio.ensure_future(_drain(process.stdout, out)), asyncio.ensure_future(_drain(process.stderr, err))]

    async def finish() -> None:
        await process.wait()
        _, pending = await asyncio.wait(readers, timeout=DRAIN_AFTER_EXIT_S)
        for reader in pending:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)

    try:
        await asyncio.wait_for(process.wait(), fault.timeout_s)
    except TimeoutError:
        _kill(process)
        await finish()
        return False, f"killed after {fault.timeout_s:g} s (timeout_s); " + _output(process.returncode, out, err)
    except asyncio.CancelledError:
        _kill(process)
        await finish()
        raise
    await finish()
    return process.returncode == 0, _output(process.returncode, out, err)


class FaultInjector:
    """Executes the plan's faults at their times from `start(t0_ns=)` (the run's zero on `clock`, monotonic
    nanoseconds); `stop()` ends them (see the module docstring); `events` holds one `FaultEvent` per fault once
    stopped, in time order.

    `verify` the plan's TLS setting for HTTP faults;
    `transport` replaces the network (tests); `on_event(FaultEvent)` is called as each event is recorded
    (exceptions logged, not raised); `stop_grace_s` how long `stop()` lets a fault still executing finish
    (`STOP_GRACE_S`; tests shorten it).
    """

    def __init__(
        self,
        faults: Sequence[FaultSpec],
        *,
        clock: Callable[[], int] = time.perf_counter_ns,
        verify: ssl.SSLContext | bool = True,
        transport: httpx.AsyncBaseTransport | None = None,
        on_event: Callable[[FaultEvent], None] | None = None,
        stop_grace_s: float = STOP_GRACE_S,
    ) -> None:
        self.faults = tuple(faults)
        self.events: list[FaultEvent] = []
        self._t0_ns = 0
        self._clock = clock
        self._stop_grace_s = stop_grace_s
        self._verify = verify
        self._transport = transport
        self._on_event = on_event
        self._http: httpx.AsyncClient | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._started: set[int] = set()  # indexes of the faults executing or done
        self._stop_s: float | None = None

    def start(self, *, t0_ns: int) -> None:
        """Schedule every fault in the running event loop, at its `at_s` after `t0_ns`."""
        loop = asyncio.get_running_loop()
        if not self._tasks:
            self._t0_ns = t0_ns
            self._tasks = [loop.create_task(self._one(index, fault)) for index, fault in enumerate(self.faults)]

    async def stop(self) -> None:
        """Skip the faults not yet due, give those executing `stop_grace_s` to finish, then cut them."""
        self._stop_s = self._seconds(self._clock())
        waiting = [task for index, task in enumerate(self._tasks) if index not in self._started]
        for task in waiting:
            task.cancel()
        running = [task for task in self._tasks if task not in waiting and not task.done()]
        if running:
            _, late = await asyncio.wait(running, timeout=self._stop_grace_s)
            for task in late:
                task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        self.events.sort(key=lambda event: event.t_s)

    def _seconds(self, instant_ns: int) -> float:
        return (instant_ns - self._t0_ns) / 1e9

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(
                transport=self._transport, verify=self._verify, headers={"User-Agent": f"{TOOL_NAME}/{__version__}"}
            )
        return self._http

    async def _one(self, index: int, fault: FaultSpec) -> None:
        due = self._t0_ns + round(fault.at_s * 1e9)
        try:
            delay = (due - self._clock()) / 1e9
            while delay > 0:
                await asyncio.sleep(delay)
                delay = (due - self._clock()) / 1e9
        except asyncio.CancelledError:
            stop = self._stop_s if self._stop_s is not None else self._seconds(self._clock())
            self._record(
                FaultEvent(
                    t_s=fault.at_s,
                    label=fault.description,
                    kind=fault.kind.value,
                    ok=False,
                    detail=f"skipped: the run stopped at {stop:.3f} s, before the fault's time ({fault.at_s:g} s)",
                    duration_s=0.0,
                    skipped=True,
                )
            )
            raise
        self._started.add(index)
        start_ns = self._clock()
        try:
            if fault.kind is FaultKind.HTTP:
                ok, detail = await http_fault(fault, self._client())
            else:
                ok, detail = await command_fault(fault)
        except asyncio.CancelledError:
            ended_ns = self._clock()
            what = "killed" if fault.kind is FaultKind.COMMAND else "cut"
            self._record(
                FaultEvent(
                    t_s=round(self._seconds(start_ns), 6),
                    label=fault.description,
                    kind=fault.kind.value,
                    ok=False,
                    detail=f"{what} when the run stopped, after {(ended_ns - start_ns) / 1e9:.3f} s "
                    f"(a fault gets {self._stop_grace_s:g} s to finish once the run has "
                    "stopped)",
                    duration_s=round((ended_ns - start_ns) / 1e9, 6),
                )
            )
            raise
        ended_ns = self._clock()
        self._record(
            FaultEvent(
                t_s=round(self._seconds(start_ns), 6),
                label=fault.description,
                kind=fault.kind.value,
                ok=ok,
                detail=detail,
                duration_s=round((ended_ns - start_ns) / 1e9, 6),
            )
        )

    def _record(self, event: FaultEvent) -> None:
        self.events.append(event)
        logger.info(
            "fault %r at %.3f s: %s",
            event.label,
            event.t_s,
            "skipped" if event.skipped else ("ok" if event.ok else "failed"),
        )
        if self._on_event is not None:
            try:
                self._on_event(event)
            except Exception:
                logger.exception("the on_fault callback failed")


def fault_counts(events: Sequence[FaultEvent]) -> tuple[int, int, int]:
    """(faults run, of which ok, skipped).

    >>> fault_counts([FaultEvent(t_s=1, label="a", kind="http", ok=True, detail="", duration_s=0),
    ...               FaultEvent(t_s=9, label="b", kind="command", ok=False, detail="", duration_s=0, skipped=True)])
    (1, 1, 1)
    """
    run = [event for event in events if not event.skipped]
    return len(run), sum(1 for event in run if event.ok), len(events) - len(run)
