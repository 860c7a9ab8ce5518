"""Values made storable as strict JSON (no Django import: the pure importers under benchmarks_app/results call it
too). Two meanings, one function each, named for what they do with the numbers JSON cannot hold:

- `nonfinite_as_null`: NaN and ±Infinity become null (the importers' and the export's rule: a missing figure);
  tuples become lists, datetimes and dates ISO 8601 text, other numbers (Decimal, numpy scalars) floats, and
  anything else its text, so `json.dumps(..., allow_nan=False)` accepts the result.
- `nonfinite_as_text`: NaN and ±Infinity become the text "NaN", "Infinity", "-Infinity" (the services' rule:
  Infinity and NaN appear in real model configs and are kept as said); everything else is left as it is.

Both walk mappings (keys as text) and lists and tuples (as lists) recursively.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from typing import Any


def nonfinite_as_null(value: Any) -> Any:
    """`value` as strict JSON, every non-finite number as None.

    >>> nonfinite_as_null({"a": float("nan"), 1: (1.5, float("inf"))})
    {'a': None, '1': [1.5, None]}
    """
    if value is None or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(key): nonfinite_as_null(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [nonfinite_as_null(item) for item in value]
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    try:  # Decimal, numpy scalars
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return number if math.isfinite(number) else str(value)


def nonfinite_as_text(value: Any) -> Any:
    """`value` with every non-finite float as its JSON-ish text ("NaN", "Infinity", "-Infinity"), recursively.

    >>> nonfinite_as_text({"a": float("-inf"), "b": [float("nan"), 2.0]})
    {'a': '-Infinity', 'b': ['NaN', 2.0]}
    """
    if isinstance(value, float) and not math.isfinite(value):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(value, Mapping):
        return {str(key): nonfinite_as_text(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [nonfinite_as_text(item) for item in value]
    return value
