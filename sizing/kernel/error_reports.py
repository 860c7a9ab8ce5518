"""What Django's debug error page may show: connection URLs masked.

Django's SafeExceptionReporterFilter masks settings and request.META entries whose name says API, TOKEN, KEY, SECRET,
PASS or SIGNATURE. DATABASE_URL, CELERY_BROKER_URL and CACHE_URL say none of those, yet carry a password in their
user-info (`redis://:hunter2@cache:6379/0`), and runserver copies the whole environment into request.META; the
DATABASES and CACHES settings hold the same hosts. With DEBUG on (`DEBUG=1 make run`), a 500 page shows the signed-in
user its traceback: these names are masked too, and every other value has the password of any URL it holds replaced.
"""

from __future__ import annotations

import re
from typing import Any

from django.views.debug import SafeExceptionReporterFilter

_URL_PASSWORD = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^:@/\s]*):(?P<password>[^@/\s]+)@", re.I)


class ConnectionSafeExceptionReporterFilter(SafeExceptionReporterFilter):
    """Django's filter, plus connection settings and environment variables (`*_URL`, `*DSN*`, DATABASES, CACHES,
    BROKER) masked whole, and a password inside any other URL masked."""

    hidden_settings = re.compile(
        r"API|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|_URL$|DSN|DATABASE|CACHES|BROKER|LOCATION", flags=re.I
    )

    def cleanse_setting(self, key: Any, value: Any) -> Any:
        cleansed = super().cleanse_setting(key, value)
        if type(cleansed) is str:  # not a lazy object that merely looks like one (axes' settings)
            return _URL_PASSWORD.sub(lambda m: f"{m['scheme']}{m['user']}:{self.cleansed_substitute}@", cleansed)
        return cleansed
