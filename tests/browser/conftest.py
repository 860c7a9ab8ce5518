"""The Chinese catalog is compiled from the committed .po (the .mo files are build output, not in git)."""

from __future__ import annotations

import pytest
from django.core.management import call_command


@pytest.fixture(scope="session", autouse=True)
def compiled_translations() -> None:
    call_command("compile_translations", verbosity=0)
