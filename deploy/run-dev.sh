#!/usr/bin/env bash
# Start a Celery worker and the web server together; stopping one (Ctrl-C) stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
export DEBUG=${DEBUG:-1}

"$PY" -m celery -A deploy worker --loglevel=INFO --queues=estimates,simulations,imports,celery --pool=threads --concurrency=2 \
    >var/worker.log 2>&1 &
worker=$!
trap 'kill "$worker" 2>/dev/null || true' EXIT INT TERM
echo "worker started (pid $worker, log var/worker.log)"
echo "dashboard: http://$HOST:$PORT/   API docs: http://$HOST:$PORT/api/docs/"
"$PY" manage.py runserver "$HOST:$PORT"
