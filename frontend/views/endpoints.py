"""Server-rendered page of the organisation's inference endpoints (issue 7, part 1): every member sees the list (name,
kind, model, base URL, metrics URL, whether an API key is set); admins (sizing.kernel.access) also register, change
and delete them, and a member's write is a 403. Another organisation's id is a 404. The writes go through
benchmarks_app.services.endpoints, whose refusals come back as the page again with the reason under its field (in
the user's language, from the refusal's `reason`), status 400, and nothing saved.

The API key is never shown back: the form's key input is always rendered empty (also when the page comes back with
an error), the list says "set" or "not set", and the views are marked so that Django's error reports leave it out.

The failure command (what a failure-injection load test runs on a real deployment) is typed as one command line; the
service splits it into argv with shlex.split, and the page shows it back joined with shlex.join."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.views import View
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables

from benchmarks_app.kernel.endpoint_urls import URL_MAX_LENGTH
from benchmarks_app.models import Endpoint
from benchmarks_app.selectors.endpoints import endpoint_get_for_organisation, endpoint_list_for_organisation
from benchmarks_app.services.endpoints import (
    API_KEY_MAX_LENGTH,
    FAILURE_COMMAND_MAX_ARG_LENGTH,
    FAILURE_COMMAND_MAX_ARGS,
    MODEL_NAME_MAX_LENGTH,
    NAME_MAX_LENGTH,
    endpoint_create,
    endpoint_delete,
    endpoint_update,
)
from sizing.estimator.errors import SizingError
from sizing.kernel.access import may_name
from sizing.models import Organisation
from sizing.services.estimates import organisation_for_user

SIMULATOR_URL = "http://127.0.0.1:8001"
SIMULATOR_COMMAND = "python manage.py simserve --deployment ID --port 8001"
FAILURE_COMMAND_EXAMPLE = "kubectl delete pod vllm-0"
FAILURE_COMMAND_LINE_MAX_LENGTH = FAILURE_COMMAND_MAX_ARGS * (FAILURE_COMMAND_MAX_ARG_LENGTH + 3)  # quotes, a space


class EndpointForm(forms.Form):
    """Typed input; the services check the rest (unique name, the URL rules, the key)."""

    name = forms.CharField(max_length=NAME_MAX_LENGTH)
    kind = forms.ChoiceField(choices=Endpoint.Kind.choices, initial=Endpoint.Kind.VLLM)
    base_url = forms.CharField(max_length=URL_MAX_LENGTH)
    model_name = forms.CharField(max_length=MODEL_NAME_MAX_LENGTH)
    metrics_url = forms.CharField(max_length=URL_MAX_LENGTH, required=False)
    # a command line; the service splits it into argv (shlex.split) and checks the words
    failure_command = forms.CharField(max_length=FAILURE_COMMAND_LINE_MAX_LENGTH, required=False, strip=True)
    api_key = forms.CharField(max_length=API_KEY_MAX_LENGTH, required=False, widget=forms.PasswordInput)
    clear_api_key = forms.BooleanField(required=False)


def _reason_texts() -> dict[str, Callable[[Mapping[str, Any]], str]]:
    """Each refusal of the endpoint services (by its `reason`) in the active language, from its extra."""
    return {
        "name_required": lambda extra: _("give the endpoint a name"),
        "name_too_long": lambda extra: _("the name has more than %(limit)s characters") % {"limit": NAME_MAX_LENGTH},
        "name_taken": lambda extra: _("your organisation already has an endpoint named “%(name)s”; choose another name")
        % {"name": extra.get("name", "")},
        "url_required": lambda extra: _("give the endpoint's base URL, e.g. http://10.0.0.5:8000"),
        "url_too_long": lambda extra: _("the URL has more than %(limit)s characters") % {"limit": URL_MAX_LENGTH},
        "url_spaces": lambda extra: _("the URL contains spaces or control characters"),
        "url_malformed": lambda extra: _("not a URL: write it like http://10.0.0.5:8000"),
        "url_scheme": lambda extra: _("the URL must start with http:// or https://"),
        "url_credentials": lambda extra: _("no user name or password in the URL: enter the API key in its own field"),
        "url_fragment": lambda extra: _("no #fragment in the URL"),
        "url_host": lambda extra: _("the URL names no valid host: write it like http://10.0.0.5:8000"),
        "url_query": lambda extra: _("the base URL takes no query string"),
        "url_v1": lambda extra: _("give the server's root without /v1 (the load tests add /v1/...)"),
        "kind_unknown": lambda extra: _("choose the kind of server"),
        "model_required": lambda extra: _("give the model name the server serves (as GET /v1/models lists it)"),
        "model_too_long": lambda extra: _("the model name has more than %(limit)s characters")
        % {"limit": MODEL_NAME_MAX_LENGTH},
        "key_too_long": lambda extra: _("the API key has more than %(limit)s characters")
        % {"limit": API_KEY_MAX_LENGTH},
        "key_characters": lambda extra: _("the API key contains line breaks or control characters"),
        "key_conflict": lambda extra: _("either enter a new API key or remove the stored one, not both"),
        "command_syntax": lambda extra: _("the command line cannot be split into words: check the quotes"),
        "command_type": lambda extra: _("write the command line, e.g. %(example)s")
        % {"example": FAILURE_COMMAND_EXAMPLE},
        "command_too_long": lambda extra: _("the command has %(count)s words; the limit is %(limit)s")
        % {"count": extra.get("count", "?"), "limit": FAILURE_COMMAND_MAX_ARGS},
        "command_word_too_long": lambda extra: _(
            "word %(word)s of the command has %(length)s characters; the limit is %(limit)s"
        )
        % {"word": extra.get("word", "?"), "length": extra.get("length", "?"), "limit": FAILURE_COMMAND_MAX_ARG_LENGTH},
        "command_nul": lambda extra: _("word %(word)s of the command contains a NUL character")
        % {"word": extra.get("word", "?")},
        "command_program": lambda extra: _("the command's first word, the program to run, is empty"),
    }


def refusal_text(error: SizingError) -> str:
    """A service refusal in the active language (its English message when the reason is not known here)."""
    extra = error.extra or {}
    words = _reason_texts().get(str(extra.get("reason")))
    return words(extra) if words else error.message


def _service_error(form: EndpointForm, error: SizingError) -> None:
    """The refusal under its field. A URL refused for the password in it comes back empty (not shown back)."""
    fields = (error.extra or {}).get("fields") or {}
    field = next(iter(fields), None)
    if (error.extra or {}).get("reason") == "url_credentials" and field in form.fields:
        form.data = form.data.copy()
        form.data[field] = ""
    form.add_error(field if field in form.fields else None, refusal_text(error))


def _organisation(request: HttpRequest) -> Organisation:
    return organisation_for_user(user=request.user)


def _require_admin(request: HttpRequest) -> None:
    if not may_name(request.user, "frontend:endpoints", "POST"):
        raise PermissionDenied(_("Only an admin of your organisation can register, change or delete endpoints."))


def _endpoint_or_404(request: HttpRequest, endpoint_id: int) -> Endpoint:
    endpoint = endpoint_get_for_organisation(organisation=_organisation(request), endpoint_id=endpoint_id)
    if endpoint is None:
        raise Http404(_("No such endpoint"))
    return endpoint


def _initial(endpoint: Endpoint) -> dict[str, Any]:
    return {
        "name": endpoint.name,
        "kind": endpoint.kind,
        "base_url": endpoint.base_url,
        "model_name": endpoint.model_name,
        "metrics_url": endpoint.metrics_url,
        "failure_command": command_line(endpoint.failure_command),
    }


def command_line(argv: Any) -> str:
    """The stored failure command (argv) as one line a shell would split back into the same words."""
    return shlex.join(str(word) for word in argv) if isinstance(argv, list) and argv else ""


def _render(
    request: HttpRequest, *, form: EndpointForm | None = None, editing: Endpoint | None = None, status: int = 200
) -> HttpResponse:
    is_admin = may_name(request.user, "frontend:endpoints", "POST")
    if form is None and is_admin:
        form = EndpointForm(initial=_initial(editing)) if editing else EndpointForm()
    endpoints = list(endpoint_list_for_organisation(organisation=_organisation(request)))
    for endpoint in endpoints:
        endpoint.failure_command_line = command_line(endpoint.failure_command)  # type: ignore[attr-defined]
    context = {
        "endpoints": endpoints,
        "is_admin": is_admin,
        "form": form,
        "editing": editing,
        "kind_choices": Endpoint.Kind.choices,
        "simulator_url": SIMULATOR_URL,
        "simulator_command": SIMULATOR_COMMAND,
        "failure_command_example": FAILURE_COMMAND_EXAMPLE,
        "failure_command_max_length": FAILURE_COMMAND_LINE_MAX_LENGTH,
    }
    return render(request, "frontend/endpoints.html", context, status=status)


@method_decorator(sensitive_post_parameters("api_key"), name="dispatch")
class EndpointListPageView(LoginRequiredMixin, View):
    """GET: the list (and, for admins, the register form); POST (admins): register an endpoint."""

    def get(self, request: HttpRequest) -> HttpResponse:
        return _render(request)

    @sensitive_variables()
    def post(self, request: HttpRequest) -> HttpResponse:
        _require_admin(request)
        form = EndpointForm(request.POST)
        if form.is_valid():
            try:
                endpoint = endpoint_create(
                    organisation=_organisation(request), user=request.user, data=form.cleaned_data
                )
            except SizingError as error:
                _service_error(form, error)
            else:
                messages.success(request, _("Endpoint %(name)s registered") % {"name": endpoint.name})
                return HttpResponseRedirect(reverse("frontend:endpoints"))
        return _render(request, form=form, status=400)


@method_decorator(sensitive_post_parameters("api_key"), name="dispatch")
class EndpointEditPageView(LoginRequiredMixin, View):
    """GET (admins): the page with the endpoint's edit form; POST (admins): save it."""

    def get(self, request: HttpRequest, endpoint_id: int) -> HttpResponse:
        _require_admin(request)
        return _render(request, editing=_endpoint_or_404(request, endpoint_id))

    @sensitive_variables()
    def post(self, request: HttpRequest, endpoint_id: int) -> HttpResponse:
        _require_admin(request)
        endpoint = _endpoint_or_404(request, endpoint_id)
        form = EndpointForm(request.POST)
        if form.is_valid():
            try:
                endpoint_update(endpoint=endpoint, data=form.cleaned_data)
            except SizingError as error:
                _service_error(form, error)
            else:
                messages.success(request, _("Endpoint %(name)s saved") % {"name": endpoint.name})
                return HttpResponseRedirect(reverse("frontend:endpoints"))
        endpoint.refresh_from_db()
        return _render(request, form=form, editing=endpoint, status=400)


class EndpointDeleteView(LoginRequiredMixin, View):
    def post(self, request: HttpRequest, endpoint_id: int) -> HttpResponse:
        _require_admin(request)
        endpoint = _endpoint_or_404(request, endpoint_id)
        name = endpoint.name
        endpoint_delete(endpoint=endpoint)
        messages.success(request, _("Endpoint %(name)s deleted") % {"name": name})
        return HttpResponseRedirect(reverse("frontend:endpoints"))
