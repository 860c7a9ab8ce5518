"""The deployment and fingerprint pages: sign-in and the organisation's walls, creating and editing a deployment,
uploading what a server measured (stored whole, or refused with the reason and nothing stored), a fingerprint's
findings, effect, GPUs, topology and host in both languages, the comparison of two fingerprints, and the finding
texts built from their codes and numbers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import translation

from frontend.views.fingerprints import link_kind_class, topology_graph
from sizing.fingerprint.diff import fingerprint_diff
from sizing.models import Deployment, Fingerprint, Gpu, LlmModel, Membership, Organisation
from sizing.services.deployments import Upload, deployment_create, fingerprint_report, fingerprint_upload
from sizing.texts.findings import change_text, change_value, diff_summary, finding_text
from tests.sizing.fingerprint.fixture_files import fixture_text

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "frontend" / "templates" / "frontend"
MODEL = "meta-llama/Meta-Llama-3-8B"
GPU = "nvidia-a100-sxm-80gb"
XML = fixture_text("xml_a100_mig.xml")
TOPO = fixture_text("topo_2xl4_pcie_spaces.txt")

pytestmark = pytest.mark.django_db


def probe_file(
    *,
    host: str = "gpu-01",
    captured_at: str = "2026-11-30T10:00:00Z",
    xml: str = XML,
    topo: str = TOPO,
    memory_max: str = "8589934592\n",
) -> bytes:
    """A file as deploy/tools/gpu_probe.sh writes it: the GPU outputs and the host's (a Docker container limited to
    8 GiB, below the 16 GiB advised for 2 GPUs)."""
    entries = {
        "nvidia_smi_xml": xml,
        "nvidia_smi_topo": topo,
        "cpu_count": "32\n",
        "lscpu": "Model name:            AMD EPYC 7543 32-Core Processor\nSocket(s):             1\n"
        "NUMA node(s):          1\n",
        "meminfo": "MemTotal:       263842316 kB\n",
        "cgroup_v2_memory_max": memory_max,
        "container_markers": "/.dockerenv present\n/run/.containerenv absent\nKUBERNETES_SERVICE_HOST unset\n"
        "container unset\n",
        "python_packages": "python 3.10.12\ntorch 2.5.1\nvllm 0.6.4\nsglang not installed\n"
        "tensorrt_llm not installed\ntransformers 4.46.3\n",
    }
    return json.dumps(
        {
            "probe": "llm-sizing gpu_probe 1",
            "host": host,
            "captured_at": captured_at,
            "pieces": [
                {"name": name, "command": name, "exit_code": 0, "output": output} for name, output in entries.items()
            ],
        },
        indent=1,
    ).encode()


def upgraded_xml() -> str:
    """The A100 machine after a driver upgrade with MIG turned off."""
    return (
        XML.replace("<current_mig>Enabled</current_mig>", "<current_mig>Disabled</current_mig>")
        .replace("<pending_mig>Enabled</pending_mig>", "<pending_mig>Disabled</pending_mig>")
        .replace("<driver_version>535.129.03</driver_version>", "<driver_version>550.54.15</driver_version>")
        .replace("<cuda_version>12.2</cuda_version>", "<cuda_version>12.4</cuda_version>")
    )


@pytest.fixture
def signed_in(client: Client, user) -> Client:
    client.force_login(user)
    return client


@pytest.fixture
def deployment(catalog: None, organisation: Organisation, user) -> Deployment:
    """Llama 3 8B on 2 × A100 80GB with TP 2, an image built for CUDA 12.4."""
    return deployment_create(
        organisation=organisation,
        user=user,
        data={
            "name": "Acme chat",
            "customer": "Acme Bank",
            "model": LlmModel.objects.get(slug=MODEL, organisation=None),
            "gpu": Gpu.objects.get(slug=GPU),
            "gpu_count": 2,
            "tp": 2,
            "engine": "vllm",
            "image_cuda_version": "12.4",
            "max_model_len": 8192,
        },
    )


@pytest.fixture
def fingerprint(deployment: Deployment, user) -> Fingerprint:
    return fingerprint_upload(
        deployment=deployment, user=user, uploads=[Upload("fingerprint.json", probe_file())], label="staging"
    )


@pytest.fixture
def other_organisation_rows(catalog: None) -> tuple[Deployment, Fingerprint]:
    organisation = Organisation.objects.create(name="Other Integrator")
    stranger = get_user_model().objects.create_user(username="stranger", password="another horse battery")
    Membership.objects.create(user=stranger, organisation=organisation)
    deployment = deployment_create(organisation=organisation, user=stranger, data={"name": "Their plan"})
    fingerprint = fingerprint_upload(
        deployment=deployment, user=stranger, uploads=[Upload("theirs.json", probe_file(host="their-box"))]
    )
    return deployment, fingerprint


# --- sign-in and the organisation's walls --------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["/deployments/", "/deployments/1/", "/fingerprints/1/", "/fingerprints/diff"])
def test_the_pages_need_sign_in(client: Client, url: str) -> None:
    # when
    response = client.get(url)

    # then
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("frontend:login"))


def test_another_organisations_deployment_and_fingerprint_are_404(
    signed_in: Client, fingerprint: Fingerprint, other_organisation_rows
) -> None:
    # given the other organisation's deployment and fingerprint
    theirs, their_fingerprint = other_organisation_rows

    # when / then: reading, uploading to, deleting and comparing them are all 404
    assert signed_in.get(reverse("frontend:deployment", args=[theirs.pk])).status_code == 404
    assert signed_in.post(reverse("frontend:deployment", args=[theirs.pk]), {"name": "x"}).status_code == 404
    assert signed_in.post(reverse("frontend:deployment-upload", args=[theirs.pk]), {"text": XML}).status_code == 404
    assert signed_in.post(reverse("frontend:deployment-delete", args=[theirs.pk])).status_code == 404
    assert signed_in.get(reverse("frontend:fingerprint", args=[their_fingerprint.pk])).status_code == 404
    assert signed_in.post(reverse("frontend:fingerprint-delete", args=[their_fingerprint.pk])).status_code == 404
    diff = signed_in.get(
        reverse("frontend:fingerprint-diff"), {"before": fingerprint.pk, "after": their_fingerprint.pk}
    )
    assert diff.status_code == 404
    assert f"no fingerprint {their_fingerprint.pk} in your organisation" in diff.content.decode()
    # and nothing of theirs changed or shows in the lists
    assert Deployment.objects.filter(pk=theirs.pk, name="Their plan").exists()
    assert Fingerprint.objects.filter(deployment=theirs).count() == 1
    listing = signed_in.get(reverse("frontend:deployments")).content.decode()
    assert "Their plan" not in listing
    assert (
        "their-box"
        not in signed_in.get(reverse("frontend:deployment", args=[fingerprint.deployment_id])).content.decode()
    )


# --- the list and the plan -----------------------------------------------------------------------------------------


def test_the_list_shows_each_deployment_with_its_plan_and_fingerprints(
    signed_in: Client, fingerprint: Fingerprint
) -> None:
    # when
    response = signed_in.get(reverse("frontend:deployments"))
    html = response.content.decode()

    # then the row names the plan, counts the fingerprints and shows the newest capture
    assert response.status_code == 200
    row = html[html.index(f'data-deployment="{fingerprint.deployment_id}"') :].split("</tr>")[0]
    assert "Acme chat" in row
    assert "Acme Bank" in row
    assert MODEL in row
    assert "NVIDIA A100 SXM4 80GB × 2" in row or "× 2" in row
    assert "TP 2" in row
    assert "vLLM" in row
    assert "image CUDA 12.4" in row
    assert '<td class="num">1</td>' in row
    assert "2026-11-30 10:00" in row
    # and the header links to the page
    assert f'href="{reverse("frontend:deployments")}"' in html


def test_creating_a_deployment_stores_it_and_opens_its_page(
    signed_in: Client, catalog: None, organisation: Organisation
) -> None:
    # when
    response = signed_in.post(
        reverse("frontend:deployments"),
        {
            "name": "Bank search",
            "customer": "Acme Bank",
            "model": MODEL,
            "gpu": GPU,
            "gpu_count": "4",
            "tp": "2",
            "engine": "vllm",
            "image_cuda_version": "12.4",
            "max_model_len": "32768",
            "notes": "two replicas",
        },
    )

    # then
    created = Deployment.objects.get(organisation=organisation, name="Bank search")
    assert response.status_code == 302
    assert response["Location"] == reverse("frontend:deployment", args=[created.pk])
    assert (created.model.slug, created.gpu.slug, created.gpu_count, created.tp, created.engine) == (
        MODEL,
        GPU,
        4,
        2,
        "vllm",
    )
    assert (created.image_cuda_version, created.max_model_len, created.notes) == ("12.4", 32768, "two replicas")
    page = signed_in.get(response["Location"]).content.decode()
    assert "Deployment Bank search created" in page


def test_a_deployments_engine_release_is_stored_and_shown_on_its_plan_form(
    signed_in: Client, catalog: None, organisation: Organisation
) -> None:
    # when the plan names the release, the usage context and the install it is sized for
    response = signed_in.post(
        reverse("frontend:deployments"),
        {
            "name": "Pinned",
            "model": MODEL,
            "gpu": GPU,
            "gpu_count": "1",
            "tp": "1",
            "engine": "vllm",
            "engine_version": "0.9.2",
            "usage_context": "serve",
            "install": "docker",
        },
    )
    # then
    created = Deployment.objects.get(organisation=organisation, name="Pinned")
    assert response.status_code == 302
    assert (created.engine_version, created.usage_context, created.install) == ("0.9.2", "serve", "docker")
    page = signed_in.get(response["Location"]).content.decode()
    assert 'name="engine_version"' in page
    assert 'value="0.9.2"' in page
    assert '<option value="docker" selected>' in page


def test_a_deployments_latency_slos_are_set_on_its_plan_form(
    signed_in: Client, catalog: None, organisation: Organisation
) -> None:
    response = signed_in.post(
        reverse("frontend:deployments"),
        {"name": "Chat SLO", "engine": "vllm", "slo_ttft_ms": "2000", "slo_tpot_ms": "100"},
    )
    created = Deployment.objects.get(organisation=organisation, name="Chat SLO")
    assert response.status_code == 302
    assert created.slo == {"ttft_ms": 2000.0, "tpot_ms": 100.0}
    page = signed_in.get(response["Location"]).content.decode()
    assert 'name="slo_ttft_ms"' in page
    assert 'value="2000.0"' in page


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"name": "Acme chat"}, "name", "already has a deployment named"),
        ({"name": "Odd", "gpu_count": "3", "tp": "2"}, "gpu_count", "3 GPUs are not a whole number of TP 2 groups"),
        ({"name": "Cuda", "image_cuda_version": "twelve"}, "image_cuda_version", "is not a CUDA version"),
        ({"name": ""}, "name", "This field is required"),
        ({"name": "Rel", "engine_version": "latest!"}, "engine_version", "is not a version"),
        ({"name": "Old", "engine_version": "0.5.4"}, "engine_version", "older than the oldest release modelled"),
    ],
    ids=["duplicate-name", "count-not-multiple-of-tp", "bad-cuda", "no-name", "bad-release", "old-release"],
)
def test_a_refused_deployment_shows_the_message_by_its_field_and_saves_nothing(
    signed_in: Client, deployment: Deployment, data: dict, field: str, message: str
) -> None:
    # when
    response = signed_in.post(reverse("frontend:deployments"), {"engine": "vllm", **data})
    html = response.content.decode()

    # then
    assert response.status_code == 400
    error = html[html.index(f'data-error-for="{field}"') :].split("</p>")[0]
    assert message in error
    assert Deployment.objects.count() == 1


def test_editing_the_plan_saves_it_and_rechecks_the_fingerprints(signed_in: Client, fingerprint: Fingerprint) -> None:
    # given the plan counts 2 GPUs; the machine has 2
    url = reverse("frontend:deployment", args=[fingerprint.deployment_id])

    # when the plan is changed to 4 GPUs
    response = signed_in.post(
        url,
        {
            "name": "Acme chat",
            "model": MODEL,
            "gpu": GPU,
            "gpu_count": "4",
            "tp": "2",
            "engine": "vllm",
            "image_cuda_version": "12.4",
        },
    )

    # then it is saved and the fingerprint now shows the count mismatch
    assert response.status_code == 302
    assert Deployment.objects.get(pk=fingerprint.deployment_id).gpu_count == 4
    detail = signed_in.get(reverse("frontend:fingerprint", args=[fingerprint.pk])).content.decode()
    assert "the plan counts 4 GPU(s); the machine shows 2" in detail


def test_a_refused_plan_edit_keeps_the_page_with_the_message(signed_in: Client, deployment: Deployment) -> None:
    # when
    response = signed_in.post(
        reverse("frontend:deployment", args=[deployment.pk]),
        {"name": "Acme chat", "gpu_count": "3", "tp": "2", "engine": "vllm"},
    )

    # then
    assert response.status_code == 400
    assert "3 GPUs are not a whole number of TP 2 groups" in response.content.decode()
    assert Deployment.objects.get(pk=deployment.pk).gpu_count == 2


# --- the deployment's page: probe, upload, fingerprints by host, compare --------------------------------------------


def test_the_deployment_page_offers_the_probe_the_upload_and_the_limit(
    signed_in: Client, deployment: Deployment
) -> None:
    # when
    html = signed_in.get(reverse("frontend:deployment", args=[deployment.pk])).content.decode()

    # then
    assert f'href="{reverse("sizing:fingerprint-probe")}"' in html
    assert "bash gpu_probe.sh -o fingerprint.json" in html
    assert "bash and coreutils only" in html
    assert 'enctype="multipart/form-data"' in html
    assert 'name="files" multiple' in html
    assert "of 4 MiB each" in html  # SIZING_MAX_FINGERPRINT_BYTES, 4 MiB by default
    assert 'id="no-fingerprints"' in html


def test_an_upload_is_stored_once_and_opens_the_fingerprint(signed_in: Client, deployment: Deployment) -> None:
    # given the two outputs as files
    files = [SimpleUploadedFile("nvidia-smi-q.xml", XML.encode()), SimpleUploadedFile("topo.txt", TOPO.encode())]

    # when
    response = signed_in.post(
        reverse("frontend:deployment-upload", args=[deployment.pk]),
        {"files": files, "label": "production", "host": "gpu-07"},
    )

    # then
    stored = Fingerprint.objects.get(deployment=deployment)
    assert response.status_code == 302
    assert response["Location"] == reverse("frontend:fingerprint", args=[stored.pk])
    assert (stored.host, stored.label) == ("gpu-07", "production")
    assert [piece["name"] for piece in stored.raw] == ["nvidia-smi-q.xml", "topo.txt"]


def test_pasted_outputs_are_a_fingerprint_too(signed_in: Client, deployment: Deployment) -> None:
    # when
    response = signed_in.post(
        reverse("frontend:deployment-upload", args=[deployment.pk]), {"text": XML, "host": "pasted-box"}
    )

    # then
    assert response.status_code == 302
    assert Fingerprint.objects.get(deployment=deployment).host == "pasted-box"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("gpu.bin", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4, "gpu.bin"),
        (
            "bench_serve_result.json",
            fixture_text("bench_serve_result.json").encode(),
            "not an output the fingerprint reads",
        ),
        ("cut.xml", XML[: len(XML) // 2].encode(), "cut.xml"),
    ],
    ids=["binary", "another-tools-json", "truncated-xml"],
)
def test_a_refused_upload_shows_the_reason_and_stores_nothing(
    signed_in: Client, deployment: Deployment, name: str, content: bytes, message: str
) -> None:
    # when
    response = signed_in.post(
        reverse("frontend:deployment-upload", args=[deployment.pk]),
        {"files": [SimpleUploadedFile(name, content)], "label": "kept"},
    )
    html = response.content.decode()

    # then the deployment's page again, with the reason under the upload form and the label kept
    assert response.status_code == 400
    error = html[html.index('id="upload-error"') :].split("</div>")[0]
    assert "The upload was refused; nothing was stored" in error
    assert message in error
    assert 'value="kept"' in html
    assert Fingerprint.objects.count() == 0


@override_settings(SIZING_MAX_FINGERPRINT_BYTES=1024)
def test_an_upload_over_the_limit_is_refused_by_its_size(signed_in: Client, deployment: Deployment) -> None:
    # when
    response = signed_in.post(
        reverse("frontend:deployment-upload", args=[deployment.pk]),
        {"files": [SimpleUploadedFile("big.xml", XML.encode())]},
    )
    html = response.content.decode()

    # then
    assert response.status_code == 400
    assert (
        f"big.xml: the file is {len(XML.encode()):,} bytes; the limit is 1,024 bytes (0 MiB)" in html
        or f"big.xml: the file is {len(XML.encode()):,} bytes; the limit is 1,024 bytes" in html
    )
    assert Fingerprint.objects.count() == 0


@override_settings(SIZING_MAX_FINGERPRINT_BYTES=1024)
def test_the_size_refusal_in_chinese(signed_in: Client, deployment: Deployment) -> None:
    # when
    response = signed_in.post(
        reverse("frontend:deployment-upload", args=[deployment.pk]),
        {"files": [SimpleUploadedFile("big.xml", XML.encode())]},
        headers={"accept-language": "zh-hans"},
    )

    # then
    html = response.content.decode()
    assert response.status_code == 400
    assert "上传被拒绝，未保存任何内容" in html
    assert "big.xml：文件大小为" in html


def test_the_same_outputs_twice_are_refused_in_chinese(signed_in: Client, fingerprint: Fingerprint) -> None:
    # when the probe file stored as the fixture is uploaded again
    response = signed_in.post(
        reverse("frontend:deployment-upload", args=[fingerprint.deployment_id]),
        {"files": [SimpleUploadedFile("fingerprint.json", probe_file())], "label": "staging"},
        headers={"accept-language": "zh-hans"},
    )

    # then
    assert response.status_code == 400
    assert f"这些输出已作为指纹 {fingerprint.pk}（gpu-01 at 2026-11-30 10:00）上传到此部署" in response.content.decode()
    assert Fingerprint.objects.count() == 1


def test_a_refused_deployment_in_chinese(signed_in: Client, deployment: Deployment) -> None:
    # when
    response = signed_in.post(
        reverse("frontend:deployments"), {"name": "Acme chat", "engine": "vllm"}, headers={"accept-language": "zh-hans"}
    )

    # then
    assert response.status_code == 400
    assert "您的组织已有名为“Acme chat”的部署，请换一个名称" in response.content.decode()


def test_an_empty_upload_is_refused(signed_in: Client, deployment: Deployment) -> None:
    # when
    response = signed_in.post(reverse("frontend:deployment-upload", args=[deployment.pk]), {"label": "x"})

    # then
    assert response.status_code == 400
    assert "upload a probe file or paste at least one nvidia-smi output" in response.content.decode()


def test_the_fingerprints_are_grouped_by_host_with_versions(signed_in: Client, deployment: Deployment, user) -> None:
    # given two captures of gpu-01 and one of gpu-02
    for host, stamp in (
        ("gpu-01", "2026-11-01T08:00:00Z"),
        ("gpu-01", "2026-11-20T08:00:00Z"),
        ("gpu-02", "2026-11-10T08:00:00Z"),
    ):
        fingerprint_upload(
            deployment=deployment, user=user, uploads=[Upload("f.json", probe_file(host=host, captured_at=stamp))]
        )
    newest = Fingerprint.objects.get(host="gpu-01", captured_at__day=20)
    second = Fingerprint.objects.get(host="gpu-02")

    # when
    html = signed_in.get(reverse("frontend:deployment", args=[deployment.pk])).content.decode()

    # then each host's versions are numbered by capture time, newest first
    assert html.index('data-host="gpu-01"') < html.index('data-host="gpu-02"')
    gpu_01 = html[html.index('data-host="gpu-01"') : html.index('data-host="gpu-02"')]
    assert re.findall(r">v(\d)</a>", gpu_01) == ["2", "1"]
    assert "2026-11-20 08:00" in gpu_01
    # each row counts its findings (the machine's and the plan's) and summarises the GPUs
    row = gpu_01[gpu_01.index(f'data-fingerprint="{newest.pk}"') :].split("</tr>")[0]
    report = fingerprint_report(fingerprint=newest)
    errors = sum(1 for f in report["findings"] if f["severity"] == "error")
    warnings = sum(1 for f in report["findings"] if f["severity"] == "warning")
    assert f"{warnings} warnings" in row
    assert (f"{errors} errors" in row) == bool(errors)
    assert "1 × NVIDIA A100-SXM4-80GB" in row
    assert "535.129.03 / 12.2" in row
    # and the compare form preselects the two newest
    compare = html[html.index('id="compare-form"') :]
    assert f'<option value="{newest.pk}" selected>' in compare.split('id="compare-after"')[1]
    assert f'<option value="{second.pk}" selected>' in compare.split('id="compare-after"')[0]


# --- a fingerprint -------------------------------------------------------------------------------------------------


def test_the_fingerprint_page_shows_findings_effect_gpus_topology_and_host(
    signed_in: Client, fingerprint: Fingerprint
) -> None:
    # when
    response = signed_in.get(reverse("frontend:fingerprint", args=[fingerprint.pk]))
    html = response.content.decode()

    # then the header
    assert response.status_code == 200
    assert '<span id="fingerprint-host">gpu-01</span>' in html
    assert 'id="fingerprint-version">v1<' in html
    assert "staging" in html
    assert f'href="{reverse("frontend:deployment", args=[fingerprint.deployment_id])}"' in html
    # the findings first, machine's and plan's, errors first
    findings = html[html.index('id="findings"') :].split("</ul>")[0]
    assert html.index('id="findings-card"') < html.index('id="effect-card"') < html.index('id="gpus-card"')
    assert 'data-code="mig_enabled"' in findings
    assert "GPU 0 (NVIDIA A100-SXM4-80GB): MIG is enabled; a model sees only the memory of its MIG instance" in findings
    assert 'data-code="tp_over_pcie"' in findings
    assert 'data-code="container_memory_limit_low"' in findings
    assert "source-plan" in findings
    assert "source-machine" in findings
    severities = re.findall(r'data-severity="(\w+)"', findings)
    assert severities == sorted(severities, key=["error", "warning", "info"].index)
    # the effect on the estimate, in GiB, and the measured environment's explanation
    effect = html[html.index('id="effect-table"') :].split("</table>")[0]
    capacity = effect[effect.index('data-row="capacity_bytes_per_gpu"') :].split("</tr>")[0]
    assert re.search(r'class="num catalog">\d+\.\d GiB<', capacity)
    # MIG: the measured capacity is the fixture's one 3g.40gb slice (40,192 MiB = 39.25 GiB), not the 80 GiB card
    assert '<td class="num measured">39.2 GiB</td>' in capacity
    assert re.search(r'data-row="kv_capacity_tokens".*?[\d,]+ tokens', effect, re.DOTALL)
    assert "✓ Fits" in effect or "✕ Does not fit" in effect
    assert 'id="environment-explanation"' in html
    # the GPU table
    gpu_row = html[html.index('data-gpu="0"') :].split("</tr>")[0]
    assert "NVIDIA A100-SXM4-80GB" in gpu_row
    assert "81,920 MiB (80.0 GiB)" in gpu_row
    assert "Gen4 / Gen4" in gpu_row
    assert "x16 / x16" in gpu_row
    # the topology as a matrix with coloured cells and a legend, and as an SVG graph
    matrix = html[html.index('id="topology-matrix"') :].split("</table>")[0]
    assert '<td class="topo-cell link-host" data-kind="PHB"' in matrix
    assert '<td class="topo-cell link-self" data-kind="X"' in matrix
    assert 'id="topology-legend"' in html
    svg = html[html.index('<svg id="topology-graph"') :].split("</svg>")[0]
    assert svg.count('class="topo-node"') == 2
    assert 'data-pair="0-1" data-kind="PHB"' in svg
    # the host
    host = html[html.index('id="host-facts"') :].split("</dl>")[0]
    assert "AMD EPYC 7543 32-Core Processor · 32 CPUs · 1 socket(s)" in host
    assert "251.6 GiB" in host
    assert "yes (docker)" in host
    assert "8.0 GiB" in host
    assert "cgroup v2" in host
    assert "3.10.12" in host
    assert "vLLM" in host
    assert "0.6.4" in host
    assert "not installed" in host
    # driver and CUDA, the raw pieces, and the delete button
    assert "535.129.03" in html[html.index('id="software-facts"') :]
    assert "texts[0]#nvidia_smi_xml" in html
    assert "nvidia_smi_topo" in html
    assert f'action="{reverse("frontend:fingerprint-delete", args=[fingerprint.pk])}"' in html


def test_the_fingerprint_page_in_chinese_translates_the_findings(signed_in: Client, fingerprint: Fingerprint) -> None:
    # when
    html = signed_in.get(
        reverse("frontend:fingerprint", args=[fingerprint.pk]), headers={"accept-language": "zh-hans"}
    ).content.decode()

    # then
    assert '<html lang="zh-hans">' in html
    findings = html[html.index('id="findings"') :].split("</ul>")[0]
    assert "GPU 0 (NVIDIA A100-SXM4-80GB)：已启用 MIG；模型只能看到其 MIG 实例的显存" in findings
    assert "MIG is enabled" not in findings
    assert "发现" in html
    assert "拓扑" in html
    assert ">警告<" in findings


def test_nvlink_pairs_are_thick_labelled_lines(
    signed_in: Client, catalog: None, organisation: Organisation, user
) -> None:
    # given an 8 × H100 machine joined by NV18
    deployment = deployment_create(
        organisation=organisation, user=user, data={"name": "H100 box", "tp": 8, "gpu_count": 8}
    )
    fingerprint = fingerprint_upload(
        deployment=deployment,
        user=user,
        uploads=[Upload("topo.txt", fixture_text("topo_8xh100_sxm_nv18.txt").encode())],
    )

    # when
    html = signed_in.get(reverse("frontend:fingerprint", args=[fingerprint.pk])).content.decode()

    # then 28 NVLink lines, each labelled 18, and green matrix cells
    svg = html[html.index('<svg id="topology-graph"') :].split("</svg>")[0]
    assert svg.count("is-nvlink") == 28
    assert svg.count(">18</text>") == 28
    assert svg.count('class="topo-node"') == 8
    assert 'class="topo-cell link-nvlink" data-kind="NV18"' in html
    assert 'class="topo-cell link-switch" data-kind="PIX"' in html
    assert 'class="topo-cell link-sys" data-kind="SYS"' in html
    assert 'id="effect-missing"' in html  # the plan names no model or GPU
    assert 'id="no-host"' in html  # pasted outputs say nothing of the host


def test_deleting_a_fingerprint_returns_to_the_deployment(signed_in: Client, fingerprint: Fingerprint) -> None:
    # when
    response = signed_in.post(reverse("frontend:fingerprint-delete", args=[fingerprint.pk]))

    # then
    assert response.status_code == 302
    assert response["Location"] == reverse("frontend:deployment", args=[fingerprint.deployment_id])
    assert not Fingerprint.objects.filter(pk=fingerprint.pk).exists()
    assert signed_in.get(reverse("frontend:fingerprint", args=[fingerprint.pk])).status_code == 404


def test_deleting_a_deployment_returns_to_the_list(signed_in: Client, fingerprint: Fingerprint) -> None:
    # when
    response = signed_in.post(reverse("frontend:deployment-delete", args=[fingerprint.deployment_id]))

    # then
    assert response.status_code == 302
    assert response["Location"] == reverse("frontend:deployments")
    assert Deployment.objects.count() == 0
    assert Fingerprint.objects.count() == 0


# --- comparing two fingerprints ------------------------------------------------------------------------------------


@pytest.fixture
def upgraded(fingerprint: Fingerprint, user) -> Fingerprint:
    """The same server later: driver 550 / CUDA 12.4, MIG off, and the two GPUs now across the CPU sockets."""
    return fingerprint_upload(
        deployment=fingerprint.deployment,
        user=user,
        uploads=[
            Upload(
                "later.json",
                probe_file(captured_at="2026-12-05T10:00:00Z", xml=upgraded_xml(), topo=TOPO.replace("PHB", "SYS")),
            )
        ],
        label="after upgrade",
    )


def test_the_diff_page_shows_the_summary_and_the_changes(
    signed_in: Client, fingerprint: Fingerprint, upgraded: Fingerprint
) -> None:
    # when
    response = signed_in.get(reverse("frontend:fingerprint-diff"), {"before": fingerprint.pk, "after": upgraded.pk})
    html = response.content.decode()

    # then
    assert response.status_code == 200
    assert '<p class="diff-summary" id="diff-summary">4 differences: 1 warning, 3 info</p>' in html
    table = html[html.index('id="diff-table"') :].split("</table>")[0]
    assert 'data-code="link_changed"' in table
    assert "GPU 0 ↔ GPU 1: PCIe path PHB → SYS (a longer path between the two)" in table
    assert "driver 535.129.03 → 550.54.15" in table
    assert "GPU 0: MIG enabled → disabled" in table
    assert table.index('data-severity="warning"') < table.index('data-severity="info"')
    assert "gpu-01 v1" in html
    assert "gpu-01 v2" in html


def test_the_diff_page_in_chinese(signed_in: Client, fingerprint: Fingerprint, upgraded: Fingerprint) -> None:
    # when
    html = signed_in.get(
        reverse("frontend:fingerprint-diff"),
        {"before": fingerprint.pk, "after": upgraded.pk},
        headers={"accept-language": "zh-hans"},
    ).content.decode()

    # then
    assert "4 处差异：1 个警告，3 条信息" in html
    assert "GPU 0 ↔ GPU 1：PCIe 路径 PHB → SYS（两者之间的路径变长）" in html
    assert "驱动 535.129.03 → 550.54.15" in html


def test_the_diff_page_shows_bytes_in_gib(signed_in: Client, fingerprint: Fingerprint, user) -> None:
    # given the same host with a container limit of 32 GiB instead of 8
    later = fingerprint_upload(
        deployment=fingerprint.deployment,
        user=user,
        uploads=[Upload("l.json", probe_file(captured_at="2026-12-01T00:00:00Z", memory_max=f"{32 * 2**30}\n"))],
    )

    # when
    html = signed_in.get(
        reverse("frontend:fingerprint-diff"), {"before": fingerprint.pk, "after": later.pk}
    ).content.decode()

    # then
    row = html[html.index('data-code="memory_limit_changed"') :].split("</tr>")[0]
    assert '<td class="num diff-before">8.0 GiB</td>' in row
    assert '<td class="num diff-after">32.0 GiB</td>' in row


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ({"before": "999999", "after": "999998"}, 404, "no fingerprint 999999 in your organisation"),
        ({"before": "abc", "after": "1"}, 404, "no fingerprint abc in your organisation"),
        ({"before": "1"}, 400, "Choose two fingerprints to compare"),
    ],
    ids=["unknown", "not-a-number", "one-side"],
)
def test_the_diff_page_says_what_is_wrong_with_the_ids(
    signed_in: Client, fingerprint: Fingerprint, query: dict, status: int, message: str
) -> None:
    # given one side that exists, where the query names 1
    query = {key: str(fingerprint.pk) if value == "1" else value for key, value in query.items()}

    # when
    response = signed_in.get(reverse("frontend:fingerprint-diff"), query)

    # then
    assert response.status_code == status
    assert message in response.content.decode()


def test_the_diff_page_without_ids_offers_the_choice(
    signed_in: Client, fingerprint: Fingerprint, upgraded: Fingerprint
) -> None:
    # when
    response = signed_in.get(reverse("frontend:fingerprint-diff"))
    html = response.content.decode()

    # then
    assert response.status_code == 200
    assert 'id="compare-form"' in html
    assert f'<option value="{upgraded.pk}" selected>' in html.split('id="compare-after"')[1]


# --- the texts of findings and differences --------------------------------------------------------------------------


PCIE_FINDING = {
    "code": "pcie_link_below_max",
    "severity": "warning",
    "message": "the English words",
    "extra": {
        "gpu_index": 3,
        "gpu_name": "NVIDIA L4",
        "generation": 3,
        "width": 8,
        "generation_max": 4,
        "width_max": 16,
        "width_low": True,
    },
}


def test_a_known_finding_in_both_languages() -> None:
    # when
    with translation.override("en"):
        english = finding_text(PCIE_FINDING)
    with translation.override("zh-hans"):
        chinese = finding_text(PCIE_FINDING)

    # then
    assert english == (
        "GPU 3 (NVIDIA L4): PCIe link at Gen3 x8, the GPU supports Gen4 x16; a narrower link stays "
        "narrow under load (slot or riser)"
    )
    assert chinese.startswith("GPU 3 (NVIDIA L4)：PCIe 链路为 Gen3 x8，该 GPU 支持 Gen4 x16")


def test_a_finding_stored_with_the_older_label_reads_the_same() -> None:
    # given a finding as merge.py wrote it before the GPU's index and name replaced its label
    finding = {**PCIE_FINDING, "extra": {**PCIE_FINDING["extra"], "label": "GPU 3 (NVIDIA L4)"}}
    del finding["extra"]["gpu_name"]

    # when / then
    with translation.override("zh-hans"):
        assert finding_text(finding) == finding_text(PCIE_FINDING)


def test_an_unknown_code_falls_back_to_the_message() -> None:
    finding = {"code": "brand_new_check", "severity": "info", "message": "something new", "extra": {"x": 1}}
    with translation.override("zh-hans"):
        assert finding_text(finding) == "something new"


@pytest.mark.parametrize("extra", [{"gpu_index": 3}, None, "not a mapping"], ids=["missing-keys", "no-extra", "odd"])
def test_a_finding_without_its_numbers_falls_back_to_the_message(extra: object) -> None:
    finding = {**PCIE_FINDING, "extra": extra}
    with translation.override("zh-hans"):
        assert finding_text(finding) == "the English words"


def test_a_finding_with_a_number_of_the_wrong_type_falls_back_to_the_message() -> None:
    finding = {
        "code": "gpu_memory_smaller",
        "severity": "error",
        "message": "the English words",
        "extra": {"planned_bytes": "eighty", "found_bytes": None},
    }
    with translation.override("zh-hans"):
        assert finding_text(finding) == "the English words"


def test_bytes_in_a_finding_are_gib_with_one_decimal() -> None:
    finding = {
        "code": "gpu_memory_smaller",
        "severity": "error",
        "message": "m",
        "extra": {"planned_bytes": 80 * 2**30, "found_bytes": 40192 * 2**20},
    }
    with translation.override("en"):
        assert finding_text(finding) == (
            "the estimate assumed 80.0 GiB per GPU; the smallest card here reports "
            "39.2 GiB: re-run the estimate with the measured memory"
        )
    with translation.override("zh-hans"):
        assert "80.0 GiB" in finding_text(finding)
        assert "39.2 GiB" in finding_text(finding)


def test_the_english_texts_say_what_the_backend_says(fingerprint: Fingerprint, deployment: Deployment) -> None:
    # given every finding of a probe with host facts against a plan that disagrees on several counts
    deployment.gpu_count, deployment.image_cuda_version = 4, "12.6"
    deployment.save()
    report = fingerprint_report(fingerprint=Fingerprint.objects.get(pk=fingerprint.pk))

    # when
    with translation.override("en"):
        pairs = [(finding_text(f), f["message"]) for f in report["findings"]]

    # then (memory_in_use alone differs: GiB here, MiB in the backend)
    assert len(pairs) >= 5
    assert [text for text, message in pairs if text != message] == []


def test_the_english_change_texts_say_what_the_diff_says() -> None:
    # given two machines that differ in many ways
    before = {
        "gpus": [
            {
                "index": 0,
                "name": "NVIDIA H100 80GB HBM3",
                "memory_total_bytes": 81_559 * 2**20,
                "pcie_width_current": 16,
                "mig_mode": "Disabled",
                "ecc_mode": "Enabled",
                "uuid": "GPU-a",
            },
            {"index": 1, "name": "NVIDIA H100 80GB HBM3"},
        ],
        "gpu_count": 2,
        "driver_version": "550.54.15",
        "cuda_version": "12.4",
        "topology": {
            "connections": [{"a": 0, "b": 1, "kind": "NV18"}],
            "nvlink_pairs": [{"a": 0, "b": 1, "links": 18}],
        },
        "host": {
            "cpu_count": 64,
            "memory_total_bytes": 512 * 2**30,
            "cgroup_version": 2,
            "cgroup_memory_limit_bytes": None,
            "packages": {"vllm": "0.6.4", "torch": "2.5.1"},
            "python_version": "3.10.12",
            "container": {"detected": False, "runtime": None},
        },
    }
    after = {
        "gpus": [
            {
                "index": 0,
                "name": "NVIDIA H100 80GB HBM3",
                "memory_total_bytes": 40 * 2**30,
                "pcie_width_current": 8,
                "mig_mode": "Enabled",
                "ecc_mode": "Disabled",
                "uuid": "GPU-b",
            },
            {"index": 1, "name": "NVIDIA H100 80GB HBM3"},
        ],
        "gpu_count": 2,
        "driver_version": "535.129.03",
        "cuda_version": "12.2",
        "topology": {"connections": [{"a": 0, "b": 1, "kind": "SYS"}], "nvlink_pairs": []},
        "host": {
            "cpu_count": 32,
            "memory_total_bytes": 256 * 2**30,
            "cgroup_version": 2,
            "cgroup_memory_limit_bytes": 16 * 2**30,
            "packages": {"vllm": "0.6.3", "torch": None},
            "python_version": "3.11.4",
            "container": {"detected": True, "runtime": "docker"},
        },
    }
    changes = fingerprint_diff(before, after)["changes"]

    # when
    with translation.override("en"):
        pairs = [(change_text(c), c["message"]) for c in changes]
        summary = diff_summary(changes)

    # then
    assert len(pairs) >= 12
    assert [(text, message) for text, message in pairs if text != message] == []
    assert summary == fingerprint_diff(before, after)["summary"]
    limit = next(c for c in changes if c["code"] == "memory_limit_changed")
    with translation.override("en"):
        assert (change_value(limit, "before"), change_value(limit, "after")) == ("none", "16.0 GiB")
    with translation.override("zh-hans"):
        assert all(change_text(c) != c["message"] for c in changes if c["code"] != "python_changed")


def test_the_diff_summary_in_chinese() -> None:
    changes = [{"severity": "error"}, {"severity": "warning"}, {"severity": "warning"}]
    with translation.override("zh-hans"):
        assert diff_summary(changes) == "3 处差异：1 个错误，2 个警告"
        assert diff_summary([]) == "两次探测都测到的内容没有差异"


def test_link_kinds_and_the_graph() -> None:
    assert [link_kind_class(kind) for kind in ("NV12", "PIX", "PXB", "PHB", "NODE", "SYS", "SOC", "X", "?")] == [
        "link-nvlink",
        "link-switch",
        "link-switch",
        "link-host",
        "link-host",
        "link-sys",
        "link-sys",
        "link-self",
        "link-other",
    ]
    assert topology_graph({"gpus": []}) is None
    single = topology_graph({"gpus": [{"index": 0}]})
    assert single["nodes"] == [{"index": 0, "x": 220.0, "y": 220.0, "name": ""}]


# --- every string in Chinese ---------------------------------------------------------------------------------------


def test_every_string_of_the_fingerprint_pages_is_in_the_chinese_catalog() -> None:
    # given the templates' {% translate %} strings and the Python modules' _("...") strings
    names = [
        "deployments.html",
        "deployment_detail.html",
        "fingerprint_detail.html",
        "fingerprint_diff.html",
        "partials/deployment_plan_fields.html",
        "partials/compare_form.html",
        "partials/severity_counts.html",
        "partials/plan_summary.html",
        "base.html",
    ]
    text = "".join((TEMPLATES / name).read_text() for name in names)
    msgids = set(re.findall(r'{% translate "([^"]+)" %}', text)) | set(re.findall(r"{% translate '([^']+)' %}", text))
    catalog = {
        entry.msgid: entry
        for entry in polib.pofile(str(Path(settings.LOCALE_PATHS[0]) / "zh_Hans" / "LC_MESSAGES" / "django.po"))
    }

    # when
    missing = {msgid for msgid in msgids if msgid not in catalog or not catalog[msgid].msgstr}

    # then
    assert missing == set()
    assert {msgid for msgid in msgids if catalog[msgid].msgstr.endswith("。")} == set()
