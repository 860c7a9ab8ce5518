"""Engine boot logs (DESIGN §7) through `bootlog_parse`, `bootlog_compare` and `bootlog_calibration`.

The vLLM logs are the `raw` lines of the six published startup logs the project collected (their sources are
named in each test); the SGLang lines are written from SGLang's own format strings. Every byte figure is
stated with its rounding rule: a figure printed as v GiB is round(v × 2^30) bytes, computed exactly in decimal
(half to even); vLLM's and SGLang's "GB" are GiB as well (both divide by 2^30).
"""

from __future__ import annotations

import doctest
from dataclasses import fields

import pytest

from sizing.estimator import bootlog as bootlog_module
from sizing.estimator.bootlog import BootLog, ComparisonLine, bootlog_calibration, bootlog_compare, bootlog_parse
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.memory import EstimateRequest, estimate_memory
from sizing.estimator.units import GiB
from tests.sizing.estimator.builders import build_arch, build_gpu

# vLLM PR #10511 (youkaichao, 2024-12-14), pre-0.6.5 main: the profiling table, Llama-3-8B on an H100.
VLLM_PR10511_TABLE = """\
$ vllm serve meta-llama/Meta-Llama-3-8B
INFO 12-13 19:54:18 worker.py:243] Memory profiling results:
INFO 12-13 19:54:18 worker.py:243] duration     0.75 seconds
INFO 12-13 19:54:18 worker.py:243] total_gpu_memory     79.22GiB
INFO 12-13 19:54:18 worker.py:243] gpu_memory_utilization       0.90
INFO 12-13 19:54:18 worker.py:243] the current vLLM instance can use    71.29GiB
INFO 12-13 19:54:18 worker.py:243] model weights take   14.96GiB
INFO 12-13 19:54:18 worker.py:243] non_torch_memory     1.79GiB
INFO 12-13 19:54:18 worker.py:243] PyTorch activation peak memory       1.26GiB
INFO 12-13 19:54:18 worker.py:243] available_kv_cache_memory    53.29GiB
"""

# vLLM PR #17122 (Datta0, 2025-04-24), ~0.8.5 V1 engine: Llama-3.1-8B on an L40S.
VLLM_PR17122_V1 = """\
INFO 04-24 16:33:00 [gpu_model_runner.py:1316] Model loading took 14.9889 GiB and 3.652170 seconds
INFO 04-24 16:33:13 [kv_cache_utils.py:634] GPU KV cache size: 158,656 tokens
INFO 04-24 16:33:13 [kv_cache_utils.py:637] Maximum concurrency for 32,768 tokens per request: 4.84x
"""

# vLLM issue #10517 (kaspersiminski, 2024-12-02), ~0.6.4: the one-line profiling result, an RTX 3090.
VLLM_10517_ONE_LINE = """\
Loading model weights took 14.9888 GB
Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.06GiB \
memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=3.81GiB gpu_memory_utilization=0.90
GPU blocks: 1952, # CPU blocks: 2048
Maximum concurrency for 20000 tokens per request: 1.56x
"""

# A CI log with "vLLM STDOUT: " prefixes, ~0.8.5 V0: the two-line budget sentence on a 15 GB card.
VLLM_V0_TWO_LINE = """\
vLLM STDOUT: INFO 05-05 15:25:29 [monitor.py:33] torch.compile takes 50.34 s in total
vLLM STDOUT: INFO 05-05 15:25:32 [worker.py:267] Memory profiling takes 58.92 seconds
vLLM STDOUT: INFO 05-05 15:25:32 [worker.py:267] the current vLLM instance can use total_gpu_memory (14.74GiB) \
x gpu_memory_utilization (0.89) = 13.18GiB
vLLM STDOUT: INFO 05-05 15:25:32 [worker.py:267] model weights take 6.02GiB; non_torch_memory takes 0.05GiB; \
PyTorch activation peak memory takes 0.90GiB; the rest of the memory reserved for KV Cache is 6.22GiB.
vLLM STDOUT: INFO 05-05 15:25:32 [executor_base.py:111] # cuda blocks: 3637, # CPU blocks: 1170
vLLM STDOUT: INFO 05-05 15:25:32 [executor_base.py:116] Maximum concurrency for 2048 tokens per request: 28.41x
"""

# vLLM issue #21348 (MMuzzammil1, 2025-07-22): Qwen3-235B-A22B-FP8 on 4 × H100, per GPU.
VLLM_21348_V1 = """\
Available KV cache memory: 8.11 GiB
GPU KV cache size: 178,880 tokens
"""

# myoceane.fr blog (2026-04-18), vLLM 0.19.0: gpt-oss-20b on an A100 with --gpu-memory-utilization 0.65.
VLLM_019_GPT_OSS = """\
(APIServer pid=6539) INFO 04-18 20:22:57 [utils.py:233] non-default args: {'model_tag': 'openai/gpt-oss-20b', \
'port': 10000, 'model': 'openai/gpt-oss-20b', 'trust_remote_code': True, 'max_model_len': 131072, \
'gpu_memory_utilization': 0.65}
Model loading took 13.72 GiB memory and 62.336108 seconds
Available KV cache memory: 36.56 GiB
"""

# SGLang 0.4.6–0.5.x, written from its format strings: server_args.py's ServerArgs repr (abridged),
# model_executor/model_runner.py ("Load weight begin/end", "Memory pool end", "Capture cuda graph begin/end"),
# mem_cache/memory_pool.py ("KV Cache is allocated. #tokens: %d, K size: %.2f GB, V size: %.2f GB") and
# managers/scheduler.py ("max_total_num_tokens=..., available_gpu_mem=%.2f GB"); every "GB" is `/ (1 << 30)`.
SGLANG_STARTUP = """\
[2025-06-01 10:00:00] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', \
tokenizer_path='meta-llama/Llama-3.1-8B-Instruct', context_length=None, dtype='auto', quantization=None, \
kv_cache_dtype='auto', mem_fraction_static=0.88, max_running_requests=None, chunked_prefill_size=8192, \
max_prefill_tokens=16384, tp_size=1, pp_size=1, cuda_graph_max_bs=256, cuda_graph_bs=[1, 2, 4, 8], \
disable_cuda_graph=False)
[2025-06-01 10:00:02 TP0] Load weight begin. avail mem=78.32 GB
[2025-06-01 10:00:09 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.33 GB, \
mem usage=14.99 GB.
[2025-06-01 10:00:09 TP0] KV Cache is allocated. #tokens: 457000, K size: 27.89 GB, V size: 27.89 GB
[2025-06-01 10:00:09 TP0] Memory pool end. avail mem=7.25 GB
[2025-06-01 10:00:10 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=7.22 GB
[2025-06-01 10:00:22 TP0] Capture cuda graph end. Time elapsed: 12.30 s. mem usage=0.61 GB. avail mem=6.61 GB.
[2025-06-01 10:00:23 TP0] max_total_num_tokens=457000, chunked_prefill_size=8192, max_prefill_tokens=16384, \
max_running_requests=4096, context_len=8192, available_gpu_mem=6.61 GB
"""

# vLLM 0.11 V1 gpu_worker.py's summary after CUDA-graph capture (a real TP=2 line, H200).
VLLM_011_SUMMARY = (
    "(Worker_TP1 pid=1806414) INFO 10-23 15:14:56 [gpu_worker.py:391] Free memory on device (139.21/139.81 GiB) "
    "on startup. Desired GPU memory utilization is (0.9, 125.83 GiB). Actual usage is 74.28 GiB for weight, "
    "5.58 GiB for peak activation, 1.38 GiB for non-torch memory, and 2.37 GiB for CUDAGraph memory. Replace "
    "gpu_memory_utilization config with `--kv-cache-memory=45175492096` to fit into requested memory, or "
    "`--kv-cache-memory=59540753920` to fully utilize gpu memory. Current kv cache memory in use is "
    "47878721024 bytes."
)


def test_vllm_pre_065_profiling_table_gives_every_term():
    # given the PR #10511 table

    # when
    log = bootlog_parse(VLLM_PR10511_TABLE)

    # then
    assert log.engine == "vllm"
    assert log.total_gpu_memory_bytes == 85_061_827_297  # round(79.22 × 2^30)
    assert log.gpu_memory_utilization == 0.9
    assert log.budget_bytes == 76_547_054_633  # round(71.29 × 2^30)
    assert log.weights_bytes == 16_063_177_687  # round(14.96 × 2^30)
    assert log.non_torch_bytes == 1_921_997_865  # round(1.79 × 2^30)
    assert log.activation_peak_bytes == 1_352_914_698  # round(1.26 × 2^30)
    assert log.kv_cache_bytes == 57_219_701_801  # round(53.29 × 2^30)
    assert (log.kv_cache_tokens, log.num_gpu_blocks, log.max_concurrency, log.cuda_graph_bytes) == (
        None,
        None,
        None,
        None,
    )
    assert log.lines["kv_cache_bytes"] == ("INFO 12-13 19:54:18 worker.py:243] available_kv_cache_memory    53.29GiB")
    assert log.unparsed_memory_lines == ()
    assert log.warnings == ()


def test_vllm_v1_weights_kv_tokens_and_concurrency():
    # given PR #17122's V1 lines

    # when
    log = bootlog_parse(VLLM_PR17122_V1)

    # then
    assert log.weights_bytes == 16_094_208_826  # round(14.9889 × 2^30)
    assert log.kv_cache_tokens == 158_656
    assert log.max_concurrency == 4.84
    assert log.max_concurrency_tokens_per_request == 32_768
    assert log.max_model_len == 32_768  # vLLM states its concurrency for max_model_len tokens
    assert log.kv_cache_bytes is None
    assert log.lines["max_model_len"] == (
        "INFO 04-24 16:33:13 [kv_cache_utils.py:637] Maximum concurrency for 32,768 tokens per request: 4.84x"
    )
    assert log.warnings == ()


def test_vllm_064_one_line_profiling_result_and_blocks():
    # given issue #10517's 0.6.4 lines

    # when
    log = bootlog_parse(VLLM_10517_ONE_LINE)

    # then
    assert log.weights_bytes == 16_094_101_452  # round(14.9888 × 2^30): the "GB" is GiB
    assert log.total_gpu_memory_bytes == 25_318_832_210  # round(23.58 × 2^30)
    assert log.non_torch_bytes == 375_809_638  # round(0.35 × 2^30) = round(375,809,638.4)
    assert log.kv_cache_bytes == 4_090_956_349  # round(3.81 × 2^30)
    assert log.gpu_memory_utilization == 0.9
    assert log.budget_bytes is None  # 0.6.4 does not print it
    # peak_torch_memory is weights + activation peak: round(17.06 × 2^30) − 16,094,101,452 = 2,223,934,065
    assert log.activation_peak_bytes == 2_223_934_065
    assert log.num_gpu_blocks == 1952
    assert log.kv_cache_tokens == 31_232  # 1952 blocks × 16 tokens
    assert log.max_concurrency == 1.56  # 31,232 / 20,000
    assert log.max_concurrency_tokens_per_request == 20_000
    assert log.max_model_len == 20_000
    assert log.warnings == (
        "activation peak derived: peak torch memory 17.06 GiB less 14.99 GiB of weights (vLLM 0.6.4 printed "
        "them together)",
        "KV tokens = 1952 blocks × 16 tokens: vLLM's default block size, which the log does not state",
    )


def test_vllm_v0_two_line_budget_with_stdout_prefix():
    # given the 0.8.5 V0 CI log

    # when
    log = bootlog_parse(VLLM_V0_TWO_LINE)

    # then
    assert log.total_gpu_memory_bytes == 15_826_954_486  # round(14.74 × 2^30)
    # printed 0.89; the budget says what vLLM used: 14,151,917,240 / 15,826,954,486 = 0.8942
    assert log.gpu_memory_utilization == 0.8942
    assert log.budget_bytes == 14_151_917_240  # round(13.18 × 2^30)
    assert log.weights_bytes == 6_463_925_780  # round(6.02 × 2^30)
    assert log.non_torch_bytes == 53_687_091  # round(0.05 × 2^30) = round(53,687,091.2)
    assert log.activation_peak_bytes == 966_367_642  # round(0.90 × 2^30) = round(966,367,641.6)
    assert log.kv_cache_bytes == 6_678_674_145  # round(6.22 × 2^30)
    assert log.num_gpu_blocks == 3637
    assert log.kv_cache_tokens == 58_192  # 3637 blocks × 16 tokens
    assert log.max_concurrency == 28.41  # 58,192 / 2,048
    assert log.max_model_len == 2048
    assert log.lines["budget_bytes"].startswith("vLLM STDOUT: INFO 05-05 15:25:32 [worker.py:267] the current")
    assert log.unparsed_memory_lines == ()


def test_vllm_v1_available_kv_cache_memory_per_gpu():
    # given issue #21348's lines (TP=4, per GPU)

    # when
    log = bootlog_parse(VLLM_21348_V1)

    # then
    assert log.kv_cache_bytes == 8_708_046_193  # round(8.11 × 2^30)
    assert log.kv_cache_tokens == 178_880
    assert (log.weights_bytes, log.max_model_len, log.tensor_parallel_size) == (None, None, None)


def test_vllm_019_non_default_args_become_flags():
    # given the 0.19.0 blog log

    # when
    log = bootlog_parse(VLLM_019_GPT_OSS)

    # then
    assert log.flags == {
        "model_tag": "openai/gpt-oss-20b",
        "port": 10000,
        "model": "openai/gpt-oss-20b",
        "trust_remote_code": True,
        "max_model_len": 131072,
        "gpu_memory_utilization": 0.65,
    }
    assert log.model == "openai/gpt-oss-20b"
    assert log.max_model_len == 131_072
    assert log.gpu_memory_utilization == 0.65
    assert log.weights_bytes == 14_731_737_825  # round(13.72 × 2^30)
    assert log.kv_cache_bytes == 39_256_001_085  # round(36.56 × 2^30)
    assert log.lines["gpu_memory_utilization"].startswith("(APIServer pid=6539) INFO 04-18 20:22:57")
    assert log.warnings == ()


@pytest.mark.parametrize(
    ("line", "expected_bytes"),
    [
        # 0.6 V0 model_runner.py: "%.4f GB" of `/ float(2**30)`
        ("INFO 12-06 14:55:15 model_runner.py:1077] Loading model weights took 14.9888 GB", 16_094_101_452),
        # 0.8 V0 model_runner.py: "%.4f GB and %.6f seconds" of `/ float(2**30)`
        (
            "INFO 05-05 15:24:32 [model_runner.py:1146] Model loading took 6.0160 GB and 533.851791 seconds",
            6_459_630_813,
        ),
        # SGLang model_runner.py: "mem usage=%.2f GB" of `/ (1 << 30)`
        (
            "[2025-06-01 10:00:09 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, "
            "avail mem=63.33 GB, mem usage=14.99 GB.",
            16_095_389_942,
        ),
    ],
    ids=["vllm-0.6-loading-model-weights", "vllm-0.8-model-loading", "sglang-load-weight-end"],
)
def test_gb_printed_by_the_engines_is_gib(line: str, expected_bytes: int):
    # given a weights line printed in "GB" by an engine that divides by 2^30

    # when
    log = bootlog_parse(line)

    # then: 14.9888 "GB" is round(14.9888 × 2^30) = 16,094,101,452 bytes, not 14,988,800,000
    assert log.weights_bytes == expected_bytes


def test_sglang_startup_lines():
    # given SGLang's startup lines

    # when
    log = bootlog_parse(SGLANG_STARTUP)

    # then
    assert log.engine == "sglang"
    assert log.engine_version is None  # SGLang does not log its version
    assert log.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert log.tensor_parallel_size == 1
    assert log.weights_bytes == 16_095_389_942  # round(14.99 × 2^30)
    assert log.kv_cache_bytes == 59_893_318_942  # K + V = 2 × round(27.89 × 2^30) = 2 × 29,946,659,471
    assert log.kv_cache_tokens == 457_000
    assert log.cuda_graph_bytes == 654_982_513  # round(0.61 × 2^30)
    assert log.max_model_len == 8192  # the scheduler's context_len
    assert (log.total_gpu_memory_bytes, log.budget_bytes, log.non_torch_bytes, log.activation_peak_bytes) == (
        None,
        None,
        None,
        None,
    )  # SGLang prints none of them
    assert log.flags == {
        "model_path": "meta-llama/Llama-3.1-8B-Instruct",
        "tokenizer_path": "meta-llama/Llama-3.1-8B-Instruct",
        "context_length": None,
        "dtype": "auto",
        "quantization": None,
        "kv_cache_dtype": "auto",
        "mem_fraction_static": 0.88,
        "max_running_requests": 4096,  # None in the arguments: the scheduler's effective value
        "chunked_prefill_size": 8192,
        "max_prefill_tokens": 16384,
        "tp_size": 1,
        "pp_size": 1,
        "cuda_graph_max_bs": 256,
        "cuda_graph_bs": [1, 2, 4, 8],
        "disable_cuda_graph": False,
    }
    assert log.lines["cuda_graph_bytes"] == (
        "[2025-06-01 10:00:22 TP0] Capture cuda graph end. Time elapsed: 12.30 s. mem usage=0.61 GB. avail mem=6.61 GB."
    )
    assert log.unparsed_memory_lines == ()
    assert log.warnings == ()


def test_sglang_mla_pool_prints_one_kv_size():
    # given memory_pool.py's MLATokenToKVPool line (DeepSeek-class models)
    line = "[2025-11-04 05:27:13 DP0 TP0 EP0] KV Cache is allocated. #tokens: 524288, KV size: 17.16 GB"

    # when
    log = bootlog_parse(line)

    # then
    assert log.engine == "sglang"
    assert log.kv_cache_tokens == 524_288
    assert log.kv_cache_bytes == 18_425_409_700  # round(17.16 × 2^30)


def test_prefixes_ansi_colours_and_windows_line_endings_are_tolerated():
    # given coloured, prefixed lines with CRLF endings
    text = (
        "\x1b[32mINFO\x1b[0m 04-24 16:33:13 [kv_cache_utils.py:634] GPU KV cache size: 158,656 tokens\r\n"
        "(VllmWorker rank=0 pid=6540) \x1b[1;36mINFO\x1b[0m 04-24 16:33:12 [gpu_worker.py:227] "
        "Available KV cache memory: \x1b[1m19.37\x1b[0m GiB\r\n"
        "[32mINFO[0m 04-24 16:33:13 [kv_cache_utils.py:637] Maximum concurrency for 32,768 tokens per request: "
        "4.84x\r\n"
    )

    # when
    log = bootlog_parse(text)

    # then
    assert log.kv_cache_tokens == 158_656
    assert log.kv_cache_bytes == 20_798_379_131  # round(19.37 × 2^30)
    assert log.max_concurrency == 4.84
    assert log.lines["kv_cache_bytes"] == (
        "(VllmWorker rank=0 pid=6540) INFO 04-24 16:33:12 [gpu_worker.py:227] Available KV cache memory: 19.37 GiB"
    )


def test_version_model_and_flags_from_the_engine_config_line():
    # given the API server's version line and V1 core.py's engine config line
    text = (
        "(APIServer pid=1) INFO 09-21 23:16:13 [api_server.py:1805] vLLM API server version 0.10.2\n"
        "(EngineCore_0 pid=357) INFO 09-21 23:16:19 [core.py:75] Initializing a V1 LLM engine (v0.10.2) with "
        "config: model='Qwen/Qwen3-32B', speculative_config=None, tokenizer='Qwen/Qwen3-32B', "
        "skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, override_neuron_config={}, "
        "trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=32768, download_dir=None, load_format=auto, "
        "tensor_parallel_size=2, pipeline_parallel_size=1, disable_custom_all_reduce=False, quantization=fp8, "
        "enforce_eager=False, kv_cache_dtype=fp8_e4m3, device_config=cuda, "
        "decoding_config=DecodingConfig(backend='auto', disable_fallback=False), seed=0, "
        "served_model_name=Qwen/Qwen3-32B, enable_prefix_caching=True, "
        'compilation_config={"level":3,"cudagraph_capture_sizes":[512,504],"max_capture_size":512}\n'
        "(APIServer pid=1) INFO 09-21 23:16:13 [config.py:1604] Using max model len 32768\n"
        "(APIServer pid=1) INFO 09-21 23:16:13 [scheduler.py:222] Chunked prefill is enabled with "
        "max_num_batched_tokens=8192.\n"
    )

    # when
    log = bootlog_parse(text)

    # then
    assert log.engine_version == "0.10.2"
    assert log.model == "Qwen/Qwen3-32B"
    assert log.tensor_parallel_size == 2
    assert log.max_model_len == 32_768
    assert log.flags == {
        "dtype": "bfloat16",
        "kv_cache_dtype": "fp8_e4m3",
        "quantization": "fp8",
        "enforce_eager": False,
        "pipeline_parallel_size": 1,
        "enable_prefix_caching": True,
        "served_model_name": "Qwen/Qwen3-32B",
        "max_num_batched_tokens": 8192,
    }
    assert log.warnings == ()


def test_version_and_model_from_the_ascii_banner():
    # given the banner of vLLM 0.15 (utils.py)
    text = (
        "(APIServer pid=1726) INFO 02-19 10:10:57 [utils.py:325]        █     █     █▄   ▄█\n"
        "(APIServer pid=1726) INFO 02-19 10:10:57 [utils.py:325]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.15.1\n"
        "(APIServer pid=1726) INFO 02-19 10:10:57 [utils.py:325]   █▄█▀ █     █     █     █  model   "
        "Qwen/Qwen3-8B\n"
        "(APIServer pid=1726) INFO 02-19 10:10:57 [utils.py:325]    ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀\n"
    )

    # when
    log = bootlog_parse(text)

    # then
    assert (log.engine, log.engine_version, log.model) == ("vllm", "0.15.1", "Qwen/Qwen3-8B")


def test_vllm_011_summary_line_gives_the_whole_bill():
    # given gpu_worker.py's summary, the KV cache in bytes

    # when
    log = bootlog_parse(VLLM_011_SUMMARY)

    # then
    assert log.total_gpu_memory_bytes == 150_119_844_413  # round(139.81 × 2^30)
    assert log.gpu_memory_utilization == 0.9
    assert log.budget_bytes == 135_108_933_714  # round(125.83 × 2^30)
    assert log.weights_bytes == 79_757_542_687  # round(74.28 × 2^30)
    assert log.activation_peak_bytes == 5_991_479_378  # round(5.58 × 2^30)
    assert log.non_torch_bytes == 1_481_763_717  # round(1.38 × 2^30)
    assert log.cuda_graph_bytes == 2_544_768_123  # round(2.37 × 2^30)
    assert log.kv_cache_bytes == 47_878_721_024  # printed in bytes: exact
    assert log.warnings == ()


def test_weights_plus_non_torch_summary_gives_non_torch_by_difference():
    # given the later summary wording, with the weights on their own line
    text = (
        "(Worker_TP1 pid=771) INFO 08-21 18:21:30 [gpu_model_runner.py:2007] Model loading took 56.4521 GiB "
        "and 20.1 seconds\n"
        "(Worker_TP1 pid=771) INFO 08-21 18:22:06 [gpu_worker.py:789] Free memory on device (94.05/95.01 GiB) on "
        "startup. Desired GPU memory utilization is (0.9, 85.51 GiB). Actual usage is 56.89 GiB for consumed "
        "memory (weights + non-torch), 0.76 GiB for peak activation, and 0.32 GiB for CUDAGraph memory. Replace "
        "gpu_memory_utilization config with `--kv-cache-memory=29407858586` (27.39 GiB) to fit into requested "
        "memory, or `--kv-cache-memory=38581581312` (35.93 GiB) to fully utilize gpu memory. Current kv cache "
        "memory in use is 27.85 GiB.\n"
    )

    # when
    log = bootlog_parse(text)

    # then
    assert log.weights_bytes == 60_614_980_823  # round(56.4521 × 2^30)
    assert log.non_torch_bytes == 470_191_544  # round(56.89 × 2^30) − 60,614,980,823 = 61,085,172,367 − …
    assert log.activation_peak_bytes == 816_043_786  # round(0.76 × 2^30)
    assert log.cuda_graph_bytes == 343_597_384  # round(0.32 × 2^30)
    assert log.total_gpu_memory_bytes == 102_016_210_698  # round(95.01 × 2^30)
    assert log.budget_bytes == 91_815_663_370  # round(85.51 × 2^30)
    assert log.warnings == (
        "non-torch memory derived: 56.89 GiB of weights + non-torch less 56.45 GiB of "
        "weights (vLLM printed them together)",
    )


def test_measured_cuda_graph_memory_wins_over_the_estimate():
    # given vLLM 0.21+: the estimate before the KV allocation, the capture after it
    text = (
        "(EngineCore pid=75) INFO Estimated CUDA graph memory: 1.10 GiB total\n"
        "(EngineCore pid=75) INFO Available KV cache memory: 12.15 GiB\n"
        "(EngineCore pid=75) INFO Graph capturing finished in 18 secs, took 0.96 GiB\n"
    )

    # when
    log = bootlog_parse(text)

    # then
    assert log.cuda_graph_bytes == 1_030_792_151  # round(0.96 × 2^30), not the 1.10 GiB estimate
    assert log.lines["cuda_graph_bytes"] == (
        "(EngineCore pid=75) INFO Graph capturing finished in 18 secs, took 0.96 GiB"
    )
    assert log.warnings == ()


def test_ranks_that_disagree_keep_the_first_and_warn():
    # given two workers printing different KV memory
    text = (
        "(Worker_TP0 pid=1159) INFO 09-04 11:00:12 [gpu_worker.py:624] Available KV cache memory: 17.79 GiB\n"
        "(Worker_TP1 pid=1160) INFO 09-04 11:00:12 [gpu_worker.py:624] Available KV cache memory: 17.81 GiB\n"
    )

    # when
    log = bootlog_parse(text)

    # then
    assert log.kv_cache_bytes == 19_101_867_049  # round(17.79 × 2^30)
    assert log.warnings == (
        "the log prints several values for kv_cache_bytes (17.79 GiB, 17.81 GiB): kept the "
        "first (several ranks or models, or a restart, in one paste?)",
    )


def test_a_failed_v0_start_warns_about_the_negative_kv_cache():
    # given vLLM 0.7.3 on a 6 GB card: the weights and activations exceed the budget
    text = (
        "the current vLLM instance can use total_gpu_memory (6.00GiB) x gpu_memory_utilization (0.90) = 5.40GiB\n"
        "model weights take 5.43GiB; non_torch_memory takes -0.51GiB; PyTorch activation peak memory takes "
        "1.42GiB; the rest of the memory reserved for KV Cache is -0.94GiB.\n"
        "# cuda blocks: 0, # CPU blocks: 4681\n"
        "Maximum concurrency for 4200 tokens per request: 0.00x\n"
    )

    # when
    log = bootlog_parse(text)

    # then
    assert log.non_torch_bytes == -547_608_330  # round(−0.51 × 2^30)
    assert log.kv_cache_bytes == -1_009_317_315  # round(−0.94 × 2^30)
    assert log.kv_cache_tokens == 0
    assert log.warnings == (
        "KV tokens = 0 blocks × 16 tokens: vLLM's default block size, which the log does not state",
        "non_torch_bytes is negative (-0.51 GiB): memory freed by another process during profiling, or no room left",
        "kv_cache_bytes is negative (-0.94 GiB): memory freed by another process during profiling, or no room left",
        "no memory left for the KV cache: the engine cannot start with these settings",
        "maximum concurrency 0.0x: the KV cache cannot hold one 4200-token request",
    )


def test_non_literal_non_default_args_keep_their_text():
    # given an argument vLLM echoes as an object repr (--kv-transfer-config)
    line = (
        "(APIServer pid=1) INFO 07-22 10:00:00 [utils.py:233] non-default args: {'model': "
        "'/path/to/Qwen3-235B-A22B-FP8', 'tensor_parallel_size': 4, 'kv_transfer_config': "
        "KVTransferConfig(kv_connector='LMCacheConnectorV1', kv_role='kv_both')}"
    )

    # when
    log = bootlog_parse(line)

    # then
    assert log.flags == {
        "model": "/path/to/Qwen3-235B-A22B-FP8",
        "tensor_parallel_size": 4,
        "kv_transfer_config": "KVTransferConfig(kv_connector='LMCacheConnectorV1', kv_role='kv_both')",
    }
    assert log.tensor_parallel_size == 4
    assert log.warnings == (
        "vLLM's non-default args are not a literal dict (an object or a cut line): values "
        "that are not literals are kept as text",
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "The model started fine, it uses about 20 GB.\n",
        "|   0  NVIDIA H100 80GB HBM3   On  | 00000000:18:00.0 Off |  0 |\n"
        "| N/A 35C P0 70W / 700W | 1MiB / 81559MiB |\n",
    ],
    ids=["empty", "prose", "nvidia-smi"],
)
def test_text_without_engine_lines_is_refused(text: str):
    # given text that holds no vLLM or SGLang startup line

    # when
    with pytest.raises(SizingError) as raised:
        bootlog_parse(text)

    # then
    assert raised.value.code is SizingErrorCode.INVALID_ARGUMENT
    assert raised.value.message.startswith("the text holds no line of a vLLM or SGLang startup log")
    assert list(raised.value.extra["fields"]) == ["text"]


def test_memory_lines_nothing_reads_are_listed():
    # given a log with a memory line no pattern reads, a progress bar with a rate, and a profiling time
    text = (
        "INFO 04-24 16:33:13 [kv_cache_utils.py:634] GPU KV cache size: 158,656 tokens\n"
        "model-00001-of-00004.safetensors: 100%|██████████| 4.98G/4.98G [00:20<00:00, 245MB/s]\n"
        "INFO 04-24 16:33:10 [worker.py:267] Memory profiling takes 5.07 seconds\n"
        "(VllmWorker rank=0 pid=7) INFO 04-24 16:40:00 [gpu_worker.py:99] Sleep mode freed 12.34 GiB memory, "
        "1.02 GiB memory is still in use.\n"
    )

    # when
    log = bootlog_parse(text)

    # then
    assert log.unparsed_memory_lines == (
        "(VllmWorker rank=0 pid=7) INFO 04-24 16:40:00 [gpu_worker.py:99] Sleep mode freed 12.34 GiB memory, "
        "1.02 GiB memory is still in use.",
    )


def test_compare_sets_each_logged_figure_against_the_estimate():
    # given a log and a hand-made estimate (the shape of MemoryEstimate.as_dict())
    log = BootLog(
        engine="vllm",
        weights_bytes=16 * GiB,
        activation_peak_bytes=2 * GiB,
        non_torch_bytes=1 * GiB,
        kv_cache_bytes=40 * GiB,
        kv_cache_tokens=200_000,
        max_concurrency=6.25,
        max_concurrency_tokens_per_request=32_768,
        budget_bytes=72 * GiB,
        total_gpu_memory_bytes=80 * GiB,
        lines={"weights_bytes": "Model loading took 16.0000 GiB and 3.2 seconds"},
    )
    estimate = {
        "weight_bytes_per_gpu": 15 * GiB,
        "memory_per_gpu": {
            "weights": 15 * GiB,
            "kv_cache": 41 * GiB,
            "activations": 3 * GiB,
            "runtime": 805_306_368,
            "cuda_graphs": 512 * 2**20,
        },
        "kv_capacity_tokens": 210_000,
        "max_model_len": 32_768,
        "max_concurrency": 6.5,
        "budget_bytes_per_gpu": 72 * GiB,
    }

    # when
    lines = bootlog_compare(log, estimate)

    # then: difference = estimated − logged; relative = difference / logged; no CUDA-graph figure in the log
    assert lines == (
        ComparisonLine(
            figure="weights_bytes",
            logged_bytes_or_value=17_179_869_184,
            estimated=16_106_127_360,
            difference=-1_073_741_824,
            relative_difference=-0.0625,
            unit="bytes",
            source_line="Model loading took 16.0000 GiB and 3.2 seconds",
        ),
        ComparisonLine(
            figure="activation_peak_bytes",
            logged_bytes_or_value=2_147_483_648,
            estimated=3_221_225_472,
            difference=1_073_741_824,
            relative_difference=0.5,
            unit="bytes",
            source_line="",
        ),
        ComparisonLine(
            figure="non_torch_bytes",
            logged_bytes_or_value=1_073_741_824,
            estimated=805_306_368,
            difference=-268_435_456,
            relative_difference=-0.25,
            unit="bytes",
            source_line="",
        ),
        ComparisonLine(
            figure="kv_cache_bytes",
            logged_bytes_or_value=42_949_672_960,
            estimated=44_023_414_784,
            difference=1_073_741_824,
            relative_difference=0.025,
            unit="bytes",
            source_line="",
        ),
        ComparisonLine(
            figure="kv_cache_tokens",
            logged_bytes_or_value=200_000,
            estimated=210_000,
            difference=10_000,
            relative_difference=0.05,
            unit="tokens",
            source_line="",
        ),
        ComparisonLine(
            figure="max_concurrency",
            logged_bytes_or_value=6.25,
            estimated=6.5,
            difference=0.25,
            relative_difference=0.04,
            unit="x",
            source_line="",
        ),
        ComparisonLine(
            figure="budget_bytes",
            logged_bytes_or_value=77_309_411_328,
            estimated=77_309_411_328,
            difference=0,
            relative_difference=0.0,
            unit="bytes",
            source_line="",
        ),
        ComparisonLine(
            figure="total_gpu_memory_bytes",
            logged_bytes_or_value=85_899_345_920,
            estimated=None,
            difference=None,
            relative_difference=None,
            unit="bytes",
            source_line="",
        ),
    )


def test_compare_rescales_concurrency_to_the_logged_request_length():
    # given a log stating concurrency for 20,000 tokens and an estimate made for max_model_len 8192
    log = bootlog_parse(VLLM_10517_ONE_LINE)
    estimate = {"max_model_len": 8192, "max_concurrency": 3.81, "kv_capacity_tokens": 31_200}

    # when
    lines = {line.figure: line for line in bootlog_compare(log, estimate)}

    # then: our capacity over the log's length, round(31,200 / 20,000, 2) = 1.56
    assert lines["max_concurrency"].estimated == 1.56
    assert lines["max_concurrency"].difference == 0.0
    assert lines["max_concurrency"].source_line == "Maximum concurrency for 20000 tokens per request: 1.56x"
    assert lines["kv_cache_tokens"].estimated == 31_200
    assert lines["kv_cache_tokens"].difference == -32  # 31,200 − 31,232


def test_compare_reads_a_real_estimate_dict():
    # given the PR #10511 log (Llama-3-8B, H100) and our estimate of the same deployment
    log = bootlog_parse(VLLM_PR10511_TABLE)
    estimate = estimate_memory(
        EstimateRequest(arch=build_arch(), gpu=build_gpu(memory_gib=79.22), max_model_len=8192)
    ).as_dict()

    # when
    lines = bootlog_compare(log, estimate)

    # then: every logged figure meets the estimate's own field; vLLM's "Model loading took" counts the rotary
    # cos/sin cache, so the logged weights meet the bill's weights line: the tensors 16,060,522,496 + the cache
    # 8192 × 128 × 2 = 2,097,152 → 16,062,619,648
    assert estimate["memory_per_gpu"]["weights"] == 16_062_619_648
    assert estimate["weight_bytes_per_gpu"] + estimate["rope_cache_bytes_per_gpu"] == 16_062_619_648
    assert [(line.figure, line.estimated) for line in lines] == [
        ("weights_bytes", estimate["memory_per_gpu"]["weights"]),
        ("activation_peak_bytes", estimate["memory_per_gpu"]["activations"]),
        ("non_torch_bytes", estimate["memory_per_gpu"]["runtime"]),
        ("kv_cache_bytes", estimate["memory_per_gpu"]["kv_cache"]),
        ("budget_bytes", estimate["budget_bytes_per_gpu"]),
        ("total_gpu_memory_bytes", estimate["capacity_bytes_per_gpu"]),
    ]
    assert all(line.difference == line.estimated - line.logged_bytes_or_value for line in lines)


def test_calibration_keys_are_estimate_request_arguments():
    # given a log with every calibrated figure
    log = bootlog_parse(VLLM_011_SUMMARY)

    # when
    request = EstimateRequest(arch=build_arch(), gpu=build_gpu(), **bootlog_calibration(log))

    # then
    assert {name: getattr(request, name) for name in bootlog_calibration(log)} == bootlog_calibration(log)
    assert set(bootlog_calibration(log)) <= {item.name for item in fields(EstimateRequest)}


def test_calibration_from_a_v0_profile():
    # given the 0.8.5 V0 log

    # when
    calibration = bootlog_calibration(bootlog_parse(VLLM_V0_TWO_LINE))

    # then: no CUDA-graph figure in that log; vLLM's total is CUDA's own (cudaMemGetInfo), not the driver's
    assert calibration == {
        "runtime_reserve_bytes": 53_687_091,
        "gpu_cuda_total_bytes": 15_826_954_486,
        "activation_peak_bytes": 966_367_642,
    }


def test_calibration_from_a_v1_summary_includes_cuda_graphs():
    # given vLLM 0.11's summary line

    # when
    calibration = bootlog_calibration(bootlog_parse(VLLM_011_SUMMARY))

    # then
    assert calibration == {
        "runtime_reserve_bytes": 1_481_763_717,
        "cuda_graph_bytes": 2_544_768_123,
        "gpu_cuda_total_bytes": 150_119_844_413,
        "activation_peak_bytes": 5_991_479_378,
    }


def test_calibration_leaves_out_negative_and_missing_figures():
    # given a log with a negative non-torch figure and no total
    log = BootLog(engine="vllm", non_torch_bytes=-547_608_330, activation_peak_bytes=1_524_713_390)

    # when
    calibration = bootlog_calibration(log)

    # then
    assert calibration == {"activation_peak_bytes": 1_524_713_390}


def test_module_docstring_example_holds():
    # given the module's doctest

    # when
    result = doctest.testmod(bootlog_module)

    # then
    assert (result.failed, result.attempted) == (0, 2)
