"""Test settings: base's, with each test process on its own var dir, broker and database.

`make test` runs the suite in several processes (pytest-xdist): each one (gw0, gw1, ... or "main" without xdist)
gets its own var dir under $SIZING_VAR_DIR (default var/test/), so its filesystem broker, signing certificate and
SQLite test database are its own, and a worker process a test starts (which inherits this environment) shares them.
With Redis (CELERY_BROKER_URL=redis://..., as in CI) every key of a process carries its own prefix, so a message one
process enqueues is never taken by a worker another process started.

On the embedded defaults the test database is a file (var/test/<process>/test.sqlite3, WAL, a 30 s busy timeout):
the worker processes the integration tests start open the same file; in memory they could not.
"""

import os
from pathlib import Path

_PROCESS = os.environ.get("PYTEST_XDIST_WORKER", "main")
if not os.environ.get("SIZING_TEST_VAR_DIR"):
    # the first test settings of this process: a subprocess (a Celery worker a test starts) inherits both variables
    # and so lands in the same folder
    _root = Path(os.environ.get("SIZING_VAR_DIR") or Path(__file__).resolve().parents[2] / "var" / "test")
    os.environ["SIZING_TEST_VAR_DIR"] = str(_root / _PROCESS)
    os.environ["SIZING_VAR_DIR"] = os.environ["SIZING_TEST_VAR_DIR"]

# anonymous requests count per client address, and every test client is 127.0.0.1: a test that walks every route
# anonymously (tests/security/test_isolation.py) must not trip the rate; the throttle's own tests set theirs
os.environ.setdefault("SIZING_THROTTLE_ANONYMOUS", "1000000/min")

from deploy.settings.base import *  # noqa: E402, F403
from deploy.settings.base import CELERY_BROKER_TRANSPORT_OPTIONS, CELERY_BROKER_URL, DATABASES, VAR_DIR  # noqa: E402

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast user creation in tests

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}

if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        **CELERY_BROKER_TRANSPORT_OPTIONS,
        "global_keyprefix": f"sizing-test-{_PROCESS}:",
    }
