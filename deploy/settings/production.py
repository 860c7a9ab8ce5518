"""Production settings: secrets and URLs must come from the environment, no defaults."""

from deploy.settings.base import *  # noqa: F403
from deploy.settings.base import env

SECRET_KEY = env.str("SECRET_KEY")
DATABASES = {"default": env.db("DATABASE_URL")}
DATABASES["default"]["ATOMIC_REQUESTS"] = True
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL")
DEBUG = False
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
