// Every string the boot-log page's script shows, in the reader’s language.
// Django's JavaScript catalog (domain djangojs, /jsi18n/) translates them; keys are the page script's names.
import { COMMON } from "./common.js";

const { gettext: _ } = window;

export const T = Object.freeze({
  ...COMMON,
  compare: _("Compare"),
  calibration_saved: _("Kept as a calibration: estimates of this model on this GPU, engine and TP now use these measured terms"),
  comparing: _("Comparing…"),
  compare_failed: _("The log could not be compared"),
  paste_or_choose: _("Please paste a startup log or choose a file"),
  not_in_log: _("not in the log"),
  fact_engine: _("Engine"),
  fact_version: _("Version"),
  fact_model: _("Model"),
  fact_flags: _("Flags"),
  fact_parameters: _("Estimated with"),
  no_flags: _("no flags echoed"),
  log_warnings: _("What the parser noticed"),
  figure_weights_bytes: _("Weights"),
  figure_activation_peak_bytes: _("Activation peak"),
  figure_non_torch_bytes: _("Non-torch memory (runtime reserve)"),
  figure_kv_cache_bytes: _("KV cache"),
  figure_kv_cache_tokens: _("KV cache size"),
  figure_max_concurrency: _("Max concurrency"),
  figure_cuda_graph_bytes: _("CUDA graphs"),
  figure_budget_bytes: _("Engine budget"),
  figure_total_gpu_memory_bytes: _("Total GPU memory"),
  show_line: _("Show the log line"),
  hide_line: _("Hide the log line"),
  no_source_line: _("no log line"),
  calibration_runtime_reserve_bytes: _("Runtime reserve (non-torch memory)"),
  calibration_cuda_graph_bytes: _("CUDA graphs"),
  calibration_gpu_memory_bytes: _("GPU memory the engine saw"),
  calibration_gpu_cuda_total_bytes: _("GPU memory the engine saw"),
  calibration_activation_peak_bytes: _("Activation peak"),
  calibration_none: _("The log has no runtime figure to calibrate with"),
  no_calibrated_estimate: _("No calibrated estimate: the log has no runtime figure"),
  fits_by: _("{verdict} · headroom {headroom} GiB"),
});
