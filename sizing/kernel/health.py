"""Probes for orchestrators and load balancers (issue 10). Plain Django views: anonymous, no session, no CSRF, no
throttle, not in the OpenAPI schema, and outside ATOMIC_REQUESTS (a probe must not open a transaction, and a
database that is down must not turn /healthz into an error).

- /healthz (liveness): the process answers. No database, no broker.
- /readyz (readiness): the database answers a query, the broker takes a connection, and no migration is left
  unapplied; 200 with each check's result and duration, 503 naming the check that failed and why (one line, never a
  traceback). Why, in full, only to a signed-in staff user: a connection error names the host and port of the
  database or broker, which anonymous callers (probes, anyone who can reach the port) are not told; they get the
  error's kind, and the log line has the rest. The migrations check names migrations, never hosts: shown to all.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.db import connection, transaction
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe

from sizing.kernel.observability import broker_connection, error_text

logger = logging.getLogger(__name__)


@csrf_exempt
@require_safe
@transaction.non_atomic_requests
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def _check_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return "ok"


def _check_broker() -> str:
    from django.conf import settings

    with broker_connection() as broker:
        broker.ensure_connection(
            max_retries=1, interval_start=0, interval_step=0, timeout=settings.SIZING_OBSERVABILITY_TIMEOUT_S
        )
        # a round trip: kombu's virtual channels count a queue (Redis: LLEN; filesystem: lists its message folder)
        size = getattr(broker.default_channel, "_size", None)
        if size is not None:
            size(settings.CELERY_TASK_DEFAULT_QUEUE)
    return "ok"


def _check_migrations() -> str:
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if plan:
        names = [f"{migration.app_label}.{migration.name}" for migration, _ in plan]
        more = f" and {len(names) - 5} more" if len(names) > 5 else ""
        raise RuntimeError(f"{len(names)} unapplied: {', '.join(names[:5])}{more}")
    return "ok"


CHECKS: dict[str, Callable[[], str]] = {
    "database": _check_database,
    "broker": _check_broker,
    "migrations": _check_migrations,
}
PUBLIC_ERRORS = {"migrations"}  # checks whose error text names no host, port or credential


def _error_for(request: HttpRequest, name: str, exc: Exception) -> str:
    """The error as `request`'s caller may read it: in full for staff and for PUBLIC_ERRORS, else its kind."""
    if name in PUBLIC_ERRORS:
        return error_text(exc)
    try:
        user = getattr(request, "user", None)
        staff = bool(user is not None and user.is_authenticated and user.is_staff)
    except Exception:  # a session cookie and the database down: the caller is not known to be staff
        staff = False
    if staff:
        return error_text(exc)
    return f"{type(exc).__name__} (the details are in the service's log)"


@csrf_exempt
@require_safe
@transaction.non_atomic_requests
def readyz(request: HttpRequest) -> JsonResponse:
    results: dict[str, dict[str, object]] = {}
    for name, check in CHECKS.items():
        started = time.perf_counter()
        try:
            detail = check()
        except Exception as exc:  # any failure is an answer, not an error page
            results[name] = {"ok": False, "error": _error_for(request, name, exc)}
            logger.warning("readiness check %s failed: %s", name, error_text(exc))
        else:
            results[name] = {"ok": True, "detail": detail}
        results[name]["duration_ms"] = round((time.perf_counter() - started) * 1000, 1)
    failed = [name for name, result in results.items() if not result["ok"]]
    body = {"status": "unavailable" if failed else "ok", "failed": failed, "checks": results}
    return JsonResponse(body, status=503 if failed else 200)
