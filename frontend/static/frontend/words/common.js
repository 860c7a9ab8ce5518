// Strings both pages' scripts show: the memory bill, units, figure sources, verdicts.
// Django's JavaScript catalog (domain djangojs, /jsi18n/) translates them; keys are the page script's names.
import { LABELS } from "./labels.js";

const { gettext: _ } = window;

export const COMMON = Object.freeze({
  weights: _("Weights"),
  kv_cache: _("KV cache"),
  activations: _("Activations"),
  runtime: _("Runtime reserve"),
  cuda_graphs: _("CUDA graphs"),
  required: _("Required"),
  usable: _("Usable"),
  headroom: _("Headroom"),
  capacity: _("Card capacity"),
  budget: _("Engine budget"),
  fits: _("Fits"),
  does_not_fit: _("Does not fit"),
  gb: _("GB"),
  gib: _("GiB"),
  gib_value: _("{value} GiB"),
  bytes_value: _("{value} bytes"),
  tokens_value: _("{value} tokens"),
  requests_value: _("{value} requests"),
  times_value: _("{value}×"),
  source_estimated: _("estimated"),
  source_calibrated: _("calibrated"),
  source_measured: _("measured"),
  source_catalog: _("catalog"),
  source_title_estimated: _("Estimated: computed from the model's configuration and the engine's defaults"),
  source_title_calibrated: _("Calibrated: taken from a boot log or a benchmark of this deployment"),
  source_title_measured: _("Measured: what the card or the engine reported"),
  source_title_catalog: _("From the GPU catalog"),
  network_error: _("The server could not be reached; please try again"),
  engine_names: LABELS.engine_names,
});
