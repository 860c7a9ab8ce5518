"""Request logs as CSV: one request a row, read into `LoggedRequest`s for `profile_fit`.

Columns (the header row names them, case-insensitively, in any order; other columns are ignored):

- `timestamp`: ISO 8601 (`2024-05-01T10:15:00+08:00`, `2024-05-01 10:15:00`, `…Z`) or Unix epoch seconds
  (`1714529700`, fractions allowed; a 13-digit figure is read as epoch milliseconds). The hour of day is the hour
  as written for ISO times (the customer's local time when the log carries an offset) and UTC for epoch times.
- `input_tokens` and `output_tokens`: whole numbers ≥ 0.
- `class` (optional): the request class; rows without one form the class "default".

Errors name the row as a spreadsheet shows it (the header is row 1) and the column:
"row 17: input_tokens 'abc' is not a whole number".
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from llm_sizing_loadgen.workload import LoggedRequest
from sizing.estimator.errors import SizingError, SizingErrorCode

# accepted header names for each column, after lower-casing and turning spaces and hyphens into underscores
COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "timestamp": (
        "timestamp",
        "time",
        "ts",
        "datetime",
        "date_time",
        "created_at",
        "created",
        "start_time",
        "request_time",
        "arrival_time",
        "time_stamp",
    ),
    "input_tokens": (
        "input_tokens",
        "prompt_tokens",
        "input_len",
        "input_length",
        "prompt_len",
        "prompt_length",
        "num_input_tokens",
        "num_prompt_tokens",
        "tokens_in",
        "input_token_count",
        "prompt_token_count",
    ),
    "output_tokens": (
        "output_tokens",
        "completion_tokens",
        "output_len",
        "output_length",
        "completion_len",
        "completion_length",
        "num_output_tokens",
        "num_completion_tokens",
        "generated_tokens",
        "tokens_out",
        "output_token_count",
        "completion_token_count",
    ),
    "class": ("class", "request_class", "class_name", "category", "request_type", "workload", "label"),
}
REQUIRED_COLUMNS = ("timestamp", "input_tokens", "output_tokens")
MAX_CLASSES = 50  # a column of ids mistaken for the class would make a profile nobody can read
MIN_REQUESTS = 2  # profile_fit's least
MAX_REPORTED_ERRORS = 20  # the first errors of a bad file, not one per row of a million
EPOCH_MILLISECONDS_FROM = 1e11  # 1e11 s is the year 5138: larger epoch figures are milliseconds
DELIMITERS = (",", ";", "\t")

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True, kw_only=True)
class ParsedLog:
    requests: list[LoggedRequest]
    columns: dict[str, str]  # our column → the header as written in the file


def _invalid_file(messages: list[str], *, extra: dict[str, Any] | None = None) -> SizingError:
    message = messages[0] if len(messages) == 1 else f"{messages[0]} (and {len(messages) - 1} more errors)"
    return SizingError(
        code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={**(extra or {}), "fields": {"file": messages}}
    )


def _normalise(header: str) -> str:
    return re.sub(r"[\s\-]+", "_", header.strip().lower())


def _columns(header: list[str], *, row: int) -> dict[str, int]:
    """Our column name → its index in the row; raises when a required column is missing."""
    found: dict[str, int] = {}
    normalised = [_normalise(name) for name in header]
    for column, aliases in COLUMN_ALIASES.items():
        for alias in aliases:
            if alias in normalised:
                found[column] = normalised.index(alias)
                break
    missing = [column for column in REQUIRED_COLUMNS if column not in found]
    if missing:
        written = ", ".join(name.strip() for name in header if name.strip()) or "nothing"
        messages = [
            f"row {row}: the header has no {column} column (also accepted: "
            f"{', '.join(COLUMN_ALIASES[column][1:6])}); it names {written}"
            for column in missing
        ]
        raise _invalid_file(messages)
    return found


def _delimiter(first_line: str) -> str:
    return max(DELIMITERS, key=first_line.count) if any(d in first_line for d in DELIMITERS) else ","


def _whole_number(value: str, *, row: int, column: str) -> int:
    text = value.strip().replace("_", "")
    if not text:
        raise ValueError(f"row {row}: {column} is empty")
    if not _NUMBER.match(text):
        raise ValueError(f"row {row}: {column} {value.strip()!r} is not a whole number")
    number = float(text)
    if not math.isfinite(number) or number != int(number):
        raise ValueError(f"row {row}: {column} {value.strip()!r} is not a whole number")
    if number < 0:
        raise ValueError(f"row {row}: {column} {value.strip()!r} is negative; token counts are ≥ 0")
    return int(number)


def _timestamp(value: str, *, row: int) -> tuple[float, int]:
    """(seconds since the epoch, hour of day) of an ISO 8601 time or an epoch figure."""
    text = value.strip()
    if not text:
        raise ValueError(f"row {row}: timestamp is empty")
    if _NUMBER.match(text):
        seconds = float(text)
        if seconds >= EPOCH_MILLISECONDS_FROM:
            seconds /= 1000
        try:
            moment = datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise ValueError(f"row {row}: timestamp {text!r} is out of range for Unix epoch seconds") from None
        return seconds, moment.hour
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"row {row}: timestamp {text!r} is neither ISO 8601 (e.g. 2024-05-01T10:15:00+08:00) nor Unix epoch seconds"
        ) from None
    hour = moment.hour  # as written: the local hour when the time carries its offset
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # only for the seconds between requests
    return moment.timestamp(), hour


def workload_log_parse(*, text: str) -> ParsedLog:
    """Read a CSV request log; raises SizingError with the first errors (row and column) under extra.fields.file."""
    text = text.lstrip("\ufeff")
    stripped = text.lstrip("\r\n")
    header_row = 1 + text[: len(text) - len(stripped)].count("\n")  # blank lines before the header still count
    text = stripped
    reader = csv.reader(io.StringIO(text), delimiter=_delimiter(text.split("\n", 1)[0]))
    try:
        header = next(reader)
    except StopIteration:
        raise _invalid_file(["the file is empty: it needs a header row and one row per request"]) from None
    except csv.Error as error:
        raise _invalid_file([f"row {header_row}: {error}"]) from None
    columns = _columns(header, row=header_row)
    errors: list[str] = []
    requests: list[LoggedRequest] = []
    classes: set[str] = set()
    row_number = header_row
    try:
        for row_number, row in enumerate(reader, start=header_row + 1):
            if not any(cell.strip() for cell in row):
                continue  # blank lines, e.g. at the end
            cells = {column: row[index] if index < len(row) else "" for column, index in columns.items()}
            try:
                seconds, hour = _timestamp(cells["timestamp"], row=row_number)
                input_tokens = _whole_number(cells["input_tokens"], row=row_number, column="input_tokens")
                output_tokens = _whole_number(cells["output_tokens"], row=row_number, column="output_tokens")
            except ValueError as error:
                errors.append(str(error))
                if len(errors) >= MAX_REPORTED_ERRORS:
                    break
                continue
            request_class = cells.get("class", "").strip()[:100]
            classes.add(request_class or "default")
            requests.append(
                LoggedRequest(
                    timestamp_s=seconds,
                    input_tokens=input_tokens,
                    output_tokens=output_tokens,
                    request_class=request_class,
                    hour=hour,
                )
            )
    except csv.Error as error:
        errors.append(f"row {row_number + 1}: {error}")
    if errors:
        raise _invalid_file(errors)
    if len(requests) < MIN_REQUESTS:
        raise _invalid_file(
            [f"the file has {len(requests)} request row(s); fitting a profile needs at least {MIN_REQUESTS}"]
        )
    if len(classes) > MAX_CLASSES:
        raise _invalid_file(
            [
                f"the class column has {len(classes)} different values; a profile takes at most "
                f"{MAX_CLASSES} classes (is it a column of ids?)"
            ],
            extra={"classes": len(classes), "max_classes": MAX_CLASSES},
        )
    return ParsedLog(requests=requests, columns={column: header[index].strip() for column, index in columns.items()})
