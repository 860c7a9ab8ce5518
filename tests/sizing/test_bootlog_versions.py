"""Boot logs and engine releases (issue 18): the parser reads the release and the engine (V0/V1) from vLLM's
banners, dates a V0 log that prints no version by its wording, and the comparison estimates the same release and
engine as the log (like with like); a log of a release older than the modelled bands is refused with the reason;
a vLLM log's total is CUDA's own total (`gpu_cuda_total_bytes`), not the driver's.

The log lines are written by us in the engines' formats (the format strings cited in `sizing.estimator.bootlog`);
the figures in them are made up. No assertion is on a KV figure of the estimate (its rules change by release)."""

from __future__ import annotations

import pytest

from sizing.estimator.bootlog import bootlog_calibration, bootlog_calibration_evidence, bootlog_parse
from sizing.estimator.units import GiB
from sizing.estimator.versions import ENGINE_VERSION_RANGES
from sizing.models import Calibration

BOOTLOG = "/api/v1/bootlogs/compare"
NEWEST = str(ENGINE_VERSION_RANGES["vllm"].newest)

# V1 core.py's banner, then gpu_model_runner.py / gpu_worker.py / kv_cache_utils.py (0.11-style prefixes).
V1_LOG = """\
(EngineCore_0 pid=311) INFO 10-02 09:00:01 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with config: \
model='meta-llama/Meta-Llama-3-8B', speculative_config=None, tokenizer='meta-llama/Meta-Llama-3-8B', \
dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1, pipeline_parallel_size=1, quantization=None, \
enforce_eager=False, kv_cache_dtype=auto
(EngineCore_0 pid=311) INFO 10-02 09:00:20 [gpu_model_runner.py:2602] Model loading took 14.9889 GiB and \
12.100000 seconds
(EngineCore_0 pid=311) INFO 10-02 09:00:40 [gpu_worker.py:298] Available KV cache memory: 52.17 GiB
(EngineCore_0 pid=311) INFO 10-02 09:00:40 [kv_cache_utils.py:1087] GPU KV cache size: 427,376 tokens
"""

# The same banner cut before its config (a pasted fragment).
V1_BANNER_CUT = (
    "INFO 10-02 09:00:01 [core.py:77] Initializing a V1 LLM engine (v0.10.1rc1)\n"
    "INFO 10-02 09:00:40 [gpu_worker.py:298] Available KV cache memory: 52.17 GiB\n"
)

# V0 llm_engine.py's banner (0.8.x falling back to V0), then V0 worker.py and executor_base.py.
V0_BANNER_LOG = """\
INFO 05-05 15:24:00 [llm_engine.py:240] Initializing an LLM engine (v0.8.5.post1) with config: \
model='meta-llama/Meta-Llama-3-8B', tokenizer='meta-llama/Meta-Llama-3-8B', dtype=torch.float16, \
max_seq_len=8192, tensor_parallel_size=1
INFO 05-05 15:25:32 [worker.py:267] Memory profiling takes 8.92 seconds
INFO 05-05 15:25:32 [worker.py:267] the current vLLM instance can use total_gpu_memory (79.19GiB) \
x gpu_memory_utilization (0.90) = 71.27GiB
INFO 05-05 15:25:32 [worker.py:267] model weights take 14.99GiB; non_torch_memory takes 0.35GiB; \
PyTorch activation peak memory takes 1.24GiB; the rest of the memory reserved for KV Cache is 54.69GiB.
INFO 05-05 15:25:32 [executor_base.py:111] # cuda blocks: 28000, # CPU blocks: 2048
"""

# V0 worker.py and executor_base.py of 0.7-0.10, no version line.
V0_UNVERSIONED = """\
INFO 02-01 10:00:00 worker.py:267] Memory profiling takes 8.92 seconds
INFO 02-01 10:00:00 worker.py:267] the current vLLM instance can use total_gpu_memory (79.19GiB) \
x gpu_memory_utilization (0.90) = 71.27GiB
INFO 02-01 10:00:00 worker.py:267] model weights take 14.99GiB; non_torch_memory takes 0.35GiB; \
PyTorch activation peak memory takes 1.24GiB; the rest of the memory reserved for KV Cache is 54.69GiB.
INFO 02-01 10:00:00 executor_base.py:111] # CUDA blocks: 28000, # CPU blocks: 2048
"""

# 0.6.4's one-line profiling result and gpu_executor.py's blocks line, no version.
V0_064_UNVERSIONED = """\
INFO 11-20 10:00:00 worker.py:232] Memory profiling results: total_gpu_memory=79.19GiB \
initial_memory_usage=15.40GiB peak_torch_memory=16.23GiB memory_usage_post_profile=15.42GiB \
non_torch_memory=0.41GiB kv_cache_size=54.65GiB gpu_memory_utilization=0.90
INFO 11-20 10:00:00 gpu_executor.py:122] # GPU blocks: 27980, # CPU blocks: 2048
"""

# 0.6.5's comma-separated profiling result.
V0_065_UNVERSIONED = """\
INFO 12-20 10:00:00 worker.py:241] Memory profiling results: duration=4.12 seconds, total_gpu_memory=79.19GiB, \
initial_memory_usage=15.40GiB, peak_torch_memory=16.23GiB, memory_usage_post_profile=15.42GiB, \
non_torch_memory=0.41GiB, kv_cache_size=54.65GiB, gpu_memory_utilization=0.90.
"""

# The blocks line alone, in gpu_executor.py's wording.
V0_BLOCKS_ONLY = "INFO 10-01 10:00:00 gpu_executor.py:122] # GPU blocks: 27980, # CPU blocks: 2048\n"

# A 0.5.4 V0 log: a release older than the modelled bands.
V0_054_LOG = """\
INFO 08-01 10:00:00 llm_engine.py:176] Initializing an LLM engine (v0.5.4) with config: \
model='meta-llama/Meta-Llama-3-8B', dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1
INFO 08-01 10:00:30 gpu_executor.py:102] # GPU blocks: 27000, # CPU blocks: 2048
"""

# A future release: newer than the newest band.
V1_FUTURE_LOG = """\
INFO 03-01 10:00:00 [core.py:90] Initializing a V1 LLM engine (v9.1.0) with config: \
model='meta-llama/Meta-Llama-3-8B', dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1
INFO 03-01 10:00:40 [gpu_worker.py:298] Available KV cache memory: 52.17 GiB
"""

# V1 0.11's summary line: the CUDA-visible total in "Free memory on device (free/total GiB)".
V1_SUMMARY = (
    "(Worker pid=7) INFO 10-23 15:14:56 [gpu_worker.py:391] Free memory on device (78.60/79.19 GiB) on startup. "
    "Desired GPU memory utilization is (0.9, 71.27 GiB). Actual usage is 14.99 GiB for weight, 1.24 GiB for peak "
    "activation, 0.35 GiB for non-torch memory, and 0.52 GiB for CUDAGraph memory. Current kv cache memory in use "
    "is 54.17 GiB.\n"
)


@pytest.mark.parametrize(
    ("text", "version", "mode"),
    [
        (V1_LOG, "0.11.0", "v1"),
        (V1_BANNER_CUT, "0.10.1rc1", "v1"),
        (V0_BANNER_LOG, "0.8.5.post1", "v0"),
        (V1_FUTURE_LOG, "9.1.0", "v1"),
    ],
    ids=["v1-banner", "v1-banner-cut", "v0-banner", "future"],
)
def test_the_banner_gives_the_release_and_the_engine(text, version, mode):
    # when
    log = bootlog_parse(text)

    # then
    assert (log.engine, log.engine_version, log.engine_mode_hint, log.engine_version_inferred) == (
        "vllm",
        version,
        mode,
        None,
    )
    assert "LLM engine (v" in log.lines["engine_version"]
    assert "LLM engine (v" in log.lines["engine_mode_hint"]


@pytest.mark.parametrize(
    ("text", "inferred"),
    [
        (V0_UNVERSIONED, "0.7.0"),
        (V0_064_UNVERSIONED, "0.6.4"),
        (V0_065_UNVERSIONED, "0.6.5"),
        (V0_BLOCKS_ONLY, "0.6.0"),
    ],
    ids=["worker-sentence-0.7", "one-line-0.6.4", "comma-list-0.6.5", "gpu-blocks-only"],
)
def test_a_v0_log_without_a_version_is_v0_and_dated_by_its_wording(text, inferred):
    # when
    log = bootlog_parse(text)

    # then
    assert (log.engine_version, log.engine_mode_hint, log.engine_version_inferred) == (None, "v0", inferred)
    assert "engine_version_inferred" in log.lines


def test_the_v1_profiling_sentence_is_not_read_as_v0():
    # given V1 0.9's gpu_worker.py printing V0's sentence (the file name tells them apart)
    text = (
        "INFO 06-01 10:00:00 [gpu_worker.py:227] Memory profiling takes 11.85 seconds\n"
        "INFO 06-01 10:00:00 [gpu_worker.py:227] the current vLLM instance can use total_gpu_memory (79.11GiB) "
        "x gpu_memory_utilization (0.90) = 71.20GiB\n"
    )

    # when
    log = bootlog_parse(text)

    # then
    assert (log.engine_mode_hint, log.engine_version_inferred) == ("v1", None)


def test_a_log_that_says_neither_engine_has_no_hint():
    # given lines both engines print, without a file name
    log = bootlog_parse("Maximum concurrency for 8192 tokens per request: 52.17x\n")

    # then
    assert (log.engine_mode_hint, log.engine_version_inferred) == (None, None)


def test_equal_signs_of_both_engines_give_no_hint_and_a_warning():
    # given a V0 worker.py line and a V1 gpu_worker.py line, no banner
    text = (
        "INFO 02-01 10:00:00 worker.py:267] Memory profiling takes 8.92 seconds\n"
        "INFO 06-01 10:00:00 [gpu_worker.py:298] Available KV cache memory: 52.17 GiB\n"
    )

    # when
    log = bootlog_parse(text)

    # then
    assert log.engine_mode_hint is None
    assert any("both vLLM engines" in warning for warning in log.warnings)


def test_engine_signs_do_not_hide_unread_memory_lines():
    # given a V1 line that no figure pattern reads
    line = "INFO 04-24 16:40:00 [gpu_worker.py:99] Sleep mode freed 12.34 GiB memory, 1.02 GiB memory is still in use."

    # when
    log = bootlog_parse(V1_LOG + line + "\n")

    # then
    assert log.unparsed_memory_lines == (line,)


def test_a_vllm_log_calibrates_the_cuda_visible_total():
    # when
    log = bootlog_parse(V1_SUMMARY)
    calibration = bootlog_calibration(log)

    # then: 79.19 GiB as printed, round(79.19 × 2^30) bytes, is what vLLM's budget multiplies
    assert calibration["gpu_cuda_total_bytes"] == round(79.19 * GiB)
    assert "gpu_memory_bytes" not in calibration
    assert bootlog_calibration_evidence(log)["gpu_cuda_total_bytes"] == V1_SUMMARY.strip()


# ---------------------------------------------------------------------------------------------------------------
# The comparison through the API: like with like


def _compare(api_client, text: str, **parameters):
    return api_client.post(BOOTLOG, {"text": text, "gpu": "nvidia-h100-sxm-80gb", **parameters}, format="json")


def test_the_comparison_estimates_the_release_and_engine_of_the_log(catalog, api_client):
    # when
    response = _compare(api_client, V0_BANNER_LOG)

    # then
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["parameters"]["engine_version"] == "0.8.5.post1"
    assert body["parameters"]["engine_mode"] == "v0"
    assert body["release"] == {"log": "0.8.5.post1", "inferred": None, "engine_mode": "v0", "estimated_as": "0.8.5"}
    assert body["estimate"]["engine_version"] == "0.8.5"
    assert body["warnings"] == []


def test_a_v0_log_without_a_version_is_compared_with_the_oldest_release_of_its_wording(catalog, api_client):
    # when
    response = _compare(api_client, V0_UNVERSIONED, model="meta-llama/Meta-Llama-3-8B")

    # then
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["parameters"]["engine_version"], body["parameters"]["engine_mode"]) == ("0.7.0", "v0")
    assert body["release"] == {"log": None, "inferred": "0.7.0", "engine_mode": "v0", "estimated_as": "0.7.0"}
    assert body["warnings"] == [
        "the log prints no vllm version; its V0 wording dates it to 0.7.0 or later: compared as vllm 0.7.0 in V0 "
        "mode (give engine_version for the exact release)"
    ]


def test_the_callers_release_and_engine_win_with_a_warning(catalog, api_client):
    # when
    response = _compare(api_client, V0_BANNER_LOG, engine_version="0.11.0", engine_mode="v1")

    # then
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["parameters"]["engine_version"], body["parameters"]["engine_mode"]) == ("0.11.0", "v1")
    assert body["estimate"]["engine_version"] == "0.11.0"
    assert body["warnings"] == [
        "the log is vllm 0.8.5.post1; the estimate is for 0.11.0 as asked: the two describe different releases"
    ]


def test_a_newer_release_than_modelled_is_compared_with_the_newest_band_and_a_warning(catalog, api_client):
    # when
    response = _compare(api_client, V1_FUTURE_LOG)

    # then
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["release"]["estimated_as"] == NEWEST
    assert any(
        warning.startswith("vllm 9.1.0 is newer than the newest release modelled")
        for warning in body["estimate"]["warnings"]
    )


def test_a_log_older_than_the_modelled_bands_is_refused_with_the_reason(catalog, api_client):
    # when
    response = _compare(api_client, V0_054_LOG, save=True)

    # then: a 400 naming the log's release, and no calibration kept
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_argument"
    assert body["extra"]["engine_version"] == "0.5.4"
    assert body["extra"]["fields"]["text"] == [
        "the log is from vllm 0.5.4: vllm 0.5.4 is older than the oldest release modelled (0.6.0): its memory rules "
        "are not in the estimator, so it is not estimated; choose 0.6.0 or later; give engine_version to compare it "
        "with a modelled release"
    ]
    assert Calibration.objects.count() == 0


def test_an_older_log_is_compared_when_the_caller_names_a_modelled_release(catalog, api_client):
    # when
    response = _compare(api_client, V0_054_LOG, engine_version="0.6.0")

    # then
    assert response.status_code == 200, response.content
    assert response.json()["estimate"]["engine_version"] == "0.6.0"


def test_a_saved_calibration_keeps_the_release_and_the_cuda_total(catalog, api_client):
    # when
    response = _compare(api_client, V1_LOG.replace("Available KV cache memory: 52.17 GiB", "x") + V1_SUMMARY, save=True)

    # then
    assert response.status_code == 200, response.content
    saved = Calibration.objects.get()
    assert saved.engine_version == "0.11.0"
    assert saved.terms["gpu_cuda_total_bytes"] == round(79.19 * GiB)
    assert "gpu_memory_bytes" not in saved.terms
