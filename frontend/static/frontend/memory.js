/*
 * The GPU memory pages (server-rendered; this script adds what needs the browser):
 * - the list: refuses a monitoring log over the size limit before it is sent;
 * - a log: its memory timeline (one line per GPU, the commitment dashed, each card's total dotted, OOMs and restarts
 *   as markers, the time a sustained climb was proven as a vertical line) and the engines' KV-cache usage; the
 *   delete confirmation.
 */
import {
  bindConfirms,
  format,
  isNumber,
  LANG,
  CAPACITY_COLOR as COMMITMENT_COLOR,
  CHART_FONT,
  GIB,
  registerPlotlyLocale,
} from "./common.js";
import { T } from "./words/memory.js";

var PLOT_CONFIG = { responsive: true, displaylogo: false, modeBarButtons: [["toImage"]], locale: LANG };
var GPU_COLORS = ["#2f5fd0", "#1b9e77", "#e08a1e", "#8e5bd6", "#d0312f", "#0e7490", "#a16207", "#475467"];
var CLIMB_COLOR = "#93370d";
var MARKERS = {
  oom: { symbol: "x", color: "#b42318", size: 12 },
  restart: { symbol: "triangle-down", color: "#e08a1e", size: 11 },
  down: { symbol: "square", color: "#475467", size: 10 },
  xid: { symbol: "diamond", color: "#7a2e0e", size: 10 },
  oom_logged: { symbol: "x-open", color: "#b42318", size: 11 },
  restart_logged: { symbol: "triangle-down-open", color: "#e08a1e", size: 11 },
};
var MIB = Math.pow(2, 20);

var decimal2 = new Intl.NumberFormat(LANG, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
var decimal1 = new Intl.NumberFormat(LANG, { minimumFractionDigits: 1, maximumFractionDigits: 1 });

// ISO 8601 UTC ("2026-12-01T19:26:02.123Z") as Plotly reads a time with no zone: the axis then shows UTC.
function plotTime(iso) {
  return String(iso).replace("T", " ").replace(/Z$/, "");
}

function gibOf(bytes) { return isNumber(bytes) ? bytes / GIB : null; }

function escapeHtml(text) {
  return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function layout(extra) {
  return Object.assign({
    font: { family: CHART_FONT, size: 12, color: "#1d2939" },
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
    hoverlabel: { font: { family: CHART_FONT } },
    height: 420,
    margin: { t: 48, r: 24, b: 96, l: 64 },
    legend: { orientation: "h", x: 0, y: -0.2, yanchor: "top" },
    hovermode: "closest",
  }, extra);
}

function plot(id, traces, plotLayout, filename) {
  window.Plotly.react(id, traces, plotLayout,
    Object.assign({ toImageButtonOptions: { filename: filename, scale: 2 } }, PLOT_CONFIG));
}

function gpuColor(index) { return GPU_COLORS[index % GPU_COLORS.length]; }

// A flat line from the first to the last time (a trace, so the legend names it).
function levelLine(name, start, end, value, color, dash) {
  return {
    type: "scatter", mode: "lines", name: name, x: [plotTime(start), plotTime(end)], y: [value, value],
    line: { color: color, width: 1.5, dash: dash }, hoverinfo: "name",
  };
}

// ---------------------------------------------------------------- the memory timeline

function memoryChart(data) {
  if (!document.getElementById("memory-chart")) return;
  var gpus = data.gpus || [];
  var start = data.start || (gpus[0] && gpus[0].t[0]);
  var end = data.end || (gpus[0] && gpus[0].t[gpus[0].t.length - 1]);
  var traces = [];
  var top = 0;
  var levelByGpu = {};
  gpus.forEach(function (gpu, index) {
    var ys = gpu.used_bytes.map(gibOf);
    levelByGpu[gpu.gpu] = { t: gpu.t, y: ys };
    ys.forEach(function (y) { if (isNumber(y) && y > top) top = y; });
    var name = format(T.gpu_line, { gpu: gpu.gpu });
    traces.push({
      type: "scatter", mode: "lines", name: name, x: gpu.t.map(plotTime), y: ys,
      line: { color: gpuColor(index), width: 1.5 },
      hovertemplate: "%{x}<br>%{y:.2f} GiB<extra>" + escapeHtml(name) + "</extra>",
    });
  });
  var totals = {};
  gpus.forEach(function (gpu, index) {
    if (!isNumber(gpu.total_bytes)) return;
    var total = gibOf(gpu.total_bytes);
    if (total > top) top = total;
    totals[gpu.gpu] = total;
    traces.push(levelLine(format(T.gpu_total, { gpu: gpu.gpu, value: decimal2.format(total) }), start, end, total,
      gpuColor(index), "dot"));
  });
  if (isNumber(data.committed_bytes)) {
    var committed = gibOf(data.committed_bytes);
    if (committed > top) top = committed;
    traces.push(levelLine(format(T.commitment, { value: decimal2.format(committed) }), start, end, committed,
      COMMITMENT_COLOR, "dash"));
  }
  var byKind = {};
  (data.markers || []).forEach(function (marker) {
    (byKind[marker.kind] = byKind[marker.kind] || []).push(marker);
  });
  Object.keys(byKind).forEach(function (kind) {
    var style = MARKERS[kind] || MARKERS.oom;
    var markers = byKind[kind];
    traces.push({
      type: "scatter", mode: "markers", name: T["marker_" + kind] || kind,
      x: markers.map(function (m) { return plotTime(m.time); }),
      // what the log reports has no level: drawn at the top of the chart
      y: markers.map(function (m) { return isNumber(m.bytes) ? gibOf(m.bytes) : top * 1.02; }),
      text: markers.map(function (m) { return m.text; }),
      hovertemplate: "%{x}<br>%{text}<extra>" + escapeHtml(T["marker_" + kind] || kind) + "</extra>",
      marker: { symbol: style.symbol, color: style.color, size: style.size, line: { width: 2, color: style.color } },
      cliponaxis: false,
    });
  });
  var shapes = [];
  var annotations = [];
  (data.climbs || []).forEach(function (climb) {
    var x = plotTime(climb.detected_at);
    shapes.push({ type: "line", xref: "x", yref: "paper", x0: x, x1: x, y0: 0, y1: 1,
      line: { color: CLIMB_COLOR, width: 1.5, dash: "dashdot" } });
    annotations.push({ xref: "x", yref: "paper", x: x, y: 1.02, yanchor: "bottom", xanchor: "left", showarrow: false,
      text: escapeHtml(format(T.climb_detected, { gpu: climb.gpu })), font: { color: CLIMB_COLOR, size: 11 } });
  });
  plot("memory-chart", traces, layout({
    title: { text: T.memory_title, font: { size: 13 }, x: 0, xanchor: "left" },
    xaxis: { title: { text: T.axis_time }, type: "date", gridcolor: "#e4e7ec", zeroline: false },
    yaxis: { title: { text: T.axis_memory, standoff: 10 }, rangemode: "tozero", range: [0, top * 1.06 || 1],
      gridcolor: "#e4e7ec", automargin: true },
    shapes: shapes,
    annotations: annotations,
  }), "gpu-memory");
}

// ---------------------------------------------------------------- KV-cache usage

function kvChart(data) {
  if (!document.getElementById("kv-chart")) return;
  var servers = data.servers || [];
  var traces = servers.map(function (server, index) {
    var name = (server.engine || "") + " " + (server.instance || "");
    return {
      type: "scatter", mode: "lines", name: name.trim(), x: server.t.map(plotTime), y: server.kv_cache_usage,
      line: { color: gpuColor(index), width: 1.5 },
      hovertemplate: "%{x}<br>%{y:.1%}<extra></extra>",
    };
  });
  var first = servers[0] && servers[0].t[0];
  var last = servers[0] && servers[0].t[servers[0].t.length - 1];
  servers.forEach(function (server) {
    if (!server.t.length) return;
    if (server.t[0] < first) first = server.t[0];
    if (server.t[server.t.length - 1] > last) last = server.t[server.t.length - 1];
  });
  if (first && last) traces.push(levelLine(T.kv_full, first, last, 1, COMMITMENT_COLOR, "dot"));
  plot("kv-chart", traces, layout({
    height: 320,
    title: { text: T.kv_title, font: { size: 13 }, x: 0, xanchor: "left" },
    xaxis: { title: { text: T.axis_time }, type: "date", gridcolor: "#e4e7ec", zeroline: false },
    yaxis: { title: { text: T.axis_kv, standoff: 10 }, tickformat: ".0%", range: [0, 1.05], gridcolor: "#e4e7ec",
      automargin: true },
  }), "kv-cache");
}

// ---------------------------------------------------------------- pages

function listPage() {
  var form = document.getElementById("upload-form");
  if (!form) return;
  var limit = Number(form.getAttribute("data-max-bytes"));
  var input = document.getElementById("upload-file");
  var error = document.getElementById("file-error");
  var tooLarge = function () {
    var file = input.files && input.files[0];
    if (!file || !isNumber(limit) || file.size <= limit) return null;
    return format(T.too_large, { name: file.name, size: decimal1.format(file.size / MIB),
      limit: decimal1.format(limit / MIB) });
  };
  input.addEventListener("change", function () {
    var message = tooLarge();
    error.textContent = message || "";
    if (message) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  });
  form.addEventListener("submit", function (event) {
    var message = tooLarge();
    if (message) {
      event.preventDefault();
      error.textContent = message;
    }
  });
}

function detailPage() {
  var node = document.getElementById("memory-data");
  if (!node) return;
  var data = JSON.parse(node.textContent);
  registerPlotlyLocale(T.download_plot);
  memoryChart(data);
  kvChart(data);
}

bindConfirms(document);

var pages = { "memory-logs-page": listPage, "memory-log-page": detailPage };
Object.keys(pages).forEach(function (id) {
  if (document.getElementById(id)) pages[id]();
});
