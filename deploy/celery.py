"""The Celery app. Broker and settings come from Django settings (CELERY_* names)."""

import os

from celery import Celery

from sizing.kernel.observability import celery_signals_connect

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "deploy.settings.base")

app = Celery("deploy")
app.set_default()  # celery.current_app is this app in every thread (the apps read task limits through it)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
celery_signals_connect()  # request ids into task headers and logs, task metrics, the worker's metrics port
