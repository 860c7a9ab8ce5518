"""Server-rendered pages. The sizing and boot-log pages render the catalogs; their scripts call the REST API."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.mixins import LoginRequiredMixin
from django.db.models.functions import Lower
from django.utils.translation import gettext as _
from django.utils.translation import pgettext
from django.views.generic import TemplateView

from frontend.forms import SizingVersionForm
from llm_sizing_loadgen.workload import ArrivalKind, LengthKind
from sizing.estimator.dtypes import KV_CACHE_DTYPES
from sizing.estimator.engines import ENGINE_CHOICES, ENGINE_TRAITS
from sizing.estimator.formats import FORMATS, WEIGHT_FORMAT_CHOICES
from sizing.estimator.version_choices import (
    INSTALL_CHOICES,
    USAGE_CONTEXT_CHOICES,
    VLLM_RELEASE_CHOICES,
    latest_vllm_release,
)
from sizing.selectors.deployments import fingerprint_list_for_organisation
from sizing.selectors.estimates import gpu_list, model_list_for_organisation
from sizing.selectors.workloads import workload_profile_list_for_organisation
from sizing.services.estimates import organisation_for_user

DEFAULT_GPU_MEMORY_UTILIZATION = 0.9  # vLLM's default for --gpu-memory-utilization
COLOCATED_GPU_MEMORY_UTILIZATION = 0.45  # two vLLM instances sharing a card, each at 0.45
COLOCATED_MIN_DEPLOYMENTS = 2  # the bounds of POST /api/v1/estimates/colocated
COLOCATED_MAX_DEPLOYMENTS = 8
# Engines whose memory follows --gpu-memory-utilization (or its equivalent); the form shows the input for these.
UTILIZATION_ENGINES = "vllm tgi llamacpp transformers idealized"


def _weight_format_labels() -> dict[str, str]:
    return {
        "auto": _("Auto (from the model config)"),
        "fp32": "FP32",
        "fp16": "FP16",
        "bf16": "BF16",
        "fp8": _("FP8 (per-tensor scales)"),
        "fp8-block": _("FP8 (128×128 block scales)"),
        "int8": _("INT8 (per-channel scales)"),
        "int4": _("INT4 (AWQ/GPTQ, group 128)"),
    }


def _kv_dtype_labels() -> dict[str, str]:
    return {
        "auto": _("Auto (same as the model)"),
        "bf16": "BF16",
        "fp16": "FP16",
        "fp8": "FP8",
        "fp8_e4m3": "FP8 E4M3",
        "fp8_e5m2": "FP8 E5M2",
        "fp32": "FP32",
    }


def engine_label_map() -> dict[str, str]:
    return {
        "vllm": "vLLM",
        "sglang": "SGLang",
        "trtllm": "TensorRT-LLM",
        "tgi": _("TGI (Text Generation Inference)"),
        "llamacpp": "llama.cpp",
        "transformers": _("Hugging Face transformers (generate)"),
        "idealized": _("Idealized (weights + KV cache + fixed reserve)"),
    }


def engine_name_map() -> dict[str, str]:
    """Short engine names for running text (the summary line, the allocation note)."""
    names = {engine.value: traits.label for engine, traits in ENGINE_TRAITS.items()}
    names["idealized"] = _("the idealized engine")
    names["transformers"] = _("transformers generate()")
    return names


def select_choices(
    values: tuple[str, ...], labels: dict[str, str], fallback: dict[str, str] | None = None
) -> list[dict[str, str]]:
    """Pair the estimator's choice values with translated labels; a value added later shows with the
    estimator's own label (`fallback`), or as itself."""
    fallback = fallback or {}
    return [{"value": value, "label": labels.get(value) or fallback.get(value) or value.upper()} for value in values]


def _common_strings() -> dict[str, Any]:
    """Strings both pages' scripts show: the memory bill, units, figure sources, verdicts."""
    return {
        # components of the memory bill, in the API's keys
        "weights": _("Weights"),
        "kv_cache": _("KV cache"),
        "activations": _("Activations"),
        "runtime": _("Runtime reserve"),
        "cuda_graphs": _("CUDA graphs"),
        "required": _("Required"),
        "usable": _("Usable"),
        "headroom": _("Headroom"),
        "capacity": _("Card capacity"),
        "budget": _("Engine budget"),
        # verdict
        "fits": _("Fits"),
        "does_not_fit": _("Does not fit"),
        # units
        "gb": _("GB"),
        "gib": _("GiB"),
        "gib_value": _("{value} GiB"),
        "bytes_value": _("{value} bytes"),
        "tokens_value": _("{value} tokens"),
        "requests_value": _("{value} requests"),
        "times_value": _("{value}×"),
        # where a figure of the bill comes from (figure_sources)
        "source_estimated": _("estimated"),
        "source_calibrated": _("calibrated"),
        "source_measured": _("measured"),
        "source_catalog": _("catalog"),
        "source_title_estimated": _("Estimated: computed from the model's configuration and the engine's defaults"),
        "source_title_calibrated": _("Calibrated: taken from a boot log or a benchmark of this deployment"),
        "source_title_measured": _("Measured: what the card or the engine reported"),
        "source_title_catalog": _("From the GPU catalog"),
        # errors
        "network_error": _("The server could not be reached; please try again"),
        "engine_names": engine_name_map(),
    }


def _vllm_release_labels() -> dict[str, str]:
    """The vLLM releases the sizing page offers, each with what changes in the memory rules at it."""
    notes = {
        "latest": _("the newest release modelled"),
        "0.33.0": _(
            "profiling counts start-up buffers (from 0.27); cards of 160 GiB or more get the big batch "
            "defaults (from 0.29); the FlashInfer sampler is on again (from 0.21)"
        ),
        "0.20.0": _("gpu_memory_utilization 0.92 by default; CUDA graphs are measured inside the budget"),
        "0.19.0": _("the last release with gpu_memory_utilization 0.90 and CUDA graphs outside the budget"),
        "0.17.0": _("the Triton top-k/top-p sampler: a smaller sampling peak"),
        "0.11.0": _("V1 only; NCCL's NVLS buffers on NVSwitch boards (about 2 GiB at TP > 1)"),
        "0.10.2": _("V1 on every GPU (no V0 fallback below compute capability 8.0)"),
        "0.9.2": _(
            "the hidden states stay alive while sampling; the CUDA context is no longer subtracted (from 0.9.1)"
        ),
        "0.9.0": _("the A100-80GB leaves the big-card batch defaults; profiling subtracts the CUDA context"),
        "0.8.5": _("V1 by default (V0 fallback on older GPUs); profiling subtracts the CUDA context"),
        "0.7.3": _("V0; profiling leaves the CUDA context and fragmentation out"),
        "0.6.6": _("V0; allocator fragmentation lands in non-torch memory (0.6.5-0.6.6)"),
        "0.6.4": _("V0; profiling subtracts the CUDA context"),
    }
    labels = {}
    for value, note in VLLM_RELEASE_CHOICES:
        name = _("latest (%(version)s)") % {"version": latest_vllm_release()} if value == "latest" else value
        labels[value] = f"{name} · {notes.get(value, note)}"
    return labels


def usage_context_label_map() -> dict[str, str]:
    labels = {"serve": _("vllm serve (the OpenAI-compatible server)"), "llm": _("Python LLM(...) (offline batches)")}
    return {value: labels.get(value, value) for value in USAGE_CONTEXT_CHOICES}


def install_label_map() -> dict[str, str]:
    labels = {"pip": _("pip (the PyPI wheel)"), "docker": _("Docker (the official vllm/vllm-openai image)")}
    return {value: labels.get(value, value) for value in INSTALL_CHOICES}


def sizing_page_strings() -> dict[str, Any]:
    """Every string the sizing page's script shows, translated into the active language."""
    return {
        "calibration_applied": _("Runtime terms calibrated from a saved boot log (engine {version}, {date})"),
        "environment_summary": _("Sized on {host} (fingerprint {id}): {memory} per GPU, as its driver reports it"),
        "environment_clean": _("The plan passes every check against this machine"),
        "severity_error": pgettext("severity", "Error"),
        "severity_warning": pgettext("severity", "Warning"),
        "severity_info": pgettext("severity", "Info"),
        **_common_strings(),
        "problems": _("Problems"),
        "warnings": _("Warnings"),
        "approximate": _("Approximate: some architecture details were estimated, not read from the config"),
        "summary": _(
            "{model} on {gpus} × {gpu_name} · TP {tp} · PP {pp} · {replicas} replica(s) · "
            "weights {weights} · KV cache {kv_dtype} · {engine}"
        ),
        "summary_dp": _("DP {dp}"),
        "summary_ep": _("EP {ep}"),
        "summary_draft": _("draft model {draft}"),
        "summary_speculative": _("{tokens} speculative tokens"),
        "binding_caption": _("Memory bill of the binding GPU (GPU {index})"),
        # how the engine takes its memory (allocation)
        "allocation_label": _("Memory behaviour"),
        "allocation_preallocated": _("Preallocated"),
        "allocation_static": _("Static"),
        "allocation_on_demand": _("On demand"),
        "allocation_text_preallocated": _(
            "{engine} reserves its memory when it starts: each GPU sits near {required} GiB from the first second, "
            "whatever the load. Under load the risk is requests queueing or being preempted, not running out of "
            "memory"
        ),
        "allocation_text_static": _(
            "{engine} allocates a fixed context when it starts: each GPU holds about {required} GiB from the first "
            "second and stays there. Requests beyond its slots wait; memory does not grow"
        ),
        "allocation_text_on_demand": _(
            "{engine} takes KV cache memory as sequences grow and gives it back when they finish: memory follows "
            "the load and the card runs out of memory (OOM) when the demand outgrows it. Commit to the peak, not "
            "the average, and keep headroom"
        ),
        # warnings and risks
        "risks_title": _("Warnings and risks"),
        # remedies
        "remedies_title": _("Remedies"),
        "remedy_fits": _("Fits"),
        "remedy_not_enough": _("Not enough alone"),
        "remedy_room": _("KV cache room per GPU: {before} → {after} GiB"),
        "remedy_holds": _("Holds {after} of the {concurrency} requests at {tokens} tokens (now {before})"),
        "remedy_kind_context": _("Context first"),
        "remedy_kind_combination": _("Combination"),
        "remedy_context_limit": _("Max model length {tokens} (the model's limit)"),
        "remedy_rope_yarn": _("RoPE scaling (YaRN, factor {factor}) to {tokens} tokens"),
        "remedy_note_rope_yarn": _(
            "The model was trained on {limit} tokens: the quality of its answers beyond that with RoPE scaling is "
            "yours to judge (evaluate it on your own prompts)"
        ),
        "remedy_action_replica_x4": _("Run {replicas} replicas behind the load balancer"),
        "remedy_tp_short": _("TP {tp}"),
        "remedy_replicas_short": _("{replicas} replicas"),
        "remedy_on_gpus": _("on {gpus} GPUs"),
        "remedy_action_rope_yarn": _("Serve the model with YaRN RoPE scaling (no other flag needed)"),
        "binds_title": _("What binds"),
        "bind_context_above_model_limit": _(
            "Max model length {max_model_len} is above the model's limit of {max_position_embeddings} tokens: no "
            "number of GPUs changes that; set it to {max_position_embeddings}, or extend the model with RoPE "
            "scaling (YaRN, factor {rope_factor})"
        ),
        "bind_static_exceeds_budget": _(
            "On {gpus} GPUs (TP {tp} × PP {pp}) weights, activations and runtime take {static} GiB per GPU "
            "(weights {weights} GiB), more than the engine budget of {budget} GiB: nothing is left for the KV cache"
        ),
        "bind_kv_short": _("On {gpus} GPUs the KV cache holds {fit} of the {concurrency} requests at {tokens} tokens"),
        "bind_needs_more_gpus": _(
            "It fits on {gpus} GPUs as TP {tp} × PP {pp} × {replicas} replica(s){with}: more GPUs than the "
            "remedies above try; “Fewest GPUs” below finds the smallest layout"
        ),
        "bind_weights_exceed_cards": _(
            "The weights alone ({weights} GiB in {format}) leave no room for the KV cache on any layout of up to "
            "{max_gpus} GPUs{with}"
        ),
        "bind_kv_exceeds_every_layout": _(
            "The KV cache: {concurrency} requests × {tokens} tokens need more than any layout of up to {max_gpus} "
            "GPUs holds; the best (TP {tp} × PP {pp} × {replicas} replicas{with}) holds {fit}"
        ),
        "bind_with": _(", with {changes}"),
        "remedy_kv_fp8": _("FP8 KV cache"),
        "remedy_weights_fp8": _("FP8 weights (an FP8 checkpoint or online quantisation)"),
        "remedy_weights_int4": _("INT4 weights (an AWQ/GPTQ checkpoint)"),
        "remedy_utilization": _("GPU memory utilization {value}"),
        "remedy_max_model_len": _("Max model length {tokens} (the requests' length)"),
        "remedy_tp_double": _("{gpus} GPUs with TP {tp}"),
        "remedy_replica": _("{gpus} GPUs as {replicas} replicas"),
        "remedy_action_weights_int4": _("Serve an AWQ or GPTQ checkpoint of the model"),
        "remedy_action_replica": _("Run a second replica behind the load balancer"),
        "remedy_apply": _("Apply"),
        "remedy_apply_title": _("Put these settings into the form and estimate again: {settings}"),
        # the verdict: what is short, what is left, the release the bill holds for
        "memory_left": _("Memory left (headroom): {value} GiB per GPU"),
        "short_context": _("Max model length {asked} tokens is above the model's limit of {limit} tokens"),
        "short_static": _(
            "Weights, activations and runtime take {static} GiB per GPU, more than the engine budget of {budget} "
            "GiB: no room for the KV cache"
        ),
        "short_memory": _("Short of memory by {value} GiB per GPU"),
        "short_kv": _("KV cache holds {fit} of the {concurrency} requests at {tokens} tokens"),
        "holds_kv": _("KV cache holds {fit} requests at {tokens} tokens ({concurrency} asked)"),
        "engine_release": _("Rules of {engine} {version}"),
        "engine_release_latest": _("Rules of {engine} {version} (latest)"),
        "defaults_assumed": _("Defaults assumed"),
        "defaults_assumed_intro": _("Left empty, so {engine} {version}'s own default applies:"),
        "term_source": _("Rule: {source}"),
        # the rules behind the bill that have no row of their own (term_sources keys)
        "term_engine": _("Engine"),
        "term_regime": _("Memory profiling"),
        "term_scheduler": _("Batch defaults"),
        "term_sampler": _("Sampler"),
        "choice_not_offered": _("Select a valid choice. %(value)s is not one of the available choices.").replace(
            "%(value)s", "{value}"
        ),
        "utilization_default": _("default {value}"),
        # bill rows beside the components
        "cuda_visible": _("CUDA-visible total"),
        "headroom_left": _("Memory left (headroom)"),
        "kv_demand": _("KV cache the requests need"),
        # solvers
        "solving": _("Solving…"),
        "solve_failed": _("The solver could not run"),
        "solve_value_largest_context": _("{value} tokens per request"),
        "solve_value_largest_concurrency": _("{value} concurrent requests"),
        "solve_value_fewest_gpus": _("{value} GPUs"),
        "solve_value_fewest_gpus_one": _("{value} GPU"),
        "solve_layout": _("TP {tp} × PP {pp} × {replicas} replica(s)"),
        "solve_nothing": _("Nothing fits"),
        "stops_because": _("Stops because"),
        "solve_apply": _("Use this value"),
        # rules of thumb, beside the bill
        "rules_of_thumb": _("Rules of thumb"),
        "rule": _("Rule"),
        "rule_verdict": _("By this rule"),
        "rule_overhead_factor": _("(weights + KV demand) × {factor}"),
        "rule_activations_share": _("activations ≈ 20% of the KV demand"),
        "rule_plan_limit": _("plan at no more than 90% of the card (keep 10–20% free)"),
        "rule_title_overhead_factor": _("The field's multiplier for everything beside the weights and the KV cache"),
        "rule_title_activations_share": _("Activations guessed as a fifth of the KV cache the requests need"),
        "rule_title_plan_limit": _("The most of the card a plan should commit"),
        # key figures
        "weights_per_gpu": _("Weights per GPU"),
        "incl_rope_cache": _("incl. rotary cache {value} GiB"),
        "incl_draft_weights": _("incl. draft model {value} GiB"),
        "shared_prefix": _("Shared prefix, cached once"),
        "parallel_samples": _("Sequences per request (n)"),
        "expert_parallel_size": _("Expert parallel size (EP)"),
        "parameters": _("Parameters"),
        "parameters_total": _("Parameters (total)"),
        "parameters_active": _("Active parameters per token"),
        "parameters_active_compute": _("Active, without the input-embedding lookup"),
        "parameters_mtp": _("Multi-token prediction (MTP) parameters"),
        "kv_groups": _("KV cache layer groups"),
        "kv_per_token": _("KV cache per token (whole model)"),
        "kv_per_token_per_gpu": _("KV cache per token (per GPU)"),
        "kv_capacity": _("KV cache capacity"),
        "max_concurrency": _("Max concurrency at max model length"),
        "max_concurrency_unset": _("Set a max model length to see this"),
        "max_concurrency_fit": _("Concurrent requests that fit at {tokens} tokens each"),
        # formulas of the bill rows (filled in from the estimate's numbers)
        "formula": _("Formula"),
        "formula_estimator": _("As the estimator writes it"),
        "formula_weights": _("Weights = this GPU's share of the tensors in {format} (TP {tp}, PP {pp}) = {weights}"),
        "formula_weights_overhead": _(
            "Weights = this GPU's share of the tensors in {format} (TP {tp}, PP {pp}) × overhead {overhead} = {weights}"
        ),
        "formula_budget_cuda_vllm": _(
            "Engine budget = CUDA-visible total × gpu_memory_utilization = {cuda} × {utilization} = {budget}"
        ),
        "formula_cuda_visible": _(
            "CUDA-visible total = what CUDA reports (cudaMemGetInfo), below the card's {capacity} by the driver's "
            "reservation: {cuda}"
        ),
        "formula_kv_vllm": _(
            "KV cache = engine budget − weights − activations − runtime reserve = {budget} − {weights} − "
            "{activations} − {runtime} = {kv}"
        ),
        "formula_kv_vllm_graphs": _(
            "KV cache = engine budget − weights − activations − runtime reserve − CUDA graphs = {budget} − "
            "{weights} − {activations} − {runtime} − {graphs} = {kv}"
        ),
        "formula_kv_demand": _(
            "KV cache the requests need on this GPU: {concurrency} requests per replica × {tokens} tokens = {demand}; "
            "the pool holds {pool}"
        ),
        "formula_cuda_graphs_inside": _(
            "CUDA graphs, measured while profiling, inside the engine budget (vLLM 0.20 and later), {source}: {value}"
        ),
        "formula_headroom_cuda": _("Memory left = CUDA-visible total − required = {cuda} − {required} = {headroom}"),
        "formula_headroom_card": _(
            "Memory left = card capacity − required = {capacity} − {required} = {headroom}: the engine does not use it"
        ),
        "formula_kv_negative": _("Nothing is left for the KV cache: vLLM will not start"),
        "formula_weights_rope": _("Including the rotary cos/sin table the engine keeps on every GPU: {value}"),
        "formula_weights_draft": _("Including the speculative-decoding draft model's weights: {value}"),
        "formula_activations_vllm": _(
            "Activation peak of vLLM's profiling pass: max_num_batched_tokens = {batched} tokens through one layer, "
            "plus the fp32 logits of max_num_seqs = {seqs} sequences = {value}"
        ),
        "formula_activations_given": _("Activation peak, {source}: {value}"),
        "formula_runtime_vllm": _(
            "Runtime reserve (vLLM's non-torch memory: CUDA context, NCCL, cuBLAS workspaces), {source}: {value}"
        ),
        "formula_cuda_graphs_vllm": _(
            "CUDA graphs, captured after the KV cache is allocated, outside the engine budget, {source}: {value}"
        ),
        "formula_cuda_graphs_eager": _("No CUDA graphs: enforce eager"),
        "formula_kv_idealized": _(
            "KV cache = concurrent requests per replica × tokens per request × KV cache per token on this GPU = "
            "{concurrency} × {tokens} × {per_token} bytes = {kv}"
        ),
        "formula_kv_idealized_demand": _(
            "KV cache = what {concurrency} concurrent requests of {tokens} tokens need on this GPU = {kv}"
        ),
        "formula_activations_idealized": _("The idealized engine counts no activations: {value}"),
        "formula_runtime_idealized": _(
            "Fixed reserve for the CUDA context, allocator pools and workspaces, {source}: {value}"
        ),
        "formula_cuda_graphs_idealized": _("The idealized engine counts no CUDA graphs: {value}"),
        "formula_required": _(
            "Required = weights + KV cache + activations + runtime reserve + CUDA graphs = {terms} = {required}"
        ),
        "formula_capacity": _("Card capacity, {source}: {capacity}"),
        "formula_usable_idealized": _("Usable = card capacity × planning limit = {capacity} × {limit} = {usable}"),
        "formula_headroom": _("Headroom = usable − required = {usable} − {required} = {headroom}"),
        # checkpoint facts
        "checkpoint_none": _(
            "No checkpoint facts for {model} yet. Upload its model.safetensors.index.json, or the JSON that "
            "deploy/tools/safetensors_headers.py writes, to compare the computed weights with the real checkpoint"
        ),
        "checkpoint_source": _("From: {source}"),
        "checkpoint_source_index": _("the safetensors index"),
        "checkpoint_source_headers": _("the safetensors headers"),
        "checkpoint_source_index+headers": _("the safetensors index and headers"),
        "checkpoint_weights": _("Weight bytes"),
        "checkpoint_parameters": _("Parameters"),
        "checkpoint_computed": _("Computed"),
        "checkpoint_actual": _("In the checkpoint"),
        "checkpoint_difference": _("Difference"),
        "checkpoint_unknown": _("unknown"),
        "checkpoint_by_dtype": _("Bytes by dtype"),
        "checkpoint_hints": _("Quantization hints"),
        "checkpoint_warnings": _("Warnings"),
        "checkpoint_choose": _("Please choose an index or a headers file"),
        "checkpoint_uploaded": _("Checkpoint facts saved for {slug}; the estimate now compares them"),
        # launch command
        "copy": _("Copy"),
        "copied": _("Copied"),
        "no_launch_args": _(
            "This engine has no launch command: it runs inside your own code. Choose a serving engine such as "
            "vLLM to get one"
        ),
        # charts
        "gpu_label": _("GPU {index}"),
        "memory_chart_title": _("Memory per GPU"),
        "memory_axis": _("Memory (GiB)"),
        "concurrency_chart_title": _("Required memory against concurrency"),
        "concurrency_axis": _("Concurrent requests per replica"),
        "required_memory": _("Required memory"),
        "limit": _("Limit"),
        "stops_fitting": _("Stops fitting here ({value})"),
        "requested": _("Requested"),
        "none_fits": _("Not even one request fits"),
        "download_plot": _("Download plot as a PNG"),
        # form, upload and errors
        "estimate": _("Estimate"),
        "estimating": _("Estimating…"),
        "estimate_failed": _("The estimate could not be computed"),
        "upload": _("Upload"),
        "uploading": _("Uploading…"),
        "upload_failed": _("The upload failed"),
        "uploaded": _("Uploaded {slug} and selected it"),
        "uploaded_unsupported": _("Uploaded {slug}, but it cannot be sized yet: {reason}"),
        "choose_file": _("Please choose a config.json file"),
        "give_name": _("Please give the model a name"),
        "your_uploads": _("Your uploads"),
        "not_supported": _("not supported"),
    }


def bootlog_page_strings() -> dict[str, Any]:
    """Every string the boot-log page's script shows, translated into the active language."""
    return {
        **_common_strings(),
        "compare": _("Compare"),
        "calibration_saved": _(
            "Kept as a calibration: estimates of this model on this GPU, engine and TP now use these measured terms"
        ),
        "comparing": _("Comparing…"),
        "compare_failed": _("The log could not be compared"),
        "paste_or_choose": _("Please paste a startup log or choose a file"),
        "not_in_log": _("not in the log"),
        "fact_engine": _("Engine"),
        "fact_version": _("Version"),
        "fact_model": _("Model"),
        "fact_flags": _("Flags"),
        "fact_parameters": _("Estimated with"),
        "no_flags": _("no flags echoed"),
        "log_warnings": _("What the parser noticed"),
        # the figures of a startup log, in the API's names
        "figure_weights_bytes": _("Weights"),
        "figure_activation_peak_bytes": _("Activation peak"),
        "figure_non_torch_bytes": _("Non-torch memory (runtime reserve)"),
        "figure_kv_cache_bytes": _("KV cache"),
        "figure_kv_cache_tokens": _("KV cache size"),
        "figure_max_concurrency": _("Max concurrency"),
        "figure_cuda_graph_bytes": _("CUDA graphs"),
        "figure_budget_bytes": _("Engine budget"),
        "figure_total_gpu_memory_bytes": _("Total GPU memory"),
        "show_line": _("Show the log line"),
        "hide_line": _("Hide the log line"),
        "no_source_line": _("no log line"),
        # calibration terms, in the API's names
        "calibration_runtime_reserve_bytes": _("Runtime reserve (non-torch memory)"),
        "calibration_cuda_graph_bytes": _("CUDA graphs"),
        "calibration_gpu_memory_bytes": _("GPU memory the engine saw"),
        "calibration_gpu_cuda_total_bytes": _("GPU memory the engine saw"),
        "calibration_activation_peak_bytes": _("Activation peak"),
        "calibration_none": _("The log has no runtime figure to calibrate with"),
        "no_calibrated_estimate": _("No calibrated estimate: the log has no runtime figure"),
        "fits_by": _("{verdict} · headroom {headroom} GiB"),
    }


def colocated_page_strings() -> dict[str, Any]:
    """Every string the shared-GPU page's script shows, translated into the active language."""
    return {
        **_common_strings(),
        "deployment_label": _("Deployment {index}"),
        "deployment_model": _("{index} · {model}"),
        "remove": _("Remove"),
        "estimate": _("Estimate together"),
        "estimating": _("Estimating…"),
        "estimate_failed": _("The shared estimate could not be computed"),
        "problems": _("Problems"),
        "summary": _("{count} deployments on one {gpu_name}: {required} GiB of {capacity} GiB"),
        "chart_title": _("Memory of the shared GPU"),
        "chart_axis": _("Memory (GiB)"),
        "total": _("Together"),
        "model": _("Model"),
        "engine": _("Engine"),
        "own_verdict": _("Alone"),
        "download_plot": _("Download plot as a PNG"),
    }


def model_option_groups(user: Any) -> tuple[list[Any], list[Any], list[str]]:
    """(catalog models, the organisation's uploads, slugs of the supported ones, uploads first). Each model
    carries `is_moe` for the templates, from its stored architecture summary."""
    organisation = organisation_for_user(user=user)
    catalog_models: dict[str, Any] = {}
    own_models: dict[str, Any] = {}
    for model in model_list_for_organisation(organisation=organisation).order_by(Lower("slug")):
        model.is_moe = bool(model.architecture.get("moe"))
        (catalog_models if model.organisation_id is None else own_models)[model.slug] = model
    # An upload shadows the catalog model of the same slug (as the API resolves it), so list it once.
    catalog = [model for slug, model in catalog_models.items() if slug not in own_models]
    own = list(own_models.values())
    supported = [m.slug for m in [*own, *catalog] if m.supported]
    return catalog, own, supported


def gpu_options() -> list[Any]:
    return list(gpu_list().order_by("vendor", "marketed_memory_gb", "name"))


def _default_model(own: list[Any], supported: list[str]) -> str:
    """The organisation's newest supported upload, else the configured default, else the first supported."""
    preferred = settings.SIZING_DEFAULT_MODEL
    return (
        own[0].slug
        if own and own[0].supported
        else (preferred if preferred in supported else next(iter(supported), ""))
    )


def sizing_form_context(user: Any, *, models_default: bool = True) -> dict[str, Any]:
    """What the pages' model and GPU selects need: the model groups, the preselected model (none when
    `models_default` is false) and the GPUs."""
    catalog, own, supported = model_option_groups(user)
    return {
        "catalog_models": catalog,
        "own_models": own,
        "default_model": _default_model(own, supported) if models_default else "",
        "gpus": gpu_options(),
    }


def weight_format_choices() -> list[dict[str, str]]:
    return select_choices(
        WEIGHT_FORMAT_CHOICES, _weight_format_labels(), {slug: fmt.label for slug, fmt in FORMATS.items()}
    )


class SizingPageView(LoginRequiredMixin, TemplateView):
    """The sizing page. gpu_memory_utilization, max_num_seqs and max_num_batched_tokens start empty: the chosen
    engine release's own defaults resolve them, and the answer lists the defaults it assumed."""

    template_name = "frontend/sizing.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        names = ("engine_version", "usage_context", "install")
        address = {name: self.request.GET[name] for name in names if self.request.GET.get(name)}
        version_form = SizingVersionForm(
            address or None,
            version_labels=_vllm_release_labels(),
            usage_labels=usage_context_label_map(),
            install_labels=install_label_map(),
        )
        version_form.is_valid()
        selects = sizing_form_context(self.request.user)
        context.update(
            selects,
            fingerprint_choices=_fingerprint_choices(organisation_for_user(user=self.request.user)),
            weight_choices=weight_format_choices(),
            kv_dtype_choices=select_choices(KV_CACHE_DTYPES, _kv_dtype_labels()),
            engine_choices=select_choices(ENGINE_CHOICES, engine_label_map()),
            utilization_engines=UTILIZATION_ENGINES,
            gpu_memory={gpu.slug: gpu.memory_bytes for gpu in selects["gpus"]},
            version_form=version_form,
            version_fields={
                name: {
                    "choices": list(version_form.fields[name].choices),
                    "selected": version_form.selected(name),
                    "errors": version_form.errors.get(name, []),
                }
                for name in names
            },
            i18n_strings=sizing_page_strings(),
        )
        return context


class ColocatedPageView(LoginRequiredMixin, TemplateView):
    """Several deployments sharing one GPU type (e.g. two vLLM instances at 0.45 each): their summed bill."""

    template_name = "frontend/colocated.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(
            sizing_form_context(self.request.user),
            weight_choices=weight_format_choices(),
            engine_choices=select_choices(ENGINE_CHOICES, engine_label_map()),
            default_gpu_memory_utilization=COLOCATED_GPU_MEMORY_UTILIZATION,
            utilization_engines=UTILIZATION_ENGINES,
            min_deployments=COLOCATED_MIN_DEPLOYMENTS,
            max_deployments=COLOCATED_MAX_DEPLOYMENTS,
            i18n_strings=colocated_page_strings(),
        )
        return context


class BootLogPageView(LoginRequiredMixin, TemplateView):
    """Paste an engine's startup log: its figures against the estimate, and the calibration it gives."""

    template_name = "frontend/bootlog.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(
            sizing_form_context(self.request.user, models_default=False),  # the model the log names
            i18n_strings=bootlog_page_strings(),
        )
        return context


def _length_kind_labels() -> dict[str, str]:
    return {
        "fixed": _("Fixed"),
        "normal": _("Normal"),
        "lognormal": _("Lognormal"),
        "empirical": _("Empirical (histogram)"),
    }


def _arrival_kind_labels() -> dict[str, str]:
    return {
        "poisson": _("Poisson (random, at a steady rate)"),
        "constant": _("Constant (evenly spaced)"),
        "burst": _("Poisson with a burst"),
    }


def workloads_page_strings() -> dict[str, Any]:
    """Every string the workload-profiles page's script shows, translated into the active language."""
    return {
        "network_error": _("The server could not be reached; please try again"),
        "download_plot": _("Download plot as a PNG"),
        # the list
        "sample": _("Sample"),
        "source_csv": _("From a CSV log"),
        "no_profiles": _("No profiles yet"),
        "new_profile": _("New profile"),
        "copy_name": _("{name} (copy)"),
        "load_failed": _("The profile could not be loaded"),
        # the editor
        "class_label": _("Class {index}"),
        "new_class_name": _("Class {index}"),
        "save": _("Save"),
        "save_copy": _("Save a copy"),
        "saving": _("Saving…"),
        "save_failed": _("The profile could not be saved"),
        "saved": _("Saved {name}"),
        "delete_confirm": _("Delete the profile {name}? This cannot be undone"),
        "delete_failed": _("The profile could not be deleted"),
        "deleted": _("Deleted {name}"),
        "bins_invalid": _("Write bins as low-high:weight, separated by commas, e.g. 1-100:1, 101-400:3"),
        # the preview
        "previewing": _("Drawing…"),
        "preview": _("Draw the day"),
        "preview_failed": _("The profile could not be drawn"),
        "busiest": _("Busiest hour {hour}: {share} of the day's requests"),
        "busiest_rate": _("At {requests} requests a day, that hour brings {per_hour} requests ({per_s} per second)"),
        "chart_title": _("Requests per hour by class"),
        "chart_axis_hour": _("Hour of day"),
        "chart_axis_requests": _("Requests per hour"),
        "busiest_marker": _("Busiest hour"),
        "all_day": _("All day"),
        "hours_value": _("{start}–{end}"),
        "tokens_value": _("{value} tokens"),
        "prefix_detail": _("incl. {value} shared prefix tokens"),
        # the CSV import and its fit
        "import": _("Import"),
        "importing": _("Fitting…"),
        "import_failed": _("The log could not be imported"),
        "imported": _("Imported {name}: {requests} requests"),
        "choose_file": _("Please choose a CSV file"),
        "give_name": _("Please give the profile a name"),
        "fit_requests": _("Requests in the log"),
        "fit_duration": _("Time covered"),
        "fit_duration_value": _("{value} h"),
        "fit_mean_rate": _("Mean rate"),
        "fit_peak_rate": _("Busiest hour's rate"),
        "rate_value": _("{value} requests/s"),
        "fit_dispersion": _("Dispersion index"),
        "fit_dispersion_title": _(
            "Variance ÷ mean of the requests per minute: about 1 for random (Poisson) arrivals, "
            "well above 1 for bursty traffic"
        ),
        "fit_columns": _("Columns read: {columns}"),
        "input": _("Input"),
        "output": _("Output"),
        "data": _("Data"),
        "fitted": _("Fitted"),
        "fit_histogram_title": _("{name} · {side} tokens"),
        "fit_axis_tokens": _("Tokens"),
        "fit_axis_share": _("Share of requests"),
        "length_kinds": _length_kind_labels(),
    }


def _workload_list(organisation: Any) -> list[dict[str, Any]]:
    """What the page's profile list shows before the script fetches anything."""
    return [
        {
            "id": row.pk,
            "name": row.name,
            "sample": row.organisation_id is None,
            "source": row.source,
            "has_fit": row.fit is not None,
        }
        for row in workload_profile_list_for_organisation(organisation=organisation)
    ]


class WorkloadsPageView(LoginRequiredMixin, TemplateView):
    """A customer's traffic as request classes: edit a profile, see its day, or fit one to a CSV request log."""

    template_name = "frontend/workloads.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(
            length_kind_choices=select_choices(tuple(kind.value for kind in LengthKind), _length_kind_labels()),
            arrival_kind_choices=select_choices(tuple(kind.value for kind in ArrivalKind), _arrival_kind_labels()),
            length_sides=[("input", _("Input tokens")), ("output", _("Output tokens"))],
            workload_profiles=_workload_list(organisation_for_user(user=self.request.user)),
            max_csv_mib=round(settings.SIZING_MAX_WORKLOAD_CSV_BYTES / 2**20, 1),
            i18n_strings=workloads_page_strings(),
        )
        return context


# ---------------------------------------------------------------------------------------------------------------
# Latency and throughput: simulate, sweep the load, the largest load within the SLOs, search deployments, calibrate

PERFORMANCE_DEFAULT_RATE_PER_S = 1.0  # the load a first simulation offers: one request per second
PERFORMANCE_DEFAULT_CONCURRENCY = 16
PERFORMANCE_DEFAULT_REQUESTS = 1000  # SIMULATION_DEFAULT_REQUESTS: enough for a stable P99
PERFORMANCE_DEFAULT_TTFT_S = 2.0  # a chat assistant's usual first-token limit
PERFORMANCE_DEFAULT_TPOT_MS = 100  # 10 tokens per second per user, faster than people read
PERFORMANCE_DEFAULT_SWEEP_POINTS = 8  # the API's default
PERFORMANCE_SEARCH_COUNTS = "1, 2, 4, 8"  # the API's default GPU counts
PERFORMANCE_SEARCH_TPS = (1, 2, 4, 8)  # the API's default TP sizes
PERFORMANCE_SEARCH_REQUESTS = 300  # SEARCH_DEFAULT_REQUESTS: a short run per candidate
SLO_PERCENTILES = (50, 90, 95, 99)  # SloSerializer.percentile's choices
# the weight formats a search offers: "auto" and the common plain ones (the sizing page lists every format)
SEARCH_WEIGHT_FORMATS = ("auto", "bf16", "fp16", "fp8", "int8", "int4")


def _load_kind_labels() -> dict[str, str]:
    return {
        "rate": _("Rate (open loop)"),
        "concurrency": _("Concurrency (closed loop)"),
        "offline": _("Offline (all at once)"),
    }


def performance_page_strings() -> dict[str, Any]:
    """Every string the latency-and-throughput page's script shows, translated into the active language."""
    return {
        "network_error": _("The server could not be reached; please try again"),
        "download_plot": _("Download plot as a PNG"),
        "engine_names": engine_name_map(),
        # jobs
        "kind_simulate": _("Simulation"),
        "kind_sweep": _("Load sweep"),
        "kind_slo_search": _("Largest load within the SLOs"),
        "kind_search": _("Deployment search"),
        "kind_calibrate": _("Calibration"),
        "running": _("Running…"),
        "status_queued": _("Waiting for a worker…"),
        "queued_long": _("No worker has taken the job yet: please check that a worker serves the simulations queue"),
        "status_running": _("Running…"),
        "status_done": _("Done"),
        "status_failed": _("Failed"),
        "progress_load": _("Load {done} of {total}"),
        "progress_probe": _("Probe {done} (at most {total})"),
        "progress_candidate": _("Candidate {done} of {total}"),
        "progress_parts": _("Part {done} of {total} finished"),
        "progress_requests": _("{done} of {total} requests simulated"),
        "start_failed": _("The job could not be started"),
        "job_failed": _("The job failed"),
        "poll_failed": _("The job's progress could not be read"),
        "job_number": _("Job {id}"),
        "no_measurements": _("Please enter at least one measured run"),
        "measurement_label": _("Run {index}"),
        "measurement_default_label": _("Run {index}: {input}/{output} tokens, {concurrency} concurrent"),
        # units and values
        "ms_value": _("{value} ms"),
        "s_value": _("{value} s"),
        "tokens_value": _("{value} tokens"),
        "tokens_per_s_value": _("{value} tokens/s"),
        "rate_value": _("{value} requests/s"),
        "clients_value": _("{value} concurrent clients"),
        "offline_load": _("offline (every request at once)"),
        "usd_per_hour_value": _("{value}/h"),
        "not_enough_samples": _("Too few requests for this percentile"),
        # reasons from the simulator (built here from their numbers)
        "reason_meets": _("Meets every SLO"),
        "reason_over": _("{metric} P{percentile} {value} s > {limit} s"),
        "reason_rejected": _("{count} of {requests} requests rejected or failed"),
        "reason_does_not_fit": _("Does not fit: {detail}"),
        "reason_cannot_run": _("Cannot run: {detail}"),
        "limit_beyond": _("Meets the SLOs even beyond the saturation rate probed"),
        "limit_nothing": _("Nothing completes"),
        "metric_ttft": _("TTFT"),
        "metric_tpot": _("TPOT"),
        "metric_itl": _("ITL"),
        "metric_e2e": _("E2E"),
        "metric_title_ttft": _("Time to first token"),
        "metric_title_tpot": _("Time per output token"),
        "metric_title_itl": _("Inter-token latency"),
        "metric_title_e2e": _("End-to-end latency"),
        # the simulation
        "simulation_title": _("Simulation at {load}"),
        "slo_run_title": _("The run at the largest rate, {load}"),
        "sim_summary": _("{completed} of {requests} requests completed · {profile} · {deployment}"),
        "deployment_summary": _("{gpus} × {gpu_name} · TP {tp} × {replicas} replica(s) · {engine}"),
        "meets_slos": _("Meets the SLOs"),
        "misses_slos": _("Misses the SLOs"),
        "no_slos": _("No SLOs set"),
        "slo_attainment": _("{value} of the requests met every SLO"),
        "slo_line": _("SLO {value}"),
        "fig_output_tokens_per_s": _("Output throughput"),
        "fig_input_tokens_per_s": _("Input throughput"),
        "fig_requests_per_s": _("Completed requests"),
        "fig_arrivals_per_s": _("Arrival rate"),
        "fig_goodput": _("Goodput (requests meeting every SLO)"),
        "fig_completed": _("Completed"),
        "fig_rejected": _("Rejected (queue full)"),
        "fig_failed": _("Failed (longer than the whole KV cache)"),
        "fig_preempted": _("Preemptions"),
        "fig_kv_overflow": _("KV cache overflow probability"),
        "fig_kv_overflow_title": _(
            "Share of the busy time in which the requests wanted more KV cache than there is: "
            "then the engine preempts or waits"
        ),
        "fig_kv_peak": _("KV cache peak"),
        "fig_max_running": _("Most requests running at once"),
        "fig_max_waiting": _("Most requests waiting at once"),
        "fig_duration": _("Simulated time"),
        "fig_window": _("Measured over"),
        "of_requests": _("{value} of {total}"),
        "axis_ms": _("Milliseconds"),
        "axis_requests": _("Requests"),
        "axis_tokens": _("Tokens"),
        "axis_time_s": _("Time (s)"),
        "axis_kv_used": _("KV cache used"),
        "axis_sequences": _("Requests"),
        "kv_used": _("KV cache used"),
        "kv_capacity_line": _("Capacity {tokens}"),
        "running_requests": _("Running"),
        "waiting_requests": _("Waiting"),
        # the plan
        "plan_replicas": _("Replicas"),
        "plan_tp": _("Tensor parallel size (TP)"),
        "plan_pp": _("Pipeline parallel size (PP)"),
        "plan_gpus": _("GPUs"),
        "plan_engine": _("Engine"),
        "plan_weights": _("Weight format"),
        "plan_kv_dtype": _("KV cache dtype"),
        "plan_compute_dtype": _("Compute dtype"),
        "plan_kv_capacity": _("KV cache capacity per replica"),
        "plan_max_num_seqs": _("Max sequences per batch (max_num_seqs)"),
        "plan_max_num_batched_tokens": _("Max batched tokens (max_num_batched_tokens)"),
        "plan_block_size": _("KV block size"),
        "plan_max_queue": _("Waiting requests per replica before rejecting"),
        "eff_mfu": _("Compute efficiency (MFU)"),
        "eff_bandwidth": _("Memory bandwidth efficiency"),
        "eff_link": _("Interconnect efficiency"),
        "plan_machine": _("Measured machine"),
        "plan_machine_value": _("{host} (fingerprint {id})"),
        "plan_link": _("TP link bandwidth per direction"),
        "plan_link_measured": _("TP link bandwidth per direction (measured link)"),
        "gb_per_s": _("{value} GB/s"),
        "eff_step_overhead": _("Overhead per step"),
        "eff_sequence_overhead": _("Overhead per sequence per step"),
        "us_value": _("{value} µs"),
        # the sweep
        "axis_rate": _("Offered rate (requests/s)"),
        "axis_concurrency": _("Concurrent clients"),
        "axis_output_tokens_per_s": _("Output tokens/s"),
        "percentile_line": _("{metric} P{percentile}"),
        "knee": _("Knee"),
        "largest_within": _("Largest within the SLOs"),
        "meets": _("Meets the SLOs"),
        "misses": _("Misses the SLOs"),
        "knee_rate": _(
            "The deployment saturates at about {load}: above it the output throughput stops following "
            "the load and requests queue"
        ),
        "knee_concurrency": _(
            "The output throughput reaches {share} of its best at {load}: more clients mostly add waiting"
        ),
        "knee_none": _("No knee among the swept loads: the lowest one already saturates the deployment"),
        "sweep_largest": _("The largest swept load that meets the SLOs is {load}"),
        "sweep_largest_top": _("Every swept load meets the SLOs, up to {load}: the limit lies higher"),
        "sweep_none": _("No swept load meets the SLOs; the lowest, {load}, misses: {reason}"),
        "sweep_no_slo": _("Set an SLO to see the largest load within it"),
        "sweep_saturation": _("Offline saturation (every request queued at once): {value}"),
        "knee_tag": _("knee"),
        # the SLO search
        "slo_largest": _("The largest rate meeting the SLOs is {rate} ({tokens})"),
        "slo_largest_floor": _(
            "Meets the SLOs at {rate} ({tokens}), the highest rate the search probes: the limit lies higher"
        ),
        "slo_none": _("Not even the lowest rate probed meets the SLOs"),
        "slo_limit": _("What breaks first above it: {reason}"),
        "slo_limit_none": _("Why: {reason}"),
        # the deployment search
        "search_summary": _("{candidates} candidates · {fitting} fit in memory · {meeting} meet the SLOs at {rate}"),
        "search_cheapest": _("Cheapest meeting the SLOs: {label}, {cost}"),
        "search_none": _(
            "No candidate meets the SLOs at this load: add GPUs, larger GPU types or FP8 formats, or relax the SLOs"
        ),
        "candidate_label": _(
            "{gpus} × {gpu_name} · TP {tp} × {replicas} replica(s) · {engine} · weights {weights} · KV {kv_dtype}"
        ),
        "candidate_seqs": _("max_num_seqs {value}"),
        "use_candidate": _("Use"),
        "use_candidate_title": _("Put this deployment into the form"),
        "unknown_price": _("no price"),
        # calibration
        "default": _("Default"),
        "calibrated": _("Calibrated"),
        "rms_error": _("RMS log error over the measurements"),
        "figure_output_tokens_per_s": _("Output tokens/s"),
        "figure_ttft_ms": _("TTFT (ms, mean)"),
        "figure_tpot_ms": _("TPOT (ms, mean)"),
        "axis_error": _("Simulated ÷ measured − 1"),
    }


def profile_choices(organisation: Any) -> dict[str, list[dict[str, Any]]]:
    """The workload profiles the traffic select offers: the shipped samples and the organisation's own."""
    rows = _workload_list(organisation)
    return {"samples": [row for row in rows if row["sample"]], "own": [row for row in rows if not row["sample"]]}


def _fingerprint_choices(organisation: Any) -> list[tuple[int, str]]:
    """The organisation's measured machines, newest first: "deployment · host · capture date (GPUs)"."""
    rows = fingerprint_list_for_organisation(organisation=organisation)[:200]
    choices = []
    for row in rows:
        names = sorted({gpu.get("name") for gpu in row.facts.get("gpus", []) if gpu.get("name")})
        gpus = f"{row.facts.get('gpu_count') or 0} × {', '.join(names) or '?'}"
        choices.append((row.pk, f"{row.deployment.name} · {row.host} · {row.captured_at:%Y-%m-%d %H:%M} ({gpus})"))
    return choices


class PerformancePageView(LoginRequiredMixin, TemplateView):
    """Latency and throughput of a deployment at a customer's traffic: simulate, sweep the load, the largest load
    within the SLOs, search deployments, calibrate. The script posts jobs to the simulations API and polls them."""

    template_name = "frontend/performance.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        weight_choices = weight_format_choices()
        context.update(
            sizing_form_context(self.request.user),
            weight_choices=weight_choices,
            kv_dtype_choices=select_choices(KV_CACHE_DTYPES, _kv_dtype_labels()),
            engine_choices=select_choices(ENGINE_CHOICES, engine_label_map()),
            load_kind_choices=select_choices(("rate", "concurrency", "offline"), _load_kind_labels()),
            profiles=profile_choices(organisation_for_user(user=self.request.user)),
            fingerprint_choices=_fingerprint_choices(organisation_for_user(user=self.request.user)),
            default_gpu_memory_utilization=DEFAULT_GPU_MEMORY_UTILIZATION,
            utilization_engines=UTILIZATION_ENGINES,
            default_rate=PERFORMANCE_DEFAULT_RATE_PER_S,
            default_concurrency=PERFORMANCE_DEFAULT_CONCURRENCY,
            default_requests=PERFORMANCE_DEFAULT_REQUESTS,
            default_ttft_s=PERFORMANCE_DEFAULT_TTFT_S,
            default_tpot_ms=PERFORMANCE_DEFAULT_TPOT_MS,
            default_sweep_points=PERFORMANCE_DEFAULT_SWEEP_POINTS,
            slo_percentiles=SLO_PERCENTILES,
            search_counts=PERFORMANCE_SEARCH_COUNTS,
            search_tps=PERFORMANCE_SEARCH_TPS,
            search_requests=PERFORMANCE_SEARCH_REQUESTS,
            search_weight_choices=[c for c in weight_choices if c["value"] in SEARCH_WEIGHT_FORMATS],
            i18n_strings=performance_page_strings(),
        )
        return context
