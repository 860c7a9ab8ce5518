"""Speed of importing a large benchmark run (not collected by pytest; needs the configured database).

A `vllm bench serve --save-detailed` file of 100,000 requests (tests/benchmarks_app/vllm_files.py: every 50th
failed, 16 output tokens each, ~25 MB) is
(a) read and kept as the API does on upload (every importer tried, the file and the run row stored),
(b) stored request by request as the Celery task does (`benchmark_requests_store`: the file read again, 100,000
    rows bulk-inserted with progress), target (a) + (b) under 10 s;
(c) then its detail API, its analysis API (CDFs, goodput counted in the database, measured against estimated)
    and its detail page are timed, target each under 1 s.

It runs in a throwaway database (Django's test database of the configured one), created and dropped here.
Exit status 1 when a target is missed.

    DATABASE_URL=postgres://... .venv/bin/python tests/benchmarks/import_speed.py [--requests N]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "deploy.settings.test")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

IMPORT_TARGET_S = 10.0
PAGE_TARGET_S = 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100_000)
    args = parser.parse_args(argv)
    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        return run(args.requests)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def run(requests: int) -> int:
    from benchmarks_app.models import BenchmarkRequest
    from benchmarks_app.services.runs import benchmark_import, benchmark_requests_store
    from sizing.models import Gpu, Membership, Organisation
    from sizing.services.estimates import catalog_load
    from tests.benchmarks_app.vllm_files import vllm_file

    catalog_load()
    organisation = Organisation.objects.create(name="Speed")
    user = get_user_model().objects.create_user(username="speed", password="speed-speed-speed")
    Membership.objects.create(user=user, organisation=organisation)
    data = vllm_file(requests, failed_every=50)
    print(f"file: {requests:,} requests, {len(data) / 2**20:.1f} MiB")

    started = time.perf_counter()
    queued: list[int] = []
    (run,) = benchmark_import(
        organisation=organisation,
        user=user,
        name="speed.json",
        data=data,
        gpu=Gpu.objects.get(slug="nvidia-h100-sxm-80gb"),
        engine="vllm",
        store_requests=queued.append,
    )
    upload_s = time.perf_counter() - started
    started = time.perf_counter()
    benchmark_requests_store(file_id=run.file_id)
    store_s = time.perf_counter() - started
    stored = BenchmarkRequest.objects.filter(run=run).count()
    total_s = upload_s + store_s
    import_ok = total_s < IMPORT_TARGET_S and stored == requests
    print(f"(a) upload (read, keep, run row): {upload_s:.2f} s")
    print(f"(b) worker task (read again, {stored:,} rows bulk-inserted): {store_s:.2f} s")
    print(f"    total {total_s:.2f} s (target < {IMPORT_TARGET_S:.0f} s) -> {'ok' if import_ok else 'MISSED'}")

    client = Client()
    client.force_login(user)
    pages_ok = True
    for label, url in (
        ("detail API", f"/api/v1/benchmark-runs/{run.pk}/"),
        (
            "analysis API (CDFs, goodput, model)",
            f"/api/v1/benchmark-runs/{run.pk}/analysis?slo_ttft_ms=35&slo_tpot_ms=10",
        ),
        ("detail page", f"/benchmarks/{run.pk}/"),
    ):
        client.get(url)  # warm (imports, caches)
        started = time.perf_counter()
        response = client.get(url)
        elapsed = time.perf_counter() - started
        ok = response.status_code == 200 and elapsed < PAGE_TARGET_S
        if response.status_code == 404 and label == "detail page":
            print(f"(c) {label}: not built yet")
            continue
        pages_ok = pages_ok and ok
        print(
            f"(c) {label}: {elapsed * 1000:.0f} ms, HTTP {response.status_code} "
            f"(target < {PAGE_TARGET_S * 1000:.0f} ms) -> {'ok' if ok else 'MISSED'}"
        )
    return 0 if import_ok and pages_ok else 1


if __name__ == "__main__":
    sys.exit(main())
