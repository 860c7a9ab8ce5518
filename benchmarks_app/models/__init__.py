"""Benchmark runs imported from the field's tools (and, later, our own load tests), on one footing
(`benchmarks_app.results.run`): the raw file kept, one row per run with its canonical metrics, and the per-request records
in bulk. Runs from one file holding several (a sweep) form a series.

One module per noun; every model is importable from benchmarks_app.models as before."""

from benchmarks_app.models.endpoints import Endpoint
from benchmarks_app.models.loadtests import LoadTest, LoadTestShard
from benchmarks_app.models.memory_health import MemoryHealthReport
from benchmarks_app.models.memory_logs import MemoryLog
from benchmarks_app.models.runs import BenchmarkFile, BenchmarkRequest, BenchmarkRun, BenchmarkSeries

__all__ = [
    "BenchmarkFile",
    "BenchmarkRequest",
    "BenchmarkRun",
    "BenchmarkSeries",
    "Endpoint",
    "LoadTest",
    "LoadTestShard",
    "MemoryHealthReport",
    "MemoryLog",
]
