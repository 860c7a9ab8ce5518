"""Registered inference endpoints through the API (issue 7, part 1): sign-in, the organisation's walls, admins write
and members read (403 in the API's error shape), validation with nothing saved, and the API key: encrypted at rest,
never shown back (responses, list, detail, the Django admin) nor logged nor in Django's error reports, decrypted only
by endpoint_api_key, kept or cleared on update, and rotated to new key material."""

from __future__ import annotations

import io
import logging

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client, override_settings
from django.views.debug import ExceptionReporter
from rest_framework.test import APIClient

from benchmarks_app.kernel import endpoint_secrets
from benchmarks_app.kernel.endpoint_secrets import SecretUnreadable, derived_key, secret_decrypt, secret_encrypt
from benchmarks_app.models import Endpoint
from benchmarks_app.services.endpoints import endpoint_api_key, endpoint_create, endpoint_keys_rotate
from sizing.estimator.errors import SizingError
from sizing.kernel.access import may_name
from sizing.models import Membership, Organisation
from sizing.services.estimates import demo_setup

pytestmark = pytest.mark.django_db

KEY = "sk-live-Zq8v3T1xWp0rKs9u"  # what an integrator pastes: must never come back
LIST = "/api/v1/endpoints/"
SIM = {
    "name": "Simulator",
    "base_url": "http://127.0.0.1:8001",
    "kind": "vllm",
    "model_name": "llama-3-8b",
    "metrics_url": "http://127.0.0.1:8001/metrics",
}


def _detail(endpoint_id: int) -> str:
    return f"{LIST}{endpoint_id}/"


@pytest.fixture
def admin_user(organisation: Organisation):
    account = get_user_model().objects.create_user(username="lead", password="correct horse battery")
    Membership.objects.create(user=account, organisation=organisation, role=Membership.Role.ADMIN)
    return account


@pytest.fixture
def admin_client(admin_user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=admin_user)
    return client


@pytest.fixture
def other_endpoint(db) -> Endpoint:
    """An endpoint of another organisation, with a key."""
    other = Organisation.objects.create(name="Globex")
    account = get_user_model().objects.create_user(username="globex-admin")
    Membership.objects.create(user=account, organisation=other, role=Membership.Role.ADMIN)
    return endpoint_create(organisation=other, user=account, data={**SIM, "name": "Globex vLLM", "api_key": "gx-1"})


def _created(client: APIClient, **change) -> dict:
    response = client.post(LIST, {**SIM, **change}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


# --- who may do what ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", LIST),
        ("post", LIST),
        ("get", _detail(1)),
        ("patch", _detail(1)),
        ("put", _detail(1)),
        ("delete", _detail(1)),
    ],
)
def test_every_endpoint_api_needs_a_sign_in(db, method, url):
    response = getattr(APIClient(), method)(url, {**SIM, "api_key": KEY}, format="json")
    assert response.status_code in (401, 403)
    assert Endpoint.objects.count() == 0


def test_an_admin_registers_an_endpoint_and_members_see_it(admin_client, api_client, admin_user):
    # when
    created = _created(admin_client, api_key=KEY)

    # then
    assert created == {
        "id": created["id"],
        "url": _detail(created["id"]),
        "name": "Simulator",
        "kind": "vllm",
        "base_url": "http://127.0.0.1:8001",
        "model_name": "llama-3-8b",
        "metrics_url": "http://127.0.0.1:8001/metrics",
        "failure_command": [],
        "has_api_key": True,
        "created_by": "lead",
        "created_at": created["created_at"],
        "updated_at": created["updated_at"],
    }
    assert api_client.get(LIST).json()["results"] == [created]
    assert api_client.get(_detail(created["id"])).json() == created


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", LIST, {**SIM, "name": "Member's", "api_key": KEY}),
        ("put", "detail", {**SIM, "name": "Renamed"}),
        ("patch", "detail", {"name": "Renamed"}),
        ("patch", "detail", {"clear_api_key": True}),
        ("delete", "detail", None),
    ],
)
def test_a_member_cannot_write_endpoints(admin_client, api_client, method, path, body):
    # given an endpoint an admin registered
    created = _created(admin_client, api_key=KEY)
    url = _detail(created["id"]) if path == "detail" else path

    # when a member tries to change it
    response = getattr(api_client, method)(url, body, format="json")

    # then a 403 in the API's error shape, and nothing changed
    assert response.status_code == 403
    assert response.json() == {
        "code": "permission_denied",
        "message": "your role in the organisation (engineer) does not allow this; it needs: admin",
        "extra": {},
    }
    assert KEY not in response.content.decode()
    assert [(e.name, e.has_api_key) for e in Endpoint.objects.all()] == [("Simulator", True)]


def test_a_superuser_counts_as_an_admin(organisation, user):
    # given the member made a superuser (the operator), with no admin role
    user.is_superuser = True
    user.save()
    client = APIClient()
    client.force_authenticate(user=user)

    # then
    assert _created(client)["name"] == "Simulator"


def test_who_is_an_admin(organisation, user, admin_user):
    staff = get_user_model().objects.create_user(username="staff", is_staff=True)
    Membership.objects.create(user=staff, organisation=organisation)
    loner = get_user_model().objects.create_user(username="loner")
    may_register = [may_name(u, "benchmarks:endpoint-list", "POST") for u in (admin_user, user, staff, loner, None)]
    assert may_register == [True, False, False, False, False]
    assert Membership.objects.get(user=user).role == "engineer"


def test_the_demo_user_is_an_admin_of_the_demo_organisation(db):
    username, _password = demo_setup(organisation_name="Demo Integrator", password="demo-pass-123")
    membership = Membership.objects.get(user__username=username)
    assert (membership.organisation.name, membership.role) == ("Demo Integrator", "admin")


def test_an_organisation_sees_only_its_own_endpoints(admin_client, api_client, other_endpoint):
    # given
    own = _created(admin_client)

    # then
    assert [e["name"] for e in api_client.get(LIST).json()["results"]] == ["Simulator"]
    for method, body in (("get", None), ("patch", {"name": "Mine now"}), ("put", SIM), ("delete", None)):
        response = getattr(admin_client, method)(_detail(other_endpoint.pk), body, format="json")
        assert response.status_code == 404
        assert response.json()["code"] == "not_found"
    other_endpoint.refresh_from_db()
    assert (other_endpoint.name, endpoint_api_key(other_endpoint)) == ("Globex vLLM", "gx-1")
    assert api_client.get(_detail(own["id"])).status_code == 200


# --- validation --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        ({"base_url": "ftp://10.0.0.5:8000"}, "base_url", "url_scheme"),
        ({"base_url": "file:///etc/passwd"}, "base_url", "url_scheme"),
        ({"base_url": "http://admin:hunter2@10.0.0.5:8000"}, "base_url", "url_credentials"),
        ({"base_url": "http://token@10.0.0.5:8000"}, "base_url", "url_credentials"),
        ({"base_url": "http://10.0.0.5:8000/#x"}, "base_url", "url_fragment"),
        ({"base_url": "http://10.0.0.5:8000?x=1"}, "base_url", "url_query"),
        ({"base_url": "http://10.0.0.5:8000/v1"}, "base_url", "url_v1"),
        ({"base_url": "http://10.0.0.5:99999"}, "base_url", "url_malformed"),
        ({"base_url": "http://"}, "base_url", "url_host"),
        ({"base_url": "http://10.0.0.5 :8000"}, "base_url", "url_spaces"),
        ({"base_url": ""}, "base_url", None),
        ({"metrics_url": "https://u:p@10.0.0.5/metrics"}, "metrics_url", "url_credentials"),
        ({"metrics_url": "gopher://10.0.0.5/metrics"}, "metrics_url", "url_scheme"),
        ({"name": "  "}, "name", None),
        ({"model_name": ""}, "model_name", None),
        ({"kind": "ollama"}, "kind", None),
        ({"api_key": "sk-abc\ndef"}, "api_key", "key_characters"),
    ],
)
def test_a_bad_endpoint_is_a_400_naming_the_field_and_nothing_is_saved(admin_client, change, field, reason):
    # when
    response = admin_client.post(LIST, {**SIM, "api_key": KEY, **change}, format="json")

    # then
    assert response.status_code == 400, response.content
    body = response.json()
    assert field in body["extra"]["fields"]
    if reason:
        assert (body["code"], body["extra"]["reason"]) == ("invalid_argument", reason)
    assert KEY not in response.content.decode()
    assert Endpoint.objects.count() == 0


def test_a_duplicate_name_is_refused_in_the_same_organisation_only(admin_client, other_endpoint):
    _created(admin_client, name="Globex vLLM")  # another organisation's name is free
    response = admin_client.post(LIST, {**SIM, "name": "Globex vLLM", "api_key": KEY}, format="json")
    assert response.status_code == 400
    assert response.json()["extra"]["reason"] == "name_taken"
    assert Endpoint.objects.filter(name="Globex vLLM").count() == 2
    renamed = admin_client.patch(
        _detail(Endpoint.objects.get(name="Globex vLLM", organisation__name="Acme Integrator").pk),
        {"name": "Globex vLLM"},
        format="json",
    )
    assert renamed.status_code == 200  # its own name is not a duplicate


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8001",
        "http://localhost:8000",
        "http://[::1]:8000",
        "http://10.1.2.3:8000",
        "http://192.168.0.7",
        "http://vllm-svc:8000",
        "https://gpu-01.internal.example/llm",
        "http://169.254.10.10:8000",
    ],
)
def test_private_and_loopback_addresses_are_allowed(admin_client, url):
    assert _created(admin_client, base_url=url + "/")["base_url"] == url


# --- the API key -------------------------------------------------------------------------------------------------


def test_the_key_is_never_shown_back_nor_logged(admin_client, api_client, caplog):
    # given every logger recording
    caplog.set_level(logging.DEBUG)

    # when an admin registers an endpoint with a key, reads it back, changes it, and a bad request repeats the key
    created = admin_client.post(LIST, {**SIM, "api_key": KEY}, format="json")
    listed = api_client.get(LIST)
    detail = api_client.get(_detail(created.json()["id"]))
    patched = admin_client.patch(
        _detail(created.json()["id"]), {"model_name": "llama-3-8b-instruct", "api_key": KEY}, format="json"
    )
    refused = admin_client.post(LIST, {**SIM, "name": "Again", "base_url": "ftp://x", "api_key": KEY}, format="json")
    forbidden = api_client.post(LIST, {**SIM, "name": "Member's", "api_key": KEY}, format="json")

    # then
    assert [r.status_code for r in (created, listed, detail, patched, refused, forbidden)] == [
        201,
        200,
        200,
        200,
        400,
        403,
    ]
    for response in (created, listed, detail, patched, refused, forbidden):
        assert KEY not in response.content.decode()
        assert "api_key_encrypted" not in response.content.decode()
    assert detail.json()["has_api_key"] is True
    assert caplog.records  # the 400 and 403 are logged by django.request
    for record in caplog.records:
        assert KEY not in record.getMessage()
        assert KEY not in repr(record.args)
        assert KEY not in repr(record.__dict__)
    # at rest: encrypted, and neither str nor repr names it
    stored = Endpoint.objects.get()
    assert stored.api_key_encrypted
    assert KEY not in stored.api_key_encrypted
    assert KEY not in str(stored)
    assert KEY not in repr(stored)
    assert endpoint_api_key(stored) == KEY


def test_the_admin_change_page_does_not_show_the_key(admin_client, organisation):
    # given an endpoint with a key, and a signed-in superuser in the Django admin
    endpoint = Endpoint.objects.get(pk=_created(admin_client, api_key=KEY)["id"])
    operator = get_user_model().objects.create_superuser(username="operator", password="x" * 12)
    browser = Client()
    browser.force_login(operator)

    # when
    change = browser.get(f"/admin/benchmarks_app/endpoint/{endpoint.pk}/change/")
    changelist = browser.get("/admin/benchmarks_app/endpoint/")

    # then
    assert change.status_code == 200
    assert changelist.status_code == 200
    for page in (change.content.decode(), changelist.content.decode()):
        assert KEY not in page
        assert endpoint.api_key_encrypted not in page
    assert 'name="api_key_encrypted"' not in change.content.decode()
    assert 'name="base_url"' in change.content.decode()

    # and the admin's form applies the URL rules too
    posted = browser.post(
        f"/admin/benchmarks_app/endpoint/{endpoint.pk}/change/",
        {
            "organisation": organisation.pk,
            "name": "Simulator",
            "base_url": "http://u:p@127.0.0.1:8001",
            "kind": "vllm",
            "model_name": "llama-3-8b",
            "metrics_url": "",
        },
    )
    assert posted.status_code == 200  # the form again, with the error
    endpoint.refresh_from_db()
    assert endpoint.base_url == "http://127.0.0.1:8001"
    assert endpoint_api_key(endpoint) == KEY


@override_settings(DEBUG=False)
def test_a_crash_while_saving_leaves_the_key_out_of_djangos_error_report(admin_client, monkeypatch, caplog):
    # given encryption failing unexpectedly inside the real chain (a 500), reported as Django's AdminEmailHandler
    # would
    def broken() -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(endpoint_secrets, "_fernet", broken)
    admin_client.raise_request_exception = False
    caplog.set_level(logging.ERROR, logger="django.request")

    # when
    response = admin_client.post(LIST, {**SIM, "api_key": KEY}, format="json")
    form_post = admin_client.post(LIST, {**SIM, "api_key": KEY})  # form-encoded: request.POST holds it

    # then
    assert (response.status_code, form_post.status_code) == (500, 500)
    records = [r for r in caplog.records if r.exc_info]
    assert len(records) == 2
    for record in records:
        report = ExceptionReporter(record.request, *record.exc_info, is_email=True)
        text = report.get_traceback_text()
        assert "disk on fire" in text
        assert KEY not in text
        assert KEY not in report.get_traceback_html()
    assert Endpoint.objects.count() == 0


def test_a_service_crash_report_hides_the_key(organisation, admin_user, monkeypatch):
    monkeypatch.setattr(endpoint_secrets, "_fernet", lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError) as raised:
        endpoint_create(organisation=organisation, user=admin_user, data={**SIM, "api_key": KEY})
    with override_settings(DEBUG=False):
        report = ExceptionReporter(None, raised.type, raised.value, raised.tb)
        text, html = report.get_traceback_text(), report.get_traceback_html()
    assert "endpoint_create" in text
    assert "secret_encrypt" in html
    assert KEY not in text
    assert KEY not in html


def test_update_keeps_replaces_and_clears_the_key(admin_client):
    # given
    endpoint_id = _created(admin_client, api_key=KEY)["id"]

    def stored_key() -> str | None:
        return endpoint_api_key(Endpoint.objects.get(pk=endpoint_id))

    # when an update names no key, or an empty one, the key is kept
    assert admin_client.patch(_detail(endpoint_id), {"model_name": "m2"}, format="json").json()["has_api_key"]
    assert admin_client.patch(_detail(endpoint_id), {"api_key": ""}, format="json").json()["has_api_key"]
    put = admin_client.put(_detail(endpoint_id), {**SIM, "name": "Sim", "metrics_url": ""}, format="json")
    assert (put.status_code, put.json()["has_api_key"], put.json()["name"]) == (200, True, "Sim")
    assert stored_key() == KEY

    # a new key replaces it
    admin_client.patch(_detail(endpoint_id), {"api_key": " sk-new-2 "}, format="json")
    assert stored_key() == "sk-new-2"

    # a new key and clear_api_key at once is refused, and nothing changes
    both = admin_client.patch(
        _detail(endpoint_id), {"api_key": "sk-3", "clear_api_key": True, "name": "X"}, format="json"
    )
    assert (both.status_code, both.json()["extra"]["reason"]) == (400, "key_conflict")
    assert (Endpoint.objects.get(pk=endpoint_id).name, stored_key()) == ("Sim", "sk-new-2")

    # clear_api_key removes it
    cleared = admin_client.patch(_detail(endpoint_id), {"clear_api_key": True}, format="json")
    assert cleared.json()["has_api_key"] is False
    assert stored_key() is None
    assert Endpoint.objects.get(pk=endpoint_id).api_key_encrypted == ""


def test_put_replaces_and_delete_removes(admin_client):
    endpoint_id = _created(admin_client)["id"]
    missing = admin_client.put(_detail(endpoint_id), {"name": "Only a name"}, format="json")
    assert missing.status_code == 400
    assert set(missing.json()["extra"]["fields"]) == {"base_url", "kind", "model_name"}
    replaced = admin_client.put(
        _detail(endpoint_id), {**SIM, "kind": "sglang", "metrics_url": None} | {"metrics_url": ""}, format="json"
    ).json()
    assert (replaced["kind"], replaced["metrics_url"]) == ("sglang", "")
    no_metrics = {key: value for key, value in SIM.items() if key != "metrics_url"}
    admin_client.patch(_detail(endpoint_id), {"metrics_url": "http://127.0.0.1:8001/metrics"}, format="json")
    assert admin_client.put(_detail(endpoint_id), no_metrics, format="json").json()["metrics_url"] == ""
    assert admin_client.delete(_detail(endpoint_id)).status_code == 204
    assert admin_client.get(_detail(endpoint_id)).status_code == 404
    assert Endpoint.objects.count() == 0


# --- encryption --------------------------------------------------------------------------------------------------


def test_encryption_round_trip_and_key_material(settings):
    settings.SIZING_SECRETS_KEY = ""
    token = secret_encrypt(KEY)
    assert KEY not in token
    assert secret_decrypt(token) == KEY
    assert secret_encrypt(KEY) != token  # a fresh IV each time
    # the default key derives from SECRET_KEY, so another SECRET_KEY cannot read it
    settings.SECRET_KEY = "another-secret-key-" + "x" * 40
    with pytest.raises(SecretUnreadable) as raised:
        secret_decrypt(token)
    assert KEY not in str(raised.value)
    assert derived_key("a") == derived_key("a") != derived_key("b")


def test_rotating_to_new_key_material(settings, organisation, admin_user):
    # given keys stored under the default material (SECRET_KEY)
    settings.SIZING_SECRETS_KEY = ""
    endpoint = endpoint_create(organisation=organisation, user=admin_user, data={**SIM, "api_key": KEY})
    unreadable = endpoint_create(organisation=organisation, user=admin_user, data={**SIM, "name": "Broken"})
    Endpoint.objects.filter(pk=unreadable.pk).update(api_key_encrypted="not-a-token")

    # when the operator sets SIZING_SECRETS_KEY (the old SECRET_KEY still decrypts) and rotates
    settings.SIZING_SECRETS_KEY = "new-material-" + "k" * 40
    endpoint.refresh_from_db()
    assert endpoint_api_key(endpoint) == KEY
    rotated, failed = endpoint_keys_rotate()

    # then the keys read with the new material alone
    assert (rotated, failed) == (1, [unreadable.pk])
    settings.SECRET_KEY = "replaced-secret-key-" + "z" * 40
    endpoint.refresh_from_db()
    assert endpoint_api_key(endpoint) == KEY
    # and with the old material in the fallbacks, a later change of SIZING_SECRETS_KEY still reads it
    settings.SIZING_SECRETS_KEY_FALLBACKS = [settings.SIZING_SECRETS_KEY]
    settings.SIZING_SECRETS_KEY = "newer-material-" + "n" * 40
    assert endpoint_api_key(endpoint) == KEY
    settings.SIZING_SECRETS_KEY_FALLBACKS = []
    with pytest.raises(SecretUnreadable):
        endpoint_api_key(endpoint)


def test_the_rotate_command_names_unreadable_keys_by_id_only(organisation, admin_user):
    endpoint_create(organisation=organisation, user=admin_user, data={**SIM, "api_key": KEY})
    out = io.StringIO()
    call_command("endpoint_keys_rotate", stdout=out)
    assert out.getvalue() == "1 API key(s) re-encrypted with the current key material\n"
    Endpoint.objects.update(api_key_encrypted="garbage")
    with pytest.raises(CommandError, match=r"1 key\(s\) could not be decrypted") as raised:
        call_command("endpoint_keys_rotate", stdout=io.StringIO())
    assert KEY not in str(raised.value)


def test_the_services_refuse_without_saving(organisation, admin_user):
    with pytest.raises(SizingError) as raised:
        endpoint_create(organisation=organisation, user=admin_user, data={**SIM, "base_url": "http://a:b@h"})
    assert raised.value.extra["fields"] == {"base_url": [raised.value.message]}
    assert Endpoint.objects.count() == 0
    endpoint = endpoint_create(
        organisation=organisation, user=admin_user, data={"name": "Bare", "base_url": "http://h:1", "model_name": "m"}
    )
    assert (endpoint.kind, endpoint.metrics_url, endpoint_api_key(endpoint)) == ("vllm", "", None)


# --- the failure command -----------------------------------------------------------------------------------------


def test_the_failure_command_is_stored_as_argv_from_a_list_or_a_command_line(admin_client, api_client):
    # when an admin registers it as a list, then replaces it with a command line
    created = _created(admin_client, failure_command=["kubectl", "delete", "pod", "vllm-0"])
    changed = admin_client.patch(
        _detail(created["id"]),
        {"failure_command": "kubectl -n serving delete pod 'vllm 0' --grace-period=0"},
        format="json",
    )

    # then it is stored and shown as the list of words (argv), to members too: it is not a secret
    assert created["failure_command"] == ["kubectl", "delete", "pod", "vllm-0"]
    assert changed.status_code == 200
    argv = ["kubectl", "-n", "serving", "delete", "pod", "vllm 0", "--grace-period=0"]
    assert changed.json()["failure_command"] == argv
    assert api_client.get(_detail(created["id"])).json()["failure_command"] == argv
    assert Endpoint.objects.get().failure_command == argv


def test_an_empty_failure_command_removes_it_and_put_without_one_too(admin_client):
    # given
    endpoint_id = _created(admin_client, failure_command="systemctl restart vllm")["id"]

    # when / then: "" and [] remove it, a patch without it keeps it, a put without it removes it
    assert (
        admin_client.patch(_detail(endpoint_id), {"failure_command": ""}, format="json").json()["failure_command"] == []
    )
    admin_client.patch(_detail(endpoint_id), {"failure_command": ["systemctl", "restart", "vllm"]}, format="json")
    assert admin_client.patch(_detail(endpoint_id), {"name": "Renamed"}, format="json").json()["failure_command"] == [
        "systemctl",
        "restart",
        "vllm",
    ]
    assert admin_client.put(_detail(endpoint_id), SIM, format="json").json()["failure_command"] == []
    assert (
        admin_client.patch(_detail(endpoint_id), {"failure_command": []}, format="json").json()["failure_command"] == []
    )


@pytest.mark.parametrize(
    ("value", "reason", "message"),
    [
        pytest.param(
            "kubectl delete pod 'vllm-0",
            "command_syntax",
            "the command line cannot be split into words: No closing quotation (check the quotes)",
            id="unbalanced-quote",
        ),
        pytest.param(
            ["kubectl", 3],
            "command_type",
            "the failure command is a list of strings (argv) or a command line",
            id="not-a-string",
        ),
        pytest.param(
            {"argv": ["kubectl"]},
            "command_type",
            "the failure command is a list of strings (argv) or a command line",
            id="an-object",
        ),
        pytest.param(
            ["x"] * 65, "command_too_long", "the failure command has 65 words; the limit is 64", id="65-words"
        ),
        pytest.param(
            ["kubectl", "a" * 1001],
            "command_word_too_long",
            "word 2 of the failure command has 1001 characters; the limit is 1000",
            id="a-long-word",
        ),
        pytest.param(
            ["", "delete"],
            "command_program",
            "the failure command's first word (the program to run) is empty",
            id="no-program",
        ),
    ],
)
def test_a_bad_failure_command_is_refused_and_nothing_saved(admin_client, value, reason, message):
    # when
    response = admin_client.post(LIST, {**SIM, "failure_command": value}, format="json")

    # then
    assert response.status_code == 400
    body = response.json()
    assert (body["code"], body["message"], body["extra"]["reason"]) == ("invalid_argument", message, reason)
    assert body["extra"]["fields"] == {"failure_command": [message]}
    assert Endpoint.objects.count() == 0


def test_a_nul_in_the_failure_command_is_refused_by_the_json_parser_naming_the_word(admin_client):
    # when: a JSON body with \u0000 never reaches the service (which refuses it too, for other callers)
    response = admin_client.post(LIST, {**SIM, "failure_command": ["kubectl", "delete\x00pod"]}, format="json")

    # then
    assert response.status_code == 400
    message = "failure_command[1] holds a NUL character (\\u0000), which cannot be stored; remove it"
    assert response.json() == {
        "code": "invalid_input",
        "message": f"failure_command[1]: {message}",
        "extra": {"fields": {"failure_command[1]": [message]}},
    }
    assert Endpoint.objects.count() == 0


def test_the_limits_of_a_failure_command_are_inclusive(admin_client):
    argv = ["x" * 1000] + ["y"] * 63  # 64 words, the first of 1,000 characters
    assert _created(admin_client, failure_command=argv)["failure_command"] == argv
