"""API of workload profiles: create, read, change and delete them per organisation, the shared read-only sample,
fitting a profile to a CSV request log (with the row and column of a bad value), and the day's preview."""

from __future__ import annotations

import factory
import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from llm_sizing_loadgen.workload import profile_to_dict, sample_profile
from sizing.models import Membership, Organisation, WorkloadProfile
from sizing.services.estimates import catalog_load
from sizing.services.workloads import workload_sample_load

LIST = "/api/v1/workloads/"
IMPORT = "/api/v1/workloads/import"
PREVIEW = "/api/v1/workloads/preview"
SAMPLE_NAME = "Sample: Q&A, reports, archive analysis"


def _detail(pk: int) -> str:
    return f"/api/v1/workloads/{pk}/"


def _profile(**class_overrides) -> dict:
    """A one-class profile in its JSON form."""
    return {
        "classes": [
            {
                "name": "chat",
                "share": 1.0,
                "input": {"kind": "normal", "mean": 300, "std": 60},
                "output": {"kind": "fixed", "mean": 200},
                **class_overrides,
            }
        ]
    }


class OrganisationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Organisation

    name = factory.Sequence(lambda n: f"Other integrator {n}")


class WorkloadProfileFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = WorkloadProfile

    organisation = factory.SubFactory(OrganisationFactory)
    name = factory.Sequence(lambda n: f"profile {n}")
    profile = factory.LazyAttribute(lambda row: {**_profile(), "name": row.name, "description": ""})
    source = WorkloadProfile.Source.MANUAL


@pytest.fixture
def sample(db) -> WorkloadProfile:
    return workload_sample_load()


@pytest.fixture
def stranger_client(db) -> APIClient:
    """A user of another organisation."""
    stranger = get_user_model().objects.create_user(username="stranger", password="correct horse battery")
    Membership.objects.create(user=stranger, organisation=OrganisationFactory())
    client = APIClient()
    client.force_authenticate(user=stranger)
    return client


def _csv(text: str, name: str = "log.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode("utf-8"), content_type="text/csv")


# ---------------------------------------------------------------- authentication and the sample


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", LIST),
        ("post", LIST),
        ("get", _detail(1)),
        ("put", _detail(1)),
        ("delete", _detail(1)),
        ("post", IMPORT),
        ("post", PREVIEW),
    ],
    ids=["list", "create", "detail", "update", "delete", "import", "preview"],
)
def test_every_workload_endpoint_requires_authentication(db, method, url):
    # when
    response = getattr(APIClient(), method)(url, {}, format="json")
    # then
    assert response.status_code in (401, 403)
    assert not WorkloadProfile.objects.exists()


def test_catalog_load_stores_the_sample_once(db):
    # when
    catalog_load()
    catalog_load()
    # then
    sample = WorkloadProfile.objects.get()
    assert (sample.name, sample.organisation, sample.source) == (SAMPLE_NAME, None, "sample")
    assert sample.profile == profile_to_dict(sample_profile())
    assert sample.fit is None


def test_everyone_sees_the_sample_first_and_only_their_own_profiles(sample, api_client, stranger_client, user):
    # given a profile of the user's organisation and one of another organisation
    own = api_client.post(LIST, {"name": "Chat", "profile": _profile()}, format="json").json()
    WorkloadProfileFactory(name="Theirs")
    # when
    rows = api_client.get(LIST).json()["results"]
    strangers_rows = stranger_client.get(LIST).json()["results"]
    # then
    assert [(row["name"], row["sample"], row["source"]) for row in rows] == [
        (SAMPLE_NAME, True, "sample"),
        ("Chat", False, "manual"),
    ]
    assert rows[1]["id"] == own["id"]
    assert rows[1]["created_by"] == "engineer"
    assert "fit" not in rows[0]
    assert [row["name"] for row in strangers_rows] == [SAMPLE_NAME]


def test_the_sample_can_be_read_but_not_changed_or_deleted(sample, api_client):
    # when
    read = api_client.get(_detail(sample.pk))
    changed = api_client.put(_detail(sample.pk), {"name": "Mine now", "profile": _profile()}, format="json")
    deleted = api_client.delete(_detail(sample.pk))
    # then
    assert read.status_code == 200
    assert read.json()["profile"] == profile_to_dict(sample_profile())
    for response in (changed, deleted):
        assert response.status_code == 403
        assert response.json() == {
            "code": "permission_denied",
            "message": f"'{SAMPLE_NAME}' is a shipped sample and read-only; save a copy under another name to "
            "change it",
            "extra": {},
        }
    sample.refresh_from_db()
    assert sample.name == SAMPLE_NAME
    assert sample.profile == profile_to_dict(sample_profile())


def test_a_copy_of_the_sample_is_the_organisations_own(sample, api_client, organisation):
    # when the sample's JSON is saved under another name, then edited
    copy = api_client.post(LIST, {"name": "Acme traffic", "profile": sample.profile}, format="json")
    profile = copy.json()["profile"]
    profile["classes"][0]["share"] = 0.5
    edited = api_client.put(_detail(copy.json()["id"]), {"name": "Acme traffic", "profile": profile}, format="json")
    # then
    assert copy.status_code == 201
    assert edited.status_code == 200
    row = WorkloadProfile.objects.get(name="Acme traffic")
    assert row.organisation == organisation
    assert row.description == sample.description  # the profile's own, as none was given
    assert row.profile["classes"][0]["share"] == 0.5
    assert WorkloadProfile.objects.get(pk=sample.pk).profile["classes"][0]["share"] == 0.65


# ---------------------------------------------------------------- create, update, delete


def test_create_stores_the_canonical_json_under_the_rows_name(api_client, organisation, user):
    # given a profile with an unknown key and no name of its own
    payload = {"name": " Chat ", "description": "Support bot", "profile": {**_profile(), "colour": "blue"}}
    # when
    response = api_client.post(LIST, payload, format="json")
    # then
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["name"], body["description"], body["source"], body["sample"], body["fit"]) == (
        "Chat",
        "Support bot",
        "manual",
        False,
        None,
    )
    assert body["profile"] == {
        "name": "Chat",
        "description": "Support bot",
        "classes": [
            {
                "name": "chat",
                "share": 1.0,
                "input": {"kind": "normal", "minimum": 1, "mean": 300.0, "std": 60.0},
                "output": {"kind": "fixed", "minimum": 1, "mean": 200.0, "std": 0.0},
                "shared_prefix_tokens": 0,
                "windows": [],
            }
        ],
        "arrival": {"kind": "poisson", "burst_requests": 0, "burst_window_s": 10.0, "burst_at_s": 0.0},
    }
    row = WorkloadProfile.objects.get(pk=body["id"])
    assert (row.organisation, row.created_by) == (organisation, user)


@pytest.mark.parametrize(
    ("payload", "fields"),
    [
        (
            {"name": "Bad", "profile": _profile(share=-1)},
            {"classes[0]": ["classes[0]: class 'chat': share must be > 0"]},
        ),
        (
            {"name": "Bad", "profile": _profile(input={"kind": "normal", "mean": 0})},
            {"classes[0]": ["classes[0].input: mean length 0.0 must be ≥ 1 token"]},
        ),
        (
            {"name": "Bad", "profile": {**_profile(), "arrival": {"kind": "burst", "burst_window_s": -1}}},
            {"burst_window_s": ["burst_window_s must be > 0"]},
        ),
        ({"name": "Bad", "profile": [1]}, {"profile": ["a profile must be a JSON object"]}),
        ({"profile": _profile()}, {"name": ["This field is required."]}),
        (
            {"name": "Bad", "profile": {"classes": [{**_profile()["classes"][0], "name": f"c{i}"} for i in range(51)]}},
            {"classes": ["the profile has 51 request classes; the limit is 50"]},
        ),
    ],
    ids=["negative share", "zero mean", "burst window", "not an object", "no name", "too many classes"],
)
def test_an_invalid_profile_is_refused_with_its_field_and_not_saved(api_client, payload, fields):
    # when
    response = api_client.post(LIST, payload, format="json")
    # then
    assert response.status_code == 400
    body = response.json()
    assert body["extra"]["fields"] == fields
    assert body["code"] in ("invalid_argument", "invalid_input")
    assert not WorkloadProfile.objects.exists()


def test_a_name_is_unique_in_the_organisation_only(api_client, stranger_client):
    # given
    api_client.post(LIST, {"name": "Chat", "profile": _profile()}, format="json")
    # when
    again = api_client.post(LIST, {"name": "Chat", "profile": _profile()}, format="json")
    elsewhere = stranger_client.post(LIST, {"name": "Chat", "profile": _profile()}, format="json")
    # then
    assert again.status_code == 400
    assert again.json()["extra"]["fields"] == {
        "name": ["your organisation already has a profile named 'Chat'; choose another name"]
    }
    assert elsewhere.status_code == 201
    assert WorkloadProfile.objects.filter(name="Chat").count() == 2


def test_update_replaces_name_and_profile(api_client):
    # given
    created = api_client.post(LIST, {"name": "Chat", "profile": _profile()}, format="json").json()
    # when
    response = api_client.put(
        _detail(created["id"]),
        {"name": "Chat v2", "profile": _profile(windows=[[9, 18]], shared_prefix_tokens=512)},
        format="json",
    )
    # then
    assert response.status_code == 200
    row = WorkloadProfile.objects.get(pk=created["id"])
    assert row.name == "Chat v2"
    assert row.profile["name"] == "Chat v2"
    assert row.profile["classes"][0]["windows"] == [[9, 18]]
    assert row.profile["classes"][0]["shared_prefix_tokens"] == 512


def test_a_bad_update_changes_nothing(api_client):
    # given
    created = api_client.post(LIST, {"name": "Chat", "profile": _profile()}, format="json").json()
    # when
    response = api_client.put(
        _detail(created["id"]), {"name": "Renamed", "profile": _profile(windows=[[20, 30]])}, format="json"
    )
    # then
    assert response.status_code == 400
    assert response.json()["extra"]["fields"] == {
        "classes[0]": ["classes[0]: class 'chat': window 20–30 must satisfy 0 ≤ start < end ≤ 24"]
    }
    row = WorkloadProfile.objects.get(pk=created["id"])
    assert row.name == "Chat"
    assert row.profile["classes"][0]["windows"] == []


def test_delete_removes_the_organisations_profile(api_client):
    # given
    created = api_client.post(LIST, {"name": "Chat", "profile": _profile()}, format="json").json()
    # when
    response = api_client.delete(_detail(created["id"]))
    # then
    assert response.status_code == 204
    assert not WorkloadProfile.objects.filter(pk=created["id"]).exists()
    assert api_client.get(_detail(created["id"])).status_code == 404


@pytest.mark.parametrize("method", ["get", "put", "delete"])
def test_another_organisations_profile_is_not_found(api_client, method):
    # given
    theirs = WorkloadProfileFactory(name="Theirs")
    # when
    response = getattr(api_client, method)(_detail(theirs.pk), {"name": "Mine", "profile": _profile()}, format="json")
    # then
    assert response.status_code == 404
    assert response.json() == {"code": "not_found", "message": f"no workload profile {theirs.pk}", "extra": {}}
    theirs.refresh_from_db()
    assert theirs.name == "Theirs"


# ---------------------------------------------------------------- CSV import

# Two classes over a morning in Beijing time (+08:00), with the aliases prompt_tokens / completion_tokens and a
# "Category" column: chat at 09:xx and 10:xx, report at 10:xx only.
GOOD_CSV = (
    "\n".join(
        [
            "Timestamp,Prompt_Tokens,Completion_Tokens,Category,user",
            *(
                f"2024-05-01T09:{minute:02d}:00+08:00,{100 + minute},{50 + minute},chat,u{minute}"
                for minute in range(0, 60, 5)
            ),
            *(
                f"2024-05-01T10:{minute:02d}:00+08:00,{120 + minute},{40 + minute},chat,u{minute}"
                for minute in range(0, 60, 5)
            ),
            *(
                f"2024-05-01T10:{minute:02d}:30+08:00,{2000 + 10 * minute},{800},report,u{minute}"
                for minute in range(0, 60, 10)
            ),
        ]
    )
    + "\n"
)


def test_import_fits_a_profile_and_keeps_the_fit_report(api_client, organisation):
    # when
    response = api_client.post(IMPORT, {"name": "Beijing morning", "file": _csv(GOOD_CSV)}, format="multipart")
    # then
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["name"], body["source"], body["has_fit"]) == ("Beijing morning", "csv", True)
    fit = body["fit"]
    # 12 chat requests at 09:xx, 12 at 10:xx and 6 reports at 10:xx, hours as written (local time)
    assert fit["requests"] == 30
    assert fit["hourly_requests"] == [0] * 9 + [12, 18] + [0] * 13
    assert fit["duration_s"] == 6_900.0  # 09:00:00 to 10:55:00
    assert fit["columns"] == {
        "timestamp": "Timestamp",
        "input_tokens": "Prompt_Tokens",
        "output_tokens": "Completion_Tokens",
        "class": "Category",
    }
    chat, report = fit["classes"]
    assert (chat["name"], chat["requests"], chat["share"], chat["windows"]) == ("chat", 24, 0.8, [[9, 11]])
    assert (report["name"], report["requests"], report["windows"]) == ("report", 6, [[10, 11]])
    # chat input: 100..155 step 5 and 120..175 step 5: mean (127.5 + 147.5) / 2 = 137.5
    assert chat["input"]["data"]["mean"] == 137.5
    assert chat["input"]["fitted"]["mean"] == 137.5
    assert set(chat["input"]["data"]) == {"mean", "std", "p50", "p90", "p99"}
    assert set(chat["input"]["fitted"]) == {"mean", "std", "p50", "p90", "p99"}
    assert 0 <= chat["input"]["ks_statistic"] <= 1
    assert len(chat["input"]["histogram"]["edges"]) == 31
    assert len(chat["input"]["histogram"]["data"]) == len(chat["input"]["histogram"]["fitted"]) == 30
    # every report answered 800 tokens: a fixed length
    assert report["output"]["kind"] == "fixed"
    assert report["output"]["data"] == {"mean": 800.0, "std": 0.0, "p50": 800.0, "p90": 800.0, "p99": 800.0}
    # the stored profile is the fitted one, valid and named after the row
    row = WorkloadProfile.objects.get(pk=body["id"])
    assert row.organisation == organisation
    assert row.profile["name"] == "Beijing morning"
    assert [c["name"] for c in row.profile["classes"]] == ["chat", "report"]
    assert row.profile["classes"][1]["windows"] == [[10, 11]]
    assert row.fit == fit


def test_import_reads_epoch_seconds_and_milliseconds_without_a_class_column(api_client):
    # given 1714554000 = 2024-05-01 09:00:00 UTC; the second row in epoch milliseconds, 1 h later
    text = "ts;input_len;output_len\n1714554000;100;10\n1714557600000;300;30\n1714557660.5;200;20\n"
    # when
    response = api_client.post(IMPORT, {"name": "Epoch", "file": _csv(text)}, format="multipart")
    # then
    assert response.status_code == 201, response.content
    fit = response.json()["fit"]
    assert fit["hourly_requests"][9:11] == [1, 2]  # UTC hours
    assert fit["duration_s"] == 3_660.5
    assert [c["name"] for c in fit["classes"]] == ["default"]
    assert fit["classes"][0]["input"]["data"]["mean"] == 200.0


@pytest.mark.parametrize(
    ("text", "messages"),
    [
        (
            "timestamp,input_tokens,output_tokens\n2024-05-01T09:00:00,100,10\n2024-05-01T09:01:00,abc,10\n",
            ["row 3: input_tokens 'abc' is not a whole number"],
        ),
        (
            "timestamp,input_tokens,output_tokens\n2024-05-01T09:00:00,100,10\n2024-05-01T09:01:00,12.5,10\n"
            "yesterday,1,1\n2024-05-01T09:03:00,5,-3\n2024-05-01T09:04:00,5,\n",
            [
                "row 3: input_tokens '12.5' is not a whole number",
                "row 4: timestamp 'yesterday' is neither ISO 8601 (e.g. 2024-05-01T10:15:00+08:00) nor Unix epoch seconds",
                "row 5: output_tokens '-3' is negative; token counts are ≥ 0",
                "row 6: output_tokens is empty",
            ],
        ),
        (
            "time,tokens,output_tokens\n1,2,3\n",
            [
                "row 1: the header has no input_tokens column (also accepted: prompt_tokens, input_len, input_length, "
                "prompt_len, prompt_length); it names time, tokens, output_tokens"
            ],
        ),
        ("", ["the file is empty: it needs a header row and one row per request"]),
        (
            "timestamp,input_tokens,output_tokens\n2024-05-01T09:00:00,100,10\n",
            ["the file has 1 request row(s); fitting a profile needs at least 2"],
        ),
    ],
    ids=["not a number", "several bad rows", "missing column", "empty file", "one request"],
)
def test_a_bad_file_is_refused_with_row_and_column_and_nothing_saved(api_client, text, messages):
    # when
    response = api_client.post(IMPORT, {"name": "Bad log", "file": _csv(text or "\n")}, format="multipart")
    # then
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_argument"
    assert body["extra"]["fields"] == {"file": messages}
    assert body["message"].startswith(messages[0])
    assert not WorkloadProfile.objects.exists()


def test_a_file_that_is_not_utf8_is_refused(api_client):
    # when "café" comes in Latin-1: é is byte 70 (0-based) after 43 bytes of header and 27 of the row
    response = api_client.post(
        IMPORT,
        {
            "name": "Latin-1",
            "file": SimpleUploadedFile(
                "log.csv",
                "timestamp,input_tokens,output_tokens,class\n2024-05-01T09:00:00,1,1,café\n".encode("latin-1"),
            ),
        },
        format="multipart",
    )
    # then
    assert response.status_code == 400
    assert response.json()["extra"]["fields"] == {
        "file": ["the file is not UTF-8 text (byte 70); save the CSV as UTF-8"]
    }
    assert not WorkloadProfile.objects.exists()


def test_a_file_over_the_limit_is_refused_before_reading_it(api_client, settings):
    # given a limit of 100 bytes and a 252-byte log
    settings.SIZING_MAX_WORKLOAD_CSV_BYTES = 100
    text = "timestamp,input_tokens,output_tokens\n" + "".join(
        f"2024-05-01T09:{minute:02d}:00,100,10\n" for minute in range(8)
    )
    # when
    response = api_client.post(IMPORT, {"name": "Big", "file": _csv(text)}, format="multipart")
    # then
    assert len(text.encode()) == 253
    assert response.status_code == 400
    message = (
        "the file is 253 bytes; the limit is 100 bytes (SIZING_MAX_WORKLOAD_CSV_BYTES): upload a sample of "
        "the log, e.g. one week"
    )
    assert response.json() == {
        "code": "invalid_argument",
        "message": message,
        "extra": {"size_bytes": 253, "limit_bytes": 100, "fields": {"file": [message]}},
    }
    assert not WorkloadProfile.objects.exists()


def test_an_import_under_a_taken_name_is_refused(api_client):
    # given
    api_client.post(LIST, {"name": "Chat", "profile": _profile()}, format="json")
    # when
    response = api_client.post(IMPORT, {"name": "Chat", "file": _csv(GOOD_CSV)}, format="multipart")
    # then
    assert response.status_code == 400
    assert list(response.json()["extra"]["fields"]) == ["name"]
    assert WorkloadProfile.objects.get().source == "manual"


def test_import_needs_a_file(api_client):
    # when
    response = api_client.post(IMPORT, {"name": "No file"}, format="multipart")
    # then
    assert response.status_code == 400
    assert list(response.json()["extra"]["fields"]) == ["file"]
    assert not WorkloadProfile.objects.exists()


# ---------------------------------------------------------------- preview


def test_preview_of_the_sample_gives_its_day_and_busiest_hour(api_client):
    # when
    response = api_client.post(PREVIEW, {"profile": profile_to_dict(sample_profile())}, format="json")
    # then
    assert response.status_code == 200
    body = response.json()
    assert body["busiest_hour"] == 10
    assert body["busiest_hour_share"] == pytest.approx(0.65 / 24 + 0.25 / 2)
    assert len(body["daily_curve"]) == 24
    assert sum(body["daily_curve"]) == pytest.approx(1.0)
    qa, reports, archive = body["classes"]
    # at 10:00: Q&A (0.65/24) / (0.65/24 + 0.125) = 13/73, reports 60/73, archive 0
    assert [c["mix_at_busiest_hour"] for c in body["classes"]] == pytest.approx([13 / 73, 60 / 73, 0.0])
    assert qa["hourly"] == pytest.approx([0.65 / 24] * 24)
    assert reports["hourly"] == pytest.approx([0.0] * 10 + [0.125, 0.125] + [0.0] * 12)
    assert archive["active_hours"] == [14, 15]
    assert [(c["expected_input_tokens"], c["expected_output_tokens"]) for c in body["classes"]] == [
        (128.0, 256.0),
        (2048.0, 1024.0),
        (3500.0, 512.0),
    ]
    assert [c["share"] for c in body["classes"]] == pytest.approx([0.65, 0.25, 0.10])
    assert not WorkloadProfile.objects.exists()


def test_preview_counts_the_shared_prefix_in_the_input(api_client):
    # when a 1000-token system prompt precedes questions of ≈300 tokens
    body = api_client.post(PREVIEW, {"profile": _profile(shared_prefix_tokens=1000)}, format="json").json()
    # then
    assert body["classes"][0]["expected_input_tokens"] == 1300.0
    assert body["classes"][0]["shared_prefix_tokens"] == 1000


def test_preview_of_an_invalid_profile_names_the_field(api_client):
    # when
    response = api_client.post(
        PREVIEW, {"profile": _profile(output={"kind": "lognormal", "mean": 10, "std": -1})}, format="json"
    )
    # then
    assert response.status_code == 400
    assert response.json()["extra"]["fields"] == {
        "classes[0]": ["classes[0].output: standard deviation -1.0 must be ≥ 0"]
    }
