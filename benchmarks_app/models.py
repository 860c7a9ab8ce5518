"""Benchmark runs and load tests arrive with the load-testing issues; the app exists so they have a home."""
