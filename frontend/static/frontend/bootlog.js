/*
 * The boot-log page: posts a pasted (or uploaded) engine startup log to the boot-log comparison API and shows
 * what the log says, each figure against the estimate, the calibration terms and the calibrated estimate, with a
 * link that carries the measured terms to the sizing page. Helpers in common.js (imported).
 */
import {
  el,
  format,
  gib,
  gibValue,
  integer,
  fixed2,
  GIB,
  clearErrors,
  componentColor,
  componentKeys,
  engineName,
  isNumber,
  percent,
  placeFieldErrors,
  postForm,
  postJson,
  showFormFieldErrors,
  signedFixed2,
  signedInteger,
  sourceBadge,
  whileBusy,
} from "./common.js";
import { T } from "./words/bootlog.js";

// Estimate settings the sizing page's form knows, as the API names them (from `parameters`).
var SIZING_FIELDS = ["engine", "tp", "pp", "weights", "kv_dtype", "gpu_memory_utilization", "max_model_len",
  "max_num_seqs", "max_num_batched_tokens", "block_size", "mem_fraction_static", "kv_cache_free_gpu_mem_fraction",
  "enforce_eager"];

var form = document.getElementById("bootlog-form");
var csrfToken = form.querySelector("[name=csrfmiddlewaretoken]").value;
var button = document.getElementById("compare-button");
var formError = document.getElementById("form-error");
var results = document.getElementById("bootlog-results");

// ---------------------------------------------------------------- formatting

function valueText(value, unit) {
  if (value === null || value === undefined) return "—";
  if (unit === "bytes") return gibValue(value);
  if (unit === "tokens") return format(T.tokens_value, { value: integer.format(value) });
  if (unit === "x") return format(T.times_value, { value: fixed2.format(value) });
  return String(value);
}

function differenceText(value, unit) {
  if (value === null || value === undefined) return "—";
  if (unit === "bytes") return format(T.gib_value, { value: signedFixed2.format(value / GIB) });
  if (unit === "tokens") return format(T.tokens_value, { value: signedInteger.format(value) });
  if (unit === "x") return format(T.times_value, { value: signedFixed2.format(value) });
  return String(value);
}

function exactBytes(value, unit) {
  return unit === "bytes" && isNumber(value) ? format(T.bytes_value, { value: integer.format(value) }) : null;
}

// |relative difference|: within 5 % close, within 20 % off, beyond that far off.
function closeness(relative) {
  if (!isNumber(relative)) return "";
  var size = Math.abs(relative);
  return size <= 0.05 ? "is-close" : size <= 0.2 ? "is-off" : "is-far";
}

function flagText(name, value) {
  var shown = value !== null && typeof value === "object" ? JSON.stringify(value) : String(value);
  return "--" + String(name).replace(/_/g, "-") + " " + shown;
}

// ---------------------------------------------------------------- rendering

function addFact(list, label, value, key) {
  var valueNode = typeof value === "string" ? el("span", { className: "figure-value", text: value }) : value;
  list.appendChild(el("div", { className: "figure", "data-fact": key || null },
    el("dt", { text: label }), el("dd", {}, valueNode)));
}

function chips(values) {
  var box = el("span", { className: "chips" });
  values.forEach(function (text) { box.appendChild(el("code", { className: "chip", text: text })); });
  return box;
}

function renderFacts(body) {
  var log = body.log || {};
  var list = document.getElementById("log-facts");
  list.textContent = "";
  addFact(list, T.fact_engine, log.engine ? engineName(log.engine) : T.not_in_log, "engine");
  addFact(list, T.fact_version, log.engine_version || T.not_in_log, "engine_version");
  addFact(list, T.fact_model, log.model || T.not_in_log, "model");
  var flags = log.flags || {};
  var names = Object.keys(flags);
  addFact(list, T.fact_flags, names.length ? chips(names.map(function (name) { return flagText(name, flags[name]); }))
    : T.no_flags, "flags");
  var parameters = body.parameters || {};
  addFact(list, T.fact_parameters, chips(Object.keys(parameters).map(function (key) {
    return key + "=" + parameters[key];
  })), "parameters");
  var warnings = log.warnings || [];
  var box = document.getElementById("log-warnings");
  var items = box.querySelector("ul");
  items.textContent = "";
  warnings.forEach(function (text) { items.appendChild(el("li", { text: text })); });
  box.hidden = !warnings.length;
}

function renderComparison(body) {
  var tbody = document.querySelector("#comparison-table tbody");
  tbody.textContent = "";
  (body.comparison || []).forEach(function (line, index) {
    var source = line.source_line || "";
    var sourceId = "source-line-" + index;
    var toggle = el("button", { type: "button", className: "line-toggle", "aria-expanded": "false",
      "aria-controls": sourceId, title: T.show_line, text: "▸" });
    var row = el("tr", { "data-figure": line.figure, title: source || null, className: "comparison-row" },
      el("th", { scope: "row" }, source ? toggle : null,
        el("span", { className: "row-name", text: T["figure_" + line.figure] || line.figure })),
      el("td", { className: "num logged", title: exactBytes(line.logged_bytes_or_value, line.unit) },
        valueText(line.logged_bytes_or_value, line.unit)),
      el("td", { className: "num estimated", title: exactBytes(line.estimated, line.unit) },
        valueText(line.estimated, line.unit)),
      el("td", { className: "num difference", title: exactBytes(line.difference, line.unit) },
        differenceText(line.difference, line.unit)),
      el("td", { className: "num relative" },
        el("span", { className: "relative-pill " + closeness(line.relative_difference),
          text: isNumber(line.relative_difference) ? percent.format(line.relative_difference) : "—" })));
    var sourceRow = el("tr", { id: sourceId, className: "source-row", hidden: true },
      el("td", { colspan: "5" }, el("code", { className: "log-line", text: source || T.no_source_line })));
    toggle.addEventListener("click", function () {
      var open = sourceRow.hidden;
      sourceRow.hidden = !open;
      toggle.setAttribute("aria-expanded", String(open));
      toggle.textContent = open ? "▾" : "▸";
      toggle.title = open ? T.hide_line : T.show_line;
    });
    tbody.appendChild(row);
    tbody.appendChild(sourceRow);
  });
  var unparsed = (body.log && body.log.unparsed_memory_lines) || [];
  var box = document.getElementById("unparsed");
  var list = box.querySelector("ul");
  list.textContent = "";
  unparsed.forEach(function (line) {
    list.appendChild(el("li", {}, el("code", { className: "log-line", text: line })));
  });
  box.hidden = !unparsed.length;
}

function renderCalibration(body) {
  var list = document.getElementById("calibration");
  list.textContent = "";
  var calibration = body.calibration || {};
  var keys = Object.keys(calibration);
  if (!keys.length) {
    list.appendChild(el("p", { className: "muted", text: T.calibration_none }));
  }
  keys.forEach(function (key) {
    addFact(list, T["calibration_" + key] || key, el("span", { className: "figure-value",
      title: exactBytes(calibration[key], "bytes"), text: gibValue(calibration[key]) }), key);
  });
  var link = document.getElementById("use-terms");
  var model = form.elements.model.value || (body.log && body.log.model) || "";
  link.hidden = !(keys.length && model);
  if (!link.hidden) link.href = sizingUrl(body, model);
}

// The sizing page restores its form from the address: the same launch, with the measured terms.
function sizingUrl(body, model) {
  var params = new URLSearchParams();
  var parameters = body.parameters || {};
  params.set("model", model);
  params.set("gpu", form.elements.gpu.value);
  SIZING_FIELDS.forEach(function (key) {
    var value = parameters[key];
    if (value === null || value === undefined || typeof value === "object") return;
    params.set(key, String(value));
  });
  if (parameters.tp || parameters.pp) {
    params.set("gpus", String((parameters.tp || 1) * (parameters.pp || 1)));
  }
  // the release the log was estimated as (its own, or the oldest of its wording): like with like
  var release = body.release || {};
  if (release.estimated_as && (parameters.engine || "vllm") === "vllm") params.set("engine_version", release.estimated_as);
  var calibration = body.calibration || {};
  Object.keys(calibration).forEach(function (key) { params.set(key, String(calibration[key])); });
  return form.dataset.sizingUrl + "?" + params.toString();
}

function renderCalibrated(body) {
  var table = document.getElementById("calibrated-table");
  var verdict = document.getElementById("calibrated-verdict");
  var tbody = table.querySelector("tbody");
  tbody.textContent = "";
  var calibrated = body.calibrated_estimate;
  var estimate = body.estimate || {};
  verdict.textContent = "";
  document.getElementById("calibrated-hint").hidden = !calibrated;
  if (!calibrated) {
    table.hidden = true;
    verdict.className = "calibrated-verdict muted";
    verdict.textContent = T.no_calibrated_estimate;
    return;
  }
  table.hidden = false;
  verdict.className = "calibrated-verdict " + (calibrated.fits ? "is-fit" : "is-not-fit");
  verdict.setAttribute("data-fits", String(!!calibrated.fits));
  verdict.textContent = format(T.fits_by, { verdict: calibrated.fits ? T.fits : T.does_not_fit,
    headroom: gib(calibrated.headroom_bytes_per_gpu) });
  var sources = calibrated.figure_sources || {};
  var before = estimate.memory_per_gpu || {};
  var after = calibrated.memory_per_gpu || {};
  function row(key, label, was, now, source, className) {
    tbody.appendChild(el("tr", { "data-row": key, className: className || null },
      el("th", { scope: "row" },
        key in after ? el("span", { className: "swatch", style: "background:" + componentColor(key),
          "aria-hidden": "true" }) : null,
        el("span", { className: "row-name", text: label }), sourceBadge(source)),
      el("td", { className: "num estimate", text: isNumber(was) ? gib(was) : "—" }),
      el("td", { className: "num calibrated", text: isNumber(now) ? gib(now) : "—" })));
  }
  componentKeys(after).forEach(function (key) {
    row(key, T[key] || key, before[key], after[key], sources[key]);
  });
  row("required", T.required, estimate.required_bytes_per_gpu, calibrated.required_bytes_per_gpu, null,
    "row-total");
  row("capacity", T.capacity, estimate.capacity_bytes_per_gpu, calibrated.capacity_bytes_per_gpu,
    sources.capacity, "row-sub");
  row("usable", T.usable, estimate.usable_bytes_per_gpu, calibrated.usable_bytes_per_gpu, null, "row-sub");
  row("headroom", T.headroom, estimate.headroom_bytes_per_gpu, calibrated.headroom_bytes_per_gpu, null,
    calibrated.headroom_bytes_per_gpu < 0 ? "row-sub row-negative" : "row-sub");
}

function render(body) {
  results.hidden = false;
  renderFacts(body);
  renderComparison(body);
  renderCalibration(body);
  renderCalibrated(body);
}

// ---------------------------------------------------------------- submit

function showError(title, body, status) {
  showFormFieldErrors(form, formError, title, body, status);
}

async function compare() {
  clearErrors(form, "data-error-for");
  formError.hidden = true;
  var text = form.elements.text.value;
  var file = form.elements.file.files[0];
  var model = form.elements.model.value;
  var gpu = form.elements.gpu.value;
  var save = form.elements.save.checked;
  if (!text.trim() && !file) {
    placeFieldErrors(form, "data-error-for", { text: [T.paste_or_choose] }, function () {
      return form.elements.text;
    });
    form.elements.text.focus();
    return;
  }
  await whileBusy(form, button, T.comparing, T.compare, async function () {
    var result;
    if (file) {
      var data = new FormData();
      data.append("file", file);
      data.append("gpu", gpu);
      if (model) data.append("model", model);
      if (save) data.append("save", "true");
      result = await postForm(form.dataset.compareUrl, data, csrfToken);
    } else {
      var payload = { text: text, gpu: gpu };
      if (model) payload.model = model;
      if (save) payload.save = true;
      result = await postJson(form.dataset.compareUrl, payload, csrfToken);
    }
    if (!result.ok) {
      results.hidden = true;
      showError(T.compare_failed, result.body, result.status);
      return;
    }
    render(result.body);
    var savedNote = document.getElementById("calibration-saved");
    savedNote.hidden = !result.body.calibration_id;
    savedNote.textContent = result.body.calibration_id ? T.calibration_saved : "";
    results.scrollIntoView({ block: "start", behavior: "smooth" });
  }, function () {
    showError(T.network_error, null, null);
  });
}

form.addEventListener("submit", function (event) {
  event.preventDefault();
  compare();
});
