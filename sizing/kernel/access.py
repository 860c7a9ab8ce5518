"""Who may do what: one table from every URL name (pages and API alike) to an access policy, read by the API's
default permission class and by the pages' middleware. Which organisation's rows a user sees is the querysets'
business (every selector filters by the user's organisation: another organisation's object is a 404); this module
decides, by the user's role, whether the user may read or write a kind of thing at all (a 403).

Roles (Membership.role):
- admin: the organisation's catalogs (its uploaded models), the inference endpoints load tests may target, and its
  users; everything an engineer does besides.
- engineer: everything in the organisation: deployments, fingerprints, runs, load tests, reports' drafts.
- reviewer: reads everything; returns or approves a report version submitted for review.
- signer: reads everything; signs an approved version (and may review).
- sales: reads deployments and reports, runs quick estimates and quotes; nothing else.

A Django superuser (the operator of the service) may do everything. A URL name missing from the table is refused
(fail closed); a test checks that every route has a policy.

>>> deployments = POLICIES["sizing:deployment-list"]
>>> deployments.allows("sales", "GET"), deployments.allows("sales", "POST")
(True, False)
>>> POLICIES["reports:report-version-sign"].allows("engineer", "POST")
False
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from rest_framework.permissions import SAFE_METHODS, BasePermission

ADMIN, ENGINEER, REVIEWER, SIGNER, SALES = "admin", "engineer", "reviewer", "signer", "sales"
ROLES = (ADMIN, ENGINEER, REVIEWER, SIGNER, SALES)

EVERYONE = frozenset(ROLES)
TEAM = EVERYONE - {SALES}  # those who see the engineering evidence
BUILDERS = frozenset({ADMIN, ENGINEER})


@dataclass(frozen=True)
class Policy:
    """Roles that may read (GET, HEAD, OPTIONS) and roles that may write (any other method)."""

    name: str
    read: frozenset[str]
    write: frozenset[str]

    def allows(self, role: str | None, method: str) -> bool:
        roles = self.read if method.upper() in SAFE_METHODS else self.write
        return role in roles


PUBLIC = Policy("public", EVERYONE, EVERYONE)  # no sign-in needed (login, health); see PUBLIC_NAMES
WORK = Policy("work", TEAM, BUILDERS)  # the engineering evidence: reviewers and signers read it, sales do not
SHARED = Policy("shared", EVERYONE, BUILDERS)  # what sales read: deployments, reports, catalogs, workloads
COMPUTE = Policy("compute", EVERYONE, EVERYONE)  # computations and quotes anyone may run; a user's own API keys
ADMIN_MANAGED = Policy("admin_managed", TEAM, frozenset({ADMIN}))  # endpoints: the team reads, admins change
ADMIN_ONLY = Policy("admin_only", frozenset({ADMIN}), frozenset({ADMIN}))  # the organisation's users
REVIEW = Policy("review", TEAM, frozenset({REVIEWER, SIGNER}))  # return or approve a version in review
SIGN = Policy("sign", TEAM, frozenset({SIGNER}))

# the OpenAPI schema and its documentation page are public (sales tooling generates clients from it); every
# operation they describe is not
PUBLIC_NAMES = frozenset(
    {
        "health",
        "healthz",
        "readyz",
        "metrics",
        "frontend:login",
        "frontend:logout",
        "set_language",
        "schema",
        "swagger-ui",
    }
)

POLICIES: dict[str, Policy] = {
    # --- API: sizing
    "sizing:simulation-list": WORK,
    "sizing:simulation-detail": WORK,
    "sizing:perf-calibration-list": WORK,
    "sizing:fingerprint-probe": WORK,
    "sizing:fingerprint-parse": WORK,
    "sizing:fingerprint-diff": WORK,
    "sizing:fingerprint-list": WORK,
    "sizing:fingerprint-detail": WORK,
    "sizing:deployment-list": SHARED,
    "sizing:deployment-detail": SHARED,
    "sizing:deployment-hosts": WORK,
    "sizing:deployment-host-merge": WORK,
    "sizing:deployment-machines": WORK,
    "sizing:gpu-list": SHARED,
    "sizing:model-list": SHARED,
    "sizing:model-checkpoint": WORK,
    "sizing:estimate-quick": COMPUTE,
    "sizing:estimate-solve": COMPUTE,
    "sizing:estimate-colocated": COMPUTE,
    "sizing:estimate-create": COMPUTE,
    "sizing:estimate-detail": COMPUTE,
    "sizing:bootlog-compare": WORK,
    "sizing:calibration-list": WORK,
    "sizing:workload-list": SHARED,
    "sizing:workload-detail": SHARED,
    "sizing:workload-import": WORK,
    "sizing:workload-preview": COMPUTE,
    "quotes:quote-list": COMPUTE,
    "quotes:quote-detail": COMPUTE,
    "accounts:api-key-list": COMPUTE,
    "accounts:api-key-detail": COMPUTE,
    "accounts:me": COMPUTE,
    # --- API: benchmarks, memory logs, endpoints, load tests
    "benchmarks:benchmark-run-list": WORK,
    "benchmarks:benchmark-run-calibrate": WORK,
    "benchmarks:benchmark-run-detail": WORK,
    "benchmarks:benchmark-run-export": WORK,
    "benchmarks:benchmark-run-links": WORK,
    "benchmarks:benchmark-run-analysis": WORK,
    "benchmarks:benchmark-series-detail": WORK,
    "benchmarks:memory-log-list": WORK,
    "benchmarks:memory-log-detail": WORK,
    "reports:health-report-list": SHARED,  # the 72-hour sentinel's memory health reports (issue 20)
    "reports:health-report-detail": SHARED,
    "reports:health-report-pdf": SHARED,
    "benchmarks:endpoint-list": ADMIN_MANAGED,
    "benchmarks:endpoint-detail": ADMIN_MANAGED,
    "benchmarks:load-test-list": WORK,
    "benchmarks:load-test-defaults": WORK,
    "benchmarks:load-test-detail": WORK,
    "benchmarks:load-test-cancel": WORK,
    "benchmarks:load-test-plan": WORK,
    # --- API: reports
    "reports:report-list": SHARED,
    "reports:report-verify": COMPUTE,
    "reports:report-detail": SHARED,
    "reports:report-pdf": SHARED,
    "reports:report-version-list": SHARED,
    "reports:report-version-detail": SHARED,
    "reports:report-version-pdf": SHARED,
    "reports:report-version-submit": WORK,
    "reports:report-version-waiver-list": WORK,  # the author asks (the service checks it is the author)
    "reports:report-version-waiver-detail": WORK,  # the author withdraws
    "reports:report-version-waiver-decision": REVIEW,
    "reports:report-version-return": REVIEW,
    "reports:report-version-approve": REVIEW,
    "reports:report-version-sign": SIGN,
    # --- pages
    "frontend:javascript-catalog": SHARED,  # the page scripts' words (every page that has a script)
    "frontend:sizing": COMPUTE,
    "frontend:colocated": COMPUTE,
    "frontend:bootlog": WORK,
    "frontend:workloads": SHARED,
    "frontend:performance": WORK,
    "frontend:deployments": SHARED,
    "frontend:deployment": SHARED,
    "frontend:deployment-upload": WORK,
    "frontend:deployment-delete": WORK,
    "frontend:deployment-machines": WORK,
    "frontend:deployment-host-merge": WORK,
    "frontend:fingerprint-diff": WORK,
    "frontend:fingerprint": WORK,
    "frontend:fingerprint-delete": WORK,
    "frontend:benchmarks": WORK,
    "frontend:benchmark-compare": WORK,
    "frontend:benchmark-series": WORK,
    "frontend:benchmark": WORK,
    "frontend:benchmark-delete": WORK,
    "frontend:endpoints": ADMIN_MANAGED,
    "frontend:endpoint-edit": ADMIN_MANAGED,
    "frontend:endpoint-delete": ADMIN_MANAGED,
    "frontend:memory-logs": WORK,
    "frontend:deployment-sentinel": SHARED,
    "frontend:health-report-pdf": SHARED,
    "frontend:memory-log": WORK,
    "frontend:memory-log-delete": WORK,
    "frontend:load-tests": WORK,
    "frontend:load-test": WORK,
    "frontend:load-test-cancel": WORK,
    "frontend:load-test-delete": WORK,
    "frontend:reports": SHARED,
    "frontend:report-verify": COMPUTE,
    "frontend:report": SHARED,
    "frontend:report-version-new": WORK,
    "frontend:report-version-submit": WORK,
    "frontend:report-version-edit": WORK,
    "frontend:report-version-return": REVIEW,
    "frontend:report-version-approve": REVIEW,
    "frontend:report-version-sign": SIGN,
    "frontend:report-version-waiver-request": WORK,
    "frontend:report-version-waiver-withdraw": WORK,
    "frontend:report-version-waiver-decide": REVIEW,
    "frontend:customers": SHARED,
    "frontend:customer": SHARED,
    "frontend:api-keys": COMPUTE,
    "frontend:api-key-revoke": COMPUTE,
    "frontend:users": ADMIN_ONLY,
    "frontend:user-edit": ADMIN_ONLY,
    "frontend:quotes": COMPUTE,
}


def role_of(user: Any) -> str | None:
    """The user's role in their organisation; None when signed out. A user without a membership is an engineer of
    the personal organisation made on first use (sizing.services.estimates.organisation_for_user)."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    cached = getattr(user, "_access_role", None)  # one query per request, however many links a page checks
    if cached is not None:
        return cached
    membership = getattr(user, "membership", None) if _membership_cached(user) else None
    if membership is None:
        from sizing.models import Membership

        membership = Membership.objects.filter(user=user).only("role").first()
    role = membership.role if membership is not None else ENGINEER
    user._access_role = role
    return role


def _membership_cached(user: Any) -> bool:
    try:
        return "membership" in user._state.fields_cache
    except AttributeError:
        return False


def may(user: Any, policy: Policy, method: str) -> bool:
    """Whether `user` may call a route of `policy` with `method` (a superuser always may)."""
    if policy is PUBLIC:
        return True
    if user is None or not getattr(user, "is_authenticated", False):
        return False
    if getattr(user, "is_superuser", False):
        return True
    return policy.allows(role_of(user), method)


def may_name(user: Any, url_name: str, method: str = "GET") -> bool:
    """`may` for the route named `url_name` (pages use it to show only the links and buttons a user may follow)."""
    return may(user, policy_for(url_name), method)


def policy_for(url_name: str | None) -> Policy:
    """The policy of a route; PUBLIC for the public names; a refusal for anything unlisted (fail closed)."""
    if url_name in PUBLIC_NAMES:
        return PUBLIC
    return POLICIES.get(url_name or "", _UNLISTED)


_UNLISTED = Policy("unlisted", frozenset(), frozenset())

DENIED_MESSAGE = "your role in the organisation ({role}) does not allow this; it needs: {roles}"


def denied_message(user: Any, policy: Policy, method: str) -> str:
    """Why `user` is refused: their role and the roles that may (`admin` for an endpoint change, say)."""
    roles = policy.read if method.upper() in SAFE_METHODS else policy.write
    return DENIED_MESSAGE.format(role=role_of(user), roles=", ".join(r for r in ROLES if r in roles) or "nobody")


class RoleAccess(BasePermission):
    """The API's default permission: signed in (session or API key), and the route's policy allows the user's
    role and the method. A refusal is a 403 in the API's error shape; signed out, a 401/403 from DRF."""

    message = "your role in the organisation does not allow this"

    def has_permission(self, request: Any, view: Any) -> bool:
        match = getattr(request, "resolver_match", None)
        policy = policy_for(match.view_name if match else None)
        if policy is PUBLIC:
            return True
        if not (request.user and request.user.is_authenticated):
            return False
        if may(request.user, policy, request.method):
            return True
        self.message = denied_message(request.user, policy, request.method)
        return False


class RoleAccessMiddleware:
    """Pages: a signed-out visitor goes to the login page, a user whose role the page's policy refuses gets 403.
    API views (DRF) are left to RoleAccess, because an API key signs a request in only inside the view; the Django
    admin has its own staff check."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view_func: Callable[..., Any], view_args: Any, view_kwargs: Any
    ) -> HttpResponse | None:
        match = request.resolver_match
        if match is None or _is_api_view(view_func) or "admin" in match.namespaces:
            return None
        policy = policy_for(match.view_name)
        if policy is PUBLIC:
            return None
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not may(request.user, policy, request.method or "GET"):
            raise PermissionDenied(page_denied_message(request.user, policy, request.method or "GET"))
        return None


def page_denied_message(user: Any, policy: Policy, method: str) -> str:
    """denied_message in the active language, with the roles' names (the 403 page shows it)."""
    from django.utils.translation import gettext

    from sizing.models import Membership

    labels = dict(Membership.Role.choices)
    roles = policy.read if method.upper() in SAFE_METHODS else policy.write
    role = role_of(user)
    return gettext("Your role (%(role)s) does not allow this. It needs one of: %(roles)s") % {
        "role": labels.get(role, role),
        "roles": ", ".join(str(labels[r]) for r in ROLES if r in roles) or "—",
    }


def _is_api_view(view_func: Callable[..., Any]) -> bool:
    from rest_framework.views import APIView

    view_class = getattr(view_func, "cls", None) or getattr(view_func, "view_class", None)
    return isinstance(view_class, type) and issubclass(view_class, APIView)
