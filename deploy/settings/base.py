"""Settings read from the environment, with embedded defaults that need no server (SQLite, a filesystem
broker under var/). Set DATABASE_URL and CELERY_BROKER_URL to use PostgreSQL and Redis."""

from __future__ import annotations

import secrets
from datetime import timedelta
from pathlib import Path

import environ
import plotly
from csp.constants import NONE, SELF, UNSAFE_INLINE
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parents[2]
VAR_DIR = Path(environ.Env().str("SIZING_VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env")  # optional; a missing file is fine


def _secret_key() -> str:
    """SECRET_KEY from the environment, else one generated into var/ on first run and kept."""
    value = env.str("SECRET_KEY", default="")
    if value:
        return value
    key_file = VAR_DIR / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env.bool("DEBUG", default=False)
# with DEBUG, a 500 page shows the signed-in user a traceback: connection URLs and their passwords masked there too
DEFAULT_EXCEPTION_REPORTER_FILTER = "sizing.kernel.error_reports.ConnectionSafeExceptionReporterFilter"
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "sizing",
    "benchmarks_app",
    "reports",
    "frontend",
    "csp",  # django-csp: its system checks and the csp template tags (the header comes from its middleware)
    "axes",  # django-axes: failed sign-ins per user name and address, and the lockout (see "# Security")
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "sizing.kernel.observability.RequestIdMiddleware",  # X-Request-ID in, out and on every log line (issue 10)
    "sizing.kernel.observability.RequestMetricsMiddleware",  # request counts and latency by route name, one log line each
    "sizing.kernel.api_errors.ApiErrorPageMiddleware",  # under /api/, Django's HTML error pages (DEBUG's too) as JSON
    "csp.middleware.CSPMiddleware",  # Content-Security-Policy on every response (CONTENT_SECURITY_POLICY below)
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "sizing.kernel.request_limits.NulCharacterMiddleware",  # 400 for NUL in a path, query or form field (issue 19)
    "sizing.kernel.access.RoleAccessMiddleware",  # pages: the route's policy against the user's role (sizing/kernel/access.py)
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # innermost but for axes (which has no process_exception), so that its process_exception is asked first: a job
    # the broker refused answers 503 (sizing/kernel/jobs.py)
    "sizing.kernel.jobs.JobQueueUnavailableMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: turns a locked-out sign-in into the lockout page
]

ROOT_URLCONF = "deploy.urls"
WSGI_APPLICATION = "deploy.wsgi.application"
ASGI_APPLICATION = "deploy.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
DATABASES["default"]["ATOMIC_REQUESTS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Django's SQLite backend, whose flush passes the signed-report triggers as PostgreSQL's TRUNCATE does
    DATABASES["default"]["ENGINE"] = "deploy.db.sqlite3"
    # the embedded default is written by the web server and several worker threads at once (a load test's shards
    # store requests twice a second): take the write lock when a transaction starts (no deadlocking upgrade from a
    # read lock) and wait for it rather than fail; WAL lets readers go on meanwhile
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 30,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# axes first: it refuses a locked-out user name and address before the password is checked (it logs nobody in)
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "frontend:login"
LOGIN_REDIRECT_URL = "frontend:sizing"
LOGOUT_REDIRECT_URL = "frontend:login"

# Security (issue 9)
# Sign-in throttling (django-axes): AXES_FAILURE_LIMIT wrong passwords for one user name from one address lock that
# pair out for AXES_COOLOFF_MINUTES (another user name, or the same one from elsewhere, still signs in); a success
# forgets the failures. The sign-in page answers a locked-out attempt with 429 and says why, in the user's language.
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.float("AXES_COOLOFF_MINUTES", default=15.0))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_TEMPLATE = "frontend/login.html"  # the sign-in form again, with the lockout message (context: cooloff_*)
AXES_VERBOSE = False  # no "AXES: BEGIN version ..." banner on every management command; lockouts are still logged
# Content-Security-Policy (django-csp 4): every script is a file of ours ('self': no inline script, no eval);
# JSON data blocks ({{ x|json_script }}) are not executed, so they need nothing.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        # style sheets are files of ours ('self'; Plotly's rules are linked as frontend/plotly.css, not injected);
        # style *attributes* stay allowed: the pages draw progress bars and colour swatches with style="width: N%" /
        # "background: ..." set from the data, which a fixed policy cannot list. An attribute styles one element (no
        # selectors, so no CSS-based reading of the page), and script stays strictly 'self'.
        "style-src": [SELF],
        "style-src-attr": [UNSAFE_INLINE],
        "img-src": [SELF, "data:", "blob:"],  # Plotly's "download plot" makes data: and blob: images
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],  # never framed (clickjacking); X_FRAME_OPTIONS says the same to old browsers
        "form-action": [SELF],
    },
}
SECURE_CONTENT_TYPE_NOSNIFF = True  # Django's default, stated: X-Content-Type-Options: nosniff
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
# no script reads the csrftoken cookie: the pages send the form's hidden csrfmiddlewaretoken as X-CSRFToken, and
# the API docs' script gets the token rendered into it by the server
CSRF_COOKIE_HTTPONLY = True

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("zh-hans", _("简体中文"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
# collectstatic's target: under the var dir by default; the image collects into /app/staticfiles at build time, outside
# the var volume (which would hide it)
STATIC_ROOT = Path(env.str("SIZING_STATIC_ROOT", default=str(VAR_DIR / "staticfiles")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True  # serve app static files without collectstatic in development and tests
# plotly.js comes from the installed plotly package (no copy in the repo, no CDN): static/vendor/plotly/plotly.min.js
STATICFILES_DIRS = [("vendor/plotly", Path(plotly.__file__).parent / "package_data")]

# Uploads: config.json files are small; refuse anything large before parsing it.
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024  # non-file form fields and JSON bodies
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024  # larger uploads spill to a temporary file
SIZING_MAX_CONFIG_BYTES = env.int("SIZING_MAX_CONFIG_BYTES", default=1024 * 1024)
# An index of a 1T-parameter checkpoint lists ~100k tensors (~10 MB); headers files are larger.
SIZING_MAX_BOOTLOG_BYTES = env.int("SIZING_MAX_BOOTLOG_BYTES", default=2 * 1024 * 1024)
SIZING_MAX_INDEX_BYTES = env.int("SIZING_MAX_INDEX_BYTES", default=32 * 1024 * 1024)
# A CSV request log for fitting a workload profile: ~8 MB holds ~200,000 requests, a busy week of one service.
SIZING_MAX_WORKLOAD_CSV_BYTES = env.int("SIZING_MAX_WORKLOAD_CSV_BYTES", default=8 * 1024 * 1024)
# one probe file or one output per upload (the parsers refuse more than 4 MiB of one text anyway)
SIZING_MAX_FINGERPRINT_BYTES = env.int("SIZING_MAX_FINGERPRINT_BYTES", default=4 * 1024 * 1024)
# Deployment searches fan out over Celery workers in chunks: "auto" when more than one worker answers a ping,
# "always" (even with one worker: the chunks queue up) or "never" (in the worker that took the job)
SIZING_SEARCH_FANOUT = env.str("SIZING_SEARCH_FANOUT", default="auto")
SIZING_SEARCH_CHUNK = env.int("SIZING_SEARCH_CHUNK", default=50)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "sizing.kernel.apikeys.ApiKeyAuthentication",  # Authorization: Bearer <key> (per-user keys, stored hashed)
        "rest_framework.authentication.SessionAuthentication",
        # authenticates nobody: counts what the two above did not authenticate against the anonymous rate
        "sizing.kernel.apikeys.AnonymousThrottleAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["sizing.kernel.access.RoleAccess"],
    # JSON bodies: size and depth limits, NUL refused (limits in sizing/kernel/json_limits.py); forms and uploads as DRF's
    "DEFAULT_PARSER_CLASSES": [
        "sizing.kernel.request_limits.LimitedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # per user over all of the user's API keys, per user for a browser session, and per client address for
    # anonymous and refused-key requests (counted while authenticating); `SIZING_THROTTLE_*` change the rates
    "DEFAULT_THROTTLE_CLASSES": [
        "sizing.kernel.apikeys.ApiKeyRateThrottle",
        "sizing.kernel.apikeys.ApiKeyBurstThrottle",
        "sizing.kernel.apikeys.SessionThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "sustained": env.str("SIZING_THROTTLE_SUSTAINED", default="3000/hour"),
        "burst": env.str("SIZING_THROTTLE_BURST", default="120/min"),
        "session": env.str("SIZING_THROTTLE_SESSION", default="1200/min"),
        "anonymous": env.str("SIZING_THROTTLE_ANONYMOUS", default="300/min"),
    },
    "DEFAULT_SCHEMA_CLASS": "sizing.kernel.api_errors.ApiAutoSchema",  # the error answers documented on every operation
    "EXCEPTION_HANDLER": "sizing.kernel.api_errors.api_exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "LLM deployment sizing API",
    "DESCRIPTION": "Memory bills, catalogs and estimates for private LLM deployments. Bytes everywhere.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # row ids in paths (sizing/kernel/url_converters.py): up to 18 digits, within the database's 64-bit integers
    "PATH_CONVERTER_OVERRIDES": {"id": {"type": "integer", "minimum": 0, "maximum": 999_999_999_999_999_999}},
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],  # the schema is public; every operation is not
    "SERVE_AUTHENTICATION": [],
    # the ways to sign in (AnonymousThrottleAuthentication signs nobody in: not a security scheme)
    "AUTHENTICATION_WHITELIST": [
        "sizing.kernel.apikeys.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # one name per choice set shared by several serializers
    "ENUM_NAME_OVERRIDES": {
        "EngineEnum": "sizing.estimator.engines.ENGINE_CHOICES",
        "KvDtypeEnum": "sizing.estimator.dtypes.KV_CACHE_DTYPES",
        "WeightFormatEnum": "sizing.estimator.formats.WEIGHT_FORMAT_CHOICES",
        "SimulationKindEnum": "sizing.models.SimulationJob.Kind",
        "SimulationStatusEnum": "sizing.models.SimulationJob.Status",
        "BenchmarkRunStatusEnum": "benchmarks_app.models.BenchmarkRun.Status",
        "EndpointKindEnum": "benchmarks_app.models.Endpoint.Kind",
    },
}

# The cache holds the API's throttle counters: shared by every web process with Redis (CACHE_URL=redis://...),
# per process in memory by default
_CACHE_URL = env.str("CACHE_URL", default="")
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _CACHE_URL}
        if _CACHE_URL.startswith(("redis://", "rediss://"))
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# Celery: a broker that needs no server by default (kombu's filesystem transport under var/).
_BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {}
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("out", "processed", "control"):
        (_BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_BROKER_DIR / "out"),
        "data_folder_out": str(_BROKER_DIR / "out"),
        "processed_folder": str(_BROKER_DIR / "processed"),
        "store_processed": False,
        "control_folder": str(_BROKER_DIR / "control"),
    }
CELERY_RESULT_BACKEND = None  # results live in our own tables
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "estimates"
CELERY_TASK_ROUTES = {"benchmarks_app.tasks.loadtest_shard_task": {"queue": "loadtests"}}

# Reports (issue 8): the organisation's signing certificate (PKCS#12) and its passphrase; without one, a self-signed
# certificate of REPORTS_SIGNING_ORGANISATION is made on first use under var/signing/ (the embedded default)
REPORTS_SIGNING_P12 = env.str("REPORTS_SIGNING_P12", default="")
REPORTS_SIGNING_PASSPHRASE = env.str("REPORTS_SIGNING_PASSPHRASE", default="")
REPORTS_SIGNING_ORGANISATION = env.str("REPORTS_SIGNING_ORGANISATION", default="LLM Sizing Service")
# the organisation's earlier signing certificates (PEM or DER files, comma-separated): reports they signed still verify
# as valid after the certificate is rotated (docs/operations.md)
REPORTS_SIGNING_PREVIOUS_CERTIFICATES = env.list("REPORTS_SIGNING_PREVIOUS_CERTIFICATES", default=[])
REPORTS_MAX_VERIFY_BYTES = env.int("REPORTS_MAX_VERIFY_BYTES", default=20 * 1024 * 1024)  # a PDF to verify

# Load tests (issue 7): workers on the `loadtests` queue, each driving one shard of a test.
LOADTEST_MAX_WORKERS = env.int("LOADTEST_MAX_WORKERS", default=16)  # shards one test may fan out to
LOADTEST_MAX_DURATION_S = env.float("LOADTEST_MAX_DURATION_S", default=4 * 3600.0)
LOADTEST_START_LEAD_S = env.float("LOADTEST_START_LEAD_S", default=2.0)  # the common start is this far ahead
LOADTEST_LATE_START_S = env.float("LOADTEST_LATE_START_S", default=10.0)  # a shard this late is refused
LOADTEST_HEARTBEAT_TIMEOUT_S = env.float("LOADTEST_HEARTBEAT_TIMEOUT_S", default=30.0)  # then its worker is lost
LOADTEST_QUEUE_TIMEOUT_S = env.float("LOADTEST_QUEUE_TIMEOUT_S", default=3600.0)  # no worker took it: failed
# Every job (issue 19): one no worker took within JOB_QUEUE_TIMEOUT_S of being queued, or one running past its budget
# (its task's Celery hard time limit plus a minute, else JOB_RUN_TIMEOUT_S), is failed by the reaper with the reason
JOB_QUEUE_TIMEOUT_S = env.float("JOB_QUEUE_TIMEOUT_S", default=3600.0)
JOB_RUN_TIMEOUT_S = env.float("JOB_RUN_TIMEOUT_S", default=6 * 3600.0)
# Celery beat (`make run`, compose's and Kubernetes' beat): lost load-test workers are noticed, and stuck jobs of every
# kind ended, even when nobody reads them (sizing/kernel/jobs.py). A run that would overlap the next is dropped (expires).
CELERY_BEAT_SCHEDULE = {
    "loadtest-reap": {
        "task": "benchmarks_app.tasks.loadtest_reap_task",
        "schedule": 30.0,
        "options": {"expires": 30.0},
    },
    "jobs-reap": {"task": "sizing.tasks.jobs_reap_task", "schedule": 60.0, "options": {"expires": 60.0}},
}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

# Observability (issue 10): /healthz, /readyz, /metrics (sizing/kernel/health.py, sizing/kernel/observability.py)
# - LOG_FORMAT: "text" (readable lines, the local default) or "json" (one JSON object a line, python-json-logger;
#   the production default in deploy/settings/production.py). Every line has the request id (X-Request-ID, which
#   follows a job into the worker) and, when known, user_id, organisation_id, task_id and task_name. One line per
#   request (logger sizing.requests): method, route name, status, duration; never query strings, headers or bodies.
# - SIZING_METRICS_TOKEN: /metrics answers `Authorization: Bearer <token>` only; empty (the default) turns it off (404).
# - PROMETHEUS_MULTIPROC_DIR (environment only, read by prometheus_client when the process starts): several processes
#   (gunicorn's workers, Celery's) write their metrics there and /metrics adds them up; empty it before starting.
# - SIZING_WORKER_METRICS_PORT (environment only): a Celery worker serves its task metrics on that port.
# - SIZING_OBSERVABILITY_TIMEOUT_S: how long /readyz and a scrape wait for the broker.
LOG_FORMAT = env.str("LOG_FORMAT", default="text")
SIZING_METRICS_TOKEN = env.str("SIZING_METRICS_TOKEN", default="")
SIZING_OBSERVABILITY_TIMEOUT_S = env.float("SIZING_OBSERVABILITY_TIMEOUT_S", default=2.0)


def logging_settings(log_format: str) -> dict:
    """LOGGING for LOG_FORMAT "text" or "json" (production.py calls it again with its own default)."""
    if log_format not in ("text", "json"):
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(f"LOG_FORMAT must be text or json, not {log_format!r}")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": "sizing.kernel.observability.RequestContextFilter"}},
        "formatters": {
            "text": {"()": "sizing.kernel.observability.TextLogFormatter"},
            "json": {"()": "sizing.kernel.observability.JsonLogFormatter"},
        },
        "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["context"], "formatter": log_format}},
        "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
        # pyHanko logs a traceback at WARNING for every tampered or untrusted PDF a user asks us to verify: the
        # answer says so already
        "loggers": {
            "pyhanko": {"level": "ERROR"},
            "pyhanko_certvalidator": {"level": "ERROR"},
            "weasyprint": {"level": "WARNING"},
            "fontTools": {"level": "WARNING"},
        },
    }


LOGGING = logging_settings(LOG_FORMAT)

SIZING_DEFAULT_MODEL = env.str("SIZING_DEFAULT_MODEL", default="meta-llama/Meta-Llama-3-8B")
SIZING_DEMO_ORGANISATION = env.str("SIZING_DEMO_ORGANISATION", default="Demo Integrator")
# The bundled simulator `make run` starts beside the service (manage.py simserve), registered as the demo's endpoint
SIZING_SIMULATOR_URL = env.str("SIZING_SIMULATOR_URL", default="http://127.0.0.1:8001")
SIZING_SIMULATOR_MODEL = env.str("SIZING_SIMULATOR_MODEL", default="meta-llama/Meta-Llama-3-8B")
SIZING_SIMULATOR_GPU = env.str("SIZING_SIMULATOR_GPU", default="nvidia-l4-24gb")

# Inference endpoints' API keys are stored encrypted (Fernet) with a key derived (HKDF-SHA256) from
# SIZING_SECRETS_KEY, or from SECRET_KEY when it is unset (so a one-command start works). Changing the material makes
# the stored keys unreadable: put the old material in SIZING_SECRETS_KEY_FALLBACKS (comma-separated) and run
# `python manage.py endpoint_keys_rotate` (see benchmarks_app/kernel/endpoint_secrets.py).
SIZING_SECRETS_KEY = env.str("SIZING_SECRETS_KEY", default="")
SIZING_SECRETS_KEY_FALLBACKS = env.list("SIZING_SECRETS_KEY_FALLBACKS", default=[])
