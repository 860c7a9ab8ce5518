/*
 * The workload-profiles page: a list of the organisation's profiles and the shared samples, an editor for one
 * profile (request classes, their lengths and active hours, the arrival pattern), its day drawn from the preview
 * API (requests per hour by class, stacked), and a CSV import that fits a profile to a request log and shows the
 * fit against the data. Strings come from words/workloads.js, helpers from common.js (imported).
 */
import {
  LANG,
  el,
  format,
  integer,
  CHART_FONT as FONT,
  CAPACITY_COLOR,
  clearErrors,
  fillAlert,
  isNumber,
  messagesOf,
  placeFieldErrors,
  postForm,
  postJson,
  registerPlotlyLocale,
  rememberUrl,
  request as apiRequest,
  statusMessage,
  whileBusy,
} from "./common.js";
import { T } from "./words/workloads.js";

var SIDES = ["input", "output"];
var PALETTE = ["#2f5fd0", "#1b9e77", "#e08a1e", "#8e5bd6", "#d6456b", "#3aa0b8", "#7a8699", "#a3781c"];
var DATA_COLOR = "#7a8699";
var FIT_COLOR = "#2f5fd0";
var HOURS = 24;
var PLOT_CONFIG = { responsive: true, displaylogo: false, modeBarButtons: [["toImage"]], locale: LANG };

var root = document.getElementById("workloads");
var form = document.getElementById("profile-form");
var csrfToken = form.querySelector("[name=csrfmiddlewaretoken]").value;
var listBox = document.getElementById("profile-list");
var rowsBox = document.getElementById("class-rows");
var template = document.getElementById("class-row-template");
var formError = document.getElementById("form-error");
var formStatus = document.getElementById("form-status");
var saveButton = document.getElementById("save-button");
var previewButton = document.getElementById("preview-button");
var deleteButton = document.getElementById("delete-button");
var previewCard = document.getElementById("preview-card");
var perDayInput = document.getElementById("field-requests_per_day");
var importForm = document.getElementById("import-form");
var importButton = document.getElementById("import-button");
var importError = document.getElementById("import-error");
// a role that reads profiles but does not change them (sales, reviewers): no save, delete or import
var readOnly = root.hasAttribute("data-read-only");
saveButton.hidden = readOnly;
var fitCard = document.getElementById("fit-card");

var profiles = JSON.parse(document.getElementById("workload-profiles").textContent);
var current = null;  // the profile in the editor as the API returned it; null for a new one
var lastPreview = null;
var rowCounter = 0;

var decimal2 = new Intl.NumberFormat(LANG, { maximumFractionDigits: 2 });
var decimal3 = new Intl.NumberFormat(LANG, { minimumFractionDigits: 3, maximumFractionDigits: 3 });
var significant3 = new Intl.NumberFormat(LANG, { maximumSignificantDigits: 3 });
var share = new Intl.NumberFormat(LANG, { style: "percent", minimumFractionDigits: 1, maximumFractionDigits: 1 });

function detailUrl(id) { return root.dataset.detailUrl.replace(/\/0\/$/, "/" + id + "/"); }
function color(index) { return PALETTE[index % PALETTE.length]; }
function hourLabel(hour) { return ("0" + hour).slice(-2) + ":00"; }
function rounded(value, digits) {
  return isNumber(value) ? String(Number(value.toFixed(digits))) : "";
}

function send(method, url, payload) {
  var headers = { Accept: "application/json", "X-CSRFToken": csrfToken };
  if (payload !== undefined) headers["Content-Type"] = "application/json";
  return apiRequest(url, { method: method, headers: headers,
    body: payload === undefined ? undefined : JSON.stringify(payload) });
}

// ---------------------------------------------------------------- the list

function renderList() {
  listBox.textContent = "";
  if (!profiles.length) listBox.appendChild(el("li", { className: "muted", text: T.no_profiles }));
  profiles.forEach(function (row) {
    var selected = !!current && current.id === row.id;
    var button = el("button", {
      type: "button", className: "profile-item" + (selected ? " is-active" : ""),
      "data-profile-id": String(row.id), "aria-current": selected ? "true" : null,
    },
      el("span", { className: "profile-name", text: row.name }),
      row.sample ? el("span", { className: "sample-badge", text: T.sample }) : null,
      row.source === "csv" ? el("span", { className: "source-tag", text: T.source_csv }) : null);
    button.addEventListener("click", function () { load(row.id); });
    listBox.appendChild(el("li", {}, button));
  });
}

async function refreshList() {
  // the list is paginated ({count, next, previous, results}); the largest page holds every profile shown here
  var result = await apiRequest(root.dataset.listUrl + "?limit=500", { headers: { Accept: "application/json" } });
  if (result.ok && result.body && Array.isArray(result.body.results)) {
    profiles = result.body.results;
    renderList();
  }
}

// ---------------------------------------------------------------- class rows

function rows() { return Array.prototype.slice.call(rowsBox.querySelectorAll("[data-row]")); }
function input(row, name) { return row.querySelector('[data-name="' + name + '"]'); }

function windowsText(windows) {
  return (windows || []).map(function (pair) { return pair[0] + "-" + pair[1]; }).join(", ");
}

// "10-12, 14:00–16:00" → [[10, 12], [14, 16]]; what does not read as hours goes as it is, for the API to name.
function parseWindows(text) {
  return String(text || "").split(/[,;]/).map(function (part) { return part.trim(); }).filter(Boolean)
    .map(function (part) {
      var match = /^(\d{1,2})(?::00)?\s*[-–~]\s*(\d{1,2})(?::00)?$/.exec(part);
      return match ? [Number(match[1]), Number(match[2])] : [part];
    });
}

function binsText(bins) {
  return (bins || []).map(function (bin) { return bin[0] + "-" + bin[1] + ":" + bin[2]; }).join(", ");
}

// "1-100:1, 101-400:3" → [[1, 100, 1], [101, 400, 3]]; null when a bin does not read.
function parseBins(text) {
  var parts = String(text || "").split(/[,;]/).map(function (part) { return part.trim(); }).filter(Boolean);
  var bins = [];
  for (var i = 0; i < parts.length; i++) {
    var match = /^(\d+)\s*[-–]\s*(\d+)\s*:\s*(\d+(?:\.\d+)?)$/.exec(parts[i]);
    if (!match) return null;
    bins.push([Number(match[1]), Number(match[2]), Number(match[3])]);
  }
  return bins.length ? bins : null;
}

function setSelect(select, value) {
  if (Array.prototype.some.call(select.options, function (option) { return option.value === value; })) {
    select.value = value;
  }
}

function defaultClass(index) {
  return {
    name: format(T.new_class_name, { index: index }), share: 1, shared_prefix_tokens: 0, windows: [],
    input: { kind: "normal", mean: 512, std: 128 }, output: { kind: "normal", mean: 256, std: 64 },
  };
}

// Inputs a kind does not use are hidden; those in data-spacer-kinds keep their place, so the columns line up.
function updateKinds(row) {
  SIDES.forEach(function (side) {
    var kind = input(row, side + "_kind").value;
    row.querySelectorAll('.length-row[data-side="' + side + '"] [data-kinds]').forEach(function (node) {
      var used = node.getAttribute("data-kinds").split(/\s+/).indexOf(kind) >= 0;
      var spacer = (node.getAttribute("data-spacer-kinds") || "").split(/\s+/).indexOf(kind) >= 0;
      node.hidden = !used && !spacer;
      node.classList.toggle("is-spacer", spacer);
    });
  });
}

function fillRow(row, values) {
  input(row, "name").value = values.name || "";
  input(row, "share").value = rounded(values.share, 4);
  input(row, "shared_prefix_tokens").value = values.shared_prefix_tokens ? String(values.shared_prefix_tokens) : "";
  input(row, "windows").value = windowsText(values.windows);
  SIDES.forEach(function (side) {
    var lengths = values[side] || {};
    setSelect(input(row, side + "_kind"), lengths.kind || "normal");
    input(row, side + "_mean").value = rounded(lengths.mean, 2);
    input(row, side + "_std").value = rounded(lengths.std, 2);
    input(row, side + "_bins").value = binsText(lengths.bins);
    input(row, side + "_minimum").value = lengths.minimum && lengths.minimum !== 1 ? String(lengths.minimum) : "";
    input(row, side + "_maximum").value = isNumber(lengths.maximum) ? String(lengths.maximum) : "";
  });
  updateKinds(row);
}

function renumber() {
  var all = rows();
  all.forEach(function (row, index) {
    var badge = row.querySelector(".class-index");
    badge.textContent = String(index + 1);
    badge.style.background = color(index);
    row.setAttribute("data-index", String(index));
    row.setAttribute("aria-label", format(T.class_label, { index: index + 1 }));
    row.querySelector(".remove-class").disabled = all.length <= 1;
  });
}

function addRow(values) {
  rowCounter += 1;
  var row = template.content.firstElementChild.cloneNode(true);
  row.querySelectorAll("[data-name]").forEach(function (field) {
    var name = field.getAttribute("data-name");
    field.id = "c" + rowCounter + "-" + name;
    var label = row.querySelector('label[data-for="' + name + '"]');
    if (label) label.setAttribute("for", field.id);
  });
  SIDES.forEach(function (side) {
    input(row, side + "_kind").addEventListener("change", function () { updateKinds(row); });
  });
  row.querySelector(".remove-class").addEventListener("click", function () {
    if (rows().length <= 1) return;
    row.remove();
    renumber();
  });
  rowsBox.appendChild(row);
  fillRow(row, values || defaultClass(rows().length));
  renumber();
  return row;
}

document.getElementById("add-class").addEventListener("click", function () {
  var row = addRow(null);
  input(row, "name").focus();
});

// ---------------------------------------------------------------- the profile as JSON

function numberOrText(value) {
  var raw = String(value || "").trim();
  if (raw === "") return undefined;
  var number = Number(raw);
  return Number.isFinite(number) ? number : raw;  // the API names what is wrong
}

function lengthsOf(row, side, problems, index) {
  var kind = input(row, side + "_kind").value;
  var lengths = { kind: kind };
  if (kind === "empirical") {
    var bins = parseBins(input(row, side + "_bins").value);
    if (bins === null) problems[index] = T.bins_invalid;
    else lengths.bins = bins;
  } else {
    lengths.mean = numberOrText(input(row, side + "_mean").value);
    if (kind !== "fixed") lengths.std = numberOrText(input(row, side + "_std").value);
  }
  lengths.minimum = numberOrText(input(row, side + "_minimum").value);
  lengths.maximum = numberOrText(input(row, side + "_maximum").value);
  return lengths;
}

// {profile, problems}: problems are rows whose bins do not read (index → message), caught before the API.
function collectProfile() {
  var problems = {};
  var classes = rows().map(function (row, index) {
    var request = {
      name: input(row, "name").value.trim(),
      share: numberOrText(input(row, "share").value),
      shared_prefix_tokens: numberOrText(input(row, "shared_prefix_tokens").value),
      windows: parseWindows(input(row, "windows").value),
    };
    SIDES.forEach(function (side) { request[side] = lengthsOf(row, side, problems, index); });
    return request;
  });
  var arrival = { kind: form.elements.arrival_kind.value };
  if (arrival.kind === "burst") {
    ["burst_requests", "burst_window_s", "burst_at_s"].forEach(function (name) {
      arrival[name] = numberOrText(form.elements[name].value);
    });
  }
  return {
    profile: { name: form.elements.name.value.trim(), description: form.elements.description.value,
      classes: classes, arrival: arrival },
    problems: problems,
  };
}

function updateArrival() {
  var burst = form.elements.arrival_kind.value === "burst";
  form.querySelectorAll("[data-burst-only]").forEach(function (node) { node.hidden = !burst; });
}
form.elements.arrival_kind.addEventListener("change", updateArrival);

// ---------------------------------------------------------------- errors

function clearFormErrors(keepStatus) {
  clearErrors(form, "data-error-for");
  rows().forEach(function (row) { row.removeAttribute("data-invalid"); });
  formError.hidden = true;
  formError.textContent = "";
  if (!keepStatus) formStatus.hidden = true;
}

function markRow(index, message) {
  var row = rows()[index];
  if (!row) return false;
  row.setAttribute("data-invalid", "true");
  row.querySelector('[data-error-for="row"]').textContent = message;
  return true;
}

// Field errors: "classes[i]" to class row i, name / classes / arrival fields to theirs, the rest to the alert.
function showFormError(title, body, status) {
  var fields = (body && body.extra && body.extra.fields) || {};
  var unplaced = {};
  Object.keys(fields).forEach(function (key) {
    var match = /^classes\[(\d+)\]/.exec(key);
    if (match && markRow(Number(match[1]), messagesOf(fields[key]))) return;
    var slot = form.querySelector('[data-error-for="' + key + '"]');
    if (slot && !slot.closest("[hidden]") && !slot.closest("[data-row]")) {
      slot.textContent = messagesOf(fields[key]);
      var field = form.elements[key === "arrival" ? "arrival_kind" : key];
      if (field && field.setAttribute) field.setAttribute("aria-invalid", "true");
      return;
    }
    unplaced[key] = fields[key];
  });
  fillAlert(formError, title, body, status, unplaced);
  var first = form.querySelector("[data-invalid=true], [aria-invalid=true]");
  (first || formError).scrollIntoView({ block: "nearest", behavior: "smooth" });
}

function showClientProblems(problems) {
  var indexes = Object.keys(problems);
  indexes.forEach(function (index) { markRow(Number(index), problems[index]); });
  return indexes.length > 0;
}

// ---------------------------------------------------------------- loading and saving

function saveLabel() { return current && current.sample ? T.save_copy : T.save; }

function updateEditor() {
  var sample = !!current && current.sample;
  document.getElementById("editor-title").textContent = current ? current.name : T.new_profile;
  document.getElementById("editor-sample").hidden = !sample;
  document.getElementById("sample-note").hidden = !sample;
  deleteButton.hidden = readOnly || !current || sample;
  saveButton.textContent = saveLabel();
  renderList();
}

function fillForm(profile, name, description) {
  form.elements.name.value = name;
  form.elements.description.value = description || "";
  rowsBox.textContent = "";
  (profile.classes || []).forEach(function (values) { addRow(values); });
  if (!rows().length) addRow(null);
  var arrival = profile.arrival || {};
  setSelect(form.elements.arrival_kind, arrival.kind || "poisson");
  form.elements.burst_requests.value = isNumber(arrival.burst_requests) ? String(arrival.burst_requests) : "";
  form.elements.burst_window_s.value = isNumber(arrival.burst_window_s) ? String(arrival.burst_window_s) : "10";
  form.elements.burst_at_s.value = isNumber(arrival.burst_at_s) ? String(arrival.burst_at_s) : "0";
  updateArrival();
}

function requestsPerDayOfFit(fit) {
  var days = Math.max(1, (fit.duration_s || 0) / 86400);
  return Math.max(1, Math.round(fit.requests / days));
}

function showLoaded(row) {
  current = row;
  clearFormErrors(true);
  fillForm(row.profile || {}, row.sample ? format(T.copy_name, { name: row.name }) : row.name, row.description);
  if (row.fit) {
    perDayInput.value = String(requestsPerDayOfFit(row.fit));
    renderFit(row.fit);
  } else {
    fitCard.hidden = true;
  }
  updateEditor();
  rememberUrl(window.location.pathname + "?profile=" + row.id);
}

async function load(id) {
  clearFormErrors();
  try {
    var result = await apiRequest(detailUrl(id), { headers: { Accept: "application/json" } });
    if (!result.ok) {
      fillAlert(formError, T.load_failed, result.body, result.status, {});
      return;
    }
    showLoaded(result.body);
    await preview();
  } catch (error) {
    fillAlert(formError, T.network_error, null, null, {});
  }
}

function newProfile() {
  current = null;
  clearFormErrors();
  fitCard.hidden = true;
  fillForm({ classes: [defaultClass(1)] }, "", "");
  updateEditor();
  rememberUrl(window.location.pathname);
  form.elements.name.focus();
  preview();
}
document.getElementById("new-profile").addEventListener("click", newProfile);

async function save() {
  clearFormErrors();
  var collected = collectProfile();
  if (showClientProblems(collected.problems)) return;
  var name = form.elements.name.value.trim();
  if (!name) {
    form.querySelector('[data-error-for="name"]').textContent = T.give_name;
    form.elements.name.setAttribute("aria-invalid", "true");
    form.elements.name.focus();
    return;
  }
  var payload = { name: name, description: form.elements.description.value, profile: collected.profile };
  var editing = !!current && !current.sample;
  var saved = null;
  await whileBusy(form, saveButton, T.saving, saveLabel(), async function () {
    var result = editing ? await send("PUT", detailUrl(current.id), payload)
      : await postJson(root.dataset.listUrl, payload, csrfToken);
    if (!result.ok) {
      showFormError(T.save_failed, result.body, result.status);
      return;
    }
    saved = result.body;
  }, function () {
    showFormError(T.network_error, null, null);
  });
  if (!saved) return;
  showLoaded(saved);
  await refreshList();
  statusMessage(formStatus, "ok", format(T.saved, { name: saved.name }));
  await preview();
}

form.addEventListener("submit", function (event) {
  event.preventDefault();
  if (!readOnly) save();
});

deleteButton.addEventListener("click", async function () {
  if (!current || current.sample) return;
  var doomed = current;
  if (!window.confirm(format(T.delete_confirm, { name: doomed.name }))) return;
  clearFormErrors();
  try {
    var result = await send("DELETE", detailUrl(doomed.id));
    if (!result.ok) {
      fillAlert(formError, T.delete_failed, result.body, result.status, {});
      return;
    }
    await refreshList();
    newProfile();
    statusMessage(formStatus, "ok", format(T.deleted, { name: doomed.name }));
  } catch (error) {
    fillAlert(formError, T.network_error, null, null, {});
  }
});

// ---------------------------------------------------------------- the day

function requestsPerDay() {
  var value = Number(perDayInput.value);
  return Number.isFinite(value) && value > 0 ? value : 10000;
}

function activeHoursText(hours) {
  if (!hours || hours.length >= HOURS) return T.all_day;
  var runs = [];
  hours.forEach(function (hour) {
    var last = runs[runs.length - 1];
    if (last && last[1] === hour) last[1] = hour + 1;
    else runs.push([hour, hour + 1]);
  });
  return runs.map(function (run) {
    return format(T.hours_value, { start: hourLabel(run[0]), end: hourLabel(run[1]) });
  }).join(", ");
}

function tokensText(value) { return format(T.tokens_value, { value: integer.format(value) }); }

function renderDailyChart(data, perDay) {
  var labels = [];
  for (var hour = 0; hour < HOURS; hour++) labels.push(hourLabel(hour));
  var traces = data.classes.map(function (request, index) {
    return {
      type: "bar", name: request.name, x: labels,
      y: request.hourly.map(function (value) { return value * perDay; }),
      marker: { color: color(index) },
      hovertemplate: request.name + "<br>%{x}: %{y:,.0f}<extra></extra>",
    };
  });
  var busiest = data.busiest_hour;
  var layout = {
    font: { family: FONT, size: 12, color: "#1d2939" },
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
    hoverlabel: { font: { family: FONT } },
    barmode: "stack",
    bargap: 0.15,
    height: 380,
    margin: { t: 40, r: 24, b: 90, l: 70 },
    title: { text: T.chart_title, font: { size: 14 } },
    xaxis: { title: { text: T.chart_axis_hour }, type: "category", tickangle: -45 },
    yaxis: { title: { text: T.chart_axis_requests }, gridcolor: "#e4e7ec", rangemode: "tozero" },
    legend: { orientation: "h", x: 0, y: -0.32, yanchor: "top", traceorder: "normal" },
    shapes: [{ type: "rect", xref: "x", yref: "paper", x0: busiest - 0.5, x1: busiest + 0.5, y0: 0, y1: 1,
      fillcolor: "rgba(180, 35, 24, 0.06)", line: { color: CAPACITY_COLOR, width: 1, dash: "dot" } }],
    annotations: [{ xref: "x", yref: "paper", x: busiest, y: 1, yanchor: "bottom", showarrow: false,
      text: T.busiest_marker, font: { color: CAPACITY_COLOR } }],
  };
  Plotly.react("daily-chart", traces, layout,
    Object.assign({ toImageButtonOptions: { filename: "workload-day", scale: 2 } }, PLOT_CONFIG));
}

function renderClassTable(data) {
  var tbody = document.querySelector("#class-table tbody");
  tbody.textContent = "";
  data.classes.forEach(function (request, index) {
    var prefix = request.shared_prefix_tokens
      ? el("span", { className: "cell-detail", text: format(T.prefix_detail, {
        value: integer.format(request.shared_prefix_tokens) }) }) : null;
    tbody.appendChild(el("tr", { "data-class": request.name },
      el("th", { scope: "row" },
        el("span", { className: "swatch", style: "background:" + color(index), "aria-hidden": "true" }),
        el("span", { className: "row-name", text: request.name })),
      el("td", { className: "num", text: share.format(request.share) }),
      el("td", { className: "num mix", text: share.format(request.mix_at_busiest_hour) }),
      el("td", { text: activeHoursText(request.active_hours) }),
      el("td", { className: "num" }, tokensText(request.expected_input_tokens), prefix),
      el("td", { className: "num", text: tokensText(request.expected_output_tokens) })));
  });
}

function renderPreview() {
  if (!lastPreview) return;
  var data = lastPreview;
  var perDay = requestsPerDay();
  previewCard.hidden = false;  // before plotting: Plotly measures the box
  var busiestShare = data.busiest_hour_share;
  var summary = document.getElementById("busiest-summary");
  summary.setAttribute("data-busiest-hour", String(data.busiest_hour));
  summary.textContent = format(T.busiest, { hour: hourLabel(data.busiest_hour), share: share.format(busiestShare) });
  document.getElementById("busiest-rate").textContent = format(T.busiest_rate, {
    requests: integer.format(perDay), per_hour: integer.format(perDay * busiestShare),
    per_s: significant3.format(perDay * busiestShare / 3600),
  });
  renderDailyChart(data, perDay);
  renderClassTable(data);
}

async function preview() {
  clearFormErrors(true);
  var collected = collectProfile();
  if (showClientProblems(collected.problems)) return;
  await whileBusy(form, previewButton, T.previewing, T.preview, async function () {
    var result = await postJson(root.dataset.previewUrl, { profile: collected.profile }, csrfToken);
    if (!result.ok) {
      previewCard.hidden = true;  // the day shown was another profile's
      showFormError(T.preview_failed, result.body, result.status);
      return;
    }
    lastPreview = result.body;
    renderPreview();
  }, function () {
    showFormError(T.network_error, null, null);
  });
}

previewButton.addEventListener("click", preview);
perDayInput.addEventListener("input", renderPreview);

// ---------------------------------------------------------------- the fit of an imported log

function addFigure(list, key, label, value, title) {
  list.appendChild(el("div", { className: "figure", "data-figure": key, title: title || null },
    el("dt", { text: label }), el("dd", {}, el("span", { className: "figure-value", text: value }))));
}

function renderFitSummary(fit) {
  var list = document.getElementById("fit-summary");
  list.textContent = "";
  addFigure(list, "requests", T.fit_requests, integer.format(fit.requests));
  addFigure(list, "duration", T.fit_duration, format(T.fit_duration_value, {
    value: decimal2.format(fit.duration_s / 3600) }));
  addFigure(list, "mean_rate", T.fit_mean_rate, format(T.rate_value, {
    value: significant3.format(fit.mean_rate_per_s) }));
  addFigure(list, "peak_rate", T.fit_peak_rate, format(T.rate_value, {
    value: significant3.format(fit.peak_hour_rate_per_s) }));
  addFigure(list, "dispersion", T.fit_dispersion, decimal2.format(fit.dispersion_index), T.fit_dispersion_title);
  var columns = fit.columns || {};
  var names = ["timestamp", "input_tokens", "output_tokens", "class"].filter(function (name) {
    return name in columns;
  });
  var caption = document.getElementById("fit-columns");
  caption.hidden = !names.length;
  caption.textContent = format(T.fit_columns, { columns: names.map(function (name) {
    return columns[name] === name ? name : columns[name] + " → " + name;
  }).join(", ") });
}

function statCells(stats) {
  return ["mean", "std", "p50", "p90", "p99"].map(function (key) {
    return el("td", { className: "num", "data-stat": key, text: isNumber(stats[key]) ? decimal2.format(stats[key]) : "—" });
  });
}

function renderFitTable(fit) {
  var tbody = document.querySelector("#fit-table tbody");
  tbody.textContent = "";
  (fit.classes || []).forEach(function (request, index) {
    SIDES.forEach(function (side, sideIndex) {
      var lengths = request[side];
      ["data", "fitted"].forEach(function (source, sourceIndex) {
        var row = el("tr", { "data-class": request.name, "data-side": side, "data-source": source,
          className: sourceIndex === 0 && sideIndex > 0 ? "row-group" : null });
        if (sideIndex === 0 && sourceIndex === 0) {
          row.appendChild(el("th", { scope: "rowgroup", rowspan: "4" },
            el("span", { className: "swatch", style: "background:" + color(index), "aria-hidden": "true" }),
            el("span", { className: "row-name", text: request.name }),
            el("span", { className: "cell-detail", text: integer.format(request.requests) + " · " +
              share.format(request.share) })));
        }
        if (sourceIndex === 0) {
          row.appendChild(el("td", { rowspan: "2", text: T[side] }));
        }
        row.appendChild(el("td", { className: "source-cell", text: T[source] }));
        row.appendChild(el("td", { text: source === "fitted" ? (T.length_kinds[lengths.kind] || lengths.kind) : "" }));
        statCells(lengths[source] || {}).forEach(function (cell) { row.appendChild(cell); });
        if (sourceIndex === 0) {
          row.appendChild(el("td", { rowspan: "2", className: "num ks", text: decimal3.format(lengths.ks_statistic) }));
        }
        tbody.appendChild(row);
      });
    });
  });
}

function renderFitCharts(fit) {
  var box = document.getElementById("fit-charts");
  box.textContent = "";
  (fit.classes || []).forEach(function (request, index) {
    SIDES.forEach(function (side) {
      var histogram = request[side].histogram || {};
      var edges = histogram.edges || [];
      var centres = [];
      var widths = [];
      for (var i = 0; i + 1 < edges.length; i++) {
        centres.push((edges[i] + edges[i + 1]) / 2);
        widths.push(edges[i + 1] - edges[i]);
      }
      var id = "fit-chart-" + index + "-" + side;
      box.appendChild(el("div", { id: id, className: "chart fit-chart", "data-class": request.name,
        "data-side": side }));
      var bars = function (name, values, colour, opacity) {
        return { type: "bar", name: name, x: centres, y: values, width: widths, opacity: opacity,
          marker: { color: colour }, hovertemplate: name + ": %{y:.1%}<extra></extra>" };
      };
      Plotly.react(id, [bars(T.data, histogram.data || [], DATA_COLOR, 0.55),
        bars(T.fitted, histogram.fitted || [], FIT_COLOR, 0.45)], {
        font: { family: FONT, size: 11, color: "#1d2939" },
        paper_bgcolor: "rgba(0,0,0,0)",
        plot_bgcolor: "rgba(0,0,0,0)",
        barmode: "overlay",
        height: 260,
        margin: { t: 36, r: 12, b: 44, l: 54 },
        title: { text: format(T.fit_histogram_title, { name: request.name, side: T[side] }), font: { size: 13 } },
        xaxis: { title: { text: T.fit_axis_tokens }, gridcolor: "#eef0f4" },
        yaxis: { title: { text: T.fit_axis_share }, tickformat: ".0%", gridcolor: "#e4e7ec", rangemode: "tozero" },
        legend: { orientation: "h", x: 1, xanchor: "right", y: 1.02, yanchor: "bottom" },
      }, Object.assign({ toImageButtonOptions: { filename: "workload-fit", scale: 2 } }, PLOT_CONFIG));
    });
  });
}

function renderFit(fit) {
  fitCard.hidden = false;  // before plotting
  renderFitSummary(fit);
  renderFitTable(fit);
  renderFitCharts(fit);
}

// ---------------------------------------------------------------- CSV import

function clearImportErrors() {
  clearErrors(importForm, "data-import-error-for");
  importError.hidden = true;
  importError.textContent = "";
}

function showImportError(title, body, status) {
  var fields = (body && body.extra && body.extra.fields) || {};
  var unplaced = {};
  Object.keys(fields).forEach(function (key) {
    var slot = importForm.querySelector('[data-import-error-for="' + key + '"]');
    if (!slot) {
      unplaced[key] = fields[key];
      return;
    }
    var messages = Array.isArray(fields[key]) ? fields[key] : [messagesOf(fields[key])];
    slot.textContent = "";
    if (messages.length > 1) {
      var list = el("ul", { className: "error-list" });
      messages.forEach(function (message) { list.appendChild(el("li", { text: messagesOf(message) })); });
      slot.appendChild(list);
    } else {
      slot.textContent = messagesOf(messages[0]);
    }
    var field = importForm.elements[key];
    if (field) field.setAttribute("aria-invalid", "true");
  });
  fillAlert(importError, title, body, status, unplaced);
}

async function importLog() {
  clearImportErrors();
  var name = importForm.elements.name.value.trim();
  var file = importForm.elements.file.files[0];
  var missing = {};
  if (!name) missing.name = [T.give_name];
  if (!file) missing.file = [T.choose_file];
  if (Object.keys(missing).length) {
    placeFieldErrors(importForm, "data-import-error-for", missing, function (key) {
      return importForm.elements[key];
    });
    return;
  }
  var data = new FormData();
  data.append("name", name);
  data.append("file", file);
  var imported = null;
  await whileBusy(importForm, importButton, T.importing, T.import, async function () {
    var result = await postForm(root.dataset.importUrl, data, csrfToken);
    if (!result.ok) {
      showImportError(T.import_failed, result.body, result.status);
      return;
    }
    imported = result.body;
  }, function () {
    showImportError(T.network_error, null, null);
  });
  if (!imported) return;
  importForm.reset();
  showLoaded(imported);
  await refreshList();
  statusMessage(formStatus, "ok", format(T.imported, { name: imported.name,
    requests: integer.format(imported.fit.requests) }));
  await preview();
  fitCard.scrollIntoView({ block: "start", behavior: "smooth" });
}

importForm.addEventListener("submit", function (event) {
  event.preventDefault();
  importLog();
});

// ---------------------------------------------------------------- start

registerPlotlyLocale(T.download_plot);
renderList();
var wanted = Number(new URLSearchParams(window.location.search).get("profile"));
var known = profiles.some(function (row) { return row.id === wanted; });
if (known) load(wanted);
else if (profiles.length) load(profiles[0].id);
else newProfile();
