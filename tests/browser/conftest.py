"""Browser tests: the Chinese catalog compiled from the committed .po (the .mo files are build output, not in
git), and headless Debian Chromium driven by Playwright."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from django.core.management import call_command
from playwright.sync_api import Browser, Page, expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
TIMEOUT_MS = 20_000

expect.set_options(timeout=TIMEOUT_MS)  # assertions wait as long as actions: estimates can take seconds on a busy box


@pytest.fixture(scope="session", autouse=True)
def compiled_translations() -> None:
    call_command("compile_translations", verbosity=0)


@pytest.fixture
def browser() -> Iterator[Browser]:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A tab; the test fails if a page script throws (an uncaught exception or a rejected promise)."""
    context = browser.new_context(locale="en-US", viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(TIMEOUT_MS)
    tab = context.new_page()
    script_errors: list[str] = []
    tab.on("pageerror", lambda error: script_errors.append(str(error)))
    yield tab
    context.close()
    assert script_errors == [], f"page scripts threw: {script_errors}"
