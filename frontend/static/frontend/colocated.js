/*
 * The shared-GPU page: several deployments on one GPU type, posted to estimates/colocated; draws their bills
 * stacked against the card. No framework and no build step; strings come from words/colocated.js, helpers from
 * common.js (imported). The rows are kept in the address, so the language switch redraws the same answer.
 */
import {
  LANG,
  el,
  format,
  gib,
  toGiB,
  CAPACITY_COLOR,
  CHART_FONT as FONT,
  clearErrors,
  componentKeys,
  engineName,
  fillAlert,
  messagesOf,
  placeFieldErrors,
  postJson,
  registerPlotlyLocale,
  rememberUrl,
  whileBusy,
} from "./common.js";
import { T } from "./words/colocated.js";

var FIELDS = ["model", "engine", "weights", "gpu_memory_utilization", "max_model_len", "concurrency",
  "tokens_per_request"];
var INTEGER_FIELDS = ["max_model_len", "concurrency", "tokens_per_request"];
var FLOAT_FIELDS = ["gpu_memory_utilization"];
// one colour per deployment, in the chart and on the row's number
var PALETTE = ["#2f5fd0", "#1b9e77", "#e08a1e", "#8e5bd6", "#d6456b", "#3aa0b8", "#7a8699", "#a3781c"];

var form = document.getElementById("colocated-form");
var csrfToken = form.querySelector("[name=csrfmiddlewaretoken]").value;
var rowsBox = document.getElementById("deployment-rows");
var template = document.getElementById("deployment-row-template");
var addButton = document.getElementById("add-row");
var estimateButton = document.getElementById("estimate-button");
var formError = document.getElementById("form-error");
var MIN_ROWS = Number(form.dataset.minRows) || 2;
var MAX_ROWS = Number(form.dataset.maxRows) || 8;
var rowCounter = 0;

function rows() { return Array.prototype.slice.call(rowsBox.querySelectorAll("[data-row]")); }
function input(row, name) { return row.querySelector('[data-name="' + name + '"]'); }
function color(index) { return PALETTE[index % PALETTE.length]; }

// ---------------------------------------------------------------- rows

function updateRow(row) {
  var engine = input(row, "engine").value;
  row.querySelectorAll("[data-engines]").forEach(function (node) {
    var applies = node.getAttribute("data-engines").split(/\s+/).indexOf(engine) >= 0;
    node.querySelectorAll("input").forEach(function (field) { field.disabled = !applies; });
  });
}

function renumber() {
  var all = rows();
  all.forEach(function (row, index) {
    var badge = row.querySelector(".deployment-index");
    badge.textContent = String(index + 1);
    badge.style.background = color(index);
    row.setAttribute("data-index", String(index));
    row.setAttribute("aria-label", format(T.deployment_label, { index: index + 1 }));
    row.querySelector(".remove-row").disabled = all.length <= MIN_ROWS;
  });
  addButton.disabled = all.length >= MAX_ROWS;
}

function setValue(field, value) {
  if (value === undefined || value === null) return;
  var text = String(value);
  if (field.tagName === "SELECT") {
    var option = Array.prototype.find.call(field.options, function (o) { return o.value === text; });
    if (!option || option.disabled) return;
  }
  field.value = text;
}

// values: a row to repeat or to restore; restoring, an input the saved row leaves out stays empty.
function addRow(values, restoring) {
  if (rows().length >= MAX_ROWS) return null;
  rowCounter += 1;
  var row = template.content.firstElementChild.cloneNode(true);
  FIELDS.forEach(function (name) {
    var field = input(row, name);
    var id = "d" + rowCounter + "-" + name;
    field.id = id;
    field.name = name;
    row.querySelector('label[data-for="' + name + '"]').setAttribute("for", id);
    if (values) setValue(field, values[name]);
    if (restoring && field.tagName === "INPUT" && !(name in values)) field.value = "";
  });
  input(row, "engine").addEventListener("change", function () { updateRow(row); });
  row.querySelector(".remove-row").addEventListener("click", function () {
    if (rows().length <= MIN_ROWS) return;
    row.remove();
    renumber();
  });
  rowsBox.appendChild(row);
  updateRow(row);
  renumber();
  return row;
}

// A new row repeats the last one, the usual start for a second copy of a deployment.
function rowValues(row) {
  var values = {};
  FIELDS.forEach(function (name) { values[name] = input(row, name).value; });
  return values;
}

addButton.addEventListener("click", function () {
  var all = rows();
  var row = addRow(all.length ? rowValues(all[all.length - 1]) : null);
  if (row) input(row, "model").focus();
});

// ---------------------------------------------------------------- payload and errors

function rowPayload(row) {
  var payload = {};
  FIELDS.forEach(function (name) {
    var field = input(row, name);
    if (field.disabled) return;
    var raw = String(field.value || "").trim();
    if (raw === "") return;
    if (INTEGER_FIELDS.indexOf(name) >= 0 || FLOAT_FIELDS.indexOf(name) >= 0) {
      var number = Number(raw);
      payload[name] = Number.isFinite(number) ? number : raw;  // the API names what is wrong
    } else {
      payload[name] = raw;
    }
  });
  return payload;
}

function collectPayload() {
  return { gpu: form.elements.gpu.value, deployments: rows().map(rowPayload) };
}

function clearFormErrors() {
  clearErrors(form, "data-error-for");
  rows().forEach(function (row) { row.removeAttribute("data-invalid"); });
  formError.hidden = true;
  formError.textContent = "";
}

// Field errors of deployment i come under "deployments[i]"; each goes next to its input in row i.
function showFormError(title, body, status) {
  var fields = (body && body.extra && body.extra.fields) || {};
  var all = rows();
  var unplaced = {};
  Object.keys(fields).forEach(function (key) {
    var match = /^deployments\[(\d+)\]$/.exec(key);
    var row = match ? all[Number(match[1])] : null;
    if (!row) {
      var slot = key === "gpu" || key === "deployments"
        ? form.querySelector('.colocated-top [data-error-for="' + key + '"], #deployments-error') : null;
      if (slot && slot.getAttribute("data-error-for") === key) {
        slot.textContent = messagesOf(fields[key]);
        if (key === "gpu") form.elements.gpu.setAttribute("aria-invalid", "true");
      } else {
        unplaced[key] = fields[key];
      }
      return;
    }
    row.setAttribute("data-invalid", "true");
    var rowFields = fields[key];
    if (!rowFields || typeof rowFields !== "object" || Array.isArray(rowFields)) {
      unplaced[format(T.deployment_label, { index: Number(match[1]) + 1 })] = rowFields;
      return;
    }
    var rest = placeFieldErrors(row, "data-error-for", rowFields, function (name) { return input(row, name); });
    Object.keys(rest).forEach(function (name) {
      unplaced[format(T.deployment_label, { index: Number(match[1]) + 1 }) + " · " + name] = rest[name];
    });
  });
  fillAlert(formError, title, body, status, unplaced);
  var firstInvalid = form.querySelector("[aria-invalid=true]");
  (firstInvalid || formError).scrollIntoView({ block: "nearest", behavior: "smooth" });
}

// ---------------------------------------------------------------- rendering

function modelOf(payload, index) {
  var deployment = payload.deployments[index] || {};
  return deployment.model || "";
}

function gpuName() {
  var option = form.elements.gpu.selectedOptions[0];
  return option ? option.textContent.trim() : form.elements.gpu.value;
}

function renderVerdict(data) {
  var box = document.getElementById("verdict");
  box.textContent = "";
  box.className = "verdict " + (data.fits ? "verdict-ok" : "verdict-bad");
  box.setAttribute("data-fits", data.fits ? "true" : "false");
  box.appendChild(el("div", { className: "verdict-head" },
    el("span", { className: "verdict-icon", "aria-hidden": "true", text: data.fits ? "✓" : "✕" }),
    el("strong", { className: "verdict-title", text: data.fits ? T.fits : T.does_not_fit }),
    el("span", { className: "verdict-headroom",
      text: T.headroom + " " + gib(data.headroom_bytes_per_gpu) + " " + T.gib })));
  box.appendChild(el("p", { className: "verdict-summary", text: format(T.summary, {
    count: (data.deployments || []).length,
    gpu_name: gpuName(),
    required: gib(data.required_bytes_per_gpu),
    capacity: gib(data.capacity_bytes_per_gpu),
  }) }));
  var problems = data.problems || [];
  if (problems.length) {
    var list = el("ul", { className: "verdict-list verdict-problems" });
    problems.forEach(function (text) { list.appendChild(el("li", { text: text })); });
    box.appendChild(el("div", { className: "verdict-section" }, el("h3", { text: T.problems }), list));
  }
}

function renderChart(data, payload) {
  var deployments = data.deployments || [];
  var bytes = data.deployment_bytes_per_gpu || deployments.map(function (d) { return d.required_bytes_per_gpu; });
  var capacity = data.capacity_bytes_per_gpu;
  var category = gpuName();
  var traces = deployments.map(function (deployment, index) {
    var name = format(T.deployment_model, { index: index + 1, model: modelOf(payload, index) });
    var memory = deployment.memory_per_gpu || {};
    var lines = componentKeys(memory).map(function (key) {
      return (T[key] || key) + ": " + gib(memory[key]) + " " + T.gib;
    });
    return {
      type: "bar",
      orientation: "h",
      name: name,
      x: [toGiB(bytes[index])],
      y: [category],
      marker: { color: color(index), line: { color: "#fff", width: 1 } },
      text: [(index + 1) + " · " + gib(bytes[index]) + " " + T.gib],
      textposition: "inside",
      insidetextanchor: "middle",
      textfont: { color: "#fff" },
      hovertemplate: name + "<br>" + engineName(deployment.engine) + "<br>" + lines.join("<br>") +
        "<br><b>" + T.required + ": %{x:.2f} " + T.gib + "</b><extra></extra>",
    };
  });
  var total = Math.max(capacity, data.required_bytes_per_gpu);
  var legendRows = Math.ceil(deployments.length / 2);
  var layout = {
    font: { family: FONT, size: 12, color: "#1d2939" },
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
    hoverlabel: { font: { family: FONT } },
    barmode: "stack",
    bargap: 0.35,
    height: 190 + 22 * legendRows,
    margin: { t: 34, r: 24, b: 70 + 22 * legendRows, l: 24 },
    xaxis: { title: { text: T.chart_axis }, range: [0, toGiB(total) * 1.04], gridcolor: "#e4e7ec",
      zeroline: false },
    yaxis: { visible: false },
    showlegend: true,
    legend: { orientation: "h", x: 0, xanchor: "left", y: -0.9, yanchor: "top", traceorder: "normal" },
    shapes: [{ type: "line", xref: "x", x0: toGiB(capacity), x1: toGiB(capacity), yref: "paper", y0: -0.05,
      y1: 1.05, line: { color: CAPACITY_COLOR, width: 2 } }],
    annotations: [{ xref: "x", x: toGiB(capacity), yref: "paper", y: 1.05, yanchor: "bottom", showarrow: false,
      xanchor: "right", text: T.capacity + " " + gib(capacity) + " " + T.gib, font: { color: CAPACITY_COLOR } }],
  };
  Plotly.react("colocated-chart", traces, layout, {
    responsive: true, displaylogo: false, modeBarButtons: [["toImage"]],
    toImageButtonOptions: { filename: "shared-gpu", scale: 2 }, locale: LANG,
  });
}

function renderTable(data, payload) {
  var table = document.getElementById("colocated-table");
  var head = table.querySelector("thead");
  var body = table.querySelector("tbody");
  head.textContent = "";
  body.textContent = "";
  var deployments = data.deployments || [];
  var keys = componentKeys(data.memory_per_gpu || (deployments[0] && deployments[0].memory_per_gpu));
  var headRow = el("tr", {},
    el("th", { scope: "col", text: T.model }),
    el("th", { scope: "col", text: T.engine }));
  keys.forEach(function (key) { headRow.appendChild(el("th", { scope: "col", className: "num", text: T[key] || key })); });
  headRow.appendChild(el("th", { scope: "col", className: "num", text: T.required }));
  headRow.appendChild(el("th", { scope: "col", text: T.own_verdict }));
  head.appendChild(headRow);

  function cells(row, memory, required) {
    keys.forEach(function (key) { row.appendChild(el("td", { className: "num", text: gib(memory[key] || 0) })); });
    row.appendChild(el("td", { className: "num", text: gib(required) }));
  }
  deployments.forEach(function (deployment, index) {
    var row = el("tr", { "data-deployment": String(index) },
      el("th", { scope: "row" },
        el("span", { className: "swatch", style: "background:" + color(index), "aria-hidden": "true" }),
        el("span", { className: "row-name", text: format(T.deployment_model,
          { index: index + 1, model: modelOf(payload, index) }) })),
      el("td", { text: engineName(deployment.engine) }));
    cells(row, deployment.memory_per_gpu || {}, deployment.required_bytes_per_gpu);
    row.appendChild(el("td", {}, el("span", { className: "rule-mark " + (deployment.fits ? "is-fit" : "is-not-fit"),
      text: (deployment.fits ? "✓ " : "✕ ") + (deployment.fits ? T.fits : T.does_not_fit) })));
    body.appendChild(row);
  });
  var total = el("tr", { className: "row-total", "data-deployment": "total" },
    el("th", { scope: "row", text: T.total }), el("td", {}));
  cells(total, data.memory_per_gpu || {}, data.required_bytes_per_gpu);
  total.appendChild(el("td", {}));
  body.appendChild(total);
  var span = keys.length + 2;
  [["capacity", data.capacity_bytes_per_gpu], ["headroom", data.headroom_bytes_per_gpu]].forEach(function (pair) {
    var row = el("tr", { className: "row-sub" + (pair[1] < 0 ? " row-negative" : ""), "data-deployment": pair[0] },
      el("th", { scope: "row", text: T[pair[0]] }));
    row.appendChild(el("td", { colspan: String(span - 1) }));
    row.appendChild(el("td", { className: "num", text: gib(pair[1]) }));
    row.appendChild(el("td", {}));
    body.appendChild(row);
  });
}

function render(data, payload) {
  document.getElementById("colocated-results").hidden = false;  // before plotting: Plotly measures it
  renderVerdict(data);
  renderChart(data, payload);
  renderTable(data, payload);
}

// ---------------------------------------------------------------- estimate

function rememberInUrl(payload) {
  var params = new URLSearchParams();
  params.set("gpu", payload.gpu);
  params.set("deployments", JSON.stringify(payload.deployments));
  rememberUrl(window.location.pathname + "?" + params.toString());
}

async function estimate() {
  clearFormErrors();
  var payload = collectPayload();
  await whileBusy(form, estimateButton, T.estimating, T.estimate, async function () {
    var result = await postJson(form.dataset.estimateUrl, payload, csrfToken);
    if (!result.ok) {
      document.getElementById("colocated-results").hidden = true;  // the answer shown was for other rows
      showFormError(T.estimate_failed, result.body, result.status);
      return;
    }
    rememberInUrl(payload);
    render(result.body, payload);
  }, function () {
    showFormError(T.network_error, null, null);
  });
}

form.addEventListener("submit", function (event) {
  event.preventDefault();
  estimate();
});

// ---------------------------------------------------------------- start

registerPlotlyLocale(T.download_plot);

function restore() {
  var params = new URLSearchParams(window.location.search);
  if (!params.has("deployments")) return false;
  var deployments;
  try {
    deployments = JSON.parse(params.get("deployments"));
  } catch (error) {
    return false;
  }
  if (!Array.isArray(deployments) || !deployments.length) return false;
  setValue(form.elements.gpu, params.get("gpu"));
  deployments.slice(0, MAX_ROWS).forEach(function (values) {
    if (values && typeof values === "object" && !Array.isArray(values)) addRow(values, true);
  });
  while (rows().length < MIN_ROWS) addRow(null);
  return true;
}

if (restore()) {
  estimate();
} else {
  for (var i = 0; i < MIN_ROWS; i++) addRow(null);
}
