#!/usr/bin/env python3
# ruff: noqa: UP006, UP035, UP045 - the sentinel runs on the customer's Python 3.8+
"""memory-sentinel: the 72-hour GPU memory sentinel of a private LLM deployment (issue 20).

Run it on the customer's GPU server, beside the serving engine, for the 72 hours after go-live:

    python3 memory_sentinel.py -o sentinel-gpu01.jsonl --metrics-url http://127.0.0.1:8000/metrics \\
        --engine-log /var/log/vllm/engine.log --breaker-log /var/log/gateway/breaker.log \\
        --breaker-trip-pattern 'breaker (open|tripped)' --breaker-recover-pattern 'breaker closed'

then upload the one file it writes to the sizing service (deployment page, "72-hour sentinel"). The service reads
the file, checks the memory health criteria and signs a memory health report (显存健康报告).

What it does
  Every --interval seconds (default 10) it runs
      nvidia-smi --query-gpu=index,uuid,name,memory.used,memory.total,utilization.gpu,timestamp
      nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory
  and, when --metrics-url is given and answers, reads the engine's Prometheus text: vLLM's
  vllm:kv_cache_usage_perc (or the older vllm:gpu_cache_usage_perc), vllm:num_requests_running/waiting,
  vllm:num_preemptions_total; SGLang's sglang:token_usage, sglang:num_running_reqs, sglang:num_queue_reqs and
  sglang:num_retracted_reqs when the release exports it; and process_start_time_seconds. While the KV-cache usage
  is at or above --fast-above (default 0.90), and for 60 s after a breaker line, the metrics are read every
  --fast-interval seconds (default 1) so that the breaker's reaction can be timed (at most 300 s of fast sampling
  per episode: a server that sits near full does not fill the file).
  It follows the engine log(s) (--engine-log) for out-of-memory lines (CUDA out of memory, OutOfMemoryError,
  CUDA error: out of memory, cudaErrorMemoryAllocation) and NVIDIA XID lines, and the breaker log(s)
  (--breaker-log, or the engine logs when none is given) for --breaker-trip-pattern / --breaker-recover-pattern
  (Python regular expressions). Logs are read from their end at the first start; a rotated log is followed.
  An event's time is when the sentinel read the line (within 1 s). It records restarts: the engine's GPU PIDs
  changing (from --query-compute-apps), the metrics endpoint going away and coming back, and a new
  process_start_time_seconds.

  It reaches no network but the --metrics-url (meant to be the engine's local port) and needs Python 3.8+ with
  its standard library only. It writes nothing but its output file.

The file (format "memory-sentinel/1"): JSON lines, UTF-8, one object per line, each with "type".
  line 1   {"type": "header", "tool": "memory-sentinel", "format": "memory-sentinel/1", "version", "host",
            "boot_id", "gpus": [{"index", "uuid", "name", "memory_total_mib"}], "interval_s", "duration_s",
            "zone" ("+08:00"), "start" (ISO 8601 with the zone), "start_epoch_s", "metrics_url", "engine_logs",
            "breaker_logs", "breaker_trip_pattern", "breaker_recover_pattern", "max_bytes", "cap_policy"}
  then, every line has "t" (ISO 8601 local time with its offset) and "off_s" (seconds since "start"; strictly
  increasing over the sample lines of the file, resumed runs included):
  sample   {"type": "sample", "t", "off_s", "gpus": [[index, used_mib, total_mib, utilization_pct], ...],
            "pids": [engine PIDs on the GPUs], "engine": {"up": true, "engine": "vllm"|"sglang"|"unknown",
            "kv": 0-1, "running", "waiting", "preemptions", "process_start"} | {"up": false, "error": "..."},
            "log_pos": {path: [inode, offset]}}            (null for a figure nvidia-smi reports as [N/A])
           a fast sample has "fast": true and no "gpus"/"pids"
  event    {"type": "event", "t", "off_s", "kind": "oom" | "xid" | "breaker_trip" | "breaker_recover" |
            "engine_down" | "engine_up" | "process_exit" | "process_start" | "restart" | "smi_error",
            "source": "engine_log" | "breaker_log" | "metrics" | "pids" | "nvidia-smi", "detail": "..."}
  note     {"type": "note", "t", "off_s", "kind": "thinned" | "cap_reached" | "partial_line_dropped" | ..., ...}
  resumed  {"type": "resumed", "t", "off_s", "gap_s", "boot_id", "rebooted": bool}
  end      {"type": "end", "t", "off_s", "reason": "duration" | "cap" | "stopped" | "closed", "samples"}
  A finished file ends with an "end" line. "stopped" (SIGINT/SIGTERM) and a missing end (a crash, a reboot) are
  resumable; "duration" and "cap" are complete.

Size cap (--max-bytes, default 48 MiB, below the service's 50 MiB upload limit): the cap thins, then stops. From
10 minutes in, whenever the file's growth projects past the cap by the end of the run, the interval doubles (10 ->
20 -> 40 -> 60 s at most) with a "thinned" note; events are never thinned. If the file still reaches the cap it
writes a "cap_reached" note and an "end" with reason "cap". A 72-hour run at 10 s on 8 GPUs writes about 9 MB.

Resuming: run the same command with the same -o file after a reboot or a crash. The sentinel checks the header
(same tool, host and GPU UUIDs), drops a partial last line (with a note), appends a "resumed" marker and carries
on until start + duration; samples are never duplicated (each off_s is after the last one written). A complete
file is left as it is. A systemd unit with Restart=always and this command resumes by itself after a reboot.
--close FILE ends an unfinished file (reason "closed") so that it can be uploaded without resuming it.

Exit status: 0 done; 2 bad arguments or a file that is not this host's; 3 nvidia-smi does not answer.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any, Dict, List, Optional, Tuple

TOOL = "memory-sentinel"
FORMAT = "memory-sentinel/1"
VERSION = "1.0.0"
MIB = 1048576
DEFAULT_INTERVAL_S = 10.0
DEFAULT_DURATION_H = 72.0
DEFAULT_MAX_BYTES = 48 * MIB
MAX_THINNED_INTERVAL_S = 60.0  # the service counts a gap up to 3x the median interval (at least 60 s) as watched
THIN_AFTER_S = 600.0  # the projection needs some minutes of growth to be worth anything
FAST_EPISODE_MAX_S = 300.0
FAST_AFTER_EVENT_S = 60.0
OOM_DEDUP_S = 60.0  # the lines of one traceback make one event
LOG_READ_MAX_BYTES = MIB  # per log per poll
LINE_MAX_CHARS = 300
SMI_TIMEOUT_S = 20.0
METRICS_TIMEOUT_S = 3.0
GPU_QUERY = "index,uuid,name,memory.used,memory.total,utilization.gpu,timestamp"
APPS_QUERY = "pid,gpu_uuid,used_memory"

OOM = re.compile(r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|cudaErrorMemoryAllocation")
XID = re.compile(r"\bXid\b\s*(?:\((?:PCI:)?[^)]*\))?\s*:?\s*\d+", re.IGNORECASE)
NA = {"", "[N/A]", "N/A", "[Not Supported]", "Not Supported", "[Unknown Error]", "[GPU is lost]"}

METRICS = {  # canonical key -> (engine, metric names in order of preference)
    "kv": (
        ("vllm", "vllm:kv_cache_usage_perc"),
        ("vllm", "vllm:gpu_cache_usage_perc"),
        ("sglang", "sglang:token_usage"),
    ),
    "running": (("vllm", "vllm:num_requests_running"), ("sglang", "sglang:num_running_reqs")),
    "waiting": (("vllm", "vllm:num_requests_waiting"), ("sglang", "sglang:num_queue_reqs")),
    "preemptions": (
        ("vllm", "vllm:num_preemptions_total"),
        ("vllm", "vllm:num_preemptions"),
        ("sglang", "sglang:num_retracted_reqs"),
        ("sglang", "sglang:num_retracted_requests_total"),
    ),
}
PROM_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")


class SentinelExit(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class Clock:
    """Wall-clock time and sleeping; tests pass a fake one that advances on sleep."""

    def time(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


# ---------------------------------------------------------------------------------------------------------------
# Readings


def _number(cell: str) -> Optional[float]:
    cell = cell.strip()
    if cell in NA:
        return None
    try:
        return float(cell.split()[0])
    except (ValueError, IndexError):
        return None


def _run(argv: List[str]) -> Tuple[int, str]:
    try:
        done = subprocess.run(  # noqa: S603
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=SMI_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError:
        return 127, f"{argv[0]}: not found on PATH"
    except subprocess.TimeoutExpired:
        return 124, f"{argv[0]}: no answer within {SMI_TIMEOUT_S:g} s"
    return done.returncode, done.stdout.decode("utf-8", "replace")


def read_gpus(smi: str) -> Tuple[List[Dict[str, Any]], Optional[str]]:
    """The GPUs as nvidia-smi reports them now: [{index, uuid, name, used_mib, total_mib, util}], error text."""
    code, text = _run([smi, f"--query-gpu={GPU_QUERY}", "--format=csv,noheader,nounits"])
    gpus: List[Dict[str, Any]] = []
    problems = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 7 or not cells[1].startswith(("GPU-", "MIG-")):
            if line.strip():
                problems.append(line.strip()[:LINE_MAX_CHARS])
            continue
        # the name may hold a comma: index and uuid first, the four figures and the timestamp last
        index, uuid = cells[0], cells[1]
        name = ", ".join(cells[2:-4])
        used, total, util = (_number(c) for c in cells[-4:-1])
        try:
            number = int(index)
        except ValueError:
            problems.append(line.strip()[:LINE_MAX_CHARS])
            continue
        gpus.append(
            {
                "index": number,
                "uuid": uuid,
                "name": name,
                "used_mib": None if used is None else int(used),
                "total_mib": None if total is None else int(total),
                "util": None if util is None else int(util),
            }
        )
    if code != 0 or not gpus:
        return gpus, ("; ".join(problems) or text.strip()[:LINE_MAX_CHARS] or f"exit status {code}")
    return gpus, ("; ".join(problems) or None)


def read_pids(smi: str) -> Optional[List[int]]:
    code, text = _run([smi, f"--query-compute-apps={APPS_QUERY}", "--format=csv,noheader,nounits"])
    if code != 0:
        return None
    pids = set()
    for line in text.splitlines():
        first = line.split(",")[0].strip()
        if first.isdigit():
            pids.add(int(first))
    return sorted(pids)


def parse_metrics(text: str) -> Dict[str, Any]:
    """The engine figures of one Prometheus exposition: KV usage (the highest of the engine's ranks), running and
    waiting requests and preemptions (summed over ranks), process_start_time_seconds (the latest)."""
    values: Dict[str, List[float]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = PROM_LINE.match(line)
        if not match:
            continue
        try:
            value = float(match.group(3))
        except ValueError:
            continue
        values.setdefault(match.group(1), []).append(value)
    found: Dict[str, Any] = {"up": True, "engine": "unknown"}
    for key, candidates in METRICS.items():
        for engine, name in candidates:
            if name in values:
                series = values[name]
                found[key] = round(max(series), 6) if key == "kv" else round(sum(series), 6)
                found["engine"] = engine
                break
    if "process_start_time_seconds" in values:
        found["process_start"] = max(values["process_start_time_seconds"])
    return found


def read_metrics(url: str) -> Dict[str, Any]:
    try:
        with urllib.request.urlopen(url, timeout=METRICS_TIMEOUT_S) as response:  # noqa: S310 - the engine's URL
            body = response.read(16 * MIB).decode("utf-8", "replace")
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or error
        return {"up": False, "error": str(reason)[:LINE_MAX_CHARS]}
    return parse_metrics(body)


def boot_id() -> Optional[str]:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return None


# ---------------------------------------------------------------------------------------------------------------
# Following logs


class LogFollower:
    """New complete lines of a log, following rotation (a new inode or a shorter file starts from its top)."""

    def __init__(self, path: str, *, inode: Optional[int] = None, offset: Optional[int] = None) -> None:
        self.path = path
        self.inode = inode
        self.offset = offset
        self.buffer = b""
        if self.offset is None:  # a first start reads from the end: older lines predate the watch
            try:
                stat = os.stat(path)
                self.inode, self.offset = stat.st_ino, stat.st_size
            except OSError:
                self.inode, self.offset = None, 0

    def position(self) -> List[int]:
        return [self.inode or 0, self.offset or 0]

    def lines(self) -> List[str]:
        try:
            stat = os.stat(self.path)
        except OSError:
            return []
        if stat.st_ino != self.inode or stat.st_size < (self.offset or 0):
            self.inode, self.offset, self.buffer = stat.st_ino, 0, b""
        if stat.st_size == self.offset:
            return []
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset or 0)
                data = handle.read(LOG_READ_MAX_BYTES)
        except OSError:
            return []
        self.offset = (self.offset or 0) + len(data)
        data = self.buffer + data
        *complete, self.buffer = data.split(b"\n")
        return [line.decode("utf-8", "replace").rstrip("\r") for line in complete]


# ---------------------------------------------------------------------------------------------------------------
# The file


def local_iso(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, UTC).astimezone().isoformat(timespec="milliseconds")


def zone_text() -> str:
    offset = datetime.now(UTC).astimezone().utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def dumps(record: Dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class ExistingFile:
    """What an earlier run left in the output file."""

    def __init__(
        self,
        header: Dict[str, Any],
        last_off_s: float,
        last_sample: Optional[Dict[str, Any]],
        end: Optional[Dict[str, Any]],
        samples: int,
        partial: bool,
        good_bytes: int,
        interval_s: float,
    ) -> None:
        self.header, self.last_off_s, self.last_sample = header, last_off_s, last_sample
        self.end, self.samples, self.partial, self.good_bytes = end, samples, partial, good_bytes
        self.interval_s = interval_s


def read_existing(path: str) -> Optional[ExistingFile]:
    """The file's header and where it stopped; None when the file is absent or empty. SentinelExit(2) when it is
    not a sentinel file."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise SentinelExit(2, f"cannot read {path}: {error}") from None
    if not data.strip():
        return None
    good = data.rfind(b"\n") + 1
    partial = good < len(data)
    header: Optional[Dict[str, Any]] = None
    last_off, last_sample, end, samples = 0.0, None, None, 0
    interval = DEFAULT_INTERVAL_S
    for number, raw in enumerate(data[:good].splitlines(), start=1):
        try:
            record = json.loads(raw)
        except ValueError:
            raise SentinelExit(2, f"{path}: line {number} is not JSON; not a {TOOL} file, or damaged") from None
        if number == 1:
            if not isinstance(record, dict) or record.get("tool") != TOOL or record.get("type") != "header":
                raise SentinelExit(2, f"{path} was not written by {TOOL}: choose another output file")
            header = record
            interval = float(record.get("interval_s") or DEFAULT_INTERVAL_S)
            continue
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        if isinstance(record.get("off_s"), (int, float)):
            last_off = max(last_off, float(record["off_s"]))
        if kind == "sample":
            samples += 1
            if not record.get("fast"):
                last_sample = record
        elif kind == "note" and record.get("kind") == "thinned":
            interval = float(record.get("interval_s") or interval)
        elif kind == "end":
            end = record
        elif kind == "resumed":
            end = None
    if header is None:
        if partial:  # only a partial header line: nothing to keep
            return None
        raise SentinelExit(2, f"{path} has no header line")
    return ExistingFile(header, last_off, last_sample, end, samples, partial, good, interval)


# ---------------------------------------------------------------------------------------------------------------
# The run


class Sentinel:
    def __init__(self, args: argparse.Namespace, clock: Clock) -> None:
        self.args, self.clock = args, clock
        self.handle: Any = None
        self.header: Dict[str, Any] = {}
        self.start_epoch = 0.0
        self.interval = args.interval
        self.last_off = -1.0
        self.last_full_off = -1.0
        self.samples = 0
        self.size = 0
        self.pids: Optional[List[int]] = None
        self.seen_pids = False
        self.engine_up: Optional[bool] = None
        self.process_start: Optional[float] = None
        self.last_oom = -1e18
        self.fast_until = -1e18
        self.fast_started: Optional[float] = None
        self.stop_reason: Optional[str] = None
        self.engine_logs: List[LogFollower] = []
        self.breaker_logs: List[LogFollower] = []
        self.trip = re.compile(args.breaker_trip_pattern) if args.breaker_trip_pattern else None
        self.recover = re.compile(args.breaker_recover_pattern) if args.breaker_recover_pattern else None

    # -- writing

    def write(self, record: Dict[str, Any]) -> None:
        line = (dumps(record) + "\n").encode("utf-8")
        self.handle.write(line)
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.size += len(line)

    def stamp(self, now: float) -> Dict[str, Any]:
        return {"t": local_iso(now), "off_s": round(now - self.start_epoch, 3)}

    def event(self, now: float, kind: str, source: str, detail: str) -> None:
        self.write(
            {"type": "event", **self.stamp(now), "kind": kind, "source": source, "detail": detail[:LINE_MAX_CHARS]}
        )

    # -- starting

    def new_header(self, gpus: List[Dict[str, Any]], now: float) -> Dict[str, Any]:
        args = self.args
        return {
            "type": "header",
            "tool": TOOL,
            "format": FORMAT,
            "version": VERSION,
            "host": args.host,
            "boot_id": boot_id(),
            "gpus": [
                {"index": g["index"], "uuid": g["uuid"], "name": g["name"], "memory_total_mib": g["total_mib"]}
                for g in gpus
            ],
            "interval_s": args.interval,
            "duration_s": round(args.duration_hours * 3600, 3),
            "zone": zone_text(),
            "start": local_iso(now),
            "start_epoch_s": round(now, 3),
            "metrics_url": args.metrics_url,
            "engine_logs": args.engine_log or [],
            "breaker_logs": args.breaker_log or [],
            "breaker_trip_pattern": args.breaker_trip_pattern,
            "breaker_recover_pattern": args.breaker_recover_pattern,
            "max_bytes": args.max_bytes,
            "cap_policy": "thin-then-stop",
            "python": sys.version.split()[0],
        }

    def open(self) -> bool:
        """Open the output (new or resumed); False when the file is already complete."""
        args = self.args
        gpus, error = read_gpus(args.nvidia_smi)
        if not gpus:
            raise SentinelExit(3, f"nvidia-smi does not answer: {error}")
        existing = read_existing(args.output)
        now = self.clock.time()
        positions: Dict[str, Any] = {}
        if existing is None:
            self.header = self.new_header(gpus, now)
            self.handle = open(args.output, "wb")
            self.start_epoch = float(self.header["start_epoch_s"])
            self.write(self.header)
        else:
            header = existing.header
            theirs = sorted(g.get("uuid") for g in header.get("gpus") or [])
            ours = sorted(g["uuid"] for g in gpus)
            if header.get("host") != args.host or theirs != ours:
                raise SentinelExit(
                    2,
                    f"{args.output} belongs to host {header.get('host')!r} with GPUs "
                    f"{', '.join(theirs)}; this is {args.host!r} with {', '.join(ours)}: "
                    "choose another output file",
                )
            if existing.end is not None and existing.end.get("reason") in ("duration", "cap", "closed"):
                print(f"{args.output} is complete ({existing.end.get('reason')}): nothing to do", file=sys.stderr)
                return False
            self.header = header
            self.start_epoch = float(header["start_epoch_s"])
            self.interval = existing.interval_s
            self.last_off = existing.last_off_s
            self.samples = existing.samples
            with open(args.output, "r+b") as handle:
                handle.truncate(existing.good_bytes)
            self.handle = open(args.output, "ab")
            self.size = existing.good_bytes
            now = max(now, self.start_epoch + self.last_off + 0.001)
            if existing.partial:
                self.write(
                    {
                        "type": "note",
                        **self.stamp(now),
                        "kind": "partial_line_dropped",
                        "detail": "the last line was cut (a crash or a reboot while writing) and was dropped",
                    }
                )
            last = existing.last_sample or {}
            self.last_full_off = float(last.get("off_s", -1.0))
            self.pids = last.get("pids")
            self.seen_pids = bool(self.pids)
            engine = last.get("engine") or {}
            self.engine_up = engine.get("up") if engine else None
            self.process_start = engine.get("process_start")
            positions = last.get("log_pos") or {}
            booted = boot_id()
            self.write(
                {
                    "type": "resumed",
                    **self.stamp(now),
                    "gap_s": round(now - self.start_epoch - existing.last_off_s, 3),
                    "boot_id": booted,
                    "rebooted": bool(booted and header.get("boot_id") and booted != header.get("boot_id")),
                }
            )
        for path in args.engine_log or []:
            inode, offset = (positions.get(path) or [None, None])[:2]
            self.engine_logs.append(LogFollower(path, inode=inode, offset=offset))
        for path in args.breaker_log or []:
            inode, offset = (positions.get(path) or [None, None])[:2]
            self.breaker_logs.append(LogFollower(path, inode=inode, offset=offset))
        return True

    # -- one tick

    def read_logs(self, now: float) -> None:
        breaker_in_engine = not self.breaker_logs
        for follower in self.engine_logs:
            for line in follower.lines():
                if OOM.search(line):
                    if now - self.last_oom >= OOM_DEDUP_S:
                        self.event(now, "oom", "engine_log", line.strip())
                    self.last_oom = now
                elif "xid" in line.lower() and XID.search(line):
                    self.event(now, "xid", "engine_log", line.strip())
                elif breaker_in_engine:
                    self.breaker_line(now, line, "engine_log")
        for follower in self.breaker_logs:
            for line in follower.lines():
                self.breaker_line(now, line, "breaker_log")

    def breaker_line(self, now: float, line: str, source: str) -> None:
        if self.trip is not None and self.trip.search(line):
            self.event(now, "breaker_trip", source, line.strip())
            self.fast_until = max(self.fast_until, now + FAST_AFTER_EVENT_S)
        elif self.recover is not None and self.recover.search(line):
            self.event(now, "breaker_recover", source, line.strip())
            self.fast_until = max(self.fast_until, now + FAST_AFTER_EVENT_S)

    def engine_reading(self, now: float) -> Optional[Dict[str, Any]]:
        if not self.args.metrics_url:
            return None
        reading = read_metrics(self.args.metrics_url)
        if self.engine_up is not None and reading["up"] != self.engine_up:
            self.event(
                now,
                "engine_up" if reading["up"] else "engine_down",
                "metrics",
                "the metrics endpoint answers again"
                if reading["up"]
                else f"the metrics endpoint does not answer: {reading.get('error')}",
            )
        start = reading.get("process_start")
        if reading["up"] and start is not None and self.process_start is not None and start != self.process_start:
            self.event(
                now,
                "restart",
                "metrics",
                f"process_start_time_seconds changed from {self.process_start:.0f} to {start:.0f}",
            )
        if reading["up"]:
            self.engine_up = True
            if start is not None:
                self.process_start = start
        else:
            self.engine_up = False
        kv = reading.get("kv")
        if isinstance(kv, (int, float)) and kv >= self.args.fast_above:
            if self.fast_started is None:
                self.fast_started = now
            if now - self.fast_started <= FAST_EPISODE_MAX_S:
                self.fast_until = max(self.fast_until, now + self.args.fast_interval)
        elif isinstance(kv, (int, float)):
            if self.fast_started is not None:  # just fell below: watch the recovery for a while
                self.fast_until = max(self.fast_until, now + FAST_AFTER_EVENT_S)
            self.fast_started = None
        return reading

    def pid_events(self, now: float, pids: Optional[List[int]]) -> None:
        if pids is None:
            return
        before = self.pids
        if before is not None and pids != before:
            if before and not pids:
                self.event(now, "process_exit", "pids", f"the engine's GPU processes {before} are gone")
            elif pids and not before and self.seen_pids:
                self.event(now, "process_start", "pids", f"engine GPU processes {pids} started")
            elif pids and before:
                self.event(now, "restart", "pids", f"the engine's GPU processes changed from {before} to {pids}")
        self.pids = pids
        self.seen_pids = self.seen_pids or bool(pids)

    def full_sample(self, now: float) -> None:
        gpus, error = read_gpus(self.args.nvidia_smi)
        if error:
            self.event(now, "smi_error", "nvidia-smi", error)
        pids = read_pids(self.args.nvidia_smi)
        self.pid_events(now, pids)
        engine = self.engine_reading(now)
        record: Dict[str, Any] = {
            "type": "sample",
            **self.stamp(now),
            "gpus": [[g["index"], g["used_mib"], g["total_mib"], g["util"]] for g in gpus],
        }
        if pids is not None:
            record["pids"] = pids
        if engine is not None:
            record["engine"] = engine
        followers = self.engine_logs + self.breaker_logs
        if followers:
            record["log_pos"] = {f.path: f.position() for f in followers}
        if gpus:
            self.write(record)
            self.samples += 1
            self.last_off = record["off_s"]
            self.last_full_off = record["off_s"]

    def fast_sample(self, now: float) -> None:
        engine = self.engine_reading(now)
        if engine is not None:
            self.write({"type": "sample", **self.stamp(now), "fast": True, "engine": engine})
            self.samples += 1
            self.last_off = round(now - self.start_epoch, 3)

    def cap(self, now: float) -> bool:
        """Thin or stop at the size cap; True when the run must stop."""
        args = self.args
        if self.size >= args.max_bytes:
            self.write(
                {
                    "type": "note",
                    **self.stamp(now),
                    "kind": "cap_reached",
                    "detail": f"the file reached its cap of {args.max_bytes} bytes",
                }
            )
            self.stop_reason = "cap"
            return True
        elapsed = now - self.start_epoch
        duration = float(self.header["duration_s"])
        if elapsed >= THIN_AFTER_S and self.interval < MAX_THINNED_INTERVAL_S:
            projected = self.size / elapsed * duration
            if projected > args.max_bytes:
                before = self.interval
                self.interval = min(self.interval * 2, MAX_THINNED_INTERVAL_S)
                self.write(
                    {
                        "type": "note",
                        **self.stamp(now),
                        "kind": "thinned",
                        "interval_s": self.interval,
                        "detail": f"the file would reach {int(projected)} bytes of its cap of {args.max_bytes}:"
                        f" interval {before:g} s -> {self.interval:g} s",
                    }
                )
        return False

    def run(self) -> int:
        if not self.open():
            return 0
        duration = float(self.header["duration_s"])
        end_at = self.start_epoch + duration
        next_full = self.clock.time()
        next_fast = next_full
        try:
            while self.stop_reason is None:
                now = self.clock.time()
                if now >= end_at:  # a last sample at the end, so that the file covers the whole duration
                    if self.last_full_off < float(self.header["duration_s"]):
                        self.read_logs(now)
                        self.full_sample(now)
                    self.stop_reason = "duration"
                    break
                if now - self.start_epoch <= self.last_off:  # the clock went back: never overlap what is written
                    self.clock.sleep(min(1.0, self.last_off - (now - self.start_epoch) + 0.001))
                    continue
                self.read_logs(now)
                if now >= next_full:
                    self.full_sample(now)
                    next_full = max(next_full + self.interval, now + self.interval / 2)
                    next_fast = now + self.args.fast_interval
                    if self.cap(now):
                        break
                elif now < self.fast_until and now >= next_fast:
                    self.fast_sample(now)
                    next_fast = now + self.args.fast_interval
                wake = min(next_full, next_fast if now < self.fast_until else next_full, now + 1.0, end_at)
                self.clock.sleep(max(0.0, wake - self.clock.time()))
        except KeyboardInterrupt:
            self.stop_reason = "stopped"
        now = max(self.clock.time(), self.start_epoch + self.last_off + 0.001)
        self.write({"type": "end", **self.stamp(now), "reason": self.stop_reason, "samples": self.samples})
        self.handle.close()
        return 0


def close_file(path: str) -> int:
    existing = read_existing(path)
    if existing is None:
        raise SentinelExit(2, f"{path}: no sentinel file to close")
    if existing.end is not None:
        print(f"{path} already ends ({existing.end.get('reason')})", file=sys.stderr)
        return 0
    start = float(existing.header["start_epoch_s"])
    with open(path, "r+b") as handle:
        handle.truncate(existing.good_bytes)
    with open(path, "ab") as handle:
        when = start + existing.last_off_s + 0.001
        stamp = {"t": local_iso(when), "off_s": round(existing.last_off_s + 0.001, 3)}
        if existing.partial:
            handle.write(
                (
                    dumps(
                        {
                            "type": "note",
                            **stamp,
                            "kind": "partial_line_dropped",
                            "detail": "the last line was cut and was dropped",
                        }
                    )
                    + "\n"
                ).encode()
            )
        handle.write((dumps({"type": "end", **stamp, "reason": "closed", "samples": existing.samples}) + "\n").encode())
    return 0


def once(args: argparse.Namespace, clock: Clock) -> int:
    """Print what a run would write first (the header and one sample) and the projected size; write nothing."""
    gpus, error = read_gpus(args.nvidia_smi)
    if not gpus:
        raise SentinelExit(3, f"nvidia-smi does not answer: {error}")
    sentinel = Sentinel(args, clock)
    now = clock.time()
    sentinel.header = sentinel.new_header(gpus, now)
    sentinel.start_epoch = now

    lines: List[str] = []
    sentinel.write = lambda record: lines.append(dumps(record) + "\n")  # type: ignore[method-assign]
    sentinel.write(sentinel.header)
    sentinel.full_sample(now)
    sys.stdout.write("".join(lines))
    sample_bytes = len(lines[-1].encode()) if len(lines) > 1 else 200
    projected = int(sample_bytes * args.duration_hours * 3600 / args.interval)
    checks = [f"nvidia-smi: {len(gpus)} GPU(s) " + ", ".join(f"{g['index']} {g['uuid']}" for g in gpus)]
    if error:
        checks.append(f"nvidia-smi also said: {error}")
    if args.metrics_url:
        reading = read_metrics(args.metrics_url)
        checks.append(
            f"metrics: {reading.get('engine')} KV {reading.get('kv')}"
            if reading["up"]
            else f"metrics: not reachable ({reading.get('error')}); the run records it as down"
        )
    for path in (args.engine_log or []) + (args.breaker_log or []):
        checks.append(f"log {path}: " + ("readable" if os.access(path, os.R_OK) else "NOT readable"))
    checks.append(
        f"projected size: {projected} bytes for {args.duration_hours:g} h every {args.interval:g} s "
        f"(cap {args.max_bytes} bytes)"
    )
    for line in checks:
        print("# " + line, file=sys.stderr)
    return 0


def parser() -> argparse.ArgumentParser:
    lines = (__doc__ or "").splitlines()
    parse = argparse.ArgumentParser(
        prog="memory_sentinel.py",
        description=lines[0],
        epilog="\n".join(lines[2:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parse.add_argument("-o", "--output", help="the sentinel file (JSON lines); re-run with the same file to resume")
    parse.add_argument(
        "--interval",
        type=float,
        default=DEFAULT_INTERVAL_S,
        help="seconds between samples (default %(default)s; the deployment's plan says which)",
    )
    parse.add_argument(
        "--duration-hours",
        type=float,
        default=DEFAULT_DURATION_H,
        help="hours to watch from the first start (default %(default)s)",
    )
    parse.add_argument("--metrics-url", help="the engine's local Prometheus URL, e.g. http://127.0.0.1:8000/metrics")
    parse.add_argument(
        "--engine-log", action="append", metavar="PATH", help="engine log followed for OOM and XID lines (repeatable)"
    )
    parse.add_argument(
        "--breaker-log",
        action="append",
        metavar="PATH",
        help="log with the circuit breaker's lines (repeatable; default: the engine logs)",
    )
    parse.add_argument("--breaker-trip-pattern", metavar="REGEX", help="a breaker line that means it tripped")
    parse.add_argument("--breaker-recover-pattern", metavar="REGEX", help="a breaker line that means it recovered")
    parse.add_argument(
        "--fast-above",
        type=float,
        default=0.90,
        help="KV usage (0-1) from which metrics are read every --fast-interval (default %(default)s)",
    )
    parse.add_argument("--fast-interval", type=float, default=1.0, help="seconds (default %(default)s)")
    parse.add_argument(
        "--max-bytes",
        type=int,
        default=DEFAULT_MAX_BYTES,
        help="size cap of the file: thin, then stop (default %(default)s = 48 MiB)",
    )
    parse.add_argument("--host", default=socket.gethostname(), help="host name recorded (default: this host's)")
    parse.add_argument("--nvidia-smi", default="nvidia-smi", help="the nvidia-smi to run (default: from PATH)")
    parse.add_argument(
        "--once",
        "--dry-run",
        action="store_true",
        dest="once",
        help="print the header and one sample, check the metrics URL and logs, write nothing",
    )
    parse.add_argument("--close", metavar="FILE", help="end an unfinished sentinel file (reason closed) and exit")
    parse.add_argument("--version", action="version", version=f"{TOOL} {VERSION} ({FORMAT})")
    return parse


def main(argv: Optional[List[str]] = None, clock: Optional[Clock] = None) -> int:
    args = parser().parse_args(argv)
    clock = clock or Clock()
    try:
        if args.close:
            return close_file(args.close)
        if args.interval <= 0 or args.duration_hours <= 0 or args.fast_interval <= 0 or args.max_bytes < 4096:
            raise SentinelExit(
                2, "--interval, --duration-hours and --fast-interval must be > 0, --max-bytes at least 4096"
            )
        for pattern in (args.breaker_trip_pattern, args.breaker_recover_pattern):
            if pattern:
                try:
                    re.compile(pattern)
                except re.error as error:
                    raise SentinelExit(2, f"bad pattern {pattern!r}: {error}") from None
        if args.once:
            return once(args, clock)
        if not args.output:
            raise SentinelExit(2, "-o/--output FILE is needed (or --once to try it)")
        sentinel = Sentinel(args, clock)

        def stop(signum: int, frame: Any) -> None:
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGTERM, stop)
        try:
            return sentinel.run()
        finally:
            signal.signal(signal.SIGTERM, previous)
    except SentinelExit as error:
        print(f"{TOOL}: {error.message}", file=sys.stderr)
        return error.code


if __name__ == "__main__":
    sys.exit(main())
