"""A virtual-time asyncio event loop for tests: timers fire in their order, at exact instants, without waiting.

`VirtualClock` holds the time in integer nanoseconds; it is the load generator's `clock=` (monotonic ns) and the
loop's `time()`. When `VirtualTimeLoop` has nothing ready to run and would wait for its next timer, its selector
polls the real file descriptors without blocking and, finding none ready, moves the clock to that timer instead of
sleeping. So a run of "1.3 s" against an in-process server (httpx's MockTransport with `FakeServer`, or the
simulator app through `tests.simserver.inprocess.StreamingAsgiTransport`) takes milliseconds of real time, and every
instant in it is exact: on a quiet or a saturated machine the same code gives the same schedule, the same lags, the
same progress ticks and the same counts, so a test can assert them exactly.

What holds under virtual time:
- the clock moves only while every task waits: CPU work takes no time. A client that blocks its event loop is
  `clock.advance_s(seconds)` without yielding (the loop then finds its timers late, as a real blocked loop would);
- code that spins on the clock with `asyncio.sleep(0)` never sees it move: make the simulator's engine with
  `spin_s=0`;
- real I/O with another thread or process (a socket to a server thread, a subprocess) does not belong in it: the
  clock would jump past it. Such tests run on the real clock and assert order, counts and statuses, not times;
- a loop with no timer and no ready descriptor waits for real I/O (a worker thread's result) for at most
  `DEADLOCK_S` of real time, then raises `VirtualTimeDeadlock` instead of hanging.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")
NS_PER_S = 1_000_000_000
START_NS = 1_000 * NS_PER_S  # the clock's first reading: not 0 (LoadRunner.started reads a t0 of 0 as "not yet")
DEADLOCK_S = 60.0  # real seconds a loop with nothing scheduled waits for I/O before it is declared deadlocked


class VirtualTimeDeadlock(RuntimeError):
    """The loop had no timer to advance to and no real I/O arrived: every task waits for something that never
    comes."""


class VirtualClock:
    """Virtual monotonic time in nanoseconds: call it for the reading (a `perf_counter_ns` stand-in)."""

    def __init__(self, start_ns: int = START_NS) -> None:
        self.now_ns = start_ns
        self.start_ns = start_ns

    def __call__(self) -> int:
        return self.now_ns

    def seconds(self) -> float:
        """The reading in seconds (the event loop's `time()`)."""
        return self.now_ns / NS_PER_S

    def elapsed_s(self) -> float:
        """Seconds since the clock was made."""
        return (self.now_ns - self.start_ns) / NS_PER_S

    def advance_s(self, seconds: float) -> None:
        """Move the clock on (a blocked event loop: nothing else runs meanwhile)."""
        if seconds < 0:
            raise ValueError(f"a monotonic clock cannot go back ({seconds} s)")
        self.now_ns += round(seconds * NS_PER_S)


class _VirtualTimeSelector(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
    """The platform's selector, except that a wait with a timeout becomes a jump of the virtual clock."""

    def __init__(self, clock: VirtualClock) -> None:
        super().__init__()
        self._clock = clock

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = super().select(0)
        if ready or (timeout is not None and timeout <= 0):
            return ready
        if timeout is None:  # no timer at all: only real I/O (another thread's result) can wake the loop
            ready = super().select(DEADLOCK_S)
            if not ready:
                raise VirtualTimeDeadlock(f"nothing scheduled and no I/O for {DEADLOCK_S:g} s of real time")
            return ready
        # the loop would sleep until its next timer: be there at once (at least 1 ns, so the loop always moves on;
        # timers are due within the loop's 1 ns clock resolution, so rounding never leaves one waiting)
        self._clock.now_ns += max(1, round(timeout * NS_PER_S))
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop whose time is `clock` (see the module docstring)."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        super().__init__(selector=_VirtualTimeSelector(clock))

    def time(self) -> float:
        return self.clock.now_ns / NS_PER_S


def run_virtual(main: Callable[[VirtualClock], Awaitable[T]], *, clock: VirtualClock | None = None) -> T:
    """`asyncio.run` on a fresh `VirtualTimeLoop`: `main(clock)` gives the coroutine to run, with the loop's clock
    to hand to the code under test (`LoadRunner(clock=clock)`). `clock`: one made beforehand (e.g. for a
    `FakeServer` that blocks), else a new one."""
    clock = clock if clock is not None else VirtualClock()

    async def entry() -> Any:
        return await main(clock)

    with asyncio.Runner(loop_factory=lambda: VirtualTimeLoop(clock)) as runner:
        return runner.run(entry())
