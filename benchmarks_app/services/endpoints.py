"""Registering a customer's inference endpoint (issue 7, part 1): create, change and delete with validation, and
the API key, stored encrypted and read back only by the load generator (endpoint_api_key).

Who may call these is the caller's business (the API and the page let admins only: sizing.kernel.access). A refusal
is a SizingError (a 400) naming the field, with a stable `reason` in extra for the pages, and nothing is saved.

The API key: on update, an empty or absent `api_key` keeps the stored one; `clear_api_key` true removes it (both at
once is refused). The key is never returned, logged or put in an error message; the functions that hold it are
marked with sensitive_variables so Django's error reports leave it out.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.views.decorators.debug import sensitive_variables

from benchmarks_app.kernel.endpoint_secrets import SecretUnreadable, secret_decrypt, secret_encrypt, secret_rotate
from benchmarks_app.kernel.endpoint_urls import url_normalised, url_problem
from benchmarks_app.models import Endpoint
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.models import Organisation

NAME_MAX_LENGTH = 200
MODEL_NAME_MAX_LENGTH = 255
API_KEY_MAX_LENGTH = 4096
KINDS = tuple(Endpoint.Kind.values)
FAILURE_COMMAND_MAX_ARGS = 64  # words of a failure command (argv)
FAILURE_COMMAND_MAX_ARG_LENGTH = 1000  # characters of one word
ENDPOINT_FIELDS = ("name", "base_url", "kind", "model_name", "metrics_url", "failure_command")
_KEY_UNSAFE = re.compile(r"[\x00-\x1f\x7f]")  # a key goes into an HTTP header: no line breaks or controls


def _invalid(field: str, reason: str, message: str, **extra: Any) -> SizingError:
    return SizingError(
        code=SizingErrorCode.INVALID_ARGUMENT,
        message=message,
        extra={**extra, "reason": reason, "fields": {field: [message]}},
    )


def _text(values: Mapping[str, Any], key: str) -> str:
    return str(values.get(key) or "").strip()


def _endpoint_clean(
    *, organisation: Organisation, data: Mapping[str, Any], exclude_pk: int | None = None, creating: bool
) -> dict[str, Any]:
    """The ENDPOINT_FIELDS of `data` checked and normalised (on create all but metrics_url are required)."""
    values: dict[str, Any] = {}
    present = {key for key in ENDPOINT_FIELDS if key in data}
    if creating or "name" in present:
        name = _text(data, "name")
        if not name:
            raise _invalid("name", "name_required", "give the endpoint a name")
        if len(name) > NAME_MAX_LENGTH:
            raise _invalid(
                "name",
                "name_too_long",
                f"the name has {len(name)} characters; the limit is {NAME_MAX_LENGTH}",
                limit=NAME_MAX_LENGTH,
            )
        if Endpoint.objects.filter(organisation=organisation, name=name).exclude(pk=exclude_pk).exists():
            raise _invalid(
                "name",
                "name_taken",
                f"your organisation already has an endpoint named {name!r}; choose another name",
                name=name,
            )
        values["name"] = name
    if creating or "base_url" in present:
        url = url_normalised(str(data.get("base_url") or ""))
        if not url:
            raise _invalid("base_url", "url_required", "give the endpoint's base URL, e.g. http://10.0.0.5:8000")
        problem = url_problem(url, base=True)
        if problem is not None:
            raise _invalid("base_url", problem.reason, problem.message)
        values["base_url"] = url
    if creating or "kind" in present:
        kind = _text(data, "kind") or (Endpoint.Kind.VLLM.value if creating and "kind" not in present else "")
        if kind not in KINDS:
            raise _invalid("kind", "kind_unknown", f"kind must be one of {', '.join(KINDS)}")
        values["kind"] = kind
    if creating or "model_name" in present:
        model_name = _text(data, "model_name")
        if not model_name:
            raise _invalid(
                "model_name", "model_required", "give the model name the server serves (as GET /v1/models lists it)"
            )
        if len(model_name) > MODEL_NAME_MAX_LENGTH:
            raise _invalid(
                "model_name",
                "model_too_long",
                f"the model name has {len(model_name)} characters; the limit is {MODEL_NAME_MAX_LENGTH}",
                limit=MODEL_NAME_MAX_LENGTH,
            )
        values["model_name"] = model_name
    if "metrics_url" in present:
        url = url_normalised(str(data.get("metrics_url") or ""))
        problem = url_problem(url, base=False) if url else None
        if problem is not None:
            raise _invalid("metrics_url", problem.reason, problem.message)
        values["metrics_url"] = url
    if "failure_command" in present:
        values["failure_command"] = _failure_command_clean(data.get("failure_command"))
    return values


def _failure_command_clean(value: Any) -> list[str]:
    """The failure command as an argv list: a list of strings as given, or a command line split as a POSIX shell
    would (shlex.split; nothing is ever run through a shell). None, "" or [] is no command. 1–64 words of at most
    1,000 characters each, no NUL, the first (the program) not empty."""
    if value is None:
        return []
    if isinstance(value, str):
        try:
            argv = shlex.split(value)
        except ValueError as error:
            raise _invalid(
                "failure_command",
                "command_syntax",
                f"the command line cannot be split into words: {error} (check the quotes)",
            ) from None
    elif isinstance(value, list | tuple):
        argv = list(value)
        if not all(isinstance(word, str) for word in argv):
            raise _invalid(
                "failure_command", "command_type", "the failure command is a list of strings (argv) or a command line"
            )
    else:
        raise _invalid(
            "failure_command", "command_type", "the failure command is a list of strings (argv) or a command line"
        )
    if len(argv) > FAILURE_COMMAND_MAX_ARGS:
        raise _invalid(
            "failure_command",
            "command_too_long",
            f"the failure command has {len(argv)} words; the limit is {FAILURE_COMMAND_MAX_ARGS}",
            count=len(argv),
            limit=FAILURE_COMMAND_MAX_ARGS,
        )
    for index, word in enumerate(argv):
        if "\x00" in word:
            raise _invalid(
                "failure_command",
                "command_nul",
                f"word {index + 1} of the failure command contains a NUL character",
                word=index + 1,
            )
        if len(word) > FAILURE_COMMAND_MAX_ARG_LENGTH:
            raise _invalid(
                "failure_command",
                "command_word_too_long",
                f"word {index + 1} of the failure command has "
                f"{len(word)} characters; the limit is "
                f"{FAILURE_COMMAND_MAX_ARG_LENGTH}",
                word=index + 1,
                length=len(word),
                limit=FAILURE_COMMAND_MAX_ARG_LENGTH,
            )
    if argv and not argv[0].strip():
        raise _invalid(
            "failure_command", "command_program", "the failure command's first word (the program to run) is empty"
        )
    return argv


@sensitive_variables()
def _api_key_clean(api_key: Any) -> str:
    """The key as given (surrounding spaces removed); a 400 that never repeats it when it cannot be a key."""
    key = str(api_key or "").strip()
    if len(key) > API_KEY_MAX_LENGTH:
        raise _invalid(
            "api_key",
            "key_too_long",
            f"the API key is longer than {API_KEY_MAX_LENGTH} characters",
            limit=API_KEY_MAX_LENGTH,
        )
    if _KEY_UNSAFE.search(key):
        raise _invalid("api_key", "key_characters", "the API key contains line breaks or control characters")
    return key


# transaction.atomic is a `with` inside, not a decorator: its wrapper's frame would hold `data` (with the key) under
# a name sensitive_variables does not hide
@sensitive_variables("data", "api_key")
def endpoint_create(*, organisation: Organisation, user: Any, data: Mapping[str, Any]) -> Endpoint:
    """A new endpoint of the organisation: `data` holds ENDPOINT_FIELDS and an optional `api_key`."""
    with transaction.atomic():
        values = _endpoint_clean(organisation=organisation, data=data, creating=True)
        api_key = _api_key_clean(data.get("api_key"))
        return Endpoint.objects.create(
            organisation=organisation,
            created_by=user,
            api_key_encrypted=secret_encrypt(api_key) if api_key else "",
            **values,
        )


@sensitive_variables("data", "api_key")
def endpoint_update(*, endpoint: Endpoint, data: Mapping[str, Any]) -> Endpoint:
    """Change the fields `data` holds. An empty or absent `api_key` keeps the stored key; `clear_api_key` true
    removes it."""
    values = _endpoint_clean(organisation=endpoint.organisation, data=data, exclude_pk=endpoint.pk, creating=False)
    api_key = _api_key_clean(data.get("api_key"))
    clear = bool(data.get("clear_api_key"))
    if clear and api_key:
        raise _invalid("clear_api_key", "key_conflict", "either enter a new API key or remove the stored one, not both")
    for field, value in values.items():
        setattr(endpoint, field, value)
    if clear:
        endpoint.api_key_encrypted = ""
    elif api_key:
        endpoint.api_key_encrypted = secret_encrypt(api_key)
    with transaction.atomic():
        endpoint.save()
    return endpoint


def endpoint_delete(*, endpoint: Endpoint) -> None:
    endpoint.delete()


def endpoint_api_key(endpoint: Endpoint) -> str | None:
    """The endpoint's API key in clear, or None when none is set. For the load generator only (it sends it as
    `Authorization: Bearer ...`): never show it, log it or store it elsewhere. Raises
    benchmarks_app.kernel.endpoint_secrets.SecretUnreadable when the key material changed (an admin enters the key again)."""
    if not endpoint.api_key_encrypted:
        return None
    return secret_decrypt(endpoint.api_key_encrypted)


def endpoint_keys_rotate() -> tuple[int, list[int]]:
    """Re-encrypt every stored key with the current material (after SIZING_SECRETS_KEY changed, with the old one in
    SIZING_SECRETS_KEY_FALLBACKS). Returns (keys rotated, ids of the endpoints whose key no material reads)."""
    rotated, unreadable = 0, []
    for endpoint in Endpoint.objects.exclude(api_key_encrypted="").only("pk", "api_key_encrypted").order_by("pk"):
        try:
            token = secret_rotate(endpoint.api_key_encrypted)
        except SecretUnreadable:  # reported by id; the key is never printed
            unreadable.append(endpoint.pk)
            continue
        Endpoint.objects.filter(pk=endpoint.pk).update(api_key_encrypted=token)
        rotated += 1
    return rotated, unreadable


SIMULATOR_ENDPOINT_NAME = "Bundled simulator"


def simulator_endpoint_ensure(*, organisation: Organisation, base_url: str, model_name: str) -> tuple[Endpoint, bool]:
    """The organisation's endpoint for the bundled simulator (`manage.py simserve`), created or pointed at
    `base_url`: a new user's first load test targets it. Returns (endpoint, created)."""
    url = url_normalised(base_url)
    problem = url_problem(url, base=True)
    if problem is not None:
        raise _invalid("base_url", problem.reason, problem.message)
    with transaction.atomic():
        endpoint, created = Endpoint.objects.update_or_create(
            organisation=organisation,
            name=SIMULATOR_ENDPOINT_NAME,
            defaults={
                "base_url": url,
                "kind": Endpoint.Kind.SIMULATOR,
                "model_name": model_name,
                "metrics_url": url.rstrip("/") + "/metrics",
            },
        )
    return endpoint, created
