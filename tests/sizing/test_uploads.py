"""The one upload size check (sizing/kernel/uploads.py), by hand-written cases."""

from __future__ import annotations

import io

import pytest
from rest_framework import serializers

from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.kernel.uploads import field_upload_read, too_large_message, upload_read, upload_size_check


class _File(io.BytesIO):
    def __init__(self, data: bytes, size: int | None) -> None:
        super().__init__(data)
        self.size = size


def test_message_wordings() -> None:
    assert too_large_message(1234, 1000) == "the file is 1,234 bytes; the limit is 1,000 bytes"
    assert too_large_message(1234, 1000, grouped=False, subject="the log") == (
        "the log is 1234 bytes; the limit is 1000 bytes"
    )
    assert too_large_message(1234, 1000, limit_unit=False) == "the file is 1,234 bytes; the limit is 1,000"
    assert too_large_message(1234, 1000, name="a.json", note="(50 MiB)") == (
        "a.json: the file is 1,234 bytes; the limit is 1,000 bytes (50 MiB)"
    )
    assert too_large_message(5, 4, name="") == ": the file is 5 bytes; the limit is 4 bytes"


def test_size_check_passes_at_the_limit_and_without_a_size() -> None:
    upload_size_check(10, limit_bytes=10, field="file")
    upload_size_check(None, limit_bytes=10, field="file")


def test_size_check_refuses_over_the_limit_naming_the_field() -> None:
    with pytest.raises(SizingError) as caught:
        upload_size_check(11, limit_bytes=10, field="files", name="smi.txt")
    error = caught.value
    message = "smi.txt: the file is 11 bytes; the limit is 10 bytes"
    assert error.code is SizingErrorCode.INVALID_ARGUMENT
    assert error.message == message
    assert error.extra == {"size_bytes": 11, "limit_bytes": 10, "fields": {"files": [message]}}


def test_read_returns_the_bytes_within_the_limit() -> None:
    assert upload_read(_File(b"0123456789", 10), limit_bytes=10, field="file") == b"0123456789"


def test_read_refuses_by_the_declared_size_before_reading() -> None:
    upload = _File(b"0123456789", 11)
    with pytest.raises(SizingError):
        upload_read(upload, limit_bytes=10, field="file")
    assert upload.tell() == 0


def test_read_refuses_by_what_was_read_when_the_size_is_absent_or_wrong() -> None:
    for size in (None, 3):
        with pytest.raises(SizingError) as caught:
            upload_read(_File(b"x" * 50, size), limit_bytes=10, field="file")
        assert caught.value.extra["size_bytes"] == 11  # read at most one byte past the limit


def test_field_read_raises_drf_validation_error_with_the_same_text() -> None:
    with pytest.raises(serializers.ValidationError) as caught:
        field_upload_read(_File(b"x" * 20, 20), limit_bytes=10, subject="config.json", grouped=False)
    assert caught.value.detail == ["config.json is 20 bytes; the limit is 10 bytes"]
    assert field_upload_read(_File(b"ok", 2), limit_bytes=10) == b"ok"
