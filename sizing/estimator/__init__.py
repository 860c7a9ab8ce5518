"""The pure-Python sizing core: no Django import anywhere in this package.

Architecture (config.json) -> tensor inventory -> parameters and weight bytes -> per-layer KV ->
per-GPU memory bill under a parallel layout and an engine's memory budget.
"""
