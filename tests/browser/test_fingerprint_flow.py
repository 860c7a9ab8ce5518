"""Deployments and fingerprints end to end in headless Debian Chromium: create a deployment, upload what a server
measured, land on the fingerprint's page with its findings and topology, and find it under its host."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.helpers import sign_in
from tests.sizing.fingerprint.fixture_files import FIXTURES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_create_a_deployment_upload_its_outputs_and_read_the_fingerprint(
    live_server, transactional_db, catalog: None, user, page: Page
) -> None:
    # given a signed-in engineer who follows the header link to the deployments
    sign_in(page, live_server.url)
    page.click(".topnav >> text=Deployments")
    page.wait_for_url(f"{live_server.url}/deployments/")

    # when they create a deployment: Llama 3 8B on 2 × A100 80GB with TP 2, an image built for CUDA 12.4
    page.fill("#field-name", "Acme chat")
    page.fill("#field-customer", "Acme Bank")
    page.select_option("#field-model", "meta-llama/Meta-Llama-3-8B")
    page.select_option("#field-gpu", "nvidia-a100-sxm-80gb")
    page.fill("#field-gpu_count", "2")
    page.fill("#field-tp", "2")
    page.fill("#field-image_cuda_version", "12.4")
    page.click("#create-button")
    page.wait_for_url(re.compile(r".*/deployments/\d+/$"))
    expect(page.locator("#deployment-name")).to_have_text("Acme chat")
    expect(page.locator("#probe-download")).to_have_attribute("href", "/api/v1/fingerprints/probe")

    # and upload the server's nvidia-smi -q -x and topo -m outputs
    page.set_input_files(
        "#upload-files", [str(FIXTURES / "xml_a100_mig.xml"), str(FIXTURES / "topo_2xl4_pcie_spaces.txt")]
    )
    page.fill("#upload-label", "staging")
    page.fill("#upload-host", "gpu-01")
    page.click("#upload-button")

    # then they land on the fingerprint: its findings first, the topology as a matrix and as a graph
    page.wait_for_url(re.compile(r".*/fingerprints/\d+/$"))
    expect(page.locator("#fingerprint-host")).to_have_text("gpu-01")
    expect(page.locator('#findings [data-code="mig_enabled"]')).to_contain_text("MIG is enabled")
    expect(page.locator('#findings [data-code="tp_over_pcie"]')).to_contain_text("TP 2 would all-reduce over PHB")
    expect(page.locator('#topology-matrix td[data-kind="PHB"]')).to_have_count(2)
    expect(page.locator("#topology-graph .topo-node")).to_have_count(2)
    # the fixture's GPUs are MIG slices: the memory a deployment gets is a slice's (39.2 GiB), not the card's 80 GiB
    expect(page.locator('#effect-table tr[data-row="capacity_bytes_per_gpu"] td.measured')).to_have_text("39.2 GiB")

    # and the deployment's page lists it as the host's first version
    page.click("#deployment-link")
    row = page.locator('#fingerprints-card [data-host="gpu-01"] + .table-scroll tbody tr')
    expect(row).to_have_count(1)
    expect(row.locator("th")).to_have_text("v1")
    expect(row).to_contain_text("staging")

    # and sizing on that machine: the measured card replaces the catalog's, the plan is checked against it
    link = page.locator("#fingerprints-card tbody tr th a").first.get_attribute("href")
    fingerprint_id = link.strip("/").split("/")[-1]
    page.goto(f"{live_server.url}/")
    page.select_option("#field-model", "meta-llama/Meta-Llama-3-8B")
    page.select_option("#field-gpu", "nvidia-a100-sxm-80gb")
    page.fill("#field-gpus", "2")
    page.fill("#field-tp", "2")
    page.locator("#measured-terms summary").click()
    page.select_option("#field-fingerprint", fingerprint_id)
    page.click("#estimate-button")
    expect(page.locator("#environment")).to_be_visible()
    expect(page.locator("#environment-summary")).to_contain_text("gpu-01")
    expect(page.locator("#environment-summary")).to_contain_text("39.25 GiB")  # the MIG slice, not the card
    expect(page.locator('#environment-findings [data-code="mig_slices"]')).to_be_visible()
