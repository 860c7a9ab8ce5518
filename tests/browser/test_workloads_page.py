"""The workload-profiles page end to end in headless Debian Chromium: open the shipped sample, see its day drawn by
class with the busiest hour, save a copy, and fit a profile to a small CSV request log."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from sizing.services.workloads import workload_sample_load
from tests.browser.helpers import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SAMPLE_NAME = "Sample: Q&A, reports, archive analysis"

# 16 chat requests at 09:xx and 10:xx (Beijing time) and 4 reports at 10:xx; the fourth line is bad at first
LOG_ROWS = [
    *(f"2024-05-01T09:{minute:02d}:00+08:00,{100 + minute},{60 + minute},chat" for minute in range(0, 60, 8)),
    *(f"2024-05-01T10:{minute:02d}:00+08:00,{140 + minute},{40 + minute},chat" for minute in range(0, 60, 8)),
    *(f"2024-05-01T10:{minute:02d}:30+08:00,{2000 + 20 * minute},900,report" for minute in range(0, 60, 15)),
]


@pytest.fixture
def sample(transactional_db) -> None:
    """The shipped sample, stored before the browser starts: database work inside Playwright's event loop would
    open a connection the test database's teardown does not close."""
    workload_sample_load()


def _write_log(folder: Path, name: str, rows: list[str]) -> Path:
    path = folder / name
    path.write_text("\n".join(["timestamp,prompt_tokens,completion_tokens,class", *rows]) + "\n")
    return path


def test_open_the_sample_see_its_day_and_import_a_log(
    live_server, transactional_db, sample: None, user, page: Page, tmp_path: Path
) -> None:
    # given the shipped sample and a signed-in engineer who follows the header link
    sign_in(page, live_server.url)
    page.click('.topnav a[href="/workloads/"]')
    page.wait_for_url(f"{live_server.url}/workloads/**")

    # when they open the sample from the list
    page.click(f'#profile-list .profile-item:has-text("{SAMPLE_NAME}")')

    # then the editor holds its three classes, marked as a read-only sample to copy
    expect(page.locator("#editor-title")).to_have_text(SAMPLE_NAME)
    expect(page.locator("#editor-sample")).to_be_visible()
    expect(page.locator("#save-button")).to_have_text("Save a copy")
    expect(page.locator("#delete-button")).to_be_hidden()
    rows = page.locator("#class-rows [data-row]")
    expect(rows).to_have_count(3)
    expect(rows.nth(1).locator('[data-name="windows"]')).to_have_value("10-12")
    expect(rows.nth(0).locator('[data-name="input_mean"]')).to_have_value("128")
    # and the day is drawn: one stacked bar trace per class, busiest at 10:00 with 13/73 Q&A and 60/73 reports
    page.wait_for_selector("#daily-chart .main-svg")
    expect(page.locator("#daily-chart .trace.bars")).to_have_count(3)
    expect(page.locator("#busiest-summary")).to_have_attribute("data-busiest-hour", "10")
    expect(page.locator("#busiest-summary")).to_have_text("Busiest hour 10:00: 15.2% of the day's requests")
    expect(page.locator('#class-table tr[data-class="Real-time Q&A"] .mix')).to_have_text("17.8%")
    expect(page.locator('#class-table tr[data-class="Report generation"] .mix')).to_have_text("82.2%")
    expect(page.locator('#class-table tr[data-class="Archive analysis"]')).to_contain_text("14:00–16:00")

    # when they save it: a copy under "… (copy)" becomes the organisation's own
    page.click("#save-button")
    expect(page.locator("#form-status")).to_have_text(f"Saved {SAMPLE_NAME} (copy)")
    expect(page.locator("#editor-sample")).to_be_hidden()
    expect(page.locator("#delete-button")).to_be_visible()
    expect(page.locator("#profile-list .profile-item")).to_have_count(2)

    # when they import a log with a bad row
    bad = _write_log(tmp_path, "bad.csv", [*LOG_ROWS[:2], "2024-05-01T09:20:00+08:00,many,10,chat", *LOG_ROWS[3:]])
    page.fill("#import-name", "Beijing morning")
    page.set_input_files("#import-file", str(bad))
    page.click("#import-button")

    # then the row and column stand next to the file input, and nothing is saved
    expect(page.locator('[data-import-error-for="file"]')).to_have_text(
        "row 4: input_tokens 'many' is not a whole number"
    )
    expect(page.locator("#import-file")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#import-error")).to_contain_text("invalid_argument")
    expect(page.locator("#profile-list .profile-item")).to_have_count(2)

    # when they import the good log
    page.set_input_files("#import-file", str(_write_log(tmp_path, "good.csv", LOG_ROWS)))
    page.click("#import-button")

    # then the fitted profile is loaded, listed, and its fit stands against the data
    expect(page.locator("#form-status")).to_have_text("Imported Beijing morning: 20 requests")
    expect(page.locator("#editor-title")).to_have_text("Beijing morning")
    expect(page.locator("#profile-list .profile-item.is-active")).to_contain_text("From a CSV log")
    expect(page.locator('#fit-summary [data-figure="requests"]')).to_contain_text("20")
    expect(page.locator("#fit-columns")).to_have_text(
        "Columns read: timestamp, prompt_tokens → input_tokens, completion_tokens → output_tokens, class"
    )
    chat_input = '#fit-table tr[data-class="chat"][data-side="input"]'
    # chat prompts: 100…156 step 8 and 140…196 step 8: mean (128 + 168) / 2 = 148
    expect(page.locator(f'{chat_input}[data-source="data"] [data-stat="mean"]')).to_have_text("148")
    expect(page.locator(f'{chat_input}[data-source="fitted"] [data-stat="mean"]')).to_have_text("148")
    report_output = '#fit-table tr[data-class="report"][data-side="output"][data-source="fitted"]'
    expect(page.locator(report_output)).to_contain_text("Fixed")  # every report answered 900 tokens
    expect(page.locator("#fit-charts .fit-chart")).to_have_count(4)  # two classes × input and output
    page.wait_for_selector("#fit-charts .fit-chart .main-svg")
    expect(page.locator("#fit-chart-0-input .trace.bars")).to_have_count(2)  # data and fitted
    # the day of the fitted profile: 8 chat requests at 09:00, 8 chat and 4 reports at 10:00 local time
    expect(page.locator('#class-table tr[data-class="report"] .mix')).to_have_text("33.3%")
    expect(page.locator("#busiest-summary")).to_have_text("Busiest hour 10:00: 60.0% of the day's requests")
    expect(page.locator("#field-requests_per_day")).to_have_value("20")
    expect(page.locator("#profile-list .profile-item")).to_have_count(3)
