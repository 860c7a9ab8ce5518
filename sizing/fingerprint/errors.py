"""Refusals of the fingerprint parsers: a stable code and a message that says what to send instead."""

from __future__ import annotations

from enum import Enum
from typing import Any


class FingerprintErrorCode(Enum):
    BINARY_INPUT = "binary_input"
    OVERSIZE_INPUT = "oversize_input"
    EMPTY_INPUT = "empty_input"
    UNSAFE_XML = "unsafe_xml"
    INVALID_PROBE = "invalid_probe"


class FingerprintError(Exception):
    """An input the fingerprint parsers refuse to read, with the reason a person can act on."""

    def __init__(self, *, code: FingerprintErrorCode, message: str, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra or {}

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code.value, "message": self.message, "extra": self.extra}
