// Every string the shared-GPU page's script shows, in the reader’s language.
// Django's JavaScript catalog (domain djangojs, /jsi18n/) translates them; keys are the page script's names.
import { COMMON } from "./common.js";

const { gettext: _ } = window;

export const T = Object.freeze({
  ...COMMON,
  deployment_label: _("Deployment {index}"),
  deployment_model: _("{index} · {model}"),
  remove: _("Remove"),
  estimate: _("Estimate together"),
  estimating: _("Estimating…"),
  estimate_failed: _("The shared estimate could not be computed"),
  problems: _("Problems"),
  summary: _("{count} deployments on one {gpu_name}: {required} GiB of {capacity} GiB"),
  chart_title: _("Memory of the shared GPU"),
  chart_axis: _("Memory (GiB)"),
  total: _("Together"),
  model: _("Model"),
  engine: _("Engine"),
  own_verdict: _("Alone"),
  download_plot: _("Download plot as a PNG"),
});
