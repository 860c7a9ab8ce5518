"""The command-line contracts other tools rely on: `manage.py estimate` and `manage.py simulate`."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from llm_sizing_loadgen.workload import profile_to_dict, sample_profile

SIMULATE_KEYS = {
    "ttft_ms",
    "itl_ms",
    "tpot_ms",
    "e2e_ms",
    "output_tokens_per_s",
    "requests_per_s",
    "completed",
    "rejected",
    "preempted",
    "kv_overflow_probability",
}
STATS = {"mean", "p50", "p90", "p95", "p99"}


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


def test_estimate_json_has_the_contract_fields(catalog):
    body = json.loads(
        _run(
            "estimate",
            "--model",
            "meta-llama/Meta-Llama-3-8B",
            "--gpu",
            "nvidia-h100-sxm-80gb",
            "--max-model-len",
            "8192",
            "--json",
        )
    )
    # Llama-3-8B: 32 layers × 8 KV heads × 128 × 2 (K, V) × 2 bytes = 131,072 bytes per token
    assert body["kv_bytes_per_token"] == 131_072
    assert body["weight_bytes_per_gpu"] == 16_060_522_496
    assert body["parameters_active_compute"] == 8_030_261_248 - 128_256 * 4096


def test_simulate_json_has_the_contract_fields_with_percentiles(catalog):
    body = json.loads(
        _run(
            "simulate",
            "--model",
            "meta-llama/Meta-Llama-3-8B",
            "--gpu",
            "nvidia-h100-sxm-80gb",
            "--max-model-len",
            "8192",
            "--input-tokens",
            "1000",
            "--output-tokens",
            "200",
            "--rate",
            "4",
            "--requests",
            "400",
            "--seed",
            "3",
            "--json",
        )
    )
    assert SIMULATE_KEYS <= set(body)
    for key in ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"):
        assert STATS <= set(body[key])
    assert body["completed"] == 400
    assert body["rejected"] == 0
    assert 0 <= body["kv_overflow_probability"] <= 1


def test_simulate_is_deterministic_for_a_seed(catalog):
    args = (
        "simulate",
        "--model",
        "meta-llama/Meta-Llama-3-8B",
        "--gpu",
        "nvidia-l40s-48gb",
        "--max-model-len",
        "8192",
        "--input-tokens",
        "500",
        "--output-tokens",
        "100",
        "--rate",
        "3",
        "--requests",
        "200",
        "--json",
    )
    assert _run(*args, "--seed", "1") == _run(*args, "--seed", "1")
    assert _run(*args, "--seed", "1") != _run(*args, "--seed", "2")


def test_simulate_offline_and_closed_loop(catalog):
    offline = json.loads(
        _run(
            "simulate",
            "--model",
            "meta-llama/Meta-Llama-3-8B",
            "--gpu",
            "nvidia-l40s-48gb",
            "--max-model-len",
            "8192",
            "--input-tokens",
            "128",
            "--output-tokens",
            "128",
            "--offline",
            "--requests",
            "300",
            "--json",
        )
    )
    closed = json.loads(
        _run(
            "simulate",
            "--model",
            "meta-llama/Meta-Llama-3-8B",
            "--gpu",
            "nvidia-l40s-48gb",
            "--max-model-len",
            "8192",
            "--input-tokens",
            "128",
            "--output-tokens",
            "128",
            "--concurrency",
            "8",
            "--requests",
            "300",
            "--json",
        )
    )
    assert offline["completed"] == closed["completed"] == 300
    assert offline["output_tokens_per_s"] > closed["output_tokens_per_s"]  # 300 at once beat 8 at a time
    assert closed["max_running"] <= 8


def test_simulate_reads_a_profile_file(catalog, tmp_path):
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(profile_to_dict(sample_profile())))
    body = json.loads(
        _run(
            "simulate",
            "--model",
            "meta-llama/Meta-Llama-3-8B",
            "--gpu",
            "nvidia-h100-sxm-80gb",
            "--max-model-len",
            "8192",
            "--profile",
            str(path),
            "--rate",
            "2",
            "--requests",
            "300",
            "--json",
        )
    )
    assert set(body["per_class"]) == {"Real-time Q&A", "Report generation"}  # the 10:00 mix


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--input-tokens", "10", "--output-tokens", "10"), "one of the arguments --rate --concurrency --offline"),
        (("--rate", "1"), "give --profile PATH or --input-tokens N --output-tokens N"),
        (("--input-tokens", "10", "--rate", "1"), "--input-tokens needs --output-tokens"),
        (("--input-tokens", "10", "--output-tokens", "10", "--rate", "-1"), "must be a finite number > 0"),
        (("--input-tokens", "10", "--output-tokens", "10", "--rate", "1", "--requests", "999999999"), "exceeds"),
    ],
    ids=["no-load", "no-traffic", "no-output", "negative-rate", "too-many"],
)
def test_simulate_bad_arguments_fail_with_one_line_and_exit_2(catalog, capsys, args, says):
    err = _fails(capsys, "simulate", "--model", "meta-llama/Meta-Llama-3-8B", "--gpu", "nvidia-l40s-48gb", *args)
    assert err.startswith("simulate: error:")
    assert says in err


def test_simulate_unknown_gpu_and_unfitting_model_fail_cleanly(catalog, capsys):
    err = _fails(
        capsys,
        "simulate",
        "--model",
        "meta-llama/Meta-Llama-3-8B",
        "--gpu",
        "nope",
        "--input-tokens",
        "10",
        "--output-tokens",
        "10",
        "--rate",
        "1",
    )
    assert "unknown GPU 'nope'" in err
    err = _fails(
        capsys,
        "simulate",
        "--model",
        "meta-llama/Meta-Llama-3-70B",
        "--gpu",
        "nvidia-l40s-48gb",
        "--input-tokens",
        "10",
        "--output-tokens",
        "10",
        "--rate",
        "1",
    )
    assert "KV cache" in err


def test_simulate_with_slos_gives_a_verdict_as_data(catalog):
    body = json.loads(
        _run(
            "simulate",
            "--model",
            "meta-llama/Meta-Llama-3-8B",
            "--gpu",
            "nvidia-h100-sxm-80gb",
            "--max-model-len",
            "8192",
            "--input-tokens",
            "1000",
            "--output-tokens",
            "50",
            "--rate",
            "2",
            "--requests",
            "200",
            "--slo-ttft",
            "0.001",
            "--json",
        )
    )
    verdict = body["verdict"]
    assert verdict["met"] is False
    assert verdict["code"] == "slo"
    assert verdict["metric"] == "TTFT"
    assert verdict["limit_s"] == 0.001
    assert verdict["value_s"] == body["ttft_ms"]["p95"] / 1000
