/*
 * The latency-and-throughput page: posts a job (simulate, sweep, slo_search, search or calibrate) to the simulations
 * API, polls it until a worker has finished, and draws the answer. No framework and no build step; strings come
 * from words/performance.js, helpers from common.js (imported). The job's id is kept in the address, so the
 * language switch (or a reload) shows the same job with the form as it was sent.
 *
 * Units: the API speaks seconds for SLO limits and milliseconds for latency distributions; the page shows TPOT
 * limits in ms (people think of 50 ms per token, not 0.05 s) and converts when it sends them.
 */
import {
  LANG,
  el,
  format,
  integer,
  isNumber,
  CHART_FONT as FONT,
  CAPACITY_COLOR as BAD_COLOR,
  clearErrors,
  engineName,
  fillAlert,
  followJob,
  messagesOf,
  percent,
  postJson,
  registerPlotlyLocale,
  rememberUrl,
  request,
} from "./common.js";
import { T } from "./words/performance.js";

var POLL_MS = 700;
var QUEUED_TOO_LONG_MS = 15000;  // then say that no worker has taken the job
var KNEE_THROUGHPUT_SHARE = 0.9;  // serving.KNEE_THROUGHPUT_SHARE: a concurrency sweep's knee
var KINDS = ["simulate", "sweep", "slo_search", "search", "calibrate"];
var DEPLOYMENT_TEXT = ["model", "gpu", "engine", "weights", "kv_dtype"];
var DEPLOYMENT_NUMBERS = ["gpus", "tp", "gpu_memory_utilization", "max_model_len", "max_num_seqs",
  "max_num_batched_tokens", "fingerprint"];
var METRICS = ["ttft", "tpot", "itl", "e2e"];
var PERCENTILES = [50, 90, 95, 99];
// error keys the API (or a failed job) may use for an input named otherwise on this page
var ERROR_ALIASES = { profile_json: "profile", loads: "sweep.loads", kind: "form" };
var MEASUREMENT_FIELDS = ["label", "input_tokens", "output_tokens", "concurrency", "output_tokens_per_s",
  "ttft_ms", "tpot_ms"];
var FIGURES = ["output_tokens_per_s", "ttft_ms", "tpot_ms"];
var PLOT_CONFIG = { responsive: true, displaylogo: false, modeBarButtons: [["toImage"]], locale: LANG };

var OK_COLOR = "#067647";
var LINE_COLOR = "#2f5fd0";
var P50_COLOR = "#7a8699";
var KNEE_COLOR = "#475467";
var KV_COLOR = "#1b9e77";
var RUNNING_COLOR = "#2f5fd0";
var WAITING_COLOR = "#e08a1e";
var DEFAULT_COLOR = "#98a2b3";
var CALIBRATED_COLOR = "#8e5bd6";

var root = document.getElementById("performance");
var form = document.getElementById("performance-form");
var calibrationForm = document.getElementById("calibration-form");
var csrfToken = form.querySelector("[name=csrfmiddlewaretoken]").value;
var formError = document.getElementById("form-error");
var statusBox = document.getElementById("job-status");
var measurementRows = document.getElementById("measurement-rows");
var measurementTemplate = document.getElementById("measurement-template");
var actionButtons = Array.prototype.slice.call(document.querySelectorAll(".action-button"));
var SECTIONS = ["sweep-result", "slo-result", "search-result", "simulation-result", "calibration-result"];
var busy = false;
var rowCounter = 0;

var decimal1 = new Intl.NumberFormat(LANG, { maximumFractionDigits: 1 });
var decimal2 = new Intl.NumberFormat(LANG, { maximumFractionDigits: 2 });
var decimal3 = new Intl.NumberFormat(LANG, { minimumFractionDigits: 3, maximumFractionDigits: 3 });
var significant3 = new Intl.NumberFormat(LANG, { maximumSignificantDigits: 3 });
var share = new Intl.NumberFormat(LANG, { style: "percent", minimumFractionDigits: 1, maximumFractionDigits: 1 });
var usd = new Intl.NumberFormat(LANG, { style: "currency", currency: "USD", minimumFractionDigits: 2,
  maximumFractionDigits: 3 });

actionButtons.forEach(function (button) { button.dataset.idleText = button.textContent; });

// ---------------------------------------------------------------- numbers for people

function msNumber(value) {
  if (!isNumber(value)) return "—";
  if (value < 10) return decimal2.format(value);
  if (value < 100) return decimal1.format(value);
  return integer.format(value);
}
function msText(value) { return isNumber(value) ? format(T.ms_value, { value: msNumber(value) }) : "—"; }
function secondsText(value) { return format(T.s_value, { value: significant3.format(value) }); }
function rateText(value) { return format(T.rate_value, { value: significant3.format(value) }); }
function tokensText(value) { return format(T.tokens_value, { value: integer.format(value) }); }
function tokensPerSecond(value) {
  return isNumber(value) ? format(T.tokens_per_s_value, { value: integer.format(value) }) : "—";
}
function usdPerHour(value) {
  return isNumber(value) ? format(T.usd_per_hour_value, { value: usd.format(value) }) : T.unknown_price;
}
function loadText(kind, value) {
  if (kind === "offline" || !isNumber(value)) return T.offline_load;
  if (kind === "concurrency") return format(T.clients_value, { value: integer.format(value) });
  return rateText(value);
}
function signedShare(value) { return isNumber(value) ? percent.format(value) : "—"; }

// Verdicts come as data ({code, and the numbers}); the page words them in its own language.
function verdictText(verdict) {
  if (!verdict) return "";
  switch (verdict.code) {
    case "met": return T.reason_meets;
    case "above_highest_probe": return T.limit_beyond;
    case "nothing_completes": return T.limit_nothing;
    case "slo":
      return format(T.reason_over, { metric: T["metric_" + String(verdict.metric).toLowerCase()],
        percentile: verdict.percentile, value: significant3.format(verdict.value_s),
        limit: significant3.format(verdict.limit_s) });
    case "rejected":
      return format(T.reason_rejected, { count: integer.format(verdict.count),
        requests: integer.format(verdict.total) });
    case "does_not_fit": return format(T.reason_does_not_fit, { detail: verdict.problem });
    case "cannot_run": return format(T.reason_cannot_run, { detail: verdict.problem });
    default: return "";
  }
}
// A point, outcome or probe: its verdict when the server sent one, else its English reason as it is.
function reasonOf(item) {
  return item && item.verdict ? verdictText(item.verdict) : (item && item.reason) || "";
}

function optionText(select, value) {
  var option = Array.prototype.find.call(select.options, function (o) { return o.value === String(value); });
  return option ? option.textContent.trim() : String(value);
}
function gpuName(slug) { return optionText(form.elements.gpu, slug); }

// ---------------------------------------------------------------- the form

function isActive(input) { return !!input && !input.closest("[hidden]"); }

function numberOrText(raw) {
  var text = String(raw === undefined || raw === null ? "" : raw).trim();
  if (text === "") return undefined;
  var number = Number(text);
  return Number.isFinite(number) ? number : text;  // the API names what is wrong
}

// "1, 2, 4" → [1, 2, 4]; a part that is no number goes as it is, for the API to name
function numberList(text) {
  return String(text || "").split(/[,;\s]+/).filter(Boolean).map(numberOrText);
}

function checked(name) {
  return Array.prototype.slice.call(form.querySelectorAll('input[name="' + name + '"]:checked'))
    .map(function (input) { return input.value; });
}

function trafficKind() {
  var radio = form.querySelector('input[name="traffic"]:checked');
  return radio ? radio.value : "profile";
}

function updateFields() {
  var engine = form.elements.engine.value;
  form.querySelectorAll("[data-engines]").forEach(function (node) {
    node.hidden = node.getAttribute("data-engines").split(/\s+/).indexOf(engine) < 0;
  });
  var load = form.elements.load.value;
  form.querySelectorAll("[data-load]").forEach(function (node) {
    node.hidden = node.getAttribute("data-load") !== load;
  });
  var traffic = trafficKind();
  form.querySelectorAll("[data-traffic]").forEach(function (node) {
    node.hidden = node.getAttribute("data-traffic") !== traffic;
  });
}

["engine", "load"].forEach(function (name) { form.elements[name].addEventListener("change", updateFields); });
form.querySelectorAll('input[name="traffic"]').forEach(function (radio) {
  radio.addEventListener("change", updateFields);
});

function deploymentPayload() {
  var payload = {};
  DEPLOYMENT_TEXT.forEach(function (name) { payload[name] = form.elements[name].value; });
  DEPLOYMENT_NUMBERS.forEach(function (name) {
    var input = form.elements[name];
    if (!isActive(input)) return;
    var value = numberOrText(input.value);
    if (value !== undefined) payload[name] = value;
  });
  return payload;
}

function trafficPayload() {
  if (trafficKind() === "profile") {
    var profile = numberOrText(form.elements.profile.value);
    return profile === undefined ? {} : { profile: profile };
  }
  var payload = {};
  ["input_tokens", "output_tokens"].forEach(function (name) {
    var value = numberOrText(form.elements[name].value);
    if (value !== undefined) payload[name] = value;
  });
  return payload;
}

// The SLOs in the API's seconds; null when no limit is set.
function sloPayload() {
  var ttft = numberOrText(form.elements.slo_ttft_s.value);
  var tpotMs = numberOrText(form.elements.slo_tpot_ms.value);
  var e2e = numberOrText(form.elements.slo_e2e_s.value);
  if (ttft === undefined && tpotMs === undefined && e2e === undefined) return null;
  var slo = { percentile: Number(form.elements.slo_percentile.value) };
  if (ttft !== undefined) slo.ttft_s = ttft;
  if (tpotMs !== undefined) slo.tpot_s = isNumber(tpotMs) ? tpotMs / 1000 : tpotMs;
  if (e2e !== undefined) slo.e2e_s = e2e;
  return slo;
}

function setNumber(payload, key, input) {
  var value = numberOrText(input.value);
  if (value !== undefined) payload[key] = value;
}

function searchPayload() {
  var search = {};
  var gpus = checked("search_gpus");
  if (gpus.length) search.gpus = gpus;
  var counts = numberList(form.elements.search_counts.value);
  if (counts.length) search.counts = counts;
  search.tps = checked("search_tps").map(Number);
  search.weights = checked("search_weights");
  search.engines = checked("search_engines");
  ["tps", "weights", "engines"].forEach(function (key) { if (!search[key].length) delete search[key]; });
  var kvDtype = form.elements.kv_dtype.value;
  if (kvDtype && kvDtype !== "auto") search.kv_dtypes = [kvDtype];
  var seqs = numberOrText(form.elements.max_num_seqs.value);
  if (seqs !== undefined) search.max_num_seqs = [seqs];
  setNumber(search, "requests", form.elements.search_requests);
  return search;
}

function payloadFor(kind) {
  var payload = Object.assign({ kind: kind }, deploymentPayload());
  if (kind === "search") delete payload.fingerprint;  // a search compares GPU models, not one machine
  var slo = sloPayload();
  if (kind === "calibrate") {
    payload.measurements = collectMeasurements();
    var first = payload.measurements[0] || {};
    // the API wants traffic with every job; a calibration simulates its measured runs, so give the first one's
    if (isNumber(first.input_tokens) && isNumber(first.output_tokens)) {
      payload.input_tokens = first.input_tokens;
      payload.output_tokens = first.output_tokens;
    } else {
      Object.assign(payload, trafficPayload());
    }
    return payload;
  }
  Object.assign(payload, trafficPayload());
  if (slo) payload.slo = slo;
  setNumber(payload, "seed", form.elements.seed);
  if (kind === "search") {
    // a search holds every candidate to the SLOs at an offered rate: the rate input is the one it reads
    if (form.elements.load.value !== "rate") {
      form.elements.load.value = "rate";
      updateFields();
    }
    setNumber(payload, "rate", form.elements.rate);
    payload.search = searchPayload();
    return payload;
  }
  setNumber(payload, "requests", form.elements.requests);
  if (kind === "simulate") {
    payload.load = form.elements.load.value;
    if (payload.load === "rate") setNumber(payload, "rate", form.elements.rate);
    if (payload.load === "concurrency") setNumber(payload, "concurrency", form.elements.concurrency);
  } else if (kind === "sweep") {
    var sweep = { kind: form.elements.load.value === "concurrency" ? "concurrency" : "rate" };
    var loads = numberList(form.elements.sweep_loads.value);
    if (loads.length) sweep.loads = loads;
    else setNumber(sweep, "points", form.elements.sweep_points);
    payload.sweep = sweep;
  }
  return payload;
}

function setField(input, value) {
  if (!input || value === undefined || value === null) return;
  var text = String(value);
  if (input.tagName === "SELECT") {
    var option = Array.prototype.find.call(input.options, function (o) { return o.value === text; });
    if (!option || option.disabled) return;
  }
  input.value = text;
}

function setChecks(name, values) {
  if (!Array.isArray(values)) return;
  var wanted = values.map(String);
  form.querySelectorAll('input[name="' + name + '"]').forEach(function (input) {
    input.checked = wanted.indexOf(input.value) >= 0;
  });
}

// Put a job's inputs back into the form (the address names a job: reload, language switch).
function fillForm(inputs) {
  DEPLOYMENT_TEXT.concat(DEPLOYMENT_NUMBERS).forEach(function (name) {
    if (name in inputs) setField(form.elements[name], inputs[name]);
  });
  if (inputs.kind !== "calibrate") {
    if (inputs.profile !== undefined && inputs.profile !== null) {
      form.querySelector('input[name="traffic"][value="profile"]').checked = true;
      setField(form.elements.profile, inputs.profile);
    } else if (inputs.input_tokens) {
      form.querySelector('input[name="traffic"][value="lengths"]').checked = true;
      setField(form.elements.input_tokens, inputs.input_tokens);
      setField(form.elements.output_tokens, inputs.output_tokens);
    }
    var slo = inputs.slo || {};
    form.elements.slo_ttft_s.value = isNumber(slo.ttft_s) ? String(slo.ttft_s) : "";
    form.elements.slo_tpot_ms.value = isNumber(slo.tpot_s) ? String(Number((slo.tpot_s * 1000).toFixed(3))) : "";
    form.elements.slo_e2e_s.value = isNumber(slo.e2e_s) ? String(slo.e2e_s) : "";
    setField(form.elements.slo_percentile, slo.percentile);
  }
  ["load", "rate", "concurrency", "requests", "seed"].forEach(function (name) {
    if (name in inputs) setField(form.elements[name], inputs[name]);
  });
  if (inputs.sweep) {
    if (inputs.sweep.kind === "concurrency") setField(form.elements.load, "concurrency");
    setField(form.elements.sweep_points, inputs.sweep.points);
    form.elements.sweep_loads.value = (inputs.sweep.loads || []).join(", ");
  }
  if (inputs.search) {
    var search = inputs.search;
    setChecks("search_gpus", search.gpus || []);
    if (search.counts) form.elements.search_counts.value = search.counts.join(", ");
    if (search.tps) setChecks("search_tps", search.tps);
    if (search.weights) setChecks("search_weights", search.weights);
    if (search.engines) setChecks("search_engines", search.engines);
    setField(form.elements.search_requests, search.requests);
    if (inputs.kind === "search") setField(form.elements.load, "rate");
  }
  if (Array.isArray(inputs.measurements) && inputs.measurements.length) {
    measurementRows.textContent = "";
    inputs.measurements.forEach(function (values) { addMeasurement(values); });
  }
  updateFields();
}

// ---------------------------------------------------------------- measured runs (calibration)

function measurementRowsList() {
  return Array.prototype.slice.call(measurementRows.querySelectorAll("[data-row]"));
}

function renumberMeasurements() {
  var rows = measurementRowsList();
  rows.forEach(function (row, index) {
    row.setAttribute("data-index", String(index));
    row.setAttribute("aria-label", format(T.measurement_label, { index: index + 1 }));
    row.querySelector('[data-name="label"]').placeholder = format(T.measurement_label, { index: index + 1 });
    row.querySelector(".remove-row").disabled = rows.length <= 1;
  });
}

function addMeasurement(values) {
  rowCounter += 1;
  var row = measurementTemplate.content.firstElementChild.cloneNode(true);
  row.querySelectorAll("[data-name]").forEach(function (input) {
    input.id = "m" + rowCounter + "-" + input.getAttribute("data-name");
    var value = values ? values[input.getAttribute("data-name")] : undefined;
    if (value !== undefined && value !== null) input.value = String(value);
  });
  row.querySelector(".remove-row").addEventListener("click", function () {
    if (measurementRowsList().length <= 1) return;
    row.remove();
    renumberMeasurements();
  });
  measurementRows.appendChild(row);
  renumberMeasurements();
  return row;
}

function collectMeasurements() {
  var out = [];
  measurementRowsList().forEach(function (row) {
    var item = {};
    MEASUREMENT_FIELDS.forEach(function (name) {
      var raw = row.querySelector('[data-name="' + name + '"]').value;
      var value = name === "label" ? (raw.trim() || undefined) : numberOrText(raw);
      if (value !== undefined) item[name] = value;
    });
    if (!Object.keys(item).length) return;  // an empty row is no measurement
    item.load = "concurrency";
    out.push(item);
  });
  return out;
}

document.getElementById("add-measurement").addEventListener("click", function () {
  var row = addMeasurement(null);
  row.querySelector('[data-name="input_tokens"]').focus();
});

// ---------------------------------------------------------------- errors

function clearFormErrors() {
  [form, calibrationForm].forEach(function (scope) { clearErrors(scope, "data-error-for"); });
  measurementRowsList().forEach(function (row) { row.removeAttribute("data-invalid"); });
  formError.hidden = true;
  formError.textContent = "";
}

// The API's nested field errors as [path, messages] pairs: {"slo": {"tpot_s": [..]}} → ["slo.tpot_s", [..]];
// a list of per-item errors (measurements) gives "measurements.1.input_tokens".
function flattenErrors(fields, prefix, out) {
  Object.keys(fields || {}).forEach(function (key) {
    var value = fields[key];
    var path = prefix ? prefix + "." + key : key;
    var perItem = Array.isArray(value) && value.length && value.every(function (item) {
      return item && typeof item === "object" && !Array.isArray(item);
    });
    if (perItem) {
      value.forEach(function (item, index) { flattenErrors(item, path + "." + index, out); });
    } else if (value && typeof value === "object" && !Array.isArray(value)) {
      flattenErrors(value, path, out);
    } else {
      out.push([path, value]);
    }
  });
  return out;
}

function slotFor(path) {
  var parts = path.split(".");
  while (parts.length) {
    var key = parts.join(".");
    key = ERROR_ALIASES[key] || key;
    var slot = root.querySelector('[data-error-for="' + key + '"]');
    if (slot) return slot;
    parts.pop();
  }
  return null;
}

function markMeasurement(path) {
  var match = /^measurements\.(\d+)(?:\.(\w+))?/.exec(path);
  if (!match) return "";
  var row = measurementRowsList()[Number(match[1])];
  if (row) {
    row.setAttribute("data-invalid", "true");
    var input = match[2] ? row.querySelector('[data-name="' + match[2] + '"]') : null;
    if (input) input.setAttribute("aria-invalid", "true");
  }
  return format(T.measurement_label, { index: Number(match[1]) + 1 }) + (match[2] ? " · " + match[2] : "") + ": ";
}

// Field errors next to their inputs (opening a folded group), the rest and the message in the alert box.
function showError(title, body, status) {
  var unplaced = {};
  flattenErrors((body && body.extra && body.extra.fields) || {}, "", []).forEach(function (pair) {
    var path = pair[0];
    var slot = slotFor(path);
    if (!slot || slot.closest("[hidden]")) {
      unplaced[path] = pair[1];
      return;
    }
    var text = markMeasurement(path) + messagesOf(pair[1]);
    var named = /^measurements\[(\d+)\]/.exec(messagesOf(pair[1]));
    if (named) markMeasurement("measurements." + named[1]);
    slot.textContent = slot.textContent ? slot.textContent + " " + text : text;
    var closed = slot.closest("details:not([open])");
    if (closed) closed.open = true;
    var field = slot.closest(".field");
    var input = field ? field.querySelector("input, select") : null;
    if (input) input.setAttribute("aria-invalid", "true");
  });
  fillAlert(formError, title, body, status, unplaced);
  var first = root.querySelector(".field-error:not(:empty)");
  if (first) first.scrollIntoView({ block: "nearest", behavior: "smooth" });
  formError.scrollIntoView({ block: "nearest", behavior: "smooth" });
}

// ---------------------------------------------------------------- jobs


function setBusy(on, button) {
  busy = on;
  actionButtons.forEach(function (node) {
    node.disabled = on;
    node.textContent = on && node === button ? T.running : node.dataset.idleText;
  });
  if (on) root.setAttribute("aria-busy", "true");
  else root.removeAttribute("aria-busy");
}

// The worker's progress message ("load 2/8", "probe 3/12", "candidate 4/6", "1/3 parts", "requests done 10/300")
// in the page's words; the worker reports an item when it starts it.
function progressText(job, waitedMs) {
  if (job.status === "queued") return waitedMs > QUEUED_TOO_LONG_MS ? T.queued_long : T.status_queued;
  var match = /^(\D*?)\s*(\d+)\/(\d+)\s*(\D*)$/.exec(job.progress_message || "");
  if (!match) return "";
  var what = (match[1] || match[4] || "").trim();
  var done = Number(match[2]);
  var total = Number(match[3]);
  var starting = { load: T.progress_load, probe: T.progress_probe, candidate: T.progress_candidate }[what];
  if (starting) return format(starting, { done: Math.min(done + 1, total), total: total });
  if (what === "parts") return format(T.progress_parts, { done: done, total: total });
  if (what === "requests done") return format(T.progress_requests, { done: integer.format(done),
    total: integer.format(total) });
  return "";
}

function showStatus(job, waitedMs) {
  statusBox.hidden = false;
  statusBox.setAttribute("data-status", job.status);
  document.getElementById("job-title").textContent = (T["kind_" + job.kind] || job.kind) +
    (job.id ? " · " + format(T.job_number, { id: job.id }) : "");
  document.getElementById("job-state").textContent = T["status_" + job.status] || job.status;
  var fraction = job.status === "done" ? 1 : Math.max(0, Math.min(1, Number(job.progress) || 0));
  document.getElementById("job-progress-bar").style.width = (fraction * 100).toFixed(1) + "%";
  document.getElementById("job-progress").setAttribute("aria-valuenow", String(Math.round(fraction * 100)));
  document.getElementById("job-message").textContent = job.status === "done" || job.status === "failed"
    ? "" : progressText(job, waitedMs || 0);
}

function hideResults() {
  SECTIONS.forEach(function (id) { document.getElementById(id).hidden = true; });
}

async function follow(job) {
  rememberUrl(window.location.pathname + "?job=" + job.id);
  var end = await followJob(job, POLL_MS, showStatus);
  if (end.failed) {
    showError(T.poll_failed, end.failed.body, end.failed.status);
    return;
  }
  job = end.job;
  showStatus(job);
  if (job.status === "failed") {
    showError(T.job_failed, job.error || null, null);
    return;
  }
  document.getElementById("empty-state").hidden = true;
  render(job);
}

async function run(kind, button) {
  if (busy) return;
  clearFormErrors();
  var payload = payloadFor(kind);
  if (kind === "calibrate" && !payload.measurements.length) {
    showError(T.start_failed, { extra: { fields: { measurements: [T.no_measurements] } } }, null);
    return;
  }
  setBusy(true, button);
  hideResults();
  showStatus({ kind: kind, status: "queued", progress: 0 });
  statusBox.scrollIntoView({ block: "nearest", behavior: "smooth" });
  try {
    var result = await postJson(root.dataset.simulationsUrl, payload, csrfToken);
    if (!result.ok) {
      statusBox.hidden = true;
      showError(T.start_failed, result.body, result.status);
      return;
    }
    await follow(result.body);
  } catch (error) {
    showError(T.network_error, null, null);
  } finally {
    setBusy(false, null);
  }
}

actionButtons.forEach(function (button) {
  if (button.type === "submit") return;  // the calibration form's submit button
  button.addEventListener("click", function () { run(button.dataset.kind, button); });
});
form.addEventListener("submit", function (event) {
  event.preventDefault();
  run("simulate", document.getElementById("simulate-button"));
});
calibrationForm.addEventListener("submit", function (event) {
  event.preventDefault();
  run("calibrate", document.getElementById("calibrate-button"));
});

// ---------------------------------------------------------------- charts

function layout(extra) {
  return Object.assign({
    font: { family: FONT, size: 12, color: "#1d2939" },
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
    hoverlabel: { font: { family: FONT } },
    height: 380,
    margin: { t: 56, r: 24, b: 96, l: 72 },
    legend: { orientation: "h", x: 0, y: -0.2, yanchor: "top" },
  }, extra);
}

function plot(id, traces, plotLayout, filename) {
  Plotly.react(id, traces, plotLayout,
    Object.assign({ toImageButtonOptions: { filename: filename, scale: 2 } }, PLOT_CONFIG));
}

// A vertical marker at x (a load, a latency) over the whole plot, labelled at the top; `row` staggers labels.
function marker(x, label, color, dash, row, logAxis) {
  return {
    shape: { type: "line", xref: "x", yref: "paper", x0: x, x1: x, y0: 0, y1: 1,
      line: { color: color, width: 1.5, dash: dash } },
    annotation: { xref: "x", yref: "paper", x: logAxis ? Math.log10(x) : x, y: 1 + 0.075 * (row || 0),
      yanchor: "bottom", xanchor: "left", showarrow: false, text: label, font: { color: color, size: 11 } },
  };
}

function withMarkers(plotLayout, markers) {
  plotLayout.shapes = markers.map(function (m) { return m.shape; });
  plotLayout.annotations = markers.map(function (m) { return m.annotation; });
  return plotLayout;
}

function histogramChart(id, histogram, distribution, options) {
  var edges = histogram.edges || [];
  var centres = [];
  var widths = [];
  for (var i = 0; i + 1 < edges.length; i++) {
    centres.push((edges[i] + edges[i + 1]) / 2);
    widths.push(edges[i + 1] - edges[i]);
  }
  var markers = [];
  if (isNumber(distribution.p50)) markers.push(marker(distribution.p50, "P50", P50_COLOR, "dot", 0));
  if (isNumber(distribution.p95)) markers.push(marker(distribution.p95, "P95", KNEE_COLOR, "dash", 1));
  if (isNumber(options.limitMs)) {
    markers.push(marker(options.limitMs, format(T.slo_line, { value: msText(options.limitMs) }), BAD_COLOR,
      "solid", 2));
  }
  plot(id, [{
    type: "bar", x: centres, y: histogram.counts || [], width: widths, marker: { color: options.color },
    hovertemplate: "%{x:,.0f} ms: %{y:,.0f}<extra></extra>", name: options.yTitle,
  }], withMarkers(layout({
    bargap: 0.05, showlegend: false, height: 340, margin: { t: 56, r: 24, b: 56, l: 72 },
    xaxis: { title: { text: T.axis_ms }, gridcolor: "#eef0f4", rangemode: "tozero" },
    yaxis: { title: { text: options.yTitle }, gridcolor: "#e4e7ec", rangemode: "tozero" },
  }), markers), options.filename);
}

function kvChart(result) {
  var timeline = result.timeline || {};
  var times = timeline.t_s || [];
  var used = (timeline.kv_used_fraction || []).map(function (value) { return value * 100; });
  var peak = used.reduce(function (top, value) { return Math.max(top, value); }, 0);
  var capacity = format(T.kv_capacity_line, { tokens: tokensText(result.kv_capacity_tokens) });
  plot("kv-chart", [
    { type: "scatter", mode: "lines", name: T.kv_used, x: times, y: used, fill: "tozeroy",
      line: { color: KV_COLOR, width: 1.5 }, fillcolor: "rgba(27, 158, 119, 0.18)",
      hovertemplate: T.kv_used + ": %{y:.1f}%<extra></extra>" },
    { type: "scatter", mode: "lines", name: T.running_requests, x: times, y: timeline.running || [],
      yaxis: "y2", line: { color: RUNNING_COLOR, width: 1.5 },
      hovertemplate: T.running_requests + ": %{y}<extra></extra>" },
    { type: "scatter", mode: "lines", name: T.waiting_requests, x: times, y: timeline.waiting || [],
      yaxis: "y2", line: { color: WAITING_COLOR, width: 1.5, dash: "dot" },
      hovertemplate: T.waiting_requests + ": %{y}<extra></extra>" },
  ], layout({
    margin: { t: 24, r: 72, b: 96, l: 72 },
    hovermode: "x unified",
    xaxis: { title: { text: T.axis_time_s }, gridcolor: "#eef0f4", rangemode: "tozero" },
    yaxis: { title: { text: T.axis_kv_used }, ticksuffix: "%", range: [0, Math.max(110, peak * 1.08)],
      gridcolor: "#e4e7ec" },
    yaxis2: { title: { text: T.axis_sequences }, overlaying: "y", side: "right", rangemode: "tozero",
      showgrid: false },
    shapes: [{ type: "line", xref: "paper", x0: 0, x1: 1, yref: "y", y0: 100, y1: 100,
      line: { color: BAD_COLOR, width: 2 } }],
    annotations: [{ xref: "paper", x: 0, yref: "y", y: 100, yanchor: "bottom", xanchor: "left", showarrow: false,
      text: capacity, font: { color: BAD_COLOR } }],
  }), "kv-cache-over-time");
}

// ---------------------------------------------------------------- a simulation

// Whether a run meets the SLOs: the server's verdict (nothing rejected or failed, each latency's SLO
// percentile within its limit); null without SLOs.
function sloCheck(result) {
  if (!result.verdict) return null;
  return { ok: result.verdict.met, reason: verdictText(result.verdict) };
}

function deploymentText(plan, inputs) {
  return format(T.deployment_summary, { gpus: plan.gpus, gpu_name: gpuName(inputs.gpu), tp: plan.tp,
    replicas: plan.replicas, engine: engineName(plan.engine) });
}

function addFigure(list, key, label, value, detail, title) {
  list.appendChild(el("div", { className: "figure", "data-figure": key, title: title || null },
    el("dt", { text: label }),
    el("dd", {}, el("span", { className: "figure-value", text: value }),
      detail ? el("span", { className: "figure-detail", text: detail }) : null)));
}

function renderLatencyTable(result, slo) {
  var tbody = document.querySelector("#latency-table tbody");
  tbody.textContent = "";
  var limits = slo ? { ttft: slo.ttft_s, tpot: slo.tpot_s, e2e: slo.e2e_s } : {};
  var q = slo ? slo.percentile || 95 : null;
  METRICS.forEach(function (metric) {
    var distribution = result[metric + "_ms"] || {};
    var row = el("tr", { "data-metric": metric },
      el("th", { scope: "row" }, el("abbr", { title: T["metric_title_" + metric], text: T["metric_" + metric] })),
      el("td", { className: "num", "data-stat": "mean", text: msNumber(distribution.mean) }));
    PERCENTILES.forEach(function (percentile) {
      var value = distribution["p" + percentile];
      var limit = limits[metric];
      var checkedHere = percentile === q && isNumber(limit);
      var over = checkedHere && isNumber(value) && value > limit * 1000;
      row.appendChild(el("td", {
        className: "num" + (over ? " is-over" : checkedHere ? " is-within" : ""),
        "data-stat": "p" + percentile,
        title: !isNumber(value) ? T.not_enough_samples
          : checkedHere ? format(T.slo_line, { value: msText(limit * 1000) }) : null,
        text: msNumber(value),
      }));
    });
    tbody.appendChild(row);
  });
}

function renderSimFigures(result) {
  var list = document.getElementById("sim-figures");
  list.textContent = "";
  addFigure(list, "output_tokens_per_s", T.fig_output_tokens_per_s, tokensPerSecond(result.output_tokens_per_s));
  addFigure(list, "input_tokens_per_s", T.fig_input_tokens_per_s, tokensPerSecond(result.input_tokens_per_s));
  addFigure(list, "requests_per_s", T.fig_requests_per_s, rateText(result.requests_per_s));
  if (result.load === "rate") addFigure(list, "arrivals_per_s", T.fig_arrivals_per_s, rateText(result.arrivals_per_s));
  if (isNumber(result.goodput_requests_per_s)) {
    addFigure(list, "goodput", T.fig_goodput, rateText(result.goodput_requests_per_s));
  }
  addFigure(list, "completed", T.fig_completed, format(T.of_requests, {
    value: integer.format(result.completed), total: integer.format(result.requests) }));
  addFigure(list, "rejected", T.fig_rejected, integer.format(result.rejected));
  if (result.failed) addFigure(list, "failed", T.fig_failed, integer.format(result.failed));
  addFigure(list, "preempted", T.fig_preempted, integer.format(result.preempted));
  addFigure(list, "kv_overflow", T.fig_kv_overflow, share.format(result.kv_overflow_probability), null,
    T.fig_kv_overflow_title);
  addFigure(list, "kv_peak", T.fig_kv_peak, share.format(result.kv_peak_fraction),
    tokensText(Math.round(result.kv_peak_fraction * result.kv_capacity_tokens)) + " / " +
    tokensText(result.kv_capacity_tokens));
  addFigure(list, "max_running", T.fig_max_running, integer.format(result.max_running));
  addFigure(list, "max_waiting", T.fig_max_waiting, integer.format(result.max_waiting));
  addFigure(list, "duration", T.fig_duration, secondsText(result.duration_s),
    T.fig_window + " " + secondsText(result.window_s));
}

function renderClassTable(result) {
  var tbody = document.querySelector("#class-table tbody");
  tbody.textContent = "";
  var classes = result.per_class || {};
  Object.keys(classes).forEach(function (name) {
    var row = classes[name];
    tbody.appendChild(el("tr", { "data-class": name },
      el("th", { scope: "row", text: name }),
      el("td", { className: "num", text: integer.format(row.requests) }),
      el("td", { className: "num", text: integer.format(row.completed) }),
      el("td", { className: "num", text: integer.format(row.rejected) }),
      el("td", { className: "num", text: msNumber((row.ttft_ms || {}).p50) }),
      el("td", { className: "num", text: msNumber((row.ttft_ms || {}).p95) }),
      el("td", { className: "num", text: msNumber((row.tpot_ms || {}).p50) }),
      el("td", { className: "num", text: msNumber((row.tpot_ms || {}).p95) }),
      el("td", { className: "num", text: msNumber((row.e2e_ms || {}).p95) })));
  });
}

function renderPlan(plan, environment) {
  var list = document.getElementById("plan-figures");
  list.textContent = "";
  var efficiencies = plan.efficiencies || {};
  if (environment) addFigure(list, "machine", T.plan_machine, format(T.plan_machine_value, { host: environment.host,
    id: environment.fingerprint }));
  addFigure(list, "replicas", T.plan_replicas, integer.format(plan.replicas));
  addFigure(list, "tp", T.plan_tp, integer.format(plan.tp));
  if (plan.pp > 1) addFigure(list, "pp", T.plan_pp, integer.format(plan.pp));
  addFigure(list, "gpus", T.plan_gpus, integer.format(plan.gpus));
  addFigure(list, "engine", T.plan_engine, engineName(plan.engine));
  addFigure(list, "weights", T.plan_weights, String(plan.weights || "").toUpperCase());
  addFigure(list, "kv_dtype", T.plan_kv_dtype, String(plan.kv_dtype || "").toUpperCase());
  if (plan.compute_dtype) addFigure(list, "compute_dtype", T.plan_compute_dtype, plan.compute_dtype.toUpperCase());
  addFigure(list, "kv_capacity", T.plan_kv_capacity, tokensText(plan.kv_capacity_tokens_per_replica));
  addFigure(list, "max_num_seqs", T.plan_max_num_seqs, integer.format(plan.max_num_seqs));
  addFigure(list, "max_num_batched_tokens", T.plan_max_num_batched_tokens,
    tokensText(plan.max_num_batched_tokens));
  addFigure(list, "block_size", T.plan_block_size, tokensText(plan.block_size));
  if (isNumber(plan.max_queue_per_replica)) {
    addFigure(list, "max_queue", T.plan_max_queue, integer.format(plan.max_queue_per_replica));
  }
  addFigure(list, "mfu", T.eff_mfu, share.format(efficiencies.mfu));
  addFigure(list, "bandwidth", T.eff_bandwidth, share.format(efficiencies.bandwidth));
  if (plan.tp > 1 && isNumber(plan.link_bytes_per_s)) {
    addFigure(list, "link_bandwidth", environment ? T.plan_link_measured : T.plan_link,
      format(T.gb_per_s, { value: decimal2.format(plan.link_bytes_per_s / 1e9) }));
  }
  if (plan.tp > 1 || plan.pp > 1) addFigure(list, "link", T.eff_link, share.format(efficiencies.link));
  addFigure(list, "step_overhead", T.eff_step_overhead, msText(efficiencies.step_overhead_ms));
  addFigure(list, "sequence_overhead", T.eff_sequence_overhead,
    format(T.us_value, { value: decimal2.format(efficiencies.sequence_overhead_us) }));
}

function renderSimulation(result, plan, inputs, title) {
  document.getElementById("simulation-result").hidden = false;  // before plotting: Plotly measures the box
  var slo = result.slo || null;
  var check = sloCheck(result);
  var verdict = document.getElementById("sim-verdict");
  verdict.className = "verdict " + (!check ? "verdict-neutral" : check.ok ? "verdict-ok" : "verdict-bad");
  verdict.setAttribute("data-meets", !check ? "" : String(check.ok));
  verdict.querySelector(".verdict-icon").textContent = !check ? "i" : check.ok ? "✓" : "✕";
  document.getElementById("sim-verdict-title").textContent = !check ? T.no_slos
    : check.ok ? T.meets_slos : T.misses_slos + " · " + check.reason;
  document.getElementById("sim-attainment").textContent = isNumber(result.slo_attainment)
    ? format(T.slo_attainment, { value: share.format(result.slo_attainment) }) : "";
  document.getElementById("sim-title").textContent = title;
  document.getElementById("sim-summary").textContent = format(T.sim_summary, {
    completed: integer.format(result.completed), requests: integer.format(result.requests),
    profile: result.profile || (inputs.profile ? optionText(form.elements.profile, inputs.profile)
      : format(T.tokens_value, { value: inputs.input_tokens + " / " + inputs.output_tokens })),
    deployment: deploymentText(plan, inputs),
  });
  renderLatencyTable(result, slo);
  renderSimFigures(result);
  var histograms = result.histograms || {};
  histogramChart("ttft-histogram", histograms.ttft_ms || {}, result.ttft_ms || {}, {
    color: LINE_COLOR, yTitle: T.axis_requests, filename: "ttft-histogram",
    limitMs: slo && isNumber(slo.ttft_s) ? slo.ttft_s * 1000 : null });
  histogramChart("itl-histogram", histograms.itl_ms || {}, result.itl_ms || {}, {
    color: "#8e5bd6", yTitle: T.axis_tokens, filename: "itl-histogram", limitMs: null });
  kvChart(result);
  renderClassTable(result);
  renderPlan(plan, result.environment);
}

// ---------------------------------------------------------------- a sweep

function pointColor(point) {
  if (point.meets_slo === true) return OK_COLOR;
  if (point.meets_slo === false) return BAD_COLOR;
  return LINE_COLOR;
}

function sweepMarkers(result, logAxis) {
  var markers = [];
  if (isNumber(result.knee)) {
    markers.push(marker(result.knee, T.knee + " · " + loadText(result.kind, result.knee), KNEE_COLOR, "dash", 0,
      logAxis));
  }
  if (isNumber(result.max_load_meeting_slo)) {
    markers.push(marker(result.max_load_meeting_slo, T.largest_within, OK_COLOR, "dot", 1, logAxis));
  }
  return markers;
}

// Concurrencies run on a log axis (1 to hundreds of clients), ticked at the loads swept; rates on a linear one.
function sweepAxis(result, points) {
  var concurrency = result.kind === "concurrency";
  var axis = { title: { text: concurrency ? T.axis_concurrency : T.axis_rate }, type: concurrency ? "log" : "linear",
    gridcolor: "#eef0f4", rangemode: "tozero" };
  if (concurrency) {
    axis.tickvals = points.map(function (p) { return p.load; });
    axis.ticktext = points.map(function (p) { return integer.format(p.load); });
  }
  return axis;
}

function latencyChart(id, result, points, metric, limitS, filename) {
  var slo = result.slo || {};
  var q = slo.percentile || 95;
  var loads = points.map(function (p) { return p.load; });
  var percentiles = [50, 95];
  if (percentiles.indexOf(q) < 0) percentiles.push(q);
  var traces = percentiles.map(function (percentile) {
    var name = format(T.percentile_line, { metric: T["metric_" + metric], percentile: percentile });
    return { type: "scatter", mode: "lines+markers", name: name, x: loads,
      y: points.map(function (p) { var v = (p[metric + "_ms"] || {})["p" + percentile]; return isNumber(v) ? v : null; }),
      line: { color: percentile === 50 ? P50_COLOR : LINE_COLOR, dash: percentile === 95 ? "solid" : "dot",
        width: 2 },
      marker: { size: 6 }, hovertemplate: name + ": %{y:,.1f} ms<extra></extra>" };
  });
  var values = [];
  traces.forEach(function (trace) { trace.y.forEach(function (v) { if (isNumber(v) && v > 0) values.push(v); }); });
  if (isNumber(limitS)) {
    var limitName = format(T.slo_line, { value: msText(limitS * 1000) });
    values.push(limitS * 1000);
    traces.push({ type: "scatter", mode: "lines", name: limitName, x: [loads[0], loads[loads.length - 1]],
      y: [limitS * 1000, limitS * 1000], line: { color: BAD_COLOR, width: 2, dash: "dash" },
      hovertemplate: limitName + "<extra></extra>" });
  }
  var low = Math.min.apply(null, values.length ? values : [1]);
  var high = Math.max.apply(null, values.length ? values : [1]);
  var logY = high / Math.max(low, 1e-9) > 30;  // past the knee the queue makes TTFT grow a hundredfold
  var logX = result.kind === "concurrency";
  plot(id, traces, withMarkers(layout({
    xaxis: sweepAxis(result, points),
    yaxis: { title: { text: T.axis_ms }, type: logY ? "log" : "linear", gridcolor: "#e4e7ec",
      rangemode: logY ? undefined : "tozero", dtick: logY ? 1 : undefined },
  }), sweepMarkers(result, logX)), filename);
}

function throughputChart(result, points) {
  var logX = result.kind === "concurrency";
  plot("throughput-chart", [{
    type: "scatter", mode: "lines+markers", name: T.axis_output_tokens_per_s,
    x: points.map(function (p) { return p.load; }), y: points.map(function (p) { return p.output_tokens_per_s; }),
    line: { color: LINE_COLOR, width: 2 },
    marker: { size: 10, color: points.map(pointColor), line: { color: "#fff", width: 1 } },
    text: points.map(function (p) { return p.meets_slo === null ? "" : p.meets_slo ? T.meets : T.misses; }),
    hovertemplate: "%{x}: %{y:,.0f} " + T.axis_output_tokens_per_s + "<br>%{text}<extra></extra>",
  }], withMarkers(layout({
    showlegend: false,
    margin: { t: 56, r: 24, b: 56, l: 80 },
    xaxis: sweepAxis(result, points),
    yaxis: { title: { text: T.axis_output_tokens_per_s }, gridcolor: "#e4e7ec", rangemode: "tozero" },
  }), sweepMarkers(result, logX)), "throughput-vs-load");
}

function meetsCell(point) {
  if (point.meets_slo === null || point.meets_slo === undefined) return el("td", { text: "—" });
  return el("td", {},
    el("span", { className: "rule-mark " + (point.meets_slo ? "is-fit" : "is-not-fit"),
      text: (point.meets_slo ? "✓ " : "✕ ") + (point.meets_slo ? T.meets : T.misses) }),
    point.meets_slo ? null : el("span", { className: "cell-detail", text: reasonOf(point) }));
}

function renderSweepTable(result, points) {
  var tbody = document.querySelector("#sweep-table tbody");
  tbody.textContent = "";
  points.forEach(function (point) {
    var knee = isNumber(result.knee) && point.load === result.knee;
    tbody.appendChild(el("tr", { "data-load": String(point.load), "data-meets": String(point.meets_slo),
      className: knee ? "row-knee" : null },
      el("th", { scope: "row", className: "num" }, loadText(result.kind, point.load),
        knee ? el("span", { className: "knee-tag", text: T.knee_tag }) : null),
      meetsCell(point),
      el("td", { className: "num", text: integer.format(point.output_tokens_per_s) }),
      el("td", { className: "num", text: significant3.format(point.requests_per_s) }),
      el("td", { className: "num", text: msNumber((point.ttft_ms || {}).p50) }),
      el("td", { className: "num", text: msNumber((point.ttft_ms || {}).p95) }),
      el("td", { className: "num", text: msNumber((point.tpot_ms || {}).p50) }),
      el("td", { className: "num", text: msNumber((point.tpot_ms || {}).p95) }),
      el("td", { className: "num", text: integer.format(point.rejected) }),
      el("td", { className: "num", text: integer.format(point.preempted) }),
      el("td", { className: "num", text: share.format(point.kv_overflow_probability) })));
  });
}

function renderSweep(result) {
  document.getElementById("sweep-result").hidden = false;  // before plotting
  var points = (result.points || []).slice().sort(function (a, b) { return a.load - b.load; });
  var slo = result.slo;
  var largest = document.getElementById("sweep-largest");
  var verdict = document.getElementById("sweep-verdict");
  var top = points.length ? points[points.length - 1].load : null;
  var state = "neutral";
  if (!slo) {
    largest.textContent = T.sweep_no_slo;
  } else if (isNumber(result.max_load_meeting_slo)) {
    state = "ok";
    largest.textContent = format(result.max_load_meeting_slo === top ? T.sweep_largest_top : T.sweep_largest,
      { load: loadText(result.kind, result.max_load_meeting_slo) });
  } else {
    state = "bad";
    largest.textContent = format(T.sweep_none, { load: points.length ? loadText(result.kind, points[0].load) : "—",
      reason: points.length ? reasonOf(points[0]) : "" });
  }
  verdict.className = "verdict verdict-" + state;
  largest.setAttribute("data-max-load", isNumber(result.max_load_meeting_slo) ? String(result.max_load_meeting_slo)
    : "");
  var knee = document.getElementById("sweep-knee");
  knee.setAttribute("data-knee", isNumber(result.knee) ? String(result.knee) : "");
  knee.textContent = !isNumber(result.knee) ? T.knee_none : format(
    result.kind === "concurrency" ? T.knee_concurrency : T.knee_rate, { load: loadText(result.kind, result.knee),
      share: share.format(KNEE_THROUGHPUT_SHARE) });
  document.getElementById("sweep-saturation").textContent = format(T.sweep_saturation, {
    value: rateText(result.saturation_requests_per_s) });
  throughputChart(result, points);
  latencyChart("sweep-ttft-chart", result, points, "ttft", slo ? slo.ttft_s : null, "ttft-vs-load");
  latencyChart("sweep-tpot-chart", result, points, "tpot", slo ? slo.tpot_s : null, "tpot-vs-load");
  renderSweepTable(result, points);
}

// ---------------------------------------------------------------- the largest rate within the SLOs

function renderSloSearch(result, inputs) {
  document.getElementById("slo-result").hidden = false;
  var found = isNumber(result.max_rate_per_s);
  document.getElementById("slo-verdict").className = "verdict " + (found ? "verdict-ok" : "verdict-bad");
  var largest = document.getElementById("slo-largest");
  largest.setAttribute("data-max-rate", found ? String(result.max_rate_per_s) : "");
  var beyond = Boolean(result.limit && result.limit.code === "above_highest_probe");
  largest.textContent = found ? format(beyond ? T.slo_largest_floor : T.slo_largest, {
    rate: rateText(result.max_rate_per_s),
    tokens: tokensPerSecond(result.result ? result.result.output_tokens_per_s : null) }) : T.slo_none;
  var limit = document.getElementById("slo-limit");
  limit.hidden = beyond;
  limit.textContent = format(found ? T.slo_limit : T.slo_limit_none, { reason: result.limit ? verdictText(result.limit) : result.limit_reason });
  var tbody = document.querySelector("#probe-table tbody");
  tbody.textContent = "";
  (result.probes || []).forEach(function (probe, index) {
    tbody.appendChild(el("tr", { "data-meets": String(probe.meets_slo) },
      el("td", { className: "num", text: String(index + 1) }),
      el("td", { className: "num", text: significant3.format(probe.rate) }),
      meetsCell(probe)));
  });
  if (result.result) {
    renderSimulation(Object.assign({ slo: result.slo }, result.result), result.plan, inputs,
      format(T.slo_run_title, { load: rateText(result.max_rate_per_s) }));
  }
}

// ---------------------------------------------------------------- the deployment search

function candidateLabel(candidate) {
  var label = format(T.candidate_label, { gpus: candidate.gpus, gpu_name: candidate.gpu_name, tp: candidate.tp,
    replicas: candidate.replicas, engine: engineName(candidate.engine),
    weights: String(candidate.weights).toUpperCase(), kv_dtype: String(candidate.kv_dtype).toUpperCase() });
  return candidate.max_num_seqs ? label + " · " + format(T.candidate_seqs, { value: candidate.max_num_seqs })
    : label;
}

function useCandidate(candidate) {
  setField(form.elements.gpu, candidate.gpu);
  setField(form.elements.gpus, candidate.gpus);
  setField(form.elements.tp, candidate.tp);
  setField(form.elements.weights, candidate.weights);
  setField(form.elements.kv_dtype, candidate.kv_dtype);
  setField(form.elements.engine, candidate.engine);
  form.elements.max_num_seqs.value = candidate.max_num_seqs ? String(candidate.max_num_seqs) : "";
  updateFields();
  form.elements.gpu.focus();
}

function renderSearch(result) {
  document.getElementById("search-result").hidden = false;
  var outcomes = result.outcomes || [];
  document.getElementById("search-verdict").className = "verdict " + (result.meeting_slo ? "verdict-ok"
    : "verdict-bad");
  document.getElementById("search-summary").textContent = format(T.search_summary, {
    candidates: integer.format(result.candidates), fitting: integer.format(result.fitting),
    meeting: integer.format(result.meeting_slo), rate: rateText(result.rate) });
  var best = outcomes[0];
  document.getElementById("search-cheapest").textContent = best && best.meets_slo
    ? format(T.search_cheapest, { label: candidateLabel(best.candidate), cost: usdPerHour(best.cost_per_hour_usd) })
    : T.search_none;
  var tbody = document.querySelector("#search-table tbody");
  tbody.textContent = "";
  outcomes.forEach(function (outcome, index) {
    var candidate = outcome.candidate;
    var use = el("button", { type: "button", className: "button button-small", title: T.use_candidate_title,
      text: T.use_candidate });
    use.addEventListener("click", function () { useCandidate(candidate); });
    tbody.appendChild(el("tr", { "data-rank": String(index + 1), "data-meets": String(outcome.meets_slo),
      "data-fits": String(outcome.fits), "data-gpu": candidate.gpu,
      className: outcome.meets_slo ? "row-meets" : outcome.fits ? null : "row-unfit" },
      el("td", { className: "num", text: String(index + 1) }),
      el("th", { scope: "row" }, el("span", { className: "row-name", text: candidateLabel(candidate) })),
      el("td", {},
        el("span", { className: "rule-mark " + (outcome.meets_slo ? "is-fit" : "is-not-fit"),
          text: outcome.meets_slo ? "✓" : "✗", "aria-label": outcome.meets_slo ? T.meets : T.misses }),
        outcome.meets_slo ? null : el("span", { className: "cell-detail", text: reasonOf(outcome) })),
      el("td", { className: "num", text: isNumber(outcome.cost_per_hour_usd) ? usd.format(outcome.cost_per_hour_usd)
        : "—" }),
      el("td", { className: "num", text: isNumber(outcome.cost_per_million_output_tokens_usd)
        ? usd.format(outcome.cost_per_million_output_tokens_usd) : "—" }),
      el("td", { className: "num", text: msNumber(outcome.ttft_p95_ms) }),
      el("td", { className: "num", text: msNumber(outcome.tpot_p95_ms) }),
      el("td", { className: "num", text: isNumber(outcome.output_tokens_per_s)
        ? integer.format(outcome.output_tokens_per_s) : "—" }),
      el("td", { className: "num", text: isNumber(outcome.kv_capacity_tokens)
        ? integer.format(outcome.kv_capacity_tokens) : "—" }),
      el("td", {}, use)));
  });
}

// ---------------------------------------------------------------- the calibration

function figureValue(key, value) {
  if (!isNumber(value)) return "—";
  return key === "output_tokens_per_s" ? decimal1.format(value) : msNumber(value);
}

// The label the user gave the run, else the run's number and its shape (the API's own label is English).
function runLabel(row, index, inputs) {
  var measured = (inputs.measurements || [])[index];
  if (!measured) return row.label;
  if (measured.label) return measured.label;
  return format(T.measurement_default_label, { index: index + 1, input: integer.format(measured.input_tokens),
    output: integer.format(measured.output_tokens), concurrency: integer.format(measured.concurrency || 0) });
}

function renderCalibration(result, inputs) {
  document.getElementById("calibration-result").hidden = false;  // before plotting
  var tbody = document.querySelector("#efficiency-table tbody");
  tbody.textContent = "";
  var rows = [
    ["mfu", T.eff_mfu, function (e) { return share.format(e.mfu); }],
    ["bandwidth", T.eff_bandwidth, function (e) { return share.format(e.bandwidth); }],
    ["link", T.eff_link, function (e) { return share.format(e.link); }],
    ["step_overhead", T.eff_step_overhead, function (e) { return msText(e.step_overhead_s * 1000); }],
    ["sequence_overhead", T.eff_sequence_overhead, function (e) {
      return format(T.us_value, { value: decimal2.format(e.sequence_overhead_s * 1e6) });
    }],
  ];
  rows.forEach(function (row) {
    var before = row[2](result.default);
    var after = row[2](result.calibrated);
    tbody.appendChild(el("tr", { "data-efficiency": row[0], className: before !== after ? "row-changed" : null },
      el("th", { scope: "row", text: row[1] }),
      el("td", { className: "num", text: before }),
      el("td", { className: "num", text: after })));
  });
  tbody.appendChild(el("tr", { className: "row-total", "data-efficiency": "rms" },
    el("th", { scope: "row", text: T.rms_error }),
    el("td", { className: "num", text: decimal3.format(result.default_rms_log_error) }),
    el("td", { className: "num", text: decimal3.format(result.calibrated_rms_log_error) })));

  var table = document.querySelector("#calibration-table tbody");
  table.textContent = "";
  var labels = [];
  var before = [];
  var after = [];
  (result.rows || []).forEach(function (row, index) {
    var keys = FIGURES.filter(function (key) { return isNumber((row.measured || {})[key]); });
    keys.forEach(function (key, keyIndex) {
      var tr = el("tr", { "data-run": String(index), "data-figure": key,
        className: keyIndex === 0 && index > 0 ? "row-group" : null });
      var label = runLabel(row, index, inputs);
      if (keyIndex === 0) tr.appendChild(el("th", { scope: "rowgroup", rowspan: String(keys.length), text: label }));
      tr.appendChild(el("td", { text: T["figure_" + key] }));
      tr.appendChild(el("td", { className: "num", text: figureValue(key, row.measured[key]) }));
      tr.appendChild(el("td", { className: "num", text: figureValue(key, (row.default || {})[key]) }));
      tr.appendChild(el("td", { className: "num", "data-error": "default",
        text: signedShare((row.default_error || {})[key]) }));
      tr.appendChild(el("td", { className: "num", text: figureValue(key, (row.calibrated || {})[key]) }));
      tr.appendChild(el("td", { className: "num", "data-error": "calibrated",
        text: signedShare((row.calibrated_error || {})[key]) }));
      table.appendChild(tr);
      labels.push(format(T.measurement_label, { index: index + 1 }) + " · " + T["figure_" + key]);
      before.push((row.default_error || {})[key]);
      after.push((row.calibrated_error || {})[key]);
    });
  });
  // horizontal bars: the run and figure names read level, however many there are
  var bars = function (name, values, color) {
    return { type: "bar", orientation: "h", name: name, y: labels, x: values, marker: { color: color },
      hovertemplate: "%{y}<br>" + name + ": %{x:+.1%}<extra></extra>" };
  };
  plot("calibration-chart", [bars(T.default, before, DEFAULT_COLOR), bars(T.calibrated, after, CALIBRATED_COLOR)],
    layout({ barmode: "group", height: Math.max(260, 120 + 44 * labels.length),
      margin: { t: 36, r: 24, b: 56, l: 24 },
      legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" },
      yaxis: { type: "category", autorange: "reversed", automargin: true },
      xaxis: { title: { text: T.axis_error }, tickformat: "+.0%", gridcolor: "#e4e7ec", zeroline: true,
        zerolinecolor: "#475467" } }), "calibration-errors");
}

// ---------------------------------------------------------------- dispatch

function render(job) {
  hideResults();
  var result = job.result || {};
  var inputs = job.inputs || {};
  if (job.kind === "simulate") {
    renderSimulation(result, result.plan || {}, inputs, format(T.simulation_title, {
      load: loadText(result.load, result.offered) }));
  } else if (job.kind === "sweep") {
    renderSweep(result);
  } else if (job.kind === "slo_search") {
    renderSloSearch(result, inputs);
  } else if (job.kind === "search") {
    renderSearch(result);
  } else if (job.kind === "calibrate") {
    renderCalibration(result, inputs);
  }
}

// ---------------------------------------------------------------- start

registerPlotlyLocale(T.download_plot);
addMeasurement({ input_tokens: 1000, output_tokens: 200, concurrency: 16 });
updateFields();

async function restore() {
  var id = Number(new URLSearchParams(window.location.search).get("job"));
  if (!Number.isInteger(id) || id < 1) return;
  var result = await request(root.dataset.simulationsUrl + id + "/", { headers: { Accept: "application/json" } });
  if (!result.ok || KINDS.indexOf(result.body.kind) < 0) return;
  fillForm(result.body.inputs || {});
  setBusy(true, null);
  try {
    await follow(result.body);
  } catch (error) {
    showError(T.network_error, null, null);
  } finally {
    setBusy(false, null);
  }
}

restore();
