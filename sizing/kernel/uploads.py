"""The one check of an uploaded file's size against its limit (SIZING_MAX_*_BYTES, REPORTS_MAX_VERIFY_BYTES, the
importers' MAX_BYTES), and its one refusal: "<name>: the file is 1,234 bytes; the limit is 1,000 bytes (<note>)".

A file is refused by its declared size before it is read, and read at most one byte past the limit (a 50 MB file
is never read whole); the bytes read are checked again, as a file's declared size may be absent. Services and
views raise SizingError (invalid_argument, with `size_bytes`, `limit_bytes` and `fields`); a serializer's
`validate_<field>` raises DRF's ValidationError (invalid_input) through `field_upload_read`.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from sizing.estimator.errors import SizingError, SizingErrorCode


def too_large_message(
    size_bytes: int,
    limit_bytes: int,
    *,
    name: str | None = None,
    subject: str = "the file",
    grouped: bool = True,
    limit_unit: bool = True,
    note: str = "",
) -> str:
    """The refusal's text: `name` first when given, sizes with thousands separators unless `grouped` is False,
    `note` (the limit's setting, advice) last."""
    size, limit = (f"{size_bytes:,}", f"{limit_bytes:,}") if grouped else (str(size_bytes), str(limit_bytes))
    text = f"{subject} is {size} bytes; the limit is {limit}" + (" bytes" if limit_unit else "")
    if name is not None:
        text = f"{name}: {text}"
    return f"{text} {note}" if note else text


def upload_size_check(size_bytes: int | None, *, limit_bytes: int, field: str, **wording: Any) -> None:
    """SizingError (400, invalid_argument, naming `field`) when `size_bytes` is over `limit_bytes`; None passes
    (a file that does not say its size is checked by what is read)."""
    if size_bytes is not None and size_bytes > limit_bytes:
        message = too_large_message(size_bytes, limit_bytes, **wording)
        raise SizingError(
            code=SizingErrorCode.INVALID_ARGUMENT,
            message=message,
            extra={"size_bytes": size_bytes, "limit_bytes": limit_bytes, "fields": {field: [message]}},
        )


def upload_read(file: Any, *, limit_bytes: int, field: str, **wording: Any) -> bytes:
    """The bytes of an uploaded file, refused (SizingError, see `upload_size_check`) by its declared size before
    reading and by what was read (at most `limit_bytes + 1`)."""
    declared = getattr(file, "size", None)
    upload_size_check(declared, limit_bytes=limit_bytes, field=field, **wording)
    data: bytes = file.read(limit_bytes + 1)
    upload_size_check(max(declared or 0, len(data)), limit_bytes=limit_bytes, field=field, **wording)
    return data


def field_upload_read(file: Any, *, limit_bytes: int, **wording: Any) -> bytes:
    """`upload_read` for a serializer's `validate_<field>`: DRF's ValidationError (400, invalid_input, under the
    field) with the same text."""
    try:
        return upload_read(file, limit_bytes=limit_bytes, field="", **wording)
    except SizingError as error:
        raise serializers.ValidationError(error.message) from None
