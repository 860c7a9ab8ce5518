"""The fingerprint APIs: the probe to download, and parsing pasted outputs (or a probe file) into a fingerprint."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.sizing.fingerprint.fixture_files import fixture_text


@pytest.mark.parametrize(
    ("method", "url"),
    [("get", "/api/v1/fingerprints/probe"), ("post", "/api/v1/fingerprints/parse")],
    ids=["probe", "parse"],
)
def test_fingerprint_endpoints_require_authentication(db, method, url):
    assert getattr(APIClient(), method)(url, {}, format="json").status_code in (401, 403)


def test_the_probe_downloads_as_a_shell_script(api_client):
    response = api_client.get("/api/v1/fingerprints/probe")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/x-shellscript")
    assert 'filename="gpu_probe.sh"' in response["Content-Disposition"]
    assert response.content.startswith(b"#!/usr/bin/env bash")


def test_pasted_outputs_merge_into_one_fingerprint(api_client):
    response = api_client.post(
        "/api/v1/fingerprints/parse",
        {"texts": [fixture_text("table_2xa100_pcie_80col.txt"), fixture_text("topo_2xl4_pcie_spaces.txt")]},
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["gpu_count"] == 2
    assert body["driver_version"] == "470.82.01"
    assert body["topology"]["connections"] == [{"a": 0, "b": 1, "kind": "PHB"}]


def test_a_text_the_parsers_refuse_is_a_400_naming_it(api_client):
    unsafe = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><nvidia_smi_log></nvidia_smi_log>'
    response = api_client.post("/api/v1/fingerprints/parse", {"texts": ["ok", unsafe]}, format="json")
    assert response.status_code == 400
    assert response.json()["extra"]["fields"]["texts"][0].startswith("texts[1]: unsafe_xml")


def test_a_cut_probe_file_is_a_400(api_client):
    cut = '{"probe": "llm-sizing gpu_probe 1", "host": "gpu-01", "pieces": [{"name": "nvidia_smi_xml", "outp'
    response = api_client.post("/api/v1/fingerprints/parse", {"texts": [cut]}, format="json")
    assert response.status_code == 400
    assert "invalid_probe" in response.json()["message"]


def test_a_probe_command_that_failed_is_a_finding(api_client):
    import json

    probe = json.dumps(
        {
            "probe": "llm-sizing gpu_probe 1",
            "host": "gpu-01",
            "pieces": [
                {
                    "name": "nvidia_smi_table",
                    "command": "nvidia-smi",
                    "exit_code": 0,
                    "output": fixture_text("table_2xa100_pcie_80col.txt"),
                },
                {"name": "nvidia_smi_topo", "command": "nvidia-smi topo -m", "exit_code": 9, "output": "Failed to run"},
            ],
        }
    )
    body = api_client.post("/api/v1/fingerprints/parse", {"texts": [probe]}, format="json").json()
    failed = [f for f in body["findings"] if f["code"] == "probe_command_failed"]
    assert failed == [
        {
            "code": "probe_command_failed",
            "severity": "warning",
            "message": "nvidia-smi topo -m exited with status 9: Failed to run",
            "extra": {"detail": "nvidia-smi topo -m exited with status 9: Failed to run"},
        }
    ]
    assert body["gpu_count"] == 2
