"""Path converters of the project's URLs."""

from __future__ import annotations


class DatabaseIdConverter:
    """A row id: up to 18 digits, so that every id a URL can name fits the database's 64-bit integer (a longer one
    matches no URL: a 404, where Django's `int` would pass it to the query, which overflows into a 500)."""

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)
