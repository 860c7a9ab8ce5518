"""Errors of the sizing core: a stable code, a message that says what to change, and numbers in `extra`."""

from __future__ import annotations

from enum import Enum
from typing import Any


class SizingErrorCode(Enum):
    INVALID_CONFIG = "invalid_config"
    MISSING_FIELDS = "missing_fields"
    UNSUPPORTED_ARCHITECTURE = "unsupported_architecture"
    UNSUPPORTED_QUANTIZATION = "unsupported_quantization"
    INVALID_PARALLELISM = "invalid_parallelism"
    INVALID_ARGUMENT = "invalid_argument"
    ENGINE_WILL_NOT_START = "engine_will_not_start"
    TOO_MANY_JOBS = "too_many_jobs"  # the organisation has its most jobs of a kind at once (HTTP 429)


class SizingError(Exception):
    """A request the estimator cannot answer, with the reason a person can act on."""

    def __init__(self, *, code: SizingErrorCode, message: str, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra or {}

    def for_item(self, *, field: str, label: str) -> SizingError:
        """The same error attributed to one item of a list (e.g. field "deployments[1]", label "deployment 2")."""
        fields = self.extra.get("fields") or {"non_field_errors": [self.message]}
        return SizingError(
            code=self.code, message=f"{label}: {self.message}", extra={**self.extra, "fields": {field: fields}}
        )

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code.value, "message": self.message, "extra": self.extra}


def invalid_argument(field: str, message: str) -> SizingError:
    """An INVALID_ARGUMENT error whose message is also attached to the form/API field it concerns."""
    return SizingError(code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={"fields": {field: [message]}})
