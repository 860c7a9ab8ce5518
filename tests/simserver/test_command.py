"""The two entry points: `python -m benchmarks_app.simserver` (catalog files, no Django) and `manage.py simserve`
(the service layer: catalog rows, a saved deployment's plan). `--check` prints the plan and exits."""

from __future__ import annotations

import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from benchmarks_app.simserver.catalog import catalog_arch, catalog_gpu
from sizing.estimator.memory import EstimateRequest, estimate_memory
from sizing.models import Deployment, Gpu, LlmModel
from tests.simserver.helpers import H100, L4, MODEL

ROOT = Path(__file__).resolve().parents[2]


def test_python_m_prints_the_plan_and_predictions():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks_app.simserver",
            "--model",
            MODEL,
            "--gpu",
            L4,
            "--speedup",
            "10",
            "--port",
            "8123",
            "--check",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    # the plan is the estimator's: the KV tokens it prints are the catalog card's (CUDA-visible total) estimate
    tokens = estimate_memory(EstimateRequest(arch=catalog_arch(MODEL), gpu=catalog_gpu(L4))).kv_capacity_tokens
    assert f"per replica: {tokens:,} KV tokens" in result.stdout
    assert "predicted on an idle replica: TTFT of a 1000-token prompt" in result.stdout
    assert "wall clock" in result.stdout
    assert f"serving '{MODEL}' at http://127.0.0.1:8123/v1" in result.stdout


def test_python_m_refuses_an_unknown_gpu():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks_app.simserver",
            "--model",
            MODEL,
            "--gpu",
            "nvidia-imaginary",
            "--check",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "unknown GPU" in result.stderr


@pytest.mark.django_db
def test_simserve_builds_the_plan_through_the_services(catalog):
    out = StringIO()
    call_command("simserve", "--model", MODEL, "--gpu", H100, "--zero-delay", "--check", stdout=out)
    text = out.getvalue()
    assert "1 replica(s) x TP 1" in text
    assert "zero-delay" in text


@pytest.mark.django_db
def test_both_entry_points_plan_the_same_kv_cache(catalog):
    # given the catalog files (python -m, no Django) and the catalog rows (manage.py simserve) for one L4
    out = StringIO()
    call_command("simserve", "--model", MODEL, "--gpu", L4, "--zero-delay", "--check", stdout=out)
    files = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks_app.simserver",
            "--model",
            MODEL,
            "--gpu",
            L4,
            "--check",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    # then: the same card facts (CUDA-visible total included) give the same pool
    line = next(row for row in files.splitlines() if row.startswith("per replica:"))
    assert line.split(" KV tokens")[0] in out.getvalue()


@pytest.mark.django_db
def test_simserve_serves_a_saved_deployments_plan(catalog, organisation):
    deployment = Deployment.objects.create(
        organisation=organisation,
        name="two L4s",
        model=LlmModel.objects.get(slug=MODEL, organisation=None),
        gpu=Gpu.objects.get(slug=L4),
        gpu_count=2,
        tp=1,
        engine="vllm",
        max_model_len=4096,
    )
    out = StringIO()
    call_command("simserve", "--deployment", str(deployment.pk), "--speedup", "4", "--check", stdout=out)
    text = out.getvalue()
    assert f"deployment {deployment.pk}: two L4s" in text
    assert "2 replica(s) x TP 1" in text
    assert "max_model_len 4,096" in text


@pytest.mark.django_db
def test_simserve_refuses_an_unknown_deployment(capsys):
    with pytest.raises(SystemExit) as exit_:
        call_command("simserve", "--deployment", "999999", "--check")
    assert exit_.value.code == 2
    assert "deployment 999999 does not exist" in capsys.readouterr().err
