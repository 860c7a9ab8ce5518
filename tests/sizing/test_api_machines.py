"""A deployment's hosts and machines through the API: uploads grouped into hosts by the file's identity (host name,
GPU UUIDs), the merge of two hosts (refused with nothing saved when their GPUs' UUIDs differ), the chosen machines
(one version per host; another deployment's or organisation's fingerprint refused), `chosen_machines`,
`machine_contradictions` in both languages, and the data migration that keyed the stored rows."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from django.apps import apps as django_apps
from django.contrib.auth import get_user_model
from django.utils import timezone, translation
from rest_framework.test import APIClient

from sizing.models import Deployment, DeploymentMachine, Fingerprint, Gpu, Membership, Organisation
from sizing.selectors.deployments import chosen_machines, fingerprint_versions
from sizing.services.fingerprints import fingerprint_from_texts
from sizing.services.machine_checks import machine_contradictions
from tests.sizing.fingerprint.fixture_files import fixture_text

SCENARIOS = Path(__file__).resolve().parent / "fingerprint" / "scenarios"
H800_PLAN = {
    "name": "Acme chat",
    "customer": "Acme",
    "model": "Qwen/Qwen2.5-14B",
    "gpu": "nvidia-h800-sxm-80gb",
    "gpu_count": 8,
    "tp": 8,
    "engine": "vllm",
}
# 2× A100 80GB PCIe in the default table: no UUIDs, no host name
TABLE = fixture_text("table_2xa100_pcie_80col.txt")
TOPO_2 = fixture_text("topo_2xl4_pcie_spaces.txt")


def scenario_texts(name: str, *, driver: str | None = None) -> list[str]:
    """A scenario machine's nvidia-smi -q -x and topo -m (with another driver version: a later capture)."""
    xml = (SCENARIOS / name / "nvidia_smi_q_x.xml").read_text()
    if driver is not None:
        xml = xml.replace("<driver_version>550.54.15</driver_version>", f"<driver_version>{driver}</driver_version>")
    return [xml, (SCENARIOS / name / "topo.txt").read_text()]


@pytest.fixture
def deployment(api_client, catalog) -> Deployment:
    response = api_client.post("/api/v1/deployments/", H800_PLAN, format="json")
    assert response.status_code == 201, response.content
    return Deployment.objects.get(pk=response.json()["id"])


def upload(client: APIClient, deployment: Deployment, texts: list[str], host: str = "") -> int:
    response = client.post(
        "/api/v1/fingerprints/", {"deployment": deployment.pk, "texts": texts, "host": host}, format="json"
    )
    assert response.status_code == 201, response.content
    return response.json()["id"]


def hosts(client: APIClient, deployment: Deployment) -> list[dict]:
    response = client.get(f"/api/v1/deployments/{deployment.pk}/hosts/")
    assert response.status_code == 200, response.content
    return response.json()


def state() -> list[tuple]:
    return sorted(Fingerprint.objects.values_list("pk", "host", "host_key", "host_named")) + sorted(
        DeploymentMachine.objects.values_list("deployment_id", "fingerprint_id", "host_key")
    )


# --- hosts ---------------------------------------------------------------------------------------------------------


def test_uploads_are_versions_of_one_host_only_when_their_identity_matches(api_client, deployment):
    # given the HGX H100 twice under its name (a driver upgrade between), the MIG box and two A100 tables unnamed
    first = upload(api_client, deployment, scenario_texts("h100_sxm_8x_nvswitch"), host="hgx-h100-01")
    second = upload(
        api_client, deployment, scenario_texts("h100_sxm_8x_nvswitch", driver="550.90.07"), host="hgx-h100-01"
    )
    mig = upload(api_client, deployment, scenario_texts("a100_sxm_mig"))
    table_a = upload(api_client, deployment, [TABLE, TOPO_2])
    table_b = upload(api_client, deployment, [TABLE])

    # when
    listed = hosts(api_client, deployment)

    # then four hosts, newest first: each unnamed table its own host, the MIG box named after its GPUs
    assert [(host["name"], host["named"], [v["id"] for v in host["versions"]]) for host in listed] == [
        ("2× NVIDIA A100 80G… · #2", False, [table_b]),  # the 80-column table cuts the name short
        ("2× NVIDIA A100 80G… · #1", False, [table_a]),
        (Fingerprint.objects.get(pk=mig).host, False, [mig]),
        ("hgx-h100-01", True, [first, second]),
    ]
    assert Fingerprint.objects.get(pk=mig).host.startswith("1× NVIDIA A100-SXM4-80GB · GPU-")
    assert [v["version"] for v in listed[3]["versions"]] == [1, 2]
    assert len(listed[3]["gpu_uuids"]) == 8
    assert listed[0]["gpu_uuids"] == []
    assert [row.pk for row in fingerprint_versions(fingerprint=Fingerprint.objects.get(pk=second))] == [first, second]


def test_two_hosts_a_person_says_are_one_machine_are_merged(api_client, deployment):
    # given the two unnamed A100 tables (no UUIDs, no name): two hosts
    table_a = upload(api_client, deployment, [TABLE, TOPO_2])
    table_b = upload(api_client, deployment, [TABLE])
    newer, older = hosts(api_client, deployment)

    # when the newer is merged into the older
    response = api_client.post(
        f"/api/v1/deployments/{deployment.pk}/hosts/merge", {"host": newer["key"], "into": older["key"]}, format="json"
    )

    # then one host with both versions, under the older's key and name
    assert response.status_code == 200, response.content
    assert (response.json()["key"], response.json()["name"]) == (older["key"], older["name"])
    assert [v["id"] for v in response.json()["versions"]] == [table_a, table_b]
    assert [host["key"] for host in hosts(api_client, deployment)] == [older["key"]]


def test_a_merge_of_hosts_whose_gpu_uuids_differ_is_a_400_naming_them_and_nothing_is_saved(api_client, deployment):
    # given the HGX H100 and the MIG box (different GPUs, both with UUIDs)
    upload(api_client, deployment, scenario_texts("h100_sxm_8x_nvswitch"), host="hgx-h100-01")
    upload(api_client, deployment, scenario_texts("a100_sxm_mig"))
    mig, hgx = hosts(api_client, deployment)
    before = state()

    # when
    response = api_client.post(
        f"/api/v1/deployments/{deployment.pk}/hosts/merge", {"host": mig["key"], "into": hgx["key"]}, format="json"
    )

    # then a 400 on `into` naming the hosts and their own UUIDs; nothing changed
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_argument"
    message = body["extra"]["fields"]["into"][0]
    assert message.startswith(f"{mig['name']} and hgx-h100-01 are two machines: their GPUs' UUIDs differ")
    assert mig["gpu_uuids"][0] in message
    assert body["extra"]["host_uuids"] == mig["gpu_uuids"]
    assert len(body["extra"]["into_uuids"]) == 8
    assert state() == before


@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param({"host": "upload-nope"}, "host", id="unknown-host"),
        pytest.param({"into": "name-nope"}, "into", id="unknown-into"),
        pytest.param("same", "into", id="into-itself"),
    ],
)
def test_a_merge_naming_no_host_of_the_deployment_is_a_400(api_client, deployment, change, field):
    # given two unnamed hosts
    upload(api_client, deployment, [TABLE, TOPO_2])
    upload(api_client, deployment, [TABLE])
    newer, older = hosts(api_client, deployment)
    body = {"host": newer["key"], "into": newer["key"] if change == "same" else older["key"]}
    if change != "same":
        body.update(change)
    before = state()

    # when
    response = api_client.post(f"/api/v1/deployments/{deployment.pk}/hosts/merge", body, format="json")

    # then
    assert response.status_code == 400
    assert list(response.json()["extra"]["fields"]) == [field]
    assert state() == before


# --- machines ------------------------------------------------------------------------------------------------------


def test_no_machine_is_chosen_until_a_person_chooses_never_the_newest_upload(api_client, deployment):
    # given two uploads
    upload(api_client, deployment, scenario_texts("h100_sxm_8x_nvswitch"), host="hgx-h100-01")
    upload(api_client, deployment, scenario_texts("a100_sxm_mig"))

    # when
    response = api_client.get(f"/api/v1/deployments/{deployment.pk}/machines/")

    # then
    assert response.json() == {"machines": [], "contradictions": []}
    assert chosen_machines(deployment) == []
    assert machine_contradictions(deployment, chosen_machines(deployment)) == []


def test_the_chosen_machines_are_one_version_per_host_by_host_name_with_the_plans_contradictions(
    api_client, deployment
):
    # given the HGX H100 in two versions and the MIG box, against a plan of 8× H800 with TP 8
    first = upload(api_client, deployment, scenario_texts("h100_sxm_8x_nvswitch"), host="hgx-h100-01")
    upload(api_client, deployment, scenario_texts("h100_sxm_8x_nvswitch", driver="550.90.07"), host="hgx-h100-01")
    mig = upload(api_client, deployment, scenario_texts("a100_sxm_mig"))
    mig_name = Fingerprint.objects.get(pk=mig).host

    # when the older H100 version and the MIG box are chosen
    response = api_client.put(
        f"/api/v1/deployments/{deployment.pk}/machines/",
        {"fingerprints": [first, mig]},
        format="json",
        HTTP_ACCEPT_LANGUAGE="en",
    )

    # then both, by host name ("1× NVIDIA A100…" before "hgx-h100-01"), with the version chosen
    assert response.status_code == 200, response.content
    body = response.json()
    assert [(m["fingerprint"], m["host"], m["version"]) for m in body["machines"]] == [
        (mig, mig_name, 1),
        (first, "hgx-h100-01", 1),
    ]
    assert [row.pk for row in chosen_machines(deployment)] == [mig, first]
    # and what contradicts the plan, machine by machine
    assert [(c["code"], c["host"]) for c in body["contradictions"]] == [
        ("gpu_model_differs", mig_name),
        ("gpu_count_short", mig_name),
        ("mig_slices", mig_name),
        ("gpu_model_differs", "hgx-h100-01"),
    ]
    assert body["contradictions"][3]["text"] == (
        "hgx-h100-01: the plan is for NVIDIA H800 SXM5 80GB; the machine has NVIDIA H100 80GB HBM3"
    )
    assert body["contradictions"][1]["text"] == f"{mig_name}: the plan counts 8 GPUs per server; the machine has 1"


def test_the_contradictions_are_worded_in_the_active_language(api_client, deployment):
    # given the HGX H100 chosen for the H800 plan
    chosen = upload(api_client, deployment, scenario_texts("h100_sxm_8x_nvswitch"), host="hgx-h100-01")
    api_client.put(f"/api/v1/deployments/{deployment.pk}/machines/", {"fingerprints": [chosen]}, format="json")

    # when
    with translation.override("zh-hans"):
        found = machine_contradictions(deployment, chosen_machines(deployment))

    # then
    assert found == [
        {
            "code": "gpu_model_differs",
            "host": "hgx-h100-01",
            "text": "hgx-h100-01：计划针对的是 NVIDIA H800 SXM5 80GB；这台机器装的是 NVIDIA H100 80GB HBM3",
        }
    ]


def test_the_memory_contradiction_states_both_figures_in_gib(api_client, catalog, organisation):
    # given an A100 SXM4 80GB plan and the 4× L40S chosen (46,068 MiB = 45.0 GiB against 81,920 MiB = 80.0 GiB)
    deployment = Deployment.objects.create(
        organisation=organisation, name="L40S box", gpu=Gpu.objects.get(slug="nvidia-a100-sxm-80gb"), gpu_count=4, tp=1
    )
    chosen = upload(api_client, deployment, scenario_texts("l40s_pcie_4x"), host="l40s-node-03")
    api_client.put(f"/api/v1/deployments/{deployment.pk}/machines/", {"fingerprints": [chosen]}, format="json")

    # when
    with translation.override("en"):
        found = machine_contradictions(deployment, chosen_machines(deployment))

    # then
    assert found == [
        {
            "code": "gpu_model_differs",
            "host": "l40s-node-03",
            "text": "l40s-node-03: the plan is for NVIDIA A100 SXM4 80GB; the machine has NVIDIA L40S",
        },
        {
            "code": "gpu_memory_smaller",
            "host": "l40s-node-03",
            "text": "l40s-node-03: the plan's card has 80.0 GiB of GPU memory; the smallest card of the machine reports "
            "45.0 GiB",
        },
    ]


def test_two_versions_of_one_host_are_a_400_and_nothing_changes(api_client, deployment):
    # given the MIG box chosen, and the HGX H100 in two versions
    first = upload(api_client, deployment, scenario_texts("h100_sxm_8x_nvswitch"), host="hgx-h100-01")
    second = upload(
        api_client, deployment, scenario_texts("h100_sxm_8x_nvswitch", driver="550.90.07"), host="hgx-h100-01"
    )
    mig = upload(api_client, deployment, scenario_texts("a100_sxm_mig"))
    api_client.put(f"/api/v1/deployments/{deployment.pk}/machines/", {"fingerprints": [mig]}, format="json")
    before = state()

    # when both H100 versions are chosen
    response = api_client.put(
        f"/api/v1/deployments/{deployment.pk}/machines/", {"fingerprints": [first, second]}, format="json"
    )

    # then a 400 on `fingerprints` naming the two and the host; the MIG box stays the one chosen
    assert response.status_code == 400
    assert response.json()["extra"]["fields"]["fingerprints"] == [
        f"fingerprints {first} and {second} are two versions of one host (hgx-h100-01): choose one version per host"
    ]
    assert state() == before


def test_a_fingerprint_of_another_deployment_or_organisation_is_a_400_and_nothing_changes(
    api_client, deployment, organisation, catalog
):
    # given a fingerprint of another deployment of the organisation, and one of another organisation
    other_deployment = Deployment.objects.create(organisation=organisation, name="Other")
    own = upload(api_client, deployment, scenario_texts("a100_sxm_mig"))
    elsewhere = upload(api_client, other_deployment, scenario_texts("a100_sxm_mig"))
    stranger_org = Organisation.objects.create(name="Stranger")
    stranger = get_user_model().objects.create_user(username="stranger", password="correct horse battery")
    Membership.objects.create(user=stranger, organisation=stranger_org)
    stranger_client = APIClient()
    stranger_client.force_authenticate(user=stranger)
    theirs = upload(
        stranger_client,
        Deployment.objects.create(organisation=stranger_org, name="Theirs"),
        scenario_texts("a100_sxm_mig"),
    )
    before = state()

    for foreign in (elsewhere, theirs):
        # when
        response = api_client.put(
            f"/api/v1/deployments/{deployment.pk}/machines/", {"fingerprints": [own, foreign]}, format="json"
        )

        # then the same words for both (another organisation's row is not revealed)
        assert response.status_code == 400
        assert response.json()["extra"]["fields"]["fingerprints"] == [
            f"fingerprint {foreign} is not an upload of this deployment: choose among its hosts' versions"
        ]
    assert state() == before


def test_a_fingerprint_listed_twice_is_a_400(api_client, deployment):
    own = upload(api_client, deployment, scenario_texts("a100_sxm_mig"))
    response = api_client.put(
        f"/api/v1/deployments/{deployment.pk}/machines/", {"fingerprints": [own, own]}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["extra"]["fields"]["fingerprints"] == [f"fingerprint {own} is listed twice"]
    assert DeploymentMachine.objects.count() == 0


def test_an_empty_list_chooses_none_and_a_deleted_fingerprint_is_no_longer_chosen(api_client, deployment):
    # given two machines chosen
    mig = upload(api_client, deployment, scenario_texts("a100_sxm_mig"))
    hgx = upload(api_client, deployment, scenario_texts("h100_sxm_8x_nvswitch"), host="hgx-h100-01")
    api_client.put(f"/api/v1/deployments/{deployment.pk}/machines/", {"fingerprints": [mig, hgx]}, format="json")

    # when one is deleted
    assert api_client.delete(f"/api/v1/fingerprints/{hgx}/").status_code == 204

    # then the other stays chosen; an empty list then chooses none
    assert [row.pk for row in chosen_machines(deployment)] == [mig]
    response = api_client.put(f"/api/v1/deployments/{deployment.pk}/machines/", {"fingerprints": []}, format="json")
    assert response.json()["machines"] == []
    assert chosen_machines(deployment) == []


def test_a_merge_of_two_hosts_each_with_a_chosen_version_is_refused(api_client, deployment):
    # given both unnamed A100 tables chosen
    table_a = upload(api_client, deployment, [TABLE, TOPO_2])
    table_b = upload(api_client, deployment, [TABLE])
    api_client.put(
        f"/api/v1/deployments/{deployment.pk}/machines/", {"fingerprints": [table_a, table_b]}, format="json"
    )
    newer, older = hosts(api_client, deployment)
    before = state()

    # when
    response = api_client.post(
        f"/api/v1/deployments/{deployment.pk}/hosts/merge", {"host": newer["key"], "into": older["key"]}, format="json"
    )

    # then
    assert response.status_code == 400
    assert "have a chosen version" in response.json()["extra"]["fields"]["into"][0]
    assert state() == before


def test_a_chosen_version_follows_its_host_into_a_merge(api_client, deployment):
    # given the newer unnamed table chosen
    upload(api_client, deployment, [TABLE, TOPO_2])
    table_b = upload(api_client, deployment, [TABLE])
    api_client.put(f"/api/v1/deployments/{deployment.pk}/machines/", {"fingerprints": [table_b]}, format="json")
    newer, older = hosts(api_client, deployment)

    # when it is merged into the older
    api_client.post(
        f"/api/v1/deployments/{deployment.pk}/hosts/merge", {"host": newer["key"], "into": older["key"]}, format="json"
    )

    # then it is still chosen, as version 2 of the merged host
    machines = api_client.get(f"/api/v1/deployments/{deployment.pk}/machines/").json()["machines"]
    assert [(m["fingerprint"], m["host"], m["host_key"], m["version"]) for m in machines] == [
        (table_b, older["name"], older["key"], 2)
    ]


def test_another_organisations_deployment_is_a_404_on_every_machines_endpoint(deployment, db):
    # given a user of another organisation
    stranger_org = Organisation.objects.create(name="Stranger")
    stranger = get_user_model().objects.create_user(username="stranger", password="correct horse battery")
    Membership.objects.create(user=stranger, organisation=stranger_org)
    client = APIClient()
    client.force_authenticate(user=stranger)
    base = f"/api/v1/deployments/{deployment.pk}"

    # then
    assert client.get(f"{base}/hosts/").status_code == 404
    assert client.get(f"{base}/machines/").status_code == 404
    assert client.put(f"{base}/machines/", {"fingerprints": []}, format="json").status_code == 404
    assert client.post(f"{base}/hosts/merge", {"host": "a", "into": "b"}, format="json").status_code == 404


# --- the stored rows -----------------------------------------------------------------------------------------------


def test_the_data_migration_splits_the_old_unnamed_host_into_its_machines(deployment):
    # given three rows stored before issue 20 as "unnamed host" (a MIG box, an HPE server, a laptop without
    # UUIDs) and two captures of gpu-01 (named, no UUIDs), none keyed
    facts = [fingerprint_from_texts(texts=scenario_texts(name)) for name in ("a100_sxm_mig", "l40s_pcie_4x")]
    facts.append({"gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 3060 Laptop GPU"}], "host": {"name": None}})
    rows = []
    for number, item in enumerate(facts):
        rows.append(
            Fingerprint.objects.create(
                deployment=deployment,
                host="unnamed host",
                captured_at=timezone.now(),
                facts=item,
                raw=[],
                size_bytes=0,
                sha256=f"{number}" * 64,
            )
        )
    named = [
        Fingerprint.objects.create(
            deployment=deployment,
            host="gpu-01",
            captured_at=timezone.now(),
            facts={"gpus": [{"index": 0, "name": "NVIDIA L4"}]},
            raw=[],
            size_bytes=0,
            sha256=f"{number + 5}" * 64,
        )
        for number in range(2)
    ]
    migration = importlib.import_module("sizing.migrations.0016_fingerprint_host_keys")

    # when
    migration.assign_host_keys(django_apps, None)

    # then the three unnamed rows are three hosts named after their GPUs; gpu-01's captures are one host
    keyed = {row.pk: row for row in Fingerprint.objects.all()}
    assert len({keyed[row.pk].host_key for row in rows}) == 3
    assert [keyed[row.pk].host_named for row in rows] == [False, False, False]
    assert keyed[rows[0].pk].host.startswith("1× NVIDIA A100-SXM4-80GB · GPU-")
    assert keyed[rows[1].pk].host.startswith("4× NVIDIA L40S · GPU-")
    assert keyed[rows[2].pk].host == "1× NVIDIA GeForce RTX 3060 Laptop GPU · #1"
    assert len(keyed[rows[1].pk].gpu_uuids) == 4
    assert keyed[named[0].pk].host_key == keyed[named[1].pk].host_key
    assert keyed[named[0].pk].host == "gpu-01"
    assert [row.pk for row in fingerprint_versions(fingerprint=keyed[named[1].pk])] == [named[0].pk, named[1].pk]
