#!/usr/bin/env bash
# Start the Celery workers, the bundled simulator and the web server together; stopping one (Ctrl-C) stops all.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
SIM_PORT=${SIM_PORT:-8001}
export DEBUG=${DEBUG:-1}
export SIZING_SIMULATOR_URL=${SIZING_SIMULATOR_URL:-http://127.0.0.1:$SIM_PORT}
mkdir -p var

"$PY" -m celery -A deploy worker --loglevel=INFO --queues=estimates,simulations,imports,reports,celery --pool=threads \
    --concurrency=2 -n "main@%h" >var/worker.log 2>&1 &
worker=$!
# load tests hold their worker for the whole test: their own worker, so estimates never wait behind one
"$PY" -m celery -A deploy worker --loglevel=INFO --queues=loadtests --pool=threads --concurrency=4 \
    -n "loadtests@%h" >var/worker-loadtests.log 2>&1 &
loadtests=$!
# the simulator of a deployment (the demo's Llama 3 8B on one L4), registered as the demo's "Bundled simulator"
"$PY" manage.py simserve --model "${SIZING_SIMULATOR_MODEL:-meta-llama/Meta-Llama-3-8B}" \
    --gpu "${SIZING_SIMULATOR_GPU:-nvidia-l4-24gb}" --host 127.0.0.1 --port "$SIM_PORT" >var/simulator.log 2>&1 &
simulator=$!
trap 'kill "$worker" "$loadtests" "$simulator" 2>/dev/null || true' EXIT INT TERM
echo "workers started (pids $worker, $loadtests; logs var/worker.log, var/worker-loadtests.log)"
echo "simulator: $SIZING_SIMULATOR_URL (pid $simulator, log var/simulator.log)"
echo "dashboard: http://$HOST:$PORT/   API docs: http://$HOST:$PORT/api/docs/"
"$PY" manage.py runserver "$HOST:$PORT"
