"""Benchmark runs from the field's tools, on one footing (`../shared/METRICS.md`); no Django here."""
