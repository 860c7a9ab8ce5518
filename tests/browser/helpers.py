"""Steps the browser tests share."""

from __future__ import annotations

from playwright.sync_api import Page


def sign_in(page: Page, base_url: str) -> None:
    """Sign in as the `user` fixture's engineer and land on the sizing page."""
    page.goto(f"{base_url}/")
    page.fill("#id_username", "engineer")
    page.fill("#id_password", "correct horse battery")
    page.click("#login-button")
    page.wait_for_url(f"{base_url}/")


def wait_for_estimate(page: Page) -> None:
    """Wait until the sizing page has drawn an estimate (both charts)."""
    page.wait_for_selector("#memory-chart .main-svg")
    page.wait_for_selector("#memory-chart .trace.bars")
    page.wait_for_selector("#concurrency-chart .main-svg")
