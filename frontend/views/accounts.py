"""The user's API keys (create: the key shown once on the answer page, never again; revoke) and, for an
organisation's admins, its users (add with a role and a one-time password, change the role, deactivate,
set a new one-time password)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import View
from django.views.decorators.cache import never_cache
from rest_framework.exceptions import ValidationError as ApiValidationError

from sizing.estimator.errors import SizingError
from sizing.kernel.access import role_of
from sizing.kernel.apikeys import (
    api_key_create,
    api_key_get_for_user,
    api_key_list_for_user,
    api_key_revoke,
    api_key_status,
)
from sizing.models import Membership
from sizing.services.accounts import member_create, member_get, member_password_reset, member_update, members_of
from sizing.services.estimates import organisation_for_user

ROLE_DESCRIPTIONS = {
    "admin": gettext_lazy("Endpoints, the organisation's users and models; everything an engineer does"),
    "engineer": gettext_lazy(
        "Everything in the organisation: deployments, measurements, runs, load tests, report drafts"
    ),
    "reviewer": gettext_lazy("Reads everything; returns or approves report versions in review"),
    "signer": gettext_lazy("Reads everything; signs approved report versions (and reviews)"),
    "sales": gettext_lazy("Reads deployments and reports; runs quick estimates and quotes"),
}


def refusal_text(error: SizingError) -> str:
    """An account service's refusal in the active language."""
    extra = error.extra or {}
    texts = {
        "username_length": _("Give a user name of 1 to 150 characters"),
        "username_characters": _("A user name has letters, digits and @ . + - _ only"),
        "username_taken": _("The user name %(name)s is taken") % {"name": extra.get("username", "")},
        "role_unknown": _("Choose one of the roles"),
        "last_admin": _("This is the organisation's last active admin: make someone else an admin first"),
    }
    return texts.get(str(extra.get("reason")), error.message)


class ApiKeyForm(forms.Form):
    name = forms.CharField(max_length=100, label=gettext_lazy("Name"))


def _key_rows(request: HttpRequest) -> list[dict[str, Any]]:
    labels = {"active": _("Active"), "revoked": _("Revoked"), "expired": _("Expired")}
    return [
        {"key": key, "status": api_key_status(key), "status_label": labels[api_key_status(key)]}
        for key in api_key_list_for_user(user=request.user)
    ]


@method_decorator(never_cache, name="dispatch")
class ApiKeyPageView(LoginRequiredMixin, View):
    """GET: the user's keys; POST: create one and show it once (the answer is not cached)."""

    template_name = "frontend/api_keys.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        return self._render(request, ApiKeyForm())

    def post(self, request: HttpRequest) -> HttpResponse:
        form = ApiKeyForm(request.POST)
        if form.is_valid():
            try:
                row, key = api_key_create(user=request.user, name=form.cleaned_data["name"])
            except ApiValidationError as error:
                detail = error.detail if isinstance(error.detail, dict) else {}
                form.add_error(
                    "name",
                    _("You have the most active keys allowed: revoke one you no longer use")
                    if "active keys" in str(detail.get("name", ""))
                    else str(detail.get("name", "")),
                )
            else:
                return self._render(request, ApiKeyForm(), created=row, created_key=key, status=201)
        return self._render(request, form, status=400)

    def _render(
        self, request: HttpRequest, form: ApiKeyForm, *, created: Any = None, created_key: str = "", status: int = 200
    ) -> HttpResponse:
        context = {
            "form": form,
            "rows": _key_rows(request),
            "created": created,
            "created_key": created_key,
            "role": role_of(request.user),
            "api_root": request.build_absolute_uri("/api/v1/"),
            "docs_url": reverse("swagger-ui"),
        }
        return render(request, self.template_name, context, status=status)


class ApiKeyRevokeView(LoginRequiredMixin, View):
    def post(self, request: HttpRequest, key_id: int) -> HttpResponse:
        key = api_key_get_for_user(user=request.user, key_id=key_id)
        if key is None:
            raise Http404(_("No such API key"))
        api_key_revoke(key=key)
        messages.success(
            request, _("The key %(name)s is revoked: scripts using it are refused from now on") % {"name": key.name}
        )
        return HttpResponseRedirect(reverse("frontend:api-keys"))


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150, label=gettext_lazy("User name"))
    email = forms.EmailField(required=False, label=gettext_lazy("Email (optional)"))
    role = forms.ChoiceField(
        choices=Membership.Role.choices, initial=Membership.Role.ENGINEER, label=gettext_lazy("Role")
    )


def _role_rows() -> list[tuple[str, str, str]]:
    return [(value, label, str(ROLE_DESCRIPTIONS[value])) for value, label in Membership.Role.choices]


@method_decorator(never_cache, name="dispatch")
class UserListPageView(LoginRequiredMixin, View):
    """GET (admins): the organisation's users; POST: add one (the one-time password is shown on the answer)."""

    template_name = "frontend/users.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        return self._render(request, MemberForm())

    def post(self, request: HttpRequest) -> HttpResponse:
        form = MemberForm(request.POST)
        if form.is_valid():
            try:
                membership, password = member_create(
                    organisation=organisation_for_user(user=request.user), **form.cleaned_data
                )
            except SizingError as error:
                field = next(iter((error.extra or {}).get("fields") or {}), None)
                form.add_error(field if field in form.fields else None, refusal_text(error))
            else:
                return self._render(request, MemberForm(), password_for=membership, password=password, status=201)
        return self._render(request, form, status=400)

    def _render(
        self,
        request: HttpRequest,
        form: MemberForm,
        *,
        password_for: Membership | None = None,
        password: str = "",
        status: int = 200,
    ) -> HttpResponse:
        organisation = organisation_for_user(user=request.user)
        context = {
            "form": form,
            "members": members_of(organisation=organisation),
            "organisation": organisation,
            "roles": _role_rows(),
            "password_for": password_for,
            "password": password,
        }
        return render(request, self.template_name, context, status=status)


@method_decorator(never_cache, name="dispatch")
class UserEditView(LoginRequiredMixin, View):
    """POST (admins): `action` = role (with `role`), deactivate, activate or password."""

    def post(self, request: HttpRequest, user_id: int) -> HttpResponse:
        membership = member_get(organisation=organisation_for_user(user=request.user), user_id=user_id)
        if membership is None:
            raise Http404(_("No such user in your organisation"))
        action = str(request.POST.get("action") or "")
        name = membership.user.get_username()
        try:
            if action == "role":
                member_update(membership=membership, role=str(request.POST.get("role") or ""))
                messages.success(
                    request,
                    _("%(name)s is now: %(role)s") % {"name": name, "role": Membership.Role(membership.role).label},
                )
            elif action in ("deactivate", "activate"):
                member_update(membership=membership, active=action == "activate")
                messages.success(
                    request,
                    (
                        _("%(name)s can sign in again")
                        if action == "activate"
                        else _("%(name)s can no longer sign in; their API keys stop working")
                    )
                    % {"name": name},
                )
            elif action == "password":
                password = member_password_reset(membership=membership)
                view = UserListPageView()
                return view._render(request, MemberForm(), password_for=membership, password=password)
            else:
                messages.error(request, _("Unknown action"))
        except SizingError as error:
            messages.error(request, refusal_text(error))
        return HttpResponseRedirect(reverse("frontend:users"))
