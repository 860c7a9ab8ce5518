// Every string the load-test pages' script shows (and benchmarks.js's server chart), in the active language.
// Django's JavaScript catalog (domain djangojs, /jsi18n/) translates them; keys are the page script's names.
import { SERVER_CHART } from "./server_chart.js";

const { gettext: _ } = window;

export const T = Object.freeze({
  ...SERVER_CHART,
  network_error: _("The server could not be reached; please try again"),
  poll_failed: _("The test's progress could not be read; retrying"),
  ended: _("The test has ended: loading its verdict…"),
  run_failed: _("The servers' metrics could not be read"),
  status_queued: _("Queued"),
  status_running: _("Running"),
  status_done: _("Done"),
  status_cancelled: _("Cancelled"),
  status_failed: _("Failed"),
  of_sent: _("of {sent} sent"),
  rate_value: _("{value} requests/s"),
  seconds_value: _("{value} s"),
  ms_pair: _("{p50} / {p99} ms"),
  percent_value: _("{value} %"),
  defaults_loading: _("Reading the deployment's figures…"),
  defaults_from: _("Filled from the deployment {name}: {parts}. Change them here if you like."),
  defaults_slo: _("its SLOs ({limits})"),
  defaults_peak: _("the peak concurrency its KV cache holds at these request lengths ({value})"),
  defaults_committed: _("the memory it commits per GPU ({value} GiB)"),
  defaults_none: _("The deployment {name} gives no SLOs, no peak concurrency and no committed memory: enter them yourself."),
  defaults_failed: _("The deployment's figures could not be read"),
  slo_ttft_ms: _("TTFT"),
  slo_tpot_ms: _("TPOT"),
  slo_e2e_ms: _("E2E"),
});
