"""SGLang's and TensorRT-LLM's defaults per release (sglang_budget, trtllm_budget) through `estimate_memory`.

Llama-3-8B (tests.sizing.estimator.builders) at max_model_len 8192: the weights line is 16,060,522,496 bytes of
tensors (SGLang adds the rotary cache: 16,062,619,648), 131,072 KV bytes per token in bf16. SGLang reads the card
as nvidia-smi's MiB: an 80 GiB test card is 81,920 MiB, 141 GiB is 144,384 MiB, 24 GiB is 24,576 MiB. Sources are
`file:line @ tag` of the released SGLang wheels (`pip download --no-deps sglang==X.Y.Z`).
"""

from __future__ import annotations

import pytest

from sizing.estimator.architecture import architecture_from_config, merge_quant_config
from sizing.estimator.dtypes import DType
from sizing.estimator.engines import Engine, sglang_default_scheduler
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.memory import EstimateRequest, MemoryEstimate, estimate_memory
from sizing.estimator.sglang_budget import NEWEST as SGLANG_NEWEST
from sizing.estimator.sglang_budget import prefill_graph_sizes, sglang_mem_fraction_static
from sizing.estimator.trtllm_budget import NEWEST as TRTLLM_NEWEST
from sizing.estimator.trtllm_budget import trtllm_kv_dtype, trtllm_rules
from sizing.estimator.units import GiB
from sizing.estimator.versions import ENGINE_VERSION_RANGES, Version
from tests.sizing.estimator.builders import build_arch, build_gpu, llama_config

LLAMA3_8B_WEIGHTS_WITH_ROPE_CACHE = 16_062_619_648
LLAMA3_8B_BF16_WEIGHTS = 16_060_522_496
CUDA_CONTEXT = 536_870_912  # 0.5 GiB


def _estimate(engine: Engine, version: str, *, memory_gib: float = 80, **overrides) -> MemoryEstimate:
    arch = overrides.pop("arch", None) or build_arch()
    return estimate_memory(
        EstimateRequest(
            arch=arch,
            gpu=build_gpu(memory_gib=memory_gib),
            engine=engine,
            max_model_len=8192,
            engine_version=version,
            **overrides,
        )
    )


# --- SGLang: defaults per release --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "memory_gib", "tp", "defaults"),
    [
        # 24,576 MiB < 25,000: bs 8 whatever the TP, chunk 2048 (server_args.py:175-180 @ v0.4.0)
        pytest.param(Version(0, 4, 0), 24, 4, (8, 2048), id="0.4.0-24gib-tp4"),
        # from 0.4.1 TP ≥ 4 takes 80 on small cards (server_args.py:194-196 @ v0.4.1)
        pytest.param(Version(0, 4, 1), 24, 4, (80, 2048), id="0.4.1-24gib-tp4"),
        # ≥ 25,000 MiB: chunk 8192, bs 160 (server_args.py:250 @ v0.4.5; capture list up to 160)
        pytest.param(Version(0, 4, 5), 80, 1, (160, 8192), id="0.4.5-80gib"),
        # 0.4.6 captures 160..256 too above 81,920 MiB (cuda_graph_runner.py:138-139 @ v0.4.6)
        pytest.param(Version(0, 4, 6), 80, 1, (160, 8192), id="0.4.6-80gib"),
        pytest.param(Version(0, 4, 6), 141, 1, (256, 8192), id="0.4.6-141gib"),
        # 196,608 MiB > 180,000: chunk 16384 and 256..512 captured (server_args.py:287 @ v0.4.7)
        pytest.param(Version(0, 4, 7), 192, 1, (512, 16384), id="0.4.7-192gib"),
        # 40,960 MiB ≥ 35 × 1024: chunk 8192, bs 160 (server_args.py:318 @ v0.4.8)
        pytest.param(Version(0, 4, 8), 40, 1, (160, 8192), id="0.4.8-40gib"),
        # the card table (server_args.py:_handle_gpu_memory_settings 542-626 @ v0.5.3): < 35 GiB bs 16, < 60 GiB 4096/32
        pytest.param(Version(0, 5, 3), 24, 1, (16, 2048), id="0.5.3-24gib"),
        pytest.param(Version(0, 5, 3), 40, 1, (32, 4096), id="0.5.3-40gib"),
        # < 35 GiB: chunk 4096, bs 48 (TP < 4) / 160 (arg_groups/memory_hook.py:110-114 @ v0.5.20)
        pytest.param(Version(0, 5, 20), 24, 1, (48, 4096), id="0.5.20-24gib-tp1"),
        pytest.param(Version(0, 5, 20), 24, 4, (160, 4096), id="0.5.20-24gib-tp4"),
    ],
)
def test_sglang_default_scheduler_per_release(version, memory_gib, tp, defaults):
    # given a release, a card and a TP size

    # when
    graph_bs_and_chunk = sglang_default_scheduler(memory_gib * GiB, tp, version=version)

    # then
    assert graph_bs_and_chunk == defaults


def test_sglang_0_4_5_takes_the_fixed_fraction_of_its_tp_size():
    # given SGLang 0.4.5 on an 80 GiB card at TP 1: mem_fraction_static 0.88 (server_args.py:243 @ v0.4.5, the
    # table of server_args.py:158-168 @ v0.4.0), chunked_prefill_size 8192, cuda_graph_max_bs 160

    # when
    result = _estimate(Engine.SGLANG, "0.4.5")

    # then
    # static budget floor(85,899,345,920 × 0.88) = 75,591,424,409
    # KV pool floor((85,899,345,920 − 536,870,912 CUDA context) × 0.88) − 16,062,619,648
    #   = 75,118,978,007 − 16,062,619,648 = 59,056,358,359 → // 131,072 = 450,564 tokens
    # the reserve 85,899,345,920 − 75,591,424,409 = 10,307,921,511 is below SGLang's later estimate for the
    #   activations (1.5 MiB × 8192 = 12,884,901,888): it all shows as activations, nothing is left for graphs
    # runtime = the CUDA context's share inside the static budget: 75,591,424,409 − 16,062,619,648 − 59,056,358,359
    #   = 472,446,402
    assert result.engine_version == "0.4.5"
    assert result.assumptions["engine_mem_fraction_static"] == 0.88
    assert result.budget_bytes_per_gpu == 75_591_424_409
    assert result.memory_per_gpu == {
        "weights": LLAMA3_8B_WEIGHTS_WITH_ROPE_CACHE,
        "kv_cache": 59_056_358_359,
        "activations": 10_307_921_511,
        "runtime": 472_446_402,
        "cuda_graphs": 0,
    }
    assert result.kv_capacity_tokens == 450_564
    assert (result.assumptions["max_num_seqs"], result.assumptions["max_num_batched_tokens"]) == (160, 8192)
    assert result.formulas["mem_fraction_static"] == "SGLang 0.4.0–0.4.5: fixed by TP 1 → 0.88"
    assert result.warnings == ()  # SGLang chose this fraction itself: no squeeze warning


@pytest.mark.parametrize(
    ("version", "memory_gib", "fraction", "band"),
    [
        pytest.param("0.4.5", 80, 0.88, "SGLang 0.4.0–0.4.5", id="0.4.5-fixed-by-tp"),
        # 144,384 MiB > 81,920: (144,384 − 13 × 1024) / 144,384 = 131,072 / 144,384, unrounded
        #   (server_args.py:238 @ v0.4.6)
        pytest.param("0.4.6", 141, 131_072 / 144_384, "SGLang 0.4.6", id="0.4.6-141gib"),
        # 0.88 above 81,920 MiB, then above 96 GiB min(0.88 + 49,152 × 0.12 / 144,384, (144,384 − 18,432) / 144,384)
        #   = min(0.92085, 125,952 / 144,384) (server_args.py:278 @ v0.4.7)
        pytest.param("0.4.7", 141, 125_952 / 144_384, "SGLang 0.4.7", id="0.4.7-141gib"),
        # reserve (9.5 + tp × pp / 2) × 1024 = 10,240 on cards below 90 GiB → round(71,680 / 81,920, 3) = 0.875
        #   (server_args.py:296, 313 @ v0.4.8)
        pytest.param("0.4.8", 80, 0.875, "SGLang 0.4.8–0.5.2", id="0.4.8-80gib"),
        # 512 + 1.5 × 8192 + 2 × 256 + 1024 / 8 = 13,440 → round(68,480 / 81,920, 3) = 0.836
        #   (server_args.py:1020-1049 @ v0.5.9)
        pytest.param("0.5.9", 80, 0.836, "SGLang 0.5.3–0.5.9", id="0.5.9-80gib"),
        # + piecewise prefill graphs: 58 token sizes up to 8192 × 8 MiB = 464 → 13,904 → round(68,016 / 81,920, 3)
        #   = 0.830 (server_args.py:1308 @ v0.5.10)
        pytest.param("0.5.10", 80, 0.83, "SGLang 0.5.10–0.5.13", id="0.5.10-80gib"),
        # 24 GiB: chunk 2048, bs 24: 512 + 3,072 + 48 + 128 + 42 sizes × 8 = 4,096 → round(20,480 / 24,576, 3) = 0.833
        pytest.param("0.5.19", 24, 0.833, "SGLang 0.5.15–0.5.23", id="0.5.19-24gib"),
        # 24 GiB from 0.5.20: chunk 4096, bs 48: 512 + 6,144 + 96 + 128 + 50 sizes × 8 = 7,280
        #   → round(17,296 / 24,576, 3) = 0.704 (arg_groups/memory_hook.py:110-114, 274-316 @ v0.5.20)
        pytest.param("0.5.23", 24, 0.704, "SGLang 0.5.15–0.5.23", id="0.5.23-24gib"),
    ],
)
def test_sglang_mem_fraction_static_follows_the_release(version, memory_gib, fraction, band):
    # given Llama-3-8B under one SGLang release, TP 1, no --mem-fraction-static

    # when
    result = _estimate(Engine.SGLANG, version, memory_gib=memory_gib)

    # then
    assert result.assumptions["engine_mem_fraction_static"] == fraction
    assert result.formulas["mem_fraction_static"].startswith(f"{band}: ")


def test_sglang_a_release_switch_changes_the_graph_term():
    # given the same 80 GiB deployment under SGLang 0.5.9 and 0.5.10

    # when
    before, after = _estimate(Engine.SGLANG, "0.5.9"), _estimate(Engine.SGLANG, "0.5.10")

    # then
    # 0.5.9: decode graphs 2 MiB × 256 = 536,870,912
    # 0.5.10: + piecewise prefill graphs 58 × 8 MiB = 486,539,264 → 1,023,410,176, and the fraction 0.836 → 0.83:
    #   pool floor(85,362,475,008 × 0.83) − 16,062,619,648 = 70,850,854,256 − 16,062,619,648 = 54,788,234,608
    assert before.memory_per_gpu["cuda_graphs"] == 536_870_912
    assert after.memory_per_gpu["cuda_graphs"] == 1_023_410_176
    assert after.memory_per_gpu["kv_cache"] == 54_788_234_608
    assert before.memory_per_gpu["kv_cache"] - after.memory_per_gpu["kv_cache"] == 512_174_850
    assert "piecewise prefill graphs 8 MiB × 58 token sizes" in after.formulas["cuda_graphs"]
    assert "--mem-fraction-static 0.83" in after.launch_args


@pytest.mark.parametrize(
    ("version", "fraction"),
    [
        # 0.5.13 counts every graph term even with --disable-cuda-graph: 13,904 MiB → 0.83
        pytest.param("0.5.13", 0.83, id="0.5.13-all-terms"),
        # 0.5.14 drops the prefill-graph term with the graphs (server_args.py:2942, 3303 @ v0.5.14): 13,440 → 0.836
        pytest.param("0.5.14", 0.836, id="0.5.14-no-prefill-term"),
        # 0.5.15 drops the decode term too (server_args.py:3643 @ v0.5.15): 512 + 12,288 + 128 = 12,928
        #   → round(68,992 / 81,920, 3) = 0.842
        pytest.param("0.5.15", 0.842, id="0.5.15-no-graph-terms"),
    ],
)
def test_sglang_disable_cuda_graph_leaves_the_reserve_by_release(version, fraction):
    # given --disable-cuda-graph (enforce_eager) on an 80 GiB card

    # when
    result = _estimate(Engine.SGLANG, version, enforce_eager=True)

    # then
    assert result.assumptions["engine_mem_fraction_static"] == fraction
    assert result.memory_per_gpu["cuda_graphs"] == 0
    assert "--disable-cuda-graph" in result.launch_args


def test_sglang_piecewise_graphs_under_mla_and_pipeline_parallel():
    # given SGLang 0.5.10 on 81,920 MiB, chunk 8192, decode graphs up to 256

    # when
    mla = sglang_mem_fraction_static(
        version=Version(0, 5, 10),
        gpu_mem_mib=81_920,
        tp=1,
        pp=1,
        chunked_prefill_size=8192,
        cuda_graph_max_bs=256,
        mla=True,
    )
    staged = sglang_mem_fraction_static(
        version=Version(0, 5, 10), gpu_mem_mib=81_920, tp=1, pp=2, chunked_prefill_size=8192, cuda_graph_max_bs=256
    )

    # then
    # MLA: a flat 1.5 GiB for the prefill graphs (server_args.py:1311 @ v0.5.10): 512 + 12,288 + 512 + 128 + 1,536
    #   = 14,976 → round(66,944 / 81,920, 3) = 0.817
    assert (mla.mem_fraction_static, mla.reserved_mib, mla.prefill_graph_mib) == (0.817, 14_976, 1_536)
    # PP 2 switches piecewise graphs off (server_args.py:1098 @ v0.5.10): 512 + 12,288 + 512 + 1024 × 2 / 8
    #   = 13,568 → round(68,352 / 81,920, 3) = 0.834
    assert (staged.mem_fraction_static, staged.prefill_graph_mib) == (0.834, 0)


@pytest.mark.parametrize(
    ("max_tokens", "count"),
    [
        # 4..32 step 4 (8) + 48..256 step 16 (14) + 288..512 step 32 (8) + 576..1024 step 64 (8) + 1280..4096 step 256
        # (12) + 4608..8192 step 512 (8) = 58 (server_args.py:1397-1415 @ v0.5.10)
        pytest.param(8192, 58, id="8192"),
        pytest.param(4096, 50, id="4096"),
        pytest.param(2048, 42, id="2048"),  # 8 + 14 + 8 + 8 + (1280, 1536, 1792, 2048)
    ],
)
def test_sglang_prefill_graph_sizes(max_tokens, count):
    # given a chunk size

    # when
    sizes = prefill_graph_sizes(max_tokens)

    # then
    assert len(sizes) == count
    assert sizes[-1] == max_tokens


# --- TensorRT-LLM ----------------------------------------------------------------------------------------------


def test_trtllm_1_x_captures_cuda_graphs_after_the_pool_and_0_21_does_not():
    # given Llama-3-8B on 80 GiB under TensorRT-LLM 0.21 (a TensorRT engine) and 1.0 (the PyTorch backend)

    # when
    engine, torch_backend = _estimate(Engine.TRTLLM, "0.21.0"), _estimate(Engine.TRTLLM, "1.0.0")

    # then
    # the pool is the same: floor((85,899,345,920 − 16,060,522,496 − 2,124,414,976 − 536,870,912) × 0.9)
    #   = floor(67,177,537,536 × 0.9) = 60,459,783,782
    # 1.0 adds decode CUDA graphs out of the remaining 10%: the 0.5 GiB default estimate = 536,870,912
    # required: 18,721,808,384 static + 60,459,783,782 = 79,181,592,166 (0.21); + 536,870,912 = 79,718,463,078 (1.0)
    assert engine.memory_per_gpu["kv_cache"] == torch_backend.memory_per_gpu["kv_cache"] == 60_459_783_782
    assert (engine.memory_per_gpu["cuda_graphs"], torch_backend.memory_per_gpu["cuda_graphs"]) == (0, 536_870_912)
    assert (engine.required_bytes_per_gpu, torch_backend.required_bytes_per_gpu) == (79_181_592_166, 79_718_463_078)
    assert engine.formulas["kv_cache"].startswith("TensorRT-LLM 0.17–0.21 (tensorrt backend): ")
    assert torch_backend.formulas["kv_cache"].startswith("TensorRT-LLM 1.0–1.2 (pytorch backend): ")
    assert torch_backend.launch_args[:5] == (
        "--tp_size 1",
        "--pp_size 1",
        "--max_batch_size 2048",
        "--max_num_tokens 8192",
        "--kv_cache_free_gpu_memory_fraction 0.9",
    )


def test_trtllm_measured_or_disabled_cuda_graphs():
    # given a measured 1.25 GiB of graphs, then eager mode, under TensorRT-LLM 1.2

    # when
    measured = _estimate(Engine.TRTLLM, "1.2.0", cuda_graph_bytes=1_342_177_280)
    eager = _estimate(Engine.TRTLLM, "1.2.0", enforce_eager=True)

    # then
    assert measured.memory_per_gpu["cuda_graphs"] == 1_342_177_280
    assert eager.memory_per_gpu["cuda_graphs"] == 0


FP8_HF_QUANT_CONFIG = {
    # a ModelOpt FP8 export's hf_quant_config.json (nvidia/Llama-3.1-8B-Instruct-FP8 style)
    "producer": {"name": "modelopt", "version": "0.23.0"},
    "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"},
}


def test_trtllm_auto_kv_dtype_follows_the_checkpoints_kv_cache_quant_algo():
    # given an FP8 ModelOpt checkpoint whose hf_quant_config.json says kv_cache_quant_algo FP8
    arch = architecture_from_config(merge_quant_config(llama_config(), FP8_HF_QUANT_CONFIG))

    # when
    trtllm = _estimate(Engine.TRTLLM, "latest", arch=arch)
    forced = _estimate(Engine.TRTLLM, "latest", arch=arch, kv_dtype="bf16")
    sglang = _estimate(Engine.SGLANG, "latest", arch=arch)

    # then
    # TensorRT-LLM takes the checkpoint's FP8 KV cache: 32 layers × 8 KV heads × 128 × 2 (K, V) × 1 byte = 65,536
    # per token; an explicit --kv_cache_dtype wins; SGLang's auto stays in the model dtype (131,072)
    assert (trtllm.kv_dtype, trtllm.kv_bytes_per_token_per_gpu) == ("fp8", 65_536)
    assert (forced.kv_dtype, forced.kv_bytes_per_token_per_gpu) == ("bf16", 131_072)
    assert (sglang.kv_dtype, sglang.kv_bytes_per_token_per_gpu) == ("bf16", 131_072)


@pytest.mark.parametrize(
    ("quantization", "dtype"),
    [
        pytest.param(
            {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}, DType.FP8, id="fp8"
        ),
        pytest.param(
            {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "INT8"}, DType.INT8, id="int8"
        ),
        # ModelOpt writes "no KV quantization" as null or the string "none"
        pytest.param(
            {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": None}, DType.BF16, id="null"
        ),
        pytest.param(
            {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "none"}, DType.BF16, id="none"
        ),
        pytest.param(None, DType.BF16, id="unquantized"),
    ],
)
def test_trtllm_kv_dtype_of_auto(quantization, dtype):
    # given a bf16 model with this quantization config
    arch = build_arch(quantization_config=quantization) if quantization else build_arch()

    # when
    kv = trtllm_kv_dtype(arch, "auto")

    # then
    assert kv is dtype


# --- versions --------------------------------------------------------------------------------------------------


def test_latest_is_the_newest_modelled_release():
    # given no engine version

    # when
    sglang, trtllm = _estimate(Engine.SGLANG, "latest"), _estimate(Engine.TRTLLM, "latest")

    # then: what "latest" means is the newest band of each budget module
    assert (sglang.engine_version, trtllm.engine_version) == ("0.5.23", "1.2.0")
    assert ENGINE_VERSION_RANGES["sglang"].newest == SGLANG_NEWEST
    assert ENGINE_VERSION_RANGES["trtllm"].newest == TRTLLM_NEWEST
    assert trtllm_rules(None).backend == "pytorch"


@pytest.mark.parametrize(
    ("engine", "requested", "modelled"),
    [
        pytest.param(Engine.SGLANG, "0.6.0", "0.5.23", id="sglang"),
        pytest.param(Engine.TRTLLM, "1.3.0rc1", "1.2.0", id="trtllm"),
    ],
)
def test_a_newer_release_than_modelled_warns_and_uses_the_newest_band(engine, requested, modelled):
    # given a release newer than the rule tables

    # when
    result = _estimate(engine, requested)
    newest = _estimate(engine, modelled)

    # then
    assert result.engine_version == modelled
    assert result.engine_version_requested == requested
    assert f"is newer than the newest release modelled ({modelled})" in result.warnings[0]
    assert result.memory_per_gpu == newest.memory_per_gpu


@pytest.mark.parametrize(
    ("engine", "requested", "oldest"),
    [
        pytest.param(Engine.SGLANG, "0.3.6", "0.4.0", id="sglang"),
        pytest.param(Engine.TRTLLM, "0.16.0", "0.17.0", id="trtllm"),
    ],
)
def test_an_older_release_than_modelled_is_refused(engine, requested, oldest):
    # given a release older than the rule tables

    # when
    with pytest.raises(SizingError) as raised:
        _estimate(engine, requested)

    # then: a 400-style error on engine_version that names the oldest modelled release
    error = raised.value
    assert error.code is SizingErrorCode.INVALID_ARGUMENT
    assert error.message == (
        f"{engine.value} {requested} is older than the oldest release modelled ({oldest}): its "
        "memory rules are not in the estimator, so it is not estimated; choose "
        f"{oldest} or later"
    )
    assert list(error.extra["fields"]) == ["engine_version"]
