"""Every real load-test result and monitoring log in ../shared/data/real_outputs/, imported (not collected by
pytest; run by CI, reported).

Result files (vllm_bench, sglang_bench, guidellm, genai_perf, aiperf, llmperf) go through the importer registry;
each run's canonical figures (TTFT, TPOT, ITL, E2E mean / median / p99, completed) are checked against the file's
own summary fields where the tool's definition is ours (relative tolerance 0.5 %: CSV exports round to two
decimals). A file may instead be refused, with its reason; one that neither imports nor is refused precisely
fails. Monitoring logs (nvidia_smi_csv time series, prometheus scrapes) go through the timeline parser: parsed
with their per-GPU peaks, or refused with the reason (a snapshot table is not a time series).

    .venv/bin/python tests/benchmarks/real_results.py [--shared PATH]
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks_app.results.detect import BenchmarkFormatError, import_text  # noqa: E402
from benchmarks_app.results.run import ImportedRun  # noqa: E402
from benchmarks_app.results.timeline import TimelineRefusal, parse_timeline  # noqa: E402

RESULT_DIRS = ("vllm_bench", "sglang_bench", "guidellm", "genai_perf", "aiperf", "llmperf")
TIMELINE_DIRS = ("nvidia_smi_csv", "prometheus")
TOLERANCE = 0.005


def _dig(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _vllm_like(run: ImportedRun) -> dict[tuple[str, str], Any]:
    r = run.reported
    e2e = "e2el" if "mean_e2el_ms" in r or "median_e2el_ms" in r else "e2e_latency"
    pairs: dict[tuple[str, str], Any] = {}
    for key, name in (("ttft_ms", "ttft"), ("tpot_ms", "tpot"), ("itl_ms", "itl"), ("e2e_ms", e2e)):
        pairs[(key, "mean")] = r.get(f"mean_{name}_ms")
        pairs[(key, "p50")] = r.get(f"median_{name}_ms")
        pairs[(key, "p99")] = r.get(f"p99_{name}_ms")
    return pairs


def _guidellm(run: ImportedRun) -> dict[tuple[str, str], Any]:
    metrics = run.reported.get("metrics") or {}
    return {
        ("ttft_ms", "mean"): _dig(metrics, "time_to_first_token_ms", "successful", "mean"),
        ("ttft_ms", "p50"): _dig(metrics, "time_to_first_token_ms", "successful", "median"),
    }


def _aiperf(run: ImportedRun) -> dict[tuple[str, str], Any]:
    r = run.reported
    pairs: dict[tuple[str, str], Any] = {}
    for key, name in (("ttft_ms", "time_to_first_token"), ("e2e_ms", "request_latency")):
        if _dig(r, name, "unit") in (None, "ms"):
            pairs[(key, "mean")] = _dig(r, name, "avg")
            pairs[(key, "p50")] = _dig(r, name, "p50")
            pairs[(key, "p99")] = _dig(r, name, "p99")
    return pairs


def _llmperf(run: ImportedRun) -> dict[tuple[str, str], Any]:
    summary = run.reported.get("summary_as_llmperf_computes_it") or {}
    ttft = summary.get("ttft_s") or {}
    return {("ttft_ms", "mean"): _ms(ttft.get("mean")), ("ttft_ms", "p50"): _ms(_dig(ttft, "quantiles", "p50"))}


def _ms(seconds: Any) -> float | None:
    return seconds * 1000 if isinstance(seconds, int | float) else None


EXPECTED: dict[str, Callable[[ImportedRun], dict[tuple[str, str], Any]]] = {
    "vllm_bench_serve": _vllm_like,
    "sglang_bench_serving": _vllm_like,
    "guidellm_json": _guidellm,
    "aiperf_json": _aiperf,
    "aiperf_csv": _aiperf,
    "llmperf_requests": _llmperf,
    "llmperf_summary": _llmperf,
}


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=1e-6)


def check_run(fmt: str, run: ImportedRun) -> tuple[int, list[str]]:
    """(figures checked, mismatches in words)."""
    expected = EXPECTED.get(fmt, lambda _run: {})(run)
    checked, wrong = 0, []
    for (key, field), value in expected.items():
        if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
            continue
        stat = run.metrics.get(key)
        ours = getattr(stat, field, None) if stat is not None else None
        if ours is None:
            continue  # the importer left it out on purpose (a definition that is not ours; see its notes)
        checked += 1
        if not _close(ours, float(value)):
            wrong.append(f"{key}.{field}: ours {ours:.4f}, file {float(value):.4f}")
    reported_completed = run.reported.get("completed")
    if isinstance(reported_completed, int) and run.completed is not None:
        checked += 1
        if reported_completed != run.completed:
            wrong.append(f"completed: ours {run.completed}, file {reported_completed}")
    return checked, wrong


def results(shared: Path) -> tuple[int, int, int]:
    imported = refused = failed = 0
    for folder in RESULT_DIRS:
        for path in sorted((shared / folder).glob("*")):
            name = f"{folder}/{path.name}"
            try:
                fmt, runs = import_text(path.read_text(encoding="utf-8", errors="replace"))
            except BenchmarkFormatError as error:
                if error.tried:
                    refused += 1
                    print(f"refused  {name}\n         {error.message[:300]}")
                else:
                    failed += 1
                    print(f"FAILED   {name}: {error.message}")
                continue
            checked, wrong = 0, []
            for run in runs:
                n, bad = check_run(fmt, run)
                checked += n
                wrong += [f"{run.label or 'run'}: {item}" for item in bad]
            first = runs[0]
            ttft = first.metrics.get("ttft_ms")
            line = (
                f"{fmt}, {len(runs)} run(s); first: completed {first.completed}, failed {first.failed}, "
                f"TTFT mean {ttft.mean if ttft and ttft.mean is not None else '—'} ms "
                f"({ttft.source if ttft else 'absent'}); {checked} figure(s) checked against the file"
            )
            if wrong:
                failed += 1
                print(f"MISMATCH {name}\n         {line}\n         " + "\n         ".join(wrong))
            else:
                imported += 1
                print(f"imported {name}\n         {line}")
    return imported, refused, failed


def timelines(shared: Path) -> tuple[int, int, int]:
    parsed = refused = failed = 0
    for folder in TIMELINE_DIRS:
        for path in sorted((shared / folder).glob("*")):
            name = f"{folder}/{path.name}"
            try:
                timeline = parse_timeline(path.read_text(encoding="utf-8", errors="replace"))
            except TimelineRefusal as refusal:
                refused += 1
                print(f"refused  {name}: {refusal.reason[:200]}")
                continue
            except Exception as error:  # a crash is the finding to report
                failed += 1
                print(f"FAILED   {name}: {type(error).__name__}: {error}")
                continue
            parsed += 1
            peaks = (
                ", ".join(f"GPU {g.gpu} peak {g.peak_bytes / 2**20:,.0f} MiB" for g in timeline.gpus if g.peak_bytes)
                or "no GPU series"
            )
            kv = [s for s in timeline.servers if s.samples]
            print(f"parsed   {name}: {timeline.format}; {peaks}; {len(kv)} engine series")
    return parsed, refused, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data" / "real_outputs")
    args = parser.parse_args(argv)
    if not args.shared.is_dir():
        print(f"{args.shared} not found: nothing to check")
        return 1
    imported, refused, failed = results(args.shared)
    parsed, refused_logs, failed_logs = timelines(args.shared)
    print(
        f"\nresult files: {imported} imported and agreeing with their own summaries, {refused} refused with a "
        f"reason, {failed} failed"
    )
    print(f"monitoring logs: {parsed} parsed, {refused_logs} refused with a reason, {failed_logs} failed")
    return 1 if failed or failed_logs else 0


if __name__ == "__main__":
    sys.exit(main())
