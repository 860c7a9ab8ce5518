"""Errors of the sizing core: a stable code, a message that says what to change, and numbers in `extra`.

The type itself lives in the load generator's distribution (`llm_sizing_loadgen.errors`), whose workload module
raises it when a profile is wrong; the estimator and the service name it from here (docs/decisions.md).
"""

from __future__ import annotations

from llm_sizing_loadgen.errors import SizingError, SizingErrorCode, invalid_argument

__all__ = ["SizingError", "SizingErrorCode", "invalid_argument"]
