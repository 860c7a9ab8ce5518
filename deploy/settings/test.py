"""Test settings: the same as base; DATABASE_URL and CELERY_BROKER_URL point at PostgreSQL and Redis in CI."""

from deploy.settings.base import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast user creation in tests
