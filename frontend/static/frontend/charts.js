/*
 * The charts the benchmark and load-test pages share (Plotly, loaded by the page before its modules): the layout,
 * the download button, markers, the empty-chart note, and the servers' KV-cache usage and requests over time.
 */
import { el, format, isNumber, LANG, CHART_FONT } from "./common.js";
import { SERVER_CHART as T } from "./words/server_chart.js";

var PLOT_CONFIG = { responsive: true, displaylogo: false, modeBarButtons: [["toImage"]], locale: LANG };
var KV_COLOR = "#1b9e77";
var RUNNING_COLOR = "#2f5fd0";
var WAITING_COLOR = "#e08a1e";

export function layout(extra) {
  return Object.assign({
    font: { family: CHART_FONT, size: 12, color: "#1d2939" },
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
    hoverlabel: { font: { family: CHART_FONT } },
    height: 320,
    margin: { t: 48, r: 24, b: 84, l: 64 },
    legend: { orientation: "h", x: 0, y: -0.28, yanchor: "top" },
  }, extra);
}

export function plot(id, traces, plotLayout, filename) {
  window.Plotly.react(id, traces, plotLayout,
    Object.assign({ toImageButtonOptions: { filename: filename, scale: 2 } }, PLOT_CONFIG));
}

// A vertical line at x over the whole plot, labelled at its top.
export function verticalMarker(x, label, color, dash) {
  return {
    shape: { type: "line", xref: "x", yref: "paper", x0: x, x1: x, y0: 0, y1: 1,
      line: { color: color, width: 1.5, dash: dash } },
    annotation: { xref: "x", yref: "paper", x: x, y: 1.02, yanchor: "bottom", xanchor: "left", showarrow: false,
      text: label, font: { color: color, size: 11 } },
  };
}

export function withMarkers(plotLayout, markers) {
  plotLayout.shapes = markers.map(function (m) { return m.shape; });
  plotLayout.annotations = markers.map(function (m) { return m.annotation; });
  return plotLayout;
}

export function noData(id, text) {
  var box = document.getElementById(id);
  if (!box) return;
  box.textContent = "";
  box.classList.add("chart-empty");
  box.appendChild(el("p", { className: "muted", text: text }));
}

// ISO 8601 UTC ("2026-12-01T19:26:02.123Z") as Plotly reads a time with no zone: the axis then shows UTC.
function plotTime(iso) {
  return String(iso).replace("T", " ").replace(/(Z|\+00:00)$/, "");
}

function escapeHtml(text) {
  return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

// The scraped samples of each server (BenchmarkRun.server_series): KV-cache usage in percent on the left axis,
// the requests running and waiting in the engine on the right one.
export function serverSeriesChart(id, series) {
  if (!document.getElementById(id)) return;
  var servers = ((series || {}).servers || []).filter(function (server) {
    return server && server.samples && server.samples.length;
  });
  if (!servers.length) {
    noData(id, T.no_server_samples);
    return;
  }
  var traces = [];
  servers.forEach(function (server, index) {
    var suffix = servers.length > 1
      ? " · " + format(T.server_name, { name: server.instance || server.engine || String(index + 1) }) : "";
    var samples = server.samples.filter(function (sample) { return sample.time; });
    var xs = samples.map(function (sample) { return plotTime(sample.time); });
    var values = function (key, scale) {
      return samples.map(function (sample) { return isNumber(sample[key]) ? sample[key] * scale : null; });
    };
    var dash = ["solid", "dash", "dot", "dashdot"][index % 4];
    traces.push({
      type: "scatter", mode: "lines", name: T.kv_usage + suffix, x: xs, y: values("kv_cache_usage", 100),
      line: { color: KV_COLOR, width: 2, dash: dash }, connectgaps: false,
      hovertemplate: "%{x}<br>%{y:.1f} %<extra>" + escapeHtml(T.kv_usage + suffix) + "</extra>",
    });
    traces.push({
      type: "scatter", mode: "lines", name: T.requests_running + suffix, x: xs, y: values("requests_running", 1),
      yaxis: "y2", line: { color: RUNNING_COLOR, width: 1.5, shape: "hv", dash: dash },
      hovertemplate: "%{x}<br>%{y}<extra>" + escapeHtml(T.requests_running + suffix) + "</extra>",
    });
    traces.push({
      type: "scatter", mode: "lines", name: T.requests_waiting + suffix, x: xs, y: values("requests_waiting", 1),
      yaxis: "y2", line: { color: WAITING_COLOR, width: 1.5, shape: "hv", dash: dash },
      hovertemplate: "%{x}<br>%{y}<extra>" + escapeHtml(T.requests_waiting + suffix) + "</extra>",
    });
  });
  plot(id, traces, layout({
    height: 380,
    margin: { t: 48, r: 64, b: 96, l: 64 },
    title: { text: T.server_title, font: { size: 13 }, x: 0, xanchor: "left" },
    xaxis: { title: { text: T.axis_time }, type: "date", gridcolor: "#e4e7ec", zeroline: false },
    yaxis: { title: { text: T.axis_kv_percent, standoff: 10 }, range: [0, 105], ticksuffix: " %",
      gridcolor: "#e4e7ec", automargin: true },
    yaxis2: { title: { text: T.axis_requests, standoff: 10 }, overlaying: "y", side: "right", rangemode: "tozero",
      showgrid: false, automargin: true },
  }), "server-series");
}
