"""The Content-Security-Policy in headless Debian Chromium (issue 9): a signed-in operator visits every main page and
the API docs; the browser reports no policy violation and logs nothing, and the sizing page's scripts still run and
Plotly still draws its charts under the policy."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import ConsoleMessage, Page, expect

from sizing.models import Membership, Organisation
from tests.browser.helpers import wait_for_estimate

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery"
PAGES = [
    "/",
    "/colocated/",
    "/workloads/",
    "/performance/",
    "/deployments/",
    "/benchmarks/",
    "/endpoints/",
    "/memory/",
    "/load-tests/",
    "/reports/",
    "/customers/",
    "/api/docs/",
]
# Init scripts run before the page's own and are not subject to its policy: every violation lands in a list
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(
    [event.effectiveDirective, event.blockedURI, event.sourceFile, event.lineNumber, event.sample].join(" | "));
});
"""


@pytest.fixture
def operator(organisation: Organisation):
    account = get_user_model().objects.create_superuser(username="operator", password=PASSWORD)
    Membership.objects.create(user=account, organisation=organisation)
    return account


def _watch(page: Page) -> list[str]:
    """Console messages (a CSP refusal is logged as an error too); Chromium's "verbose" DOM hints (an input without
    an autocomplete attribute) are not the page's doing."""
    messages: list[str] = []

    def record(message: ConsoleMessage) -> None:
        if message.type not in {"verbose", "debug"}:
            messages.append(f"{message.type}: {message.text} ({page.url})")

    page.add_init_script(RECORD_VIOLATIONS)
    page.on("console", record)
    return messages


def _violations(page: Page) -> list[str]:
    return [f"{entry} ({page.url})" for entry in page.evaluate("window.__cspViolations || []")]


def _sign_in(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/login/")
    page.fill("#id_username", "operator")
    page.fill("#id_password", PASSWORD)
    page.click("#login-button")
    page.wait_for_url(f"{base_url}/")


def test_no_page_violates_the_content_security_policy(
    live_server, transactional_db, catalog: None, operator, page: Page
) -> None:
    # given an operator who signed in through the form, with every violation and console message recorded
    console = _watch(page)
    _sign_in(page, live_server.url)
    violations = _violations(page)

    # when they visit every main page
    for path in PAGES:
        response = page.goto(f"{live_server.url}{path}")
        assert response is not None
        assert response.status == 200, path
        directives = {part.strip() for part in response.headers["content-security-policy"].split(";")}
        assert "script-src 'self'" in directives, path  # the directives come in no fixed order
        page.wait_for_load_state("load")
        if path == "/api/docs/":  # Swagger UI is drawn by the script the split view serves from ?script
            page.wait_for_selector("#swagger-ui .opblock", timeout=20_000)
        page.wait_for_timeout(300)  # late scripts (fetches, polling) get a moment to misbehave
        violations += _violations(page)

    # then the browser reported nothing
    assert violations == [], "\n".join(violations)
    assert console == [], "\n".join(console)


def test_the_sizing_page_scripts_and_charts_run_under_the_policy(
    live_server, transactional_db, catalog: None, operator, page: Page
) -> None:
    # given a signed-in operator on the sizing page
    console = _watch(page)
    _sign_in(page, live_server.url)

    # when they estimate Llama-3-8B on one H100 SXM
    page.select_option("#field-model", "meta-llama/Meta-Llama-3-8B")
    page.select_option("#field-gpu", "nvidia-h100-sxm-80gb")
    page.click("#estimate-button")

    # then the page's script drew the verdict and Plotly drew both charts, with no violation on the way
    wait_for_estimate(page)
    expect(page.locator("#verdict")).to_have_attribute("data-fits", "true")
    assert page.locator("#memory-chart .trace.bars").count() == 5
    # Plotly's own rules come from the linked frontend/plotly.css, not an inline <style>
    assert page.eval_on_selector("#memory-chart .main-svg", "svg => getComputedStyle(svg).position") == "absolute"
    assert page.locator("style").count() == 0
    page.mouse.move(400, 300)
    page.wait_for_timeout(300)
    assert _violations(page) == [], "\n".join(_violations(page))
    assert console == [], "\n".join(console)
