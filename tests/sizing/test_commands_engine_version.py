"""`manage.py estimate` and `manage.py simulate` with the engine version and its companions (issue 18): a bad
version fails with one line and exit code 2; the text output names the release the bill holds for, the defaults
assumed, and the lines that install and start exactly that release."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from sizing.estimator.versions import ACCEPTED_FORM, ENGINE_VERSION_RANGES

DEPLOYMENT = ("--model", "meta-llama/Meta-Llama-3-8B", "--gpu", "nvidia-h100-sxm-80gb", "--max-model-len", "8192")
NEWEST = str(ENGINE_VERSION_RANGES["vllm"].newest)


def _run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def _fails(capsys, *args: str) -> str:
    with pytest.raises(SystemExit) as caught:
        call_command(*args, stdout=StringIO())
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1  # one line
    return err


@pytest.mark.parametrize(
    ("version", "says"),
    [
        ("latest!", f"--engine-version: engine_version 'latest!' is not a version: give {ACCEPTED_FORM}"),
        ("0.6", f"--engine-version: engine_version '0.6' is not a version: give {ACCEPTED_FORM}"),
        ("0.5.4", "--engine-version: vllm 0.5.4 is older than the oldest release modelled (0.6.0)"),
    ],
    ids=["not-a-version", "two-numbers", "older-than-modelled"],
)
@pytest.mark.parametrize("command", ["estimate", "simulate"])
def test_a_bad_engine_version_fails_with_one_line_and_exit_2(catalog, capsys, command, version, says):
    # when
    extra = ("--input-tokens", "100", "--output-tokens", "10", "--rate", "1") if command == "simulate" else ()
    err = _fails(capsys, command, *DEPLOYMENT, "--engine-version", version, *extra)

    # then
    assert err.startswith(f"{command}: error: {says}")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--usage-context", "cli"), "argument --usage-context: invalid choice: 'cli'"),
        (("--install", "conda"), "argument --install: invalid choice: 'conda'"),
        (("--engine-mode", "v2"), "argument --engine-mode: invalid choice: 'v2'"),
        (("--kv-cache-memory-bytes", "0"), "argument --kv-cache-memory-bytes: 0 must be ≥ 1"),
    ],
    ids=["usage-context", "install", "engine-mode", "kv-bytes"],
)
def test_bad_companions_fail_with_one_line(catalog, capsys, args, says):
    # when
    err = _fails(capsys, "estimate", *DEPLOYMENT, *args)

    # then
    assert err.startswith(f"estimate: error: {says}")


def test_the_json_names_the_release_the_bill_holds_for(catalog):
    # when
    body = json.loads(
        _run(
            "estimate",
            *DEPLOYMENT,
            "--engine-version",
            "0.11.0",
            "--usage-context",
            "llm",
            "--install",
            "docker",
            "--engine-mode",
            "v1",
            "--no-enable-chunked-prefill",
            "--kv-cache-memory-bytes",
            str(20 * 2**30),
            "--flashinfer-sampler",
            "--no-nccl-nvls",
            "--json",
        )
    )

    # then
    assert (body["engine_version"], body["engine_version_requested"]) == ("0.11.0", "0.11.0")
    assert "defaults_assumed" in body


def test_the_text_names_the_release_the_defaults_and_the_install_line(catalog):
    # when
    text = _run("estimate", *DEPLOYMENT, "--engine-version", "0.10.1")

    # then
    lines = text.splitlines()
    release = next(line for line in lines if line.startswith("engine version:"))
    assert release.startswith("engine version: vllm 0.10.1; defaults assumed: ")
    assert "# vLLM 0.10.1: the estimate holds for this release" in lines
    assert "pip install vllm==0.10.1" in lines
    assert any(line.startswith("vllm serve meta-llama/Meta-Llama-3-8B --tensor-parallel-size 1") for line in lines)


def test_latest_and_a_newer_release_say_what_was_asked_for(catalog):
    # when
    latest = _run("estimate", *DEPLOYMENT).splitlines()
    newer = _run("estimate", *DEPLOYMENT, "--engine-version", "9.1.0").splitlines()

    # then
    assert any(line.startswith(f"engine version: vllm {NEWEST} (asked for: latest); ") for line in latest)
    assert any(line.startswith(f"engine version: vllm {NEWEST} (asked for: 9.1.0); ") for line in newer)
    assert any(line.startswith("warning: vllm 9.1.0 is newer than the newest release modelled") for line in newer)


def test_docker_and_toggles_shape_the_launch_command(catalog):
    # when
    lines = _run(
        "estimate",
        *DEPLOYMENT,
        "--engine-version",
        "0.9.2",
        "--install",
        "docker",
        "--no-flashinfer-sampler",
        "--estimate-cudagraphs",
    ).splitlines()

    # then: the image of that release, the toggles the user set (and only those) as its environment
    assert "docker pull vllm/vllm-openai:v0.9.2" in lines
    run = next(line for line in lines if line.startswith("docker run"))
    assert run.startswith(
        "docker run --gpus all --ipc=host -p 8000:8000 -e VLLM_USE_FLASHINFER_SAMPLER=0 "
        "-e VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 vllm/vllm-openai:v0.9.2 "
        "--model meta-llama/Meta-Llama-3-8B --tensor-parallel-size 1"
    )
    assert "NCCL_NVLS_ENABLE" not in run


def test_the_python_usage_context_gives_the_llm_call(catalog):
    # when
    lines = _run("estimate", *DEPLOYMENT, "--engine-version", "0.11.0", "--usage-context", "llm").splitlines()

    # then
    call = next(line for line in lines if line.startswith("from vllm import LLM"))
    assert call.startswith(
        "from vllm import LLM; llm = LLM(model='meta-llama/Meta-Llama-3-8B', "
        "tensor_parallel_size=1, pipeline_parallel_size=1, "
    )


def test_simulate_takes_the_version(catalog):
    # when
    body = json.loads(
        _run(
            "simulate",
            *DEPLOYMENT,
            "--engine-version",
            "0.11.0",
            "--input-tokens",
            "100",
            "--output-tokens",
            "10",
            "--rate",
            "1",
            "--requests",
            "50",
            "--json",
        )
    )

    # then
    assert "ttft_ms" in body


def test_a_measured_cuda_total_replaces_the_catalogs(catalog):
    # given the total a vLLM boot log printed (cudaMemGetInfo), not the catalog's 81,090 MiB
    body = json.loads(
        _run("estimate", *DEPLOYMENT, "--engine-version", "0.11.0", "--gpu-cuda-total-bytes", "85000000000", "--json")
    )
    # then vLLM's budget multiplies it: floor(85,000,000,000 × 0.9) = 76,500,000,000
    assert body["capacity_bytes_per_gpu"] == 85_000_000_000
    assert body["budget_bytes_per_gpu"] == 76_500_000_000
    assert body["assumptions"]["capacity_source"] == "measured"
