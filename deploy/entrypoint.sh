#!/usr/bin/env bash
# The image's entrypoint: one image, one role per container, chosen by the first argument.
#
#   web              gunicorn (deploy.wsgi) on 0.0.0.0:8000
#   worker           Celery worker: estimates, simulations, quotes, imports, reports (and the default "celery") queues
#   loadtest-worker  Celery worker on the loadtests queue (one load-test shard per thread)
#   beat             Celery beat (exactly one per deployment); its schedule file lives under SIZING_VAR_DIR
#   migrate          apply the migrations and load the shipped catalogs, then exit (a one-shot job before rollout)
#   manage ARGS...   python manage.py ARGS...
#   anything else    executed as is (e.g. bash)
#
# Environment (all optional; deploy/.env.example documents them):
#   MIGRATE_ON_START=1     migrate + catalog_load before starting (default 0: the `migrate` job/service does it)
#   SKIP_WAIT_FOR_DB=1     do not wait for the database first (the service roles and migrate wait by default)
#   WAIT_FOR_DB_TIMEOUT    seconds to wait for the database (default 60)
#   GUNICORN_WORKERS       web processes (default 2 x CPUs + 1, at most GUNICORN_MAX_WORKERS, default 8)
#   GUNICORN_THREADS       threads per process (default 4), GUNICORN_TIMEOUT (default 120 s),
#   GUNICORN_GRACEFUL_TIMEOUT (default 30 s), GUNICORN_KEEPALIVE (default 5 s), GUNICORN_MAX_REQUESTS (default 1000)
#   CELERY_QUEUES, CELERY_CONCURRENCY (worker), LOADTEST_CONCURRENCY (loadtest-worker), CELERY_LOG_LEVEL
# Every role ends in exec: the server replaces this shell (it becomes PID 1), so SIGTERM reaches it directly.
set -euo pipefail
cd "$(dirname "$0")/.."

role="${1:-web}"
if [ "$#" -gt 0 ]; then
    shift
fi
var_dir="${SIZING_VAR_DIR:-var}"
log_level="${CELERY_LOG_LEVEL:-${LOG_LEVEL:-INFO}}"

needs_db=0
case "$role" in
    web | worker | loadtest-worker | beat | migrate) needs_db=1 ;;
esac
if [ "${MIGRATE_ON_START:-0}" = "1" ]; then
    needs_db=1
fi
if [ "$needs_db" = "1" ] && [ "${SKIP_WAIT_FOR_DB:-0}" != "1" ]; then
    python manage.py wait_for_db --timeout "${WAIT_FOR_DB_TIMEOUT:-60}"
fi

migrate() {
    python manage.py migrate --noinput
    python manage.py catalog_load
}
if [ "${MIGRATE_ON_START:-0}" = "1" ] && [ "$role" != "migrate" ]; then
    migrate
fi

# prometheus_client's multi-process directory must start empty (files of dead processes would be added up forever)
if [ -n "${PROMETHEUS_MULTIPROC_DIR:-}" ]; then
    case "$role" in
        web | worker | loadtest-worker | beat)
            mkdir -p "$PROMETHEUS_MULTIPROC_DIR"
            find "$PROMETHEUS_MULTIPROC_DIR" -mindepth 1 -delete
            ;;
    esac
fi

cpu_count() {  # the CPUs this container may run on (its cpuset; a CPU quota is not seen: set GUNICORN_WORKERS)
    local n
    n="$(nproc 2>/dev/null || echo 1)"
    case "$n" in '' | *[!0-9]*) n=1 ;; esac
    echo "$n"
}

case "$role" in
    web)
        if [ -n "${GUNICORN_WORKERS:-}" ]; then
            workers="$GUNICORN_WORKERS"
        else
            workers=$((2 * $(cpu_count) + 1))
            max_workers="${GUNICORN_MAX_WORKERS:-8}"
            if [ "$workers" -gt "$max_workers" ]; then
                workers="$max_workers"
            fi
        fi
        extra=()
        # gunicorn >= 25 opens a control socket under $HOME, which is read-only in the hardened pods; unused here
        if gunicorn --help 2>/dev/null | grep -q -- '--no-control-socket'; then
            extra+=(--no-control-socket)
        fi
        exec gunicorn deploy.wsgi:application \
            --bind "0.0.0.0:${PORT:-8000}" \
            --workers "$workers" \
            --threads "${GUNICORN_THREADS:-4}" \
            --worker-class gthread \
            --timeout "${GUNICORN_TIMEOUT:-120}" \
            --graceful-timeout "${GUNICORN_GRACEFUL_TIMEOUT:-30}" \
            --keep-alive "${GUNICORN_KEEPALIVE:-5}" \
            --max-requests "${GUNICORN_MAX_REQUESTS:-1000}" \
            --max-requests-jitter "${GUNICORN_MAX_REQUESTS_JITTER:-100}" \
            --worker-tmp-dir "${GUNICORN_WORKER_TMP_DIR:-/dev/shm}" \
            --access-logfile - \
            --error-logfile - \
            "${extra[@]}" \
            "$@"
        ;;
    worker)
        exec celery -A deploy worker \
            --queues="${CELERY_QUEUES:-estimates,simulations,quotes,imports,reports,celery}" \
            --pool=threads \
            --concurrency="${CELERY_CONCURRENCY:-4}" \
            --loglevel="$log_level" \
            "$@"
        ;;
    loadtest-worker)
        # a load test holds its worker thread for the whole test: its own queue and workers, so estimates never
        # wait behind one
        exec celery -A deploy worker \
            --queues=loadtests \
            --hostname 'loadtests@%h' \
            --pool=threads \
            --concurrency="${LOADTEST_CONCURRENCY:-4}" \
            --loglevel="$log_level" \
            "$@"
        ;;
    beat)
        mkdir -p "$var_dir"
        exec celery -A deploy beat \
            --schedule="$var_dir/celerybeat-schedule" \
            --loglevel="$log_level" \
            "$@"
        ;;
    migrate)
        python manage.py migrate --noinput "$@"
        exec python manage.py catalog_load
        ;;
    manage)
        exec python manage.py "$@"
        ;;
    *)
        exec "$role" "$@"
        ;;
esac
