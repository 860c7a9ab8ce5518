"""The service's own health, metrics and logs (issue 10).

Request ids: `RequestIdMiddleware` takes a sane `X-Request-ID` from the request (at most 64 characters of
`[A-Za-z0-9._-]`) or makes one (uuid4 hex), keeps it in a context variable for the request, and answers it in the
`X-Request-ID` header. A task published while a request is served carries the id in its message headers
(`before_task_publish`), and the worker puts it back into the context variable while the task runs (`task_prerun`,
cleared in `task_postrun`), so one id follows a job from the API call into the worker's logs.

Logs: `RequestContextFilter` (on the console handler) adds `request_id`, `user_id`, `organisation_id`, `task_id` and
`task_name` to every record (None when unknown; never a database query); `JsonLogFormatter` writes one JSON object a
line (`LOG_FORMAT=json`, the production default), `TextLogFormatter` a readable line (`LOG_FORMAT=text`, the local
default). `RequestMetricsMiddleware` logs one line per request: method, route name, status, duration, request id
(at INFO; a successful probe or scrape at DEBUG, as they come every few seconds).
Never the query string, the headers or the body: API keys travel in the Authorization header and endpoint keys in
bodies. Django's own records carry the request object as `request`, whose text holds the query string: the JSON
formatter leaves it out.

Metrics (Prometheus, at /metrics behind `Authorization: Bearer $SIZING_METRICS_TOKEN`; off, a 404, without a token):

- `http_requests_total{method, route, status_class}` and `http_request_duration_seconds{route}`: `route` is the URL
  name (`sizing:gpu-list`), never the path, so ids and unknown paths (scanners) cannot grow the label set;
  `unmatched` when no route matched (`static` for the static files), and the method `other` for a method outside
  the usual seven.
- `celery_tasks_total{task, outcome}` (success, failure, retry, or rejected/ignored) and
  `celery_task_duration_seconds{task}`, from Celery's task_prerun/task_postrun signals in whichever process runs the
  task.
- `celery_queue_length{queue}` for the queues estimates, simulations, imports, reports, loadtests and celery, read
  from the broker at scrape time (Redis: LLEN of the queue's lists, over kombu's priority steps; the filesystem
  broker: its message files for the queue), and `celery_broker_up` (0 when the broker could not be read: no queue
  length is exported then).
- `sizing_loadtests_active{status}`: load tests queued and running, counted in the database at scrape time
  (benchmarks_app.selectors.loadtest_metrics, added by its app with `scrape_collector_add`: sizing imports no higher app).

Several processes: with `PROMETHEUS_MULTIPROC_DIR` set (in the environment, before the process starts, and
emptied before the service starts), prometheus_client keeps the counters and histograms in files there and /metrics
adds up every process that writes to it (gunicorn's workers; Celery workers too when they share the directory).
The scrape-time collectors (queue lengths, load tests) are computed by the process that answers the scrape and
never written to those files. Celery workers run apart from the web: they share the directory only on one host;
otherwise set `SIZING_WORKER_METRICS_PORT` and each worker serves its task metrics itself over HTTP on that port
(prometheus_client's server, unauthenticated: keep the port inside the cluster). A prefork worker runs its tasks in
child processes, so it needs `PROMETHEUS_MULTIPROC_DIR` as well for that server to see them (the thread and solo
pools do not).
"""

from __future__ import annotations

import hmac
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar, Token
from typing import Any

from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.functional import LazyObject, empty
from django.views.decorators.csrf import csrf_exempt
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
    start_http_server,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter

REQUEST_ID_HEADER = "X-Request-ID"
TASK_REQUEST_ID_HEADER = "sizing_request_id"  # the task message header that carries it (before_task_publish)
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
CELERY_QUEUES = ("estimates", "simulations", "imports", "reports", "loadtests", "celery")
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"
STATIC = "static"
QUIET_ROUTES = frozenset({"health", "healthz", "readyz", "metrics"})

logger = logging.getLogger(__name__)
request_logger = logging.getLogger("sizing.requests")

# --- context ----------------------------------------------------------------------------------------------------

_request_id: ContextVar[str | None] = ContextVar("sizing_request_id", default=None)
_request: ContextVar[HttpRequest | None] = ContextVar("sizing_request", default=None)
_task: ContextVar[tuple[str, str] | None] = ContextVar("sizing_task", default=None)


def current_request_id() -> str | None:
    """The id of the request (or of the request that published the running task); None outside both."""
    return _request_id.get()


def request_id_clean(value: str | None) -> str:
    """`value` when it is a sane request id (≤ 64 characters of [A-Za-z0-9._-]), else a new uuid4 hex."""
    if value and _SANE_REQUEST_ID.fullmatch(value):
        return value
    return uuid.uuid4().hex


# --- metrics ------------------------------------------------------------------------------------------------------
# Counters and histograms live in the default registry (in files under PROMETHEUS_MULTIPROC_DIR when it is set).

HTTP_REQUESTS = Counter(
    "http_requests",
    "HTTP requests answered, by method, route name and status class",
    ["method", "route", "status_class"],
)
HTTP_DURATION = Histogram(
    "http_request_duration_seconds",
    "Time to answer an HTTP request, by route name",
    ["route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
TASKS = Counter(
    "celery_tasks", "Celery tasks run, by task name and outcome (success, failure, retry)", ["task", "outcome"]
)
TASK_DURATION = Histogram(
    "celery_task_duration_seconds",
    "Run time of a Celery task, by task name",
    ["task"],
    buckets=(0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 14400),
)


class QueueDepthCollector(Collector):
    """Messages waiting in each Celery queue, read from the broker when scraped."""

    def __init__(self, queues: Iterable[str] = CELERY_QUEUES) -> None:
        self.queues = tuple(queues)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        up = GaugeMetricFamily("celery_broker_up", "1 when the broker answered the scrape's queue-length reads")
        depth = GaugeMetricFamily("celery_queue_length", "Messages waiting in a Celery queue", labels=["queue"])
        try:
            sizes = queue_lengths(self.queues)
        except Exception as exc:  # a scrape never fails for the broker: it says so in celery_broker_up
            logger.warning("queue lengths not read from the broker: %s", error_text(exc))
            up.add_metric([], 0)
        else:
            up.add_metric([], 1)
            for queue, size in sizes.items():
                depth.add_metric([queue], size)
        yield up
        yield depth


def broker_connection(timeout_s: float | None = None) -> Any:
    """A kombu connection to settings.CELERY_BROKER_URL (read now, so tests may override it), with short timeouts."""
    from django.conf import settings
    from kombu import Connection

    timeout_s = timeout_s if timeout_s is not None else settings.SIZING_OBSERVABILITY_TIMEOUT_S
    options = {
        **settings.CELERY_BROKER_TRANSPORT_OPTIONS,
        "socket_timeout": timeout_s,
        "socket_connect_timeout": timeout_s,
        "max_retries": 1,
        "interval_start": 0,
        "interval_step": 0,
    }  # kombu's retries on connecting
    return Connection(settings.CELERY_BROKER_URL, connect_timeout=timeout_s, transport_options=options)


def queue_lengths(queues: Iterable[str] = CELERY_QUEUES) -> dict[str, int]:
    """Messages waiting per queue. kombu's virtual channels (Redis, filesystem) count them in `_size`: the Redis
    transport adds up LLEN over the queue's priority lists, the filesystem one counts the queue's message files.
    A broker without it (AMQP) raises, and the scrape says celery_broker_up 0."""
    with broker_connection() as connection:
        connection.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=_timeout())
        channel = connection.default_channel
        return {queue: int(channel._size(queue)) for queue in queues}


def _timeout() -> float:
    from django.conf import settings

    return float(settings.SIZING_OBSERVABILITY_TIMEOUT_S)


_SCRAPE_COLLECTORS: list[Callable[[], Collector]] = []


def scrape_collector_add(factory: Callable[[], Collector]) -> None:
    """Have /metrics compute one more collector at scrape time (an app's `ready()` adds its own, once); they come
    after the queue lengths, in the order added."""
    if factory not in _SCRAPE_COLLECTORS:
        _SCRAPE_COLLECTORS.append(factory)


def scrape_registry() -> CollectorRegistry:
    """What /metrics exposes: this process's metrics (or every process's, added up from PROMETHEUS_MULTIPROC_DIR),
    plus the collectors computed at scrape time."""
    registry = CollectorRegistry(auto_describe=False)
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.MultiProcessCollector(registry)
    else:
        registry.register(_Registered(REGISTRY))
    registry.register(QueueDepthCollector())
    for factory in _SCRAPE_COLLECTORS:
        registry.register(factory())
    return registry


class _Registered(Collector):
    """Another registry's metrics, as one collector of the scrape registry."""

    def __init__(self, source: CollectorRegistry) -> None:
        self.source = source

    def collect(self) -> Iterable[Any]:
        return self.source.collect()


@csrf_exempt
@transaction.non_atomic_requests  # no transaction for a scrape (the load-test count is one query)
def metrics_view(request: HttpRequest) -> HttpResponse:
    """GET /metrics: Prometheus' text format, for `Authorization: Bearer $SIZING_METRICS_TOKEN` only (compared in
    constant time); a 404 when no token is set (the endpoint is off)."""
    from django.conf import settings

    token = settings.SIZING_METRICS_TOKEN
    if not token:
        raise Http404("metrics are off")
    if request.method not in ("GET", "HEAD"):
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD"})
    scheme, _, given = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        return HttpResponse(
            "a bearer token is needed\n",
            status=401,
            content_type="text/plain",
            headers={"WWW-Authenticate": 'Bearer realm="metrics"'},
        )
    if not hmac.compare_digest(given.strip().encode(), token.encode()):
        return HttpResponse("wrong token\n", status=403, content_type="text/plain")
    return HttpResponse(generate_latest(scrape_registry()), content_type=CONTENT_TYPE_LATEST)


# --- middleware -----------------------------------------------------------------------------------------------------


class RequestIdMiddleware:
    """Sets the request id (the client's sane X-Request-ID, or a new one) for the request and answers it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_clean(request.headers.get(REQUEST_ID_HEADER))
        request.request_id = request_id  # type: ignore[attr-defined]
        id_token, request_token = _request_id.set(request_id), _request.set(request)
        try:
            response = self.get_response(request)
        finally:
            _request_id.reset(id_token)
            _request.reset(request_token)
        response[REQUEST_ID_HEADER] = request_id
        return response


class RequestMetricsMiddleware:
    """Counts and times every request by route name, and logs one line for it (no query string, headers or body)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        duration = time.perf_counter() - started
        route = route_name(request)
        method = request.method if request.method in _METHODS else "other"
        HTTP_REQUESTS.labels(method=method, route=route, status_class=f"{response.status_code // 100}xx").inc()
        HTTP_DURATION.labels(route=route).observe(duration)
        # the probes and scrapes come every few seconds: their successes at DEBUG, so the INFO log is the traffic
        level = logging.DEBUG if route in QUIET_ROUTES and response.status_code < 400 else logging.INFO
        request_logger.log(
            level,
            "%s %s %s %.1f ms",
            method,
            route,
            response.status_code,
            duration * 1000,
            extra={
                "method": method,
                "route": route,
                "status": response.status_code,
                "duration_ms": round(duration * 1000, 1),
                "request_id": getattr(request, "request_id", None),
            },
        )
        return response


def route_name(request: HttpRequest) -> str:
    """The URL name of the route that answered (`namespace:name`), `unmatched` when none did."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        from django.conf import settings

        # WhiteNoise answers static files before any URL is resolved
        return STATIC if settings.STATIC_URL and request.path.startswith(settings.STATIC_URL) else UNMATCHED
    return match.view_name or UNMATCHED


# --- logs -----------------------------------------------------------------------------------------------------------

_CONTEXT_FIELDS = ("request_id", "user_id", "organisation_id", "task_id", "task_name")


class RequestContextFilter(logging.Filter):
    """Adds the request id, the signed-in user and organisation (when already known: never a query), and the running
    task to every record. Attach it to handlers, so records of every logger get it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            record.request_id = _request_id.get()
        user = _known_user(_request.get())
        record.user_id = getattr(record, "user_id", None) or (user.pk if user is not None else None)
        record.organisation_id = getattr(record, "organisation_id", None) or _organisation_id(user)
        task = _task.get()
        record.task_id = getattr(record, "task_id", None) or (task[0] if task else None)
        record.task_name = getattr(record, "task_name", None) or (task[1] if task else None)
        return True


def _known_user(request: HttpRequest | None) -> Any:
    """The request's signed-in user if authentication has already run (the session's lazy user once evaluated, or
    the user DRF authenticated); None otherwise. Never evaluates the lazy user (that would query the session)."""
    if request is None:
        return None
    user = request.__dict__.get("user")
    if isinstance(user, LazyObject):
        user = user._wrapped
        if user is empty:
            return None
    return user if getattr(user, "is_authenticated", False) else None


def _organisation_id(user: Any) -> int | None:
    try:
        membership = user._state.fields_cache.get("membership")
    except AttributeError:
        return None
    return getattr(membership, "organisation_id", None)


# Django passes the request object as `request` (its text is the path with the query string), runserver adds
# `server_time`, uvicorn `color_message`: none of them goes into a JSON line.
_JSON_LEFT_OUT = (*RESERVED_ATTRS, "request", "response", "server_time", "color_message", "from_queue")


class JsonLogFormatter(JsonFormatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, the context fields that are known,
    and the record's extra fields (e.g. a request line's method, route, status and duration_ms)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("reserved_attrs", _JSON_LEFT_OUT)
        kwargs.setdefault("rename_fields", {"levelname": "level", "name": "logger"})
        kwargs.setdefault("timestamp", "time")
        super().__init__(*args or ("%(levelname)s %(name)s %(message)s",), **kwargs)

    def process_log_record(self, log_data: dict[str, Any]) -> dict[str, Any]:
        for field in _CONTEXT_FIELDS:  # unknown context is left out rather than written as null
            if log_data.get(field) is None:
                log_data.pop(field, None)
        return log_data


class TextLogFormatter(logging.Formatter):
    """`time level logger [request id] message` (the id when there is one; `task=name` in a worker)."""

    def __init__(self, fmt: str | None = None, datefmt: str | None = None, **kwargs: Any) -> None:
        super().__init__(fmt or "%(asctime)s %(levelname)s %(name)s %(context)s%(message)s", datefmt, **kwargs)

    def format(self, record: logging.LogRecord) -> str:
        parts = [str(record.request_id)] if getattr(record, "request_id", None) else []
        if getattr(record, "task_name", None):
            parts.append(f"task={record.task_name}")
        record.context = f"[{' '.join(parts)}] " if parts else ""
        return super().format(record)


def error_text(exc: BaseException) -> str:
    """An exception as one short line, its type and message, credentials in URLs masked (never a traceback)."""
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    message = re.sub(r"(\w+://)[^@/\s]*@", r"\1***@", message)[:300]
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


# --- Celery -------------------------------------------------------------------------------------------------------

_running: dict[str, tuple[float, Token[str | None], Token[tuple[str, str] | None]]] = {}
_running_lock = threading.Lock()
_OUTCOMES = {"SUCCESS": "success", "FAILURE": "failure", "RETRY": "retry"}


def _on_before_task_publish(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    request_id = _request_id.get()
    if request_id and headers is not None and TASK_REQUEST_ID_HEADER not in headers:
        headers[TASK_REQUEST_ID_HEADER] = request_id


def _on_task_prerun(task_id: str | None = None, task: Any = None, **kwargs: Any) -> None:
    name = getattr(task, "name", None) or "unknown"
    request = getattr(task, "request", None)
    request_id = _task_header(request, TASK_REQUEST_ID_HEADER)
    # an eager task (apply) runs inside its caller: it keeps the caller's id when its message had none
    id_token = _request_id.set(request_id_clean(request_id) if request_id else _request_id.get())
    task_token = _task.set((str(task_id), name))
    with _running_lock:
        _running[str(task_id)] = (time.perf_counter(), id_token, task_token)


def _on_task_postrun(task_id: str | None = None, task: Any = None, state: str | None = None, **kwargs: Any) -> None:
    name = getattr(task, "name", None) or "unknown"
    with _running_lock:
        started = _running.pop(str(task_id), None)
    TASKS.labels(task=name, outcome=_OUTCOMES.get(state or "", (state or "unknown").lower())).inc()
    if started is None:
        return
    TASK_DURATION.labels(task=name).observe(time.perf_counter() - started[0])
    try:
        _task.reset(started[2])
        _request_id.reset(started[1])
    except ValueError:  # set in another context (cannot happen with Celery's pools): clear rather than restore
        _task.set(None)
        _request_id.set(None)


def _task_header(request: Any, name: str) -> str | None:
    """A custom message header of the running task: Celery puts it among the request's fields (protocol 2)."""
    if request is None:
        return None
    value = getattr(request, name, None)
    if value is None:
        value = (getattr(request, "headers", None) or {}).get(name)
    return value if isinstance(value, str) else None


def _on_worker_init(**kwargs: Any) -> tuple[Any, threading.Thread] | None:
    """SIZING_WORKER_METRICS_PORT: this worker serves its task metrics on that port (the whole directory's when
    PROMETHEUS_MULTIPROC_DIR is set, which a prefork pool needs: its children run the tasks). Returns the server and
    its thread (Celery ignores it; tests stop the server)."""
    port = os.environ.get("SIZING_WORKER_METRICS_PORT", "").strip()
    if not port:
        return None
    registry: CollectorRegistry = REGISTRY
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry(auto_describe=False)
        multiprocess.MultiProcessCollector(registry)
    elif "prefork" in getattr(getattr(kwargs.get("sender"), "pool_cls", None), "__module__", ""):
        logger.warning(
            "SIZING_WORKER_METRICS_PORT without PROMETHEUS_MULTIPROC_DIR: a prefork pool's children run "
            "the tasks, and their metrics will not be served; set it, or use --pool=threads or solo"
        )
    served = start_http_server(int(port), registry=registry)
    logger.info("worker metrics served on port %s", port)
    return served


def _on_setup_logging(**kwargs: Any) -> None:
    """Celery would replace the root logger's handlers with its own: Django's LOGGING (applied by django.setup(),
    which Celery's Django fixup runs in every worker) stays in charge, so worker lines have the same format and
    context fields. LOG_LEVEL sets the level, not the worker's --loglevel."""


def celery_signals_connect() -> None:
    """Connect the request-id propagation, the task metrics and the worker's metrics server (deploy/celery.py)."""
    from celery import signals

    signals.before_task_publish.connect(_on_before_task_publish, weak=False, dispatch_uid="sizing-obs-publish")
    signals.task_prerun.connect(_on_task_prerun, weak=False, dispatch_uid="sizing-obs-prerun")
    signals.task_postrun.connect(_on_task_postrun, weak=False, dispatch_uid="sizing-obs-postrun")
    signals.worker_init.connect(_on_worker_init, weak=False, dispatch_uid="sizing-obs-worker-init")
    signals.setup_logging.connect(_on_setup_logging, weak=False, dispatch_uid="sizing-obs-logging")
