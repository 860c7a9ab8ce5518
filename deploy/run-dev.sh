#!/usr/bin/env bash
# `make run`: set up the embedded defaults (translations, migrations, catalogs, the demo login, the bundled simulator's
# endpoint), start the Celery workers, the simulator and the web server, wait until the dashboard answers, then print
# what a newcomer needs: the URL, the demo login and where the logs are. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
SIM_PORT=${SIM_PORT:-8001}
export DEBUG=${DEBUG:-0}  # no debug pages (tracebacks) unless asked for; WhiteNoise serves the static files
export SIZING_SIMULATOR_URL=${SIZING_SIMULATOR_URL:-http://127.0.0.1:$SIM_PORT}
VAR=${SIZING_VAR_DIR:-var}
mkdir -p "$VAR"
started=$SECONDS

step() { printf '== %s\n' "$*"; }

step "translations, database migrations, catalogs"
"$PY" manage.py compile_translations --verbosity 0 >/dev/null
"$PY" manage.py migrate --noinput --verbosity 0
"$PY" manage.py catalog_load
login=$("$PY" manage.py demo_setup --no-color)
"$PY" manage.py simulator_register >/dev/null

pids=()
stop() {
    trap - EXIT INT TERM
    [[ ${#pids[@]} -gt 0 ]] && kill "${pids[@]}" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap stop EXIT
trap 'echo; echo "stopping"; exit 0' INT TERM

step "starting the workers, the bundled simulator and the web server"
"$PY" -m celery -A deploy worker --loglevel=INFO --queues=estimates,simulations,imports,reports,celery --pool=threads \
    --concurrency=2 -n "main@%h" >"$VAR/worker.log" 2>&1 &
pids+=($!)
# quotes (deployment searches for sales, minutes each) on their own worker, so they never hold the threads that
# estimates and report signing wait for (issue 19)
"$PY" -m celery -A deploy worker --loglevel=INFO --queues=quotes --pool=threads --concurrency=2 \
    -n "quotes@%h" >"$VAR/worker-quotes.log" 2>&1 &
pids+=($!)
# load tests hold their worker for the whole test: their own worker, so estimates never wait behind one
"$PY" -m celery -A deploy worker --loglevel=INFO --queues=loadtests --pool=threads --concurrency=4 \
    -n "loadtests@%h" >"$VAR/worker-loadtests.log" 2>&1 &
pids+=($!)
# beat: the periodic reaper, so a lost worker's job ends failed even when nobody reads it (sizing/kernel/jobs.py)
"$PY" -m celery -A deploy beat --loglevel=INFO --schedule="$VAR/celerybeat-schedule" --pidfile= \
    >"$VAR/beat.log" 2>&1 &
pids+=($!)
# the simulator of a deployment (the demo's Llama 3 8B on one L4), registered as the demo's "Bundled simulator"
"$PY" manage.py simserve --model "${SIZING_SIMULATOR_MODEL:-meta-llama/Meta-Llama-3-8B}" \
    --gpu "${SIZING_SIMULATOR_GPU:-nvidia-l4-24gb}" --host 127.0.0.1 --port "$SIM_PORT" >"$VAR/simulator.log" 2>&1 &
pids+=($!)
"$PY" manage.py runserver --noreload "$HOST:$PORT" >"$VAR/web.log" 2>&1 &
web=$!
pids+=("$web")

# the dashboard is up when its liveness probe answers; a web server that exits (a port in use) says why
url="http://$HOST:$PORT"
until "$PY" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)" "$url/healthz" \
        2>/dev/null; do
    if ! kill -0 "$web" 2>/dev/null; then
        echo "the web server stopped; the end of $VAR/web.log:" >&2
        tail -n 20 "$VAR/web.log" >&2
        exit 1
    fi
    sleep 0.3
done

cat <<EOF

LLM sizing is running (ready in $((SECONDS - started)) s)
  dashboard   $url/   (API: $url/api/docs/)
  sign in     ${login#demo login: }   (a new password at each start)
  simulator   $SIZING_SIMULATOR_URL   (the demo's endpoint "Bundled simulator")
  logs        $VAR/web.log  $VAR/worker.log  $VAR/worker-quotes.log  $VAR/worker-loadtests.log  $VAR/beat.log  $VAR/simulator.log
  stop        Ctrl-C

EOF
wait "$web"
