"""The deployment page's machines: the hosts with their versions to choose from, the chosen machines and the plan's
contradictions against them in English and Chinese, the merge of two hosts (refused, with nothing saved, when their
GPUs' UUIDs differ) and the refusals of a bad choice."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from sizing.models import Deployment, DeploymentMachine, Fingerprint, Gpu, LlmModel, Membership, Organisation
from sizing.services.deployments import Upload, deployment_create, fingerprint_upload
from tests.frontend.test_fingerprint_pages import XML, probe_file
from tests.sizing.fingerprint.fixture_files import fixture_text

pytestmark = pytest.mark.django_db
TABLE = fixture_text("table_2xa100_pcie_80col.txt")  # 2× A100 80GB PCIe, no UUIDs
OTHER_UUID_XML = XML.replace("<uuid>GPU-", "<uuid>GPU-ffff")  # the same card model, other boards


@pytest.fixture
def signed_in(client: Client, user) -> Client:
    client.force_login(user)
    return client


@pytest.fixture
def deployment(catalog: None, organisation: Organisation, user) -> Deployment:
    """Llama 3 8B on 2 × A100 SXM4 80GB with TP 2."""
    return deployment_create(
        organisation=organisation,
        user=user,
        data={
            "name": "Acme chat",
            "model": LlmModel.objects.get(slug="meta-llama/Meta-Llama-3-8B", organisation=None),
            "gpu": Gpu.objects.get(slug="nvidia-a100-sxm-80gb"),
            "gpu_count": 2,
            "tp": 2,
            "engine": "vllm",
        },
    )


def _upload(deployment: Deployment, user, name: str, body: bytes, host: str = "") -> Fingerprint:
    return fingerprint_upload(deployment=deployment, user=user, uploads=[Upload(name, body)], host=host)


def _page(client: Client, deployment: Deployment, language: str = "en") -> str:
    response = client.get(reverse("frontend:deployment", args=[deployment.pk]), headers={"accept-language": language})
    assert response.status_code == 200
    return response.content.decode()


def _card(html: str) -> str:
    start = html.index('id="machines-card"')
    return html[start : html.index("</section>", start)]


def test_the_page_offers_each_hosts_versions_and_says_none_is_chosen(signed_in, deployment, user):
    # given gpu-01 in two captures and an unnamed A100 table
    first = _upload(deployment, user, "a.json", probe_file(host="gpu-01", captured_at="2026-11-01T08:00:00Z"))
    second = _upload(deployment, user, "b.json", probe_file(host="gpu-01", captured_at="2026-11-20T08:00:00Z"))
    table = _upload(deployment, user, "table.txt", TABLE.encode())

    # when
    card = _card(_page(signed_in, deployment))

    # then one select per host, its versions in order, none chosen
    assert card.count('<select name="fingerprint"') == 2
    assert f'data-host-key="{first.host_key}"' in card
    gpu_01 = card[card.index(f'data-host-key="{first.host_key}"') :]
    assert gpu_01.index(f'<option value="{first.pk}">v1 · 2026-11-01 08:00') < gpu_01.index(
        f'<option value="{second.pk}">v2 · 2026-11-20 08:00'
    )
    assert table.host in card
    assert "no host name in the file: named after its GPUs" in card
    assert 'id="no-machines"' in card
    assert 'id="merge-form"' in card


def test_choosing_the_machines_saves_them_and_shows_the_plans_contradictions(signed_in, deployment, user):
    # given gpu-01 (an A100-SXM4-80GB in MIG mode and a second GPU, joined by PHB) in two captures
    _upload(deployment, user, "a.json", probe_file(host="gpu-01", captured_at="2026-11-01T08:00:00Z"))
    second = _upload(deployment, user, "b.json", probe_file(host="gpu-01", captured_at="2026-11-20T08:00:00Z"))

    # when its second version is chosen
    response = signed_in.post(
        reverse("frontend:deployment-machines", args=[deployment.pk]), {"fingerprint": [str(second.pk), ""]}
    )

    # then it is the deployment's machine, and the page says what contradicts the plan of TP 2 on whole cards
    assert response.status_code == 302
    assert list(DeploymentMachine.objects.values_list("fingerprint_id", flat=True)) == [second.pk]
    card = _card(_page(signed_in, deployment))
    assert f'<option value="{second.pk}" selected>' in card
    assert card.count("<li data-code=") == 2
    assert (
        '<li data-code="tp_over_pcie" data-host="gpu-01">gpu-01: TP 2 would all-reduce over PHB paths: the '
        "largest NVLink group there has 1 GPU(s)</li>" in card
    )
    assert (
        '<li data-code="mig_slices" data-host="gpu-01">gpu-01: MIG is enabled on GPU(s) 0; the plan assumes '
        "whole cards, an engine sees one slice</li>" in card
    )
    chinese = _card(_page(signed_in, deployment, "zh-hans"))
    assert "部署的机器" in chinese
    assert "gpu-01：GPU 0 启用了 MIG；计划按整张卡计算，而推理引擎只能看到一个切片" in chinese


def test_two_versions_of_one_host_are_refused_on_the_page_with_nothing_changed(signed_in, deployment, user):
    # given gpu-01 in two captures
    first = _upload(deployment, user, "a.json", probe_file(host="gpu-01", captured_at="2026-11-01T08:00:00Z"))
    second = _upload(deployment, user, "b.json", probe_file(host="gpu-01", captured_at="2026-11-20T08:00:00Z"))

    # when both are posted
    response = signed_in.post(
        reverse("frontend:deployment-machines", args=[deployment.pk]),
        {"fingerprint": [str(first.pk), str(second.pk)]},
        headers={"accept-language": "zh-hans"},
    )

    # then a 400 with the reason in Chinese; nothing chosen
    assert response.status_code == 400
    assert f"指纹 {first.pk} 和 {second.pk} 是同一台主机（gpu-01）的两个版本" in _card(response.content.decode())
    assert DeploymentMachine.objects.count() == 0


def test_two_unnamed_hosts_are_merged_from_the_page(signed_in, deployment, user):
    # given the same A100 table pasted twice (no name, no UUIDs: two hosts), the second with a label line changed
    first = _upload(deployment, user, "table.txt", TABLE.encode())
    second = _upload(deployment, user, "table-again.txt", (TABLE + "\n").encode())
    assert first.host_key != second.host_key

    # when the second is merged into the first
    response = signed_in.post(
        reverse("frontend:deployment-host-merge", args=[deployment.pk]),
        {"host": second.host_key, "into": first.host_key},
    )

    # then one host of two versions under the first's name
    assert response.status_code == 302
    assert set(Fingerprint.objects.values_list("host_key", "host")) == {(first.host_key, first.host)}


def test_a_merge_across_different_gpu_uuids_is_refused_on_the_page_with_nothing_saved(signed_in, deployment, user):
    # given gpu-01 and gpu-02 with the same card model but other boards (UUIDs)
    one = _upload(deployment, user, "a.json", probe_file(host="gpu-01"))
    two = _upload(deployment, user, "b.json", probe_file(host="gpu-02", xml=OTHER_UUID_XML))
    before = sorted(Fingerprint.objects.values_list("pk", "host", "host_key"))

    # when
    response = signed_in.post(
        reverse("frontend:deployment-host-merge", args=[deployment.pk]),
        {"host": two.host_key, "into": one.host_key},
        headers={"accept-language": "zh-hans"},
    )

    # then a 400 naming both hosts, in Chinese; nothing changed
    assert response.status_code == 400
    card = _card(response.content.decode())
    assert "gpu-02 和 gpu-01 是两台机器：它们的 GPU UUID 不同" in card
    assert one.gpu_uuids[0] in card
    assert sorted(Fingerprint.objects.values_list("pk", "host", "host_key")) == before


def test_a_sales_user_may_read_the_page_but_not_choose_or_merge(client, deployment, user, organisation):
    # given a sales user of the organisation and an upload
    fingerprint = _upload(deployment, user, "a.json", probe_file(host="gpu-01"))
    sales = get_user_model().objects.create_user(username="sales", password="correct horse battery")
    Membership.objects.create(user=sales, organisation=organisation, role="sales")
    client.force_login(sales)

    # when / then
    assert (
        client.post(
            reverse("frontend:deployment-machines", args=[deployment.pk]), {"fingerprint": [str(fingerprint.pk)]}
        ).status_code
        == 403
    )
    assert (
        client.post(
            reverse("frontend:deployment-host-merge", args=[deployment.pk]), {"host": "a", "into": "b"}
        ).status_code
        == 403
    )
    assert DeploymentMachine.objects.count() == 0
