"""Production settings: secrets and URLs must come from the environment, no defaults. `manage.py check --deploy`
passes with them (tests/security/test_hardening.py runs it)."""

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest

from deploy.settings.base import *  # noqa: F403
from deploy.settings.base import env, logging_settings

SECRET_KEY = env.str("SECRET_KEY")
DATABASES = {"default": env.db("DATABASE_URL")}
DATABASES["default"]["ATOMIC_REQUESTS"] = True
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL")
DEBUG = False
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS")  # required: the host names the service answers to
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured("Set ALLOWED_HOSTS to the service's host names (comma-separated)")

# Observability (issue 10): one JSON object a log line by default (LOG_FORMAT=text for readable lines)
LOG_FORMAT = env.str("LOG_FORMAT", default="json")
LOGGING = logging_settings(LOG_FORMAT)

# HTTPS only: plain HTTP is redirected, except the probes and the metrics (load balancers, orchestrators and Prometheus
# reach them over HTTP inside the cluster)
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
SECURE_REDIRECT_EXEMPT = [r"^health/$", r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)  # a year
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
# Preloading puts the domain into the browsers' built-in HTTPS-only lists: hard to undo, and it binds every subdomain
# of the registrable domain, which the owner of that domain decides (and submits at hstspreload.org), not this
# service. Off by default, so check --deploy's reminder (security.W021) is silenced while it is off; set
# SECURE_HSTS_PRELOAD=1 once the domain is to be preloaded.
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
if not SECURE_HSTS_PRELOAD:
    SILENCED_SYSTEM_CHECKS = ["security.W021"]
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)

# Behind a reverse proxy that terminates TLS: the header it sets to tell HTTPS from HTTP, as Django names it in
# request.META (e.g. SECURE_PROXY_SSL_HEADER_NAME=HTTP_X_FORWARDED_PROTO). Only set it when the proxy always sets
# (or strips) that header: otherwise a client could claim HTTPS.
_PROXY_SSL_HEADER_NAME = env.str("SECURE_PROXY_SSL_HEADER_NAME", default="")
if _PROXY_SSL_HEADER_NAME:
    SECURE_PROXY_SSL_HEADER = (_PROXY_SSL_HEADER_NAME, env.str("SECURE_PROXY_SSL_HEADER_VALUE", default="https"))

# Sign-in throttling locks a user name per client address: behind SIZING_TRUSTED_PROXIES reverse proxies (each
# appending to X-Forwarded-For), the client is the address that many entries from the right; without proxies it is
# REMOTE_ADDR (else every client would share the proxy's address). Entries further left can be forged by the client.
_TRUSTED_PROXIES = env.int("SIZING_TRUSTED_PROXIES", default=0)


def _client_ip(request: HttpRequest) -> str | None:
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    if len(forwarded) >= _TRUSTED_PROXIES:
        return forwarded[-_TRUSTED_PROXIES]
    return request.META.get("REMOTE_ADDR")


if _TRUSTED_PROXIES > 0:
    AXES_CLIENT_IP_CALLABLE = _client_ip
