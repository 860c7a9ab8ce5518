"""The fuzz run's counts (operations, requests, seconds) in pytest's terminal summary."""

from __future__ import annotations

from typing import Any

import pytest


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    summary = getattr(config, "api_fuzz_summary", None)
    if summary:
        terminalreporter.write_line(summary)
