"""The organisation's users page (admins add users with a role and a one-time password, change roles, deactivate;
the last admin stays) and what each role's pages show."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from sizing.models import Membership, Organisation


@pytest.fixture
def admin(organisation: Organisation):
    account = get_user_model().objects.create_user(username="boss", password="correct horse battery")
    Membership.objects.create(user=account, organisation=organisation, role="admin")
    return account


def _client(user, language: str = "en") -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(user)
    return client


def _signs_in(username: str, password: str) -> bool:
    """Through the login form, as a person would (axes counts the failures)."""
    response = Client().post("/login/", {"username": username, "password": password})
    return response.status_code == 302


def _member(organisation: Organisation, name: str, role: str):
    account = get_user_model().objects.create_user(username=name, password="correct horse battery")
    Membership.objects.create(user=account, organisation=organisation, role=role)
    return account


def test_an_admin_adds_a_user_who_signs_in_with_the_one_time_password(admin, organisation):
    # when
    response = _client(admin).post("/organisation/users/", {"username": "li.wei", "email": "", "role": "sales"})

    # then the password is shown once, works, and the user is sales in the admin's organisation
    assert response.status_code == 201
    page = response.content.decode()
    password = page.split('id="one-time-password-value" lang="en">')[1].split("<")[0]
    assert _signs_in("li.wei", password)
    membership = Membership.objects.get(user__username="li.wei")
    assert (membership.organisation, membership.role) == (organisation, "sales")
    assert password not in _client(admin).get("/organisation/users/").content.decode()


@pytest.mark.parametrize(
    ("username", "message"),
    [("boss", "The user name boss is taken"), ("bad name!", "A user name has letters, digits and @ . + - _ only")],
)
def test_a_refused_user_says_why_and_saves_nothing(admin, username, message):
    response = _client(admin).post("/organisation/users/", {"username": username, "role": "engineer"})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert get_user_model().objects.count() == 1


def test_roles_change_and_the_last_admin_stays(admin, organisation):
    engineer = _member(organisation, "eng", "engineer")
    client = _client(admin, "zh-hans")

    # when the admin makes the engineer a signer, then tries to demote themself
    client.post(f"/organisation/users/{engineer.pk}/", {"action": "role", "role": "signer"})
    refused = client.post(f"/organisation/users/{admin.pk}/", {"action": "role", "role": "engineer"}, follow=True)
    deactivate_self = client.post(f"/organisation/users/{admin.pk}/", {"action": "deactivate"}, follow=True)

    # then the signer is a signer and the last admin is still an active admin, told why in Chinese
    assert Membership.objects.get(user=engineer).role == "signer"
    assert Membership.objects.get(user=admin).role == "admin"
    assert get_user_model().objects.get(pk=admin.pk).is_active
    assert "这是组织最后一位有效的管理员" in refused.content.decode()
    assert "这是组织最后一位有效的管理员" in deactivate_self.content.decode()


def test_a_deactivated_user_cannot_sign_in(admin, organisation):
    engineer = _member(organisation, "eng", "engineer")
    assert _signs_in("eng", "correct horse battery")
    _client(admin).post(f"/organisation/users/{engineer.pk}/", {"action": "activate"})
    _client(admin).post(f"/organisation/users/{engineer.pk}/", {"action": "deactivate"})
    assert not _signs_in("eng", "correct horse battery")


def test_another_organisations_user_is_not_found_and_non_admins_are_refused(admin, organisation, user):
    other = Organisation.objects.create(name="Other")
    stranger = _member(other, "stranger", "engineer")
    assert _client(admin).post(f"/organisation/users/{stranger.pk}/", {"action": "deactivate"}).status_code == 404
    assert get_user_model().objects.get(pk=stranger.pk).is_active
    assert _client(user).get("/organisation/users/").status_code == 403  # the `user` fixture is an engineer


@pytest.mark.parametrize(
    ("role", "shown", "hidden"),
    [
        (
            "sales",
            ["/reports/", "/deployments/", "/account/api-keys/"],
            ["/load-tests/", "/benchmarks/", "/endpoints/", "/memory/", "/organisation/users/", 'id="deployment-form"'],
        ),
        ("reviewer", ["/load-tests/", "/benchmarks/", "/endpoints/"], ["/organisation/users/", 'id="deployment-form"']),
        ("engineer", ["/load-tests/", 'id="deployment-form"'], ["/organisation/users/"]),
        ("admin", ["/organisation/users/", 'id="deployment-form"'], []),
    ],
)
def test_the_pages_show_only_what_the_role_may_use(organisation, role, shown, hidden):
    page = _client(_member(organisation, f"a-{role}", role)).get("/deployments/").content.decode()
    assert [text for text in shown if text not in page] == []
    assert [text for text in hidden if text in page] == []


def test_a_refused_page_says_why_in_the_users_language(organisation):
    sales = _member(organisation, "seller", "sales")
    response = _client(sales, "zh-hans").get("/load-tests/")
    assert response.status_code == 403
    assert "您的角色（销售）不允许此操作。需要以下角色之一：管理员, 工程师" in response.content.decode()


@pytest.mark.parametrize(("role", "read_only"), [("sales", True), ("reviewer", True), ("engineer", False)])
def test_the_workloads_page_is_read_only_for_roles_that_do_not_write(organisation, role, read_only):
    page = _client(_member(organisation, f"w-{role}", role)).get("/workloads/").content.decode()
    assert ("data-read-only" in page) is read_only
    assert ('id="import-card" hidden' in page) is read_only
