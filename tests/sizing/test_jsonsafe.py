"""The two JSON-safe rules (sizing/kernel/jsonsafe.py), by hand-written cases."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from enum import Enum

import pytest

from sizing.kernel.jsonsafe import nonfinite_as_null, nonfinite_as_text

NAN, INF = float("nan"), float("inf")


class Colour(Enum):
    RED = "red"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        (True, True),
        ("text", "text"),
        (7, 7),
        (1.5, 1.5),
        (NAN, None),
        (INF, None),
        (-INF, None),
        ({"a": NAN, 2: [1.0, -INF]}, {"a": None, "2": [1.0, None]}),
        ((1, (2.5, NAN)), [1, [2.5, None]]),
        (dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC), "2026-01-02T03:04:05+00:00"),
        (dt.date(2026, 1, 2), "2026-01-02"),
        (Decimal("2.5"), 2.5),
        (Decimal("NaN"), "NaN"),
        (Colour.RED, "Colour.RED"),
        ({"nested": {"deeper": (INF,)}}, {"nested": {"deeper": [None]}}),
    ],
)
def test_nonfinite_as_null(value: object, expected: object) -> None:
    result = nonfinite_as_null(value)
    assert result == expected
    json.dumps(result, allow_nan=False)  # strict JSON


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        (True, True),
        (7, 7),
        (1.5, 1.5),
        (NAN, "NaN"),
        (INF, "Infinity"),
        (-INF, "-Infinity"),
        ({"a": INF, 3: (NAN, 2.0)}, {"a": "Infinity", "3": ["NaN", 2.0]}),
        ([[-INF]], [["-Infinity"]]),
    ],
)
def test_nonfinite_as_text(value: object, expected: object) -> None:
    assert nonfinite_as_text(value) == expected


def test_nonfinite_as_text_leaves_other_objects_alone() -> None:
    moment = dt.date(2026, 1, 2)
    assert nonfinite_as_text({"when": moment})["when"] is moment
    assert nonfinite_as_text(Decimal("NaN")).is_nan()
