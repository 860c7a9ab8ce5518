// Every string the memory pages' script shows, in the reader’s language.
// Django's JavaScript catalog (domain djangojs, /jsi18n/) translates them; keys are the page script's names.

const { gettext: _ } = window;

export const T = Object.freeze({
  download_plot: _("Download plot as a PNG"),
  gib_value: _("{value} GiB"),
  too_large: _("{name}: the file is {size} MiB; the limit is {limit} MiB"),
  memory_title: _("GPU memory used over time"),
  kv_title: _("KV-cache usage over time"),
  axis_time: _("Time (UTC)"),
  axis_memory: _("Memory used (GiB)"),
  axis_kv: _("KV-cache usage"),
  gpu_line: _("GPU {gpu}"),
  gpu_total: _("GPU {gpu} total ({value} GiB)"),
  commitment: _("Commitment ({value} GiB per GPU)"),
  marker_oom: _("Out of memory"),
  marker_restart: _("Restart"),
  marker_down: _("Server down"),
  marker_xid: _("XID error"),
  marker_oom_logged: _("Out-of-memory error in the events log"),
  marker_restart_logged: _("Restart reported by the log"),
  climb_detected: _("Climb proven on GPU {gpu}"),
  kv_full: _("Full"),
  no_series: _("The log has no GPU memory series to draw"),
});
