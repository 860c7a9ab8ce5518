"""The fixtures of the fingerprint tests: small outputs written for these tests, read from fixtures/ by name."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text()
