// The strings of the server-series chart (benchmarks.js draws it on a run's page and a load test's page).
// Django's JavaScript catalog (domain djangojs, /jsi18n/) translates them; keys are the page script's names.

const { gettext: _ } = window;

export const SERVER_CHART = Object.freeze({
  download_plot: _("Download plot as a PNG"),
  server_title: _("KV-cache usage and requests on the server over time"),
  axis_time: _("Time (UTC)"),
  axis_kv_percent: _("KV-cache usage (%)"),
  axis_requests: _("Requests"),
  kv_usage: _("KV-cache usage"),
  requests_running: _("Running requests"),
  requests_waiting: _("Waiting requests"),
  server_name: _("server {name}"),
  no_server_samples: _("No server metrics were scraped during this run"),
});
