"""The engine release of a deployment's plan (issue 18): stored with the plan, refused when it is not a version or
older than the modelled bands, shown in the plan's launch lines (the line that installs exactly that release) and in
the report, in English and Chinese: "this commitment holds for vLLM X.Y.Z". Content gathered before the release was
stated renders as it did. No assertion is on a KV figure (its rules change by release)."""

from __future__ import annotations

import copy
import subprocess

import pytest
from django.core.management import call_command

from reports.document import render_report_html, render_report_pdf
from reports.evidence import report_content
from reports.models import Report
from sizing.estimator.versions import ACCEPTED_FORM, ENGINE_VERSION_RANGES
from sizing.models import Deployment, Gpu, LlmModel
from tests.reports.sample_content import SAMPLE_CONTENT, SAMPLE_CONTENT_ZH

DEPLOYMENTS = "/api/v1/deployments/"
MODEL = "meta-llama/Meta-Llama-3-8B"
PLAN = {
    "name": "Chat",
    "customer": "Acme",
    "model": MODEL,
    "gpu": "nvidia-h100-sxm-80gb",
    "gpu_count": 1,
    "tp": 1,
    "engine": "vllm",
    "max_model_len": 8192,
}
NEWEST = str(ENGINE_VERSION_RANGES["vllm"].newest)
RELEASE = {
    "engine": "vllm",
    "label": "vLLM",
    "version": "0.11.0",
    "requested": "0.11.0",
    "install": "pip",
    "usage_context": "serve",
    "install_command": "pip install vllm==0.11.0",
}


@pytest.fixture(scope="module", autouse=True)
def compiled_translations() -> None:
    call_command("compile_translations", verbosity=0)


# ---------------------------------------------------------------------------------------------------------------
# The plan


def test_a_plan_keeps_its_release_and_shows_the_line_that_installs_it(catalog, api_client):
    # when
    created = api_client.post(DEPLOYMENTS, {**PLAN, "engine_version": "0.11.0"}, format="json")
    detail = api_client.get(f"{DEPLOYMENTS}{created.json()['id']}/")

    # then
    assert created.status_code == 201, created.content
    assert (created.json()["engine_version"], created.json()["usage_context"], created.json()["install"]) == (
        "0.11.0",
        "serve",
        "pip",
    )
    launch = detail.json()["launch"]
    assert {key: launch[key] for key in ("version", "requested", "install_command", "error")} == {
        "version": "0.11.0",
        "requested": "0.11.0",
        "install_command": "pip install vllm==0.11.0",
        "error": None,
    }
    assert launch["launch"][:2] == ["# vLLM 0.11.0: the estimate holds for this release", "pip install vllm==0.11.0"]
    assert launch["launch"][2].startswith(f"vllm serve {MODEL} --tensor-parallel-size 1 ")


def test_a_docker_plan_starts_the_image_of_its_release(catalog, api_client):
    # when
    created = api_client.post(DEPLOYMENTS, {**PLAN, "engine_version": "0.9.2", "install": "docker"}, format="json")
    launch = api_client.get(f"{DEPLOYMENTS}{created.json()['id']}/").json()["launch"]

    # then
    assert launch["launch"][1] == "docker pull vllm/vllm-openai:v0.9.2"
    assert launch["launch"][2].startswith(
        "docker run --gpus all --ipc=host -p 8000:8000 vllm/vllm-openai:v0.9.2 "
        f"--model {MODEL} --tensor-parallel-size 1 "
    )


def test_a_plan_without_a_release_stays_empty_and_follows_the_newest(catalog, api_client):
    # when
    created = api_client.post(DEPLOYMENTS, PLAN, format="json")
    launch = api_client.get(f"{DEPLOYMENTS}{created.json()['id']}/").json()["launch"]

    # then
    assert created.json()["engine_version"] == ""
    assert (launch["version"], launch["requested"]) == (NEWEST, "latest")
    assert launch["launch"][0] == f"# vLLM {NEWEST}: the estimate holds for this release (asked for: latest)"


def test_a_newer_release_than_modelled_is_kept_with_the_warning(catalog, api_client):
    # when
    created = api_client.post(DEPLOYMENTS, {**PLAN, "engine_version": "9.0.0"}, format="json")
    launch = api_client.get(f"{DEPLOYMENTS}{created.json()['id']}/").json()["launch"]

    # then
    assert created.status_code == 201
    assert (launch["version"], launch["requested"]) == (NEWEST, "9.0.0")
    assert launch["warnings"] == [
        f"vllm 9.0.0 is newer than the newest release modelled ({NEWEST}): estimated with "
        f"{NEWEST}'s rules; check its boot log"
    ]


@pytest.mark.parametrize(
    ("version", "says"),
    [
        ("latest!", f"engine_version 'latest!' is not a version: give {ACCEPTED_FORM}"),
        ("1", f"engine_version '1' is not a version: give {ACCEPTED_FORM}"),
        ("0.6", f"engine_version '0.6' is not a version: give {ACCEPTED_FORM}"),
        (
            "0.5.4",
            "vllm 0.5.4 is older than the oldest release modelled (0.6.0): its memory rules are not in the "
            "estimator, so it is not estimated; choose 0.6.0 or later",
        ),
    ],
    ids=["latest-bang", "one-number", "two-numbers", "older"],
)
def test_a_bad_release_is_a_400_naming_the_field_and_nothing_is_stored(catalog, api_client, version, says):
    # when
    response = api_client.post(DEPLOYMENTS, {**PLAN, "engine_version": version}, format="json")

    # then
    assert response.status_code == 400
    assert response.json()["extra"]["fields"] == {"engine_version": [says]}
    assert Deployment.objects.count() == 0


@pytest.mark.parametrize(("field", "value"), [("usage_context", "cli"), ("install", "conda")])
def test_a_bad_usage_context_or_install_is_a_400(catalog, api_client, field, value):
    # when
    response = api_client.post(DEPLOYMENTS, {**PLAN, field: value}, format="json")

    # then
    assert response.status_code == 400
    assert list(response.json()["extra"]["fields"]) == [field]


def test_changing_the_engine_rechecks_the_stored_release(catalog, api_client):
    # given a vLLM 0.11.0 plan
    created = api_client.post(DEPLOYMENTS, {**PLAN, "engine_version": "0.11.0"}, format="json").json()

    # when: TensorRT-LLM's modelled releases start at 0.17.0
    response = api_client.put(f"{DEPLOYMENTS}{created['id']}/", {"engine": "trtllm"}, format="json")

    # then
    assert response.status_code == 400
    assert (
        "trtllm 0.11.0 is older than the oldest release modelled"
        in response.json()["extra"]["fields"]["engine_version"][0]
    )
    assert Deployment.objects.get().engine == "vllm"


def test_latest_is_stored_as_empty(catalog, api_client):
    # when
    created = api_client.post(DEPLOYMENTS, {**PLAN, "engine_version": "latest"}, format="json")

    # then
    assert created.json()["engine_version"] == ""


# ---------------------------------------------------------------------------------------------------------------
# The report's content


def _deployment(organisation, **fields) -> Deployment:
    return Deployment.objects.create(
        organisation=organisation,
        name="客服大模型",
        customer="Acme",
        engine="vllm",
        gpu_count=1,
        tp=1,
        model=LlmModel.objects.get(slug=MODEL, organisation__isnull=True),
        gpu=Gpu.objects.get(slug="nvidia-h100-sxm-80gb"),
        max_model_len=8192,
        **fields,
    )


def _content(organisation, language: str = "en", **fields) -> dict:
    deployment = _deployment(organisation, **fields)
    report = Report.objects.create(organisation=organisation, deployment=deployment, language=language, title="T")
    return report_content(report=report, number=1, changes=[], author="engineer")


def test_the_content_states_the_release_and_the_configuration_starts_by_installing_it(catalog, organisation):
    # when
    content = _content(organisation, engine_version="0.11.0", install="pip")

    # then
    assert content["release"] == RELEASE
    config = content["protection"]["config"].splitlines()
    assert config[:2] == ["# vLLM 0.11.0: the estimate holds for this release", "pip install vllm==0.11.0"]
    assert config[2].startswith(f"vllm serve {MODEL} --tensor-parallel-size 1 ")


def test_a_plan_newer_than_modelled_lists_it_as_missing_evidence(catalog, organisation):
    # when
    content = _content(organisation, engine_version="9.0.0")

    # then
    assert (content["release"]["version"], content["release"]["requested"]) == (NEWEST, "9.0.0")
    assert (
        f"The plan names vLLM 9.0.0, newer than the newest release modelled: the figures follow the rules of "
        f"{NEWEST}; check the boot log of 9.0.0 before relying on them."
    ) in content["missing"]


def test_the_chinese_content_names_the_newer_release_in_chinese(catalog, organisation):
    # when
    content = _content(organisation, language="zh-hans", engine_version="9.0.0")

    # then
    assert (
        f"部署计划指定的 vLLM 9.0.0 比已建模的最新版本更新：各项数字按 {NEWEST} 的规则计算；请先核对 9.0.0 的启动"
        "日志，再依赖这些数字"
    ) in content["missing"]


# ---------------------------------------------------------------------------------------------------------------
# The document


def _with_release(content: dict, release: dict = RELEASE) -> dict:
    changed = copy.deepcopy(content)
    changed["release"] = dict(release)
    return changed


def test_the_english_report_says_which_release_the_commitment_holds_for():
    # when
    html = render_report_html(_with_release(SAMPLE_CONTENT))

    # then: in the model section with the install line, in commitment 1 and at a glance
    assert html.count("This commitment holds for vLLM 0.11.0") == 2
    assert '<pre class="code install">pip install vllm==0.11.0</pre>' in html
    assert '<th scope="row">Engine version</th><td>vLLM 0.11.0; pip package; OpenAI server (vllm serve)</td>' in html
    assert '<th scope="row">Engine version</th><td>vLLM 0.11.0</td>' in html


def test_the_chinese_report_says_which_release_the_commitment_holds_for():
    # when
    html = render_report_html(
        _with_release(
            SAMPLE_CONTENT_ZH,
            {**RELEASE, "install": "docker", "install_command": "docker pull vllm/vllm-openai:v0.11.0"},
        )
    )

    # then
    assert html.count("本承诺适用于 vLLM 0.11.0") == 2
    assert '<th scope="row">推理引擎版本</th><td>vLLM 0.11.0；Docker 镜像；OpenAI 服务（vllm serve）</td>' in html
    assert '<pre class="code install">docker pull vllm/vllm-openai:v0.11.0</pre>' in html


def test_content_without_a_release_renders_as_before():
    # when
    html = render_report_html(SAMPLE_CONTENT)

    # then: nothing of the release appears (a signed version made before it renders as it did)
    assert "holds for" not in html
    assert 'class="release"' not in html
    assert "Engine version" not in html


def test_the_chinese_pdf_carries_the_release_statement():
    # when
    pdf = render_report_pdf(_with_release(SAMPLE_CONTENT_ZH))
    done = subprocess.run(
        ["pdftotext", "-layout", "-", "-"],
        input=pdf,
        capture_output=True,
        check=True,
    )

    # then
    text = "\n".join(" ".join(line.split()) for line in done.stdout.decode().splitlines())
    assert "本承诺适用于 vLLM 0.11.0" in text
    assert "pip install vllm==0.11.0" in text
