/*
 * The benchmark pages (server-rendered; this script adds what needs the API or a chart):
 * - the list: picks two runs to compare or several to calibrate (POST /api/v1/benchmark-runs/calibrate, then the job
 *   polled at /api/v1/simulations/ID/), and follows runs still importing;
 * - a run: the CDFs of TTFT, TPOT, ITL and E2E, a banner polling the import, goodput under other SLOs and measured
 *   versus estimated (GET …/analysis), and what the run ran on (PATCH …/links);
 * - a series: throughput and latency against the load with the knee marked;
 * - two runs compared: their CDFs overlaid;
 * - a run a load test measured: the servers' KV-cache usage and running/waiting requests over time (also drawn on
 *   the load test's page, through charts.js's serverSeriesChart).
 */
import {
  bindConfirms,
  el,
  format,
  isNumber,
  LANG,
  CAPACITY_COLOR as SLO_COLOR,
  CHART_FONT,
  clearErrors,
  engineName,
  fillAlert,
  messagesOf,
  postJson,
  registerPlotlyLocale,
  request,
  showFormFieldErrors,
  statusMessage,
  whileBusy,
} from "./common.js";
import { T } from "./words/benchmarks.js";
import { layout, noData, plot, serverSeriesChart, verticalMarker, withMarkers } from "./charts.js";

var CDF_KEYS = ["ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"];
var COLOR_A = "#2f5fd0";
var COLOR_B = "#e08a1e";
var P50_COLOR = "#2f5fd0";
var P99_COLOR = "#b42318";
var KNEE_COLOR = "#475467";
var IMPORT_POLL_MS = 1500;
var JOB_POLL_MS = 1000;
var LARGE_ERROR = 0.25;  // a prediction off by more than this share is marked

var decimal0 = new Intl.NumberFormat(LANG, { maximumFractionDigits: 0 });
var decimal1 = new Intl.NumberFormat(LANG, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
var decimal2 = new Intl.NumberFormat(LANG, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
var decimal3 = new Intl.NumberFormat(LANG, { minimumFractionDigits: 3, maximumFractionDigits: 3 });
var share = new Intl.NumberFormat(LANG, { style: "percent", minimumFractionDigits: 1, maximumFractionDigits: 1 });
var signedShare = new Intl.NumberFormat(LANG, {
  style: "percent", minimumFractionDigits: 1, maximumFractionDigits: 1, signDisplay: "exceptZero",
});

var csrfInput = document.querySelector("input[name=csrfmiddlewaretoken]");
var csrfToken = csrfInput ? csrfInput.value : "";

function sleep(ms) { return new Promise(function (resolve) { window.setTimeout(resolve, ms); }); }

// Milliseconds: two decimals below 10, one below 1,000, none above.
function msNumber(value) {
  if (!isNumber(value)) return "—";
  var magnitude = Math.abs(value);
  return (magnitude < 10 ? decimal2 : magnitude < 1000 ? decimal1 : decimal0).format(value);
}

function plainNumber(value) {
  if (!isNumber(value)) return "—";
  if (Number.isInteger(value)) return decimal0.format(value);
  return (Math.abs(value) < 10 ? decimal2 : Math.abs(value) < 1000 ? decimal1 : decimal0).format(value);
}

function metricName(key) { return T["metric_" + key] || key; }

// ---------------------------------------------------------------- charts

// One latency's CDF: a step line per run ({name, cdf, color}); the SLO as a dashed line when set.
function cdfChart(key, series, sloValue, title, legend) {
  var id = "cdf-" + key;
  if (!document.getElementById(id)) return;
  var drawn = series.filter(function (s) { return s.cdf && s.cdf.x && s.cdf.x.length; });
  if (!drawn.length) {
    noData(id, metricName(key) + ": " + T.no_data);
    return;
  }
  var traces = drawn.map(function (s) {
    return {
      type: "scatter", mode: "lines", name: s.name, x: s.cdf.x, y: s.cdf.y,
      line: { shape: "hv", color: s.color, width: 2 },
      hovertemplate: "%{x:.2f} ms → %{y:.1%}<extra>" + s.name.replace(/</g, "&lt;") + "</extra>",
    };
  });
  var markers = isNumber(sloValue) ? [verticalMarker(sloValue, format(T.slo_line, { value: msNumber(sloValue) }),
    SLO_COLOR, "dash")] : [];
  plot(id, traces, withMarkers(layout({
    title: { text: title, font: { size: 13 }, x: 0, xanchor: "left" },
    showlegend: Boolean(legend) || drawn.length > 1,
    xaxis: { title: { text: T.axis_ms }, rangemode: "tozero", gridcolor: "#e4e7ec", zeroline: false },
    yaxis: { title: { text: T.axis_share, standoff: 10 }, tickformat: ".0%", range: [0, 1.02],
      gridcolor: "#e4e7ec", automargin: true },
  }), markers), "cdf-" + key);
}

function cdfTitle(key, cdf) {
  var n = cdf && isNumber(cdf.n) ? decimal0.format(cdf.n) : "0";
  return format(key === "itl_ms" ? T.cdf_title_itl : T.cdf_title, { metric: T["metric_title_" + key] || key, n: n });
}

// ---------------------------------------------------------------- delete confirmation

bindConfirms(document);

// ---------------------------------------------------------------- the list

function listPage(root) {
  var runsForm = document.getElementById("runs-form");
  if (runsForm) {
    var boxes = Array.prototype.slice.call(runsForm.querySelectorAll("input.run-pick"));
    var countBox = document.getElementById("selection-count");
    var runsError = document.getElementById("runs-error");
    var calibrateButton = document.getElementById("calibrate-button");
    var picked = function () {
      return boxes.filter(function (box) { return box.checked; }).map(function (box) { return Number(box.value); });
    };
    var update = function () {
      var count = picked().length;
      countBox.textContent = count ? format(T.selected, { count: count }) : "";
      runsError.textContent = "";
    };
    boxes.forEach(function (box) { box.addEventListener("change", update); });
    runsForm.addEventListener("submit", function (event) {
      if (picked().length !== 2) {
        event.preventDefault();
        runsError.textContent = T.choose_two;
      }
    });
    calibrateButton.addEventListener("click", function () { calibrate(root, picked(), calibrateButton); });
    update();
  }
  if (root.hasAttribute("data-importing")) followImports();
}

// Runs still importing: their progress bars follow the API; the page reloads once every one is done.
async function followImports() {
  while (true) {
    await sleep(IMPORT_POLL_MS * 2);
    var rows = Array.prototype.slice.call(document.querySelectorAll('#runs-table tr[data-status="importing"]'));
    if (!rows.length) return;
    var finished = 0;
    for (var i = 0; i < rows.length; i++) {
      var result = await request("/api/v1/benchmark-runs/" + rows[i].dataset.run + "/",
        { headers: { Accept: "application/json" } });
      if (!result.ok || !result.body) return;
      var bar = rows[i].querySelector(".progress-bar");
      if (bar && isNumber(result.body.progress)) bar.style.width = Math.round(result.body.progress * 100) + "%";
      if (result.body.status !== "importing") finished += 1;
    }
    if (finished === rows.length) {
      window.location.reload();
      return;
    }
  }
}

function showCalibrationStatus(job) {
  var box = document.getElementById("calibration-status");
  box.hidden = false;
  box.dataset.status = job.status;
  document.getElementById("calibration-title").textContent = format(T.job_number, { id: job.id });
  document.getElementById("calibration-state").textContent = {
    queued: T.calibration_queued, running: T.calibration_running, done: T.calibration_done,
    failed: T.calibration_job_failed,
  }[job.status] || job.status;
  var progress = job.status === "done" ? 1 : (isNumber(job.progress) ? job.progress : 0);
  document.getElementById("calibration-bar").style.width = Math.round(progress * 100) + "%";
  var message = document.getElementById("calibration-message");
  message.textContent = job.progress_message || "";
  message.setAttribute("lang", "en");
}

function renderCalibration(job) {
  var result = job.result || {};
  var tbody = document.querySelector("#calibration-table tbody");
  tbody.textContent = "";
  var percentOf = function (value) { return isNumber(value) ? share.format(value) : "—"; };
  var rows = [
    ["mfu", T.eff_mfu, function (e) { return percentOf(e.mfu); }],
    ["bandwidth", T.eff_bandwidth, function (e) { return percentOf(e.bandwidth); }],
    ["link", T.eff_link, function (e) { return percentOf(e.link); }],
    ["step_overhead", T.eff_step_overhead, function (e) {
      return isNumber(e.step_overhead_s) ? format(T.ms_value, { value: decimal2.format(e.step_overhead_s * 1000) })
        : "—";
    }],
    ["sequence_overhead", T.eff_sequence_overhead, function (e) {
      return isNumber(e.sequence_overhead_s)
        ? format(T.us_value, { value: decimal2.format(e.sequence_overhead_s * 1e6) }) : "—";
    }],
  ];
  rows.forEach(function (row) {
    var before = row[2](result.default || {});
    var after = row[2](result.calibrated || {});
    tbody.appendChild(el("tr", { "data-efficiency": row[0], className: before !== after ? "row-changed" : null },
      el("th", { scope: "row", text: row[1] }),
      el("td", { className: "num", text: before }),
      el("td", { className: "num", text: after })));
  });
  tbody.appendChild(el("tr", { className: "row-total", "data-efficiency": "rms" },
    el("th", { scope: "row", text: T.rms_error }),
    el("td", { className: "num", text: isNumber(result.default_rms_log_error)
      ? decimal3.format(result.default_rms_log_error) : "—" }),
    el("td", { className: "num", text: isNumber(result.calibrated_rms_log_error)
      ? decimal3.format(result.calibrated_rms_log_error) : "—" })));
  document.getElementById("calibration-saved").textContent =
    (job.inputs || {}).save ? T.calibration_saved : T.calibration_not_saved;
  document.getElementById("calibration-result").hidden = false;
}

async function calibrate(root, ids, button) {
  var runsError = document.getElementById("runs-error");
  var errorBox = document.getElementById("calibration-error");
  runsError.textContent = "";
  errorBox.hidden = true;
  document.getElementById("calibration-result").hidden = true;
  if (!ids.length) {
    runsError.textContent = T.choose_some;
    return;
  }
  button.disabled = true;
  try {
    var save = document.getElementById("calibrate-save").checked;
    var started = await postJson(root.dataset.calibrateUrl, { runs: ids, save: save }, csrfToken);
    if (!started.ok) {
      var fields = (started.body && started.body.extra && started.body.extra.fields) || {};
      if (fields.runs) {
        runsError.textContent = messagesOf(fields.runs);
        var rest = Object.assign({}, fields);
        delete rest.runs;
        if (Object.keys(rest).length) fillAlert(errorBox, T.calibrate_failed, null, null, rest);
      } else {
        fillAlert(errorBox, T.calibrate_failed, started.body, started.status, fields);
      }
      return;
    }
    var job = Object.assign({ progress: 0 }, started.body);
    while (job.status !== "done" && job.status !== "failed") {
      showCalibrationStatus(job);
      await sleep(JOB_POLL_MS);
      var polled = await request(job.url || started.body.url, { headers: { Accept: "application/json" } });
      if (!polled.ok) {
        fillAlert(errorBox, T.calibration_job_failed, polled.body, polled.status, null);
        return;
      }
      job = polled.body;
    }
    showCalibrationStatus(job);
    if (job.status === "failed") {
      fillAlert(errorBox, T.calibration_job_failed, job.error || null, null, null);
      return;
    }
    renderCalibration(job);
  } catch (error) {
    fillAlert(errorBox, T.network_error, null, null, null);
  } finally {
    button.disabled = false;
  }
}

// ---------------------------------------------------------------- a run

function loadText(traffic) {
  if (traffic.load === "concurrency") return format(T.clients_value, { value: decimal0.format(traffic.concurrency) });
  if (traffic.load === "rate") return format(T.rate_value, { value: plainNumber(traffic.rate) });
  return T.offline_load;
}

function renderGoodput(box, slo, goodput) {
  box.textContent = "";
  if (!goodput) {
    box.appendChild(el("p", { className: "muted", id: "goodput-none", text: T.goodput_none }));
    return;
  }
  // the share in bold, where the sentence puts it
  var parts = format(T.goodput_attainment, { good: decimal0.format(goodput.good),
    requests: decimal0.format(goodput.requests) }).split("{share}");
  var attainment = el("p", { className: "bench-goodput", id: "goodput-attainment" }, parts[0],
    el("strong", { text: isNumber(goodput.attainment) ? share.format(goodput.attainment) : "—" }),
    parts.slice(1).join(""));
  box.appendChild(attainment);
  var rate = format(T.goodput_rate, { value: plainNumber(goodput.goodput_requests_per_s) });
  if (goodput.errors) rate += " · " + format(T.goodput_errors, { count: decimal0.format(goodput.errors) });
  box.appendChild(el("p", { id: "goodput-rate", text: rate }));
  var limits = Object.keys(slo || {}).map(function (key) {
    return metricName(key) + " ≤ " + format(T.ms_value, { value: msNumber(slo[key]) });
  });
  if (limits.length) {
    box.appendChild(el("p", { className: "hint", text: format(T.slo_summary, { limits: limits.join(", ") }) }));
  }
}

function estimateLabel(key) {
  var parts = key.split(".");
  return parts.length > 1 ? metricName(parts[0]) + " " + (T["field_" + parts[1]] || parts[1]) : metricName(key);
}

function estimateValue(key, value) {
  if (!isNumber(value)) return "—";
  return key.indexOf("_ms.") >= 0 ? msNumber(value) : plainNumber(value);
}

function renderCompare(box, compare) {
  box.textContent = "";
  if (!compare) return;
  if (compare.missing) {
    var alert = el("div", { className: "alert alert-error", id: "estimate-missing" });
    var words = compare.missing.map(function (key) { return T["missing_" + key] || key; });
    alert.appendChild(el("p", { text: format(T.compare_missing, { missing: words.join("; ") }) }));
    box.appendChild(alert);
    return;
  }
  if (compare.error) {
    box.appendChild(el("div", { className: "alert alert-error", id: "estimate-error" },
      el("p", { text: format(T.compare_error, { message: compare.error }) })));
    return;
  }
  var tbody = el("tbody");
  (compare.rows || []).forEach(function (row) {
    var large = isNumber(row.error) && Math.abs(row.error) > LARGE_ERROR;
    tbody.appendChild(el("tr", { "data-row": row.key },
      el("th", { scope: "row", text: estimateLabel(row.key) }),
      el("td", { className: "num measured", text: estimateValue(row.key, row.measured) }),
      el("td", { className: "num predicted", text: estimateValue(row.key, row.predicted) }),
      el("td", { className: "num error" + (large ? " is-over" : ""),
        text: isNumber(row.error) ? signedShare.format(row.error) : "—" })));
  });
  var head = el("thead", {}, el("tr", {},
    el("th", { scope: "col" }),
    el("th", { scope: "col", className: "num", text: box.dataset.measured }),
    el("th", { scope: "col", className: "num", text: box.dataset.estimated }),
    el("th", { scope: "col", className: "num", text: box.dataset.error })));
  box.appendChild(el("div", { className: "table-scroll" }, el("table", { className: "table", id: "estimate-table" },
    head, tbody)));
  if (isNumber(compare.median_abs_error)) {
    box.appendChild(el("p", { id: "estimate-median", text: format(T.compare_median, {
      value: share.format(compare.median_abs_error) }) }));
  }
  var traffic = compare.traffic || {};
  box.appendChild(el("p", { className: "hint", text: format(T.compare_traffic, {
    input: decimal0.format(traffic.input_tokens || 0), output: decimal0.format(traffic.output_tokens || 0),
    load: loadText(traffic), requests: decimal0.format(traffic.requests || 0) }) }));
  var plan = compare.plan || {};
  if (plan.engine) {
    var source = String(plan.efficiencies_source || "");
    box.appendChild(el("p", { className: "hint", title: source, text: format(T.compare_plan, {
      gpus: plan.gpus, tp: plan.tp, replicas: plan.replicas, engine: engineName(plan.engine),
      weights: plan.weights, source: source.indexOf("calibrated") === 0 ? T.efficiencies_calibrated
        : T.efficiencies_default }) }));
  }
}

function sameSlo(params, slo) {
  var keys = ["ttft_ms", "tpot_ms", "e2e_ms"];
  return keys.every(function (key) {
    var given = params["slo_" + key];
    var own = (slo || {})[key];
    return given === undefined ? !isNumber(own) : isNumber(own) && Number(given) === own;
  });
}

async function loadAnalysis(data, params, goodputBox, compareBox, errorBox) {
  var query = new URLSearchParams(params || {}).toString();
  var result = await request(data.analysis_url + (query ? "?" + query : ""),
    { headers: { Accept: "application/json" } });
  if (!result.ok) return result;
  if (goodputBox) renderGoodput(goodputBox, result.body.slo, result.body.goodput);
  if (compareBox) renderCompare(compareBox, result.body.compare);
  if (errorBox) errorBox.hidden = true;
  return result;
}

async function followImport(data) {
  var bar = document.getElementById("import-bar");
  var message = document.getElementById("import-message");
  while (true) {
    await sleep(IMPORT_POLL_MS);
    var result = await request(data.run_url, { headers: { Accept: "application/json" } });
    if (!result.ok || !result.body) {
      message.textContent = T.poll_failed;
      message.removeAttribute("lang");
      return;
    }
    var run = result.body;
    if (isNumber(run.progress)) bar.style.width = Math.round(run.progress * 100) + "%";
    if (run.progress_message) message.textContent = run.progress_message;
    if (run.status !== "importing") {
      message.textContent = run.status === "done" ? T.import_done : T.import_failed;
      message.removeAttribute("lang");
      window.location.reload();
      return;
    }
  }
}

function detailPage(root) {
  var data = JSON.parse(document.getElementById("benchmark-data").textContent);
  var distributions = data.distributions || {};
  CDF_KEYS.forEach(function (key) {
    cdfChart(key, [{ name: metricName(key), cdf: distributions[key], color: COLOR_A }], (data.slo || {})[key],
      cdfTitle(key, distributions[key]));
  });
  if (data.status === "importing") followImport(data);
  if (data.server_series) serverSeriesChart("server-chart", data.server_series);

  var goodputBox = document.getElementById("goodput-result");
  var compareBox = document.getElementById("estimate-result");
  compareBox.dataset.measured = T.measured_column;
  compareBox.dataset.estimated = T.estimated_column;
  compareBox.dataset.error = T.error_column;
  if (data.compare_pending) {
    loadAnalysis(data, null, null, compareBox, null).then(function (result) {
      if (!result.ok) {
        fillAlert(compareBox, T.compare_failed, result.body, result.status, null);
        compareBox.classList.add("alert", "alert-error");
      }
    }).catch(function () {
      compareBox.textContent = T.network_error;
    });
  }

  var sloForm = document.getElementById("slo-form");
  if (sloForm) {
    var sloError = document.getElementById("slo-error");
    sloForm.addEventListener("submit", async function (event) {
      event.preventDefault();
      clearErrors(sloForm, "data-error-for");
      sloError.hidden = true;
      var params = {};
      ["ttft_ms", "tpot_ms", "e2e_ms"].forEach(function (key) {
        var value = sloForm.elements["slo_" + key].value.trim();
        if (value) params["slo_" + key] = value;
      });
      var button = document.getElementById("slo-button");
      var source = document.getElementById("slo-source");
      await whileBusy(sloForm, button, button.textContent, button.textContent, async function () {
        var result = await loadAnalysis(data, params, goodputBox, null, sloError);
        if (!result.ok) {
          showFormFieldErrors(sloForm, sloError, T.slo_failed, result.body, result.status);
          return;
        }
        // the deployment's SLOs are no longer those counted unless the form still holds them
        if (source) source.hidden = Object.keys(params).length > 0 && !sameSlo(params, data.slo);
      }, function () { fillAlert(sloError, T.network_error, null, null, null); });
    });
  }

  var linksForm = document.getElementById("links-form");
  if (linksForm) {
    var linksError = document.getElementById("links-error");
    linksForm.addEventListener("submit", async function (event) {
      event.preventDefault();
      clearErrors(linksForm, "data-error-for");
      linksError.hidden = true;
      var value = function (name) { return linksForm.elements[name].value.trim(); };
      var whole = function (name) { return value(name) ? Number(value(name)) : null; };
      var payload = {
        model: value("model") || null, gpu: value("gpu") || null, gpu_count: whole("gpu_count"), tp: whole("tp"),
        engine: value("engine"), deployment: whole("deployment"),
      };
      var button = document.getElementById("links-button");
      await whileBusy(linksForm, button, button.textContent, button.textContent, async function () {
        var result = await request(data.links_url, {
          method: "PATCH", body: JSON.stringify(payload),
          headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken },
        });
        if (!result.ok) {
          showFormFieldErrors(linksForm, linksError, T.links_failed, result.body, result.status);
          return;
        }
        linksError.hidden = true;
        statusMessage(linksError, "ok", T.links_saved, null);
        window.location.reload();
      }, function () { fillAlert(linksError, T.network_error, null, null, null); });
    });
  }
}

// ---------------------------------------------------------------- a series

function seriesPage() {
  var report = JSON.parse(document.getElementById("series-data").textContent);
  var points = report.points || [];
  var xs = points.map(function (p) { return p.x; });
  var axisTitle = T["axis_" + report.axis] || report.axis;
  var markers = isNumber(report.knee) ? [verticalMarker(report.knee, T.knee + " " + plainNumber(report.knee),
    KNEE_COLOR, "dot")] : [];
  var axisLayout = function (title, yTitle) {
    return withMarkers(layout({
      title: { text: title, font: { size: 13 }, x: 0, xanchor: "left" },
      xaxis: { title: { text: axisTitle }, gridcolor: "#e4e7ec", zeroline: false,
        type: report.axis === "index" ? "category" : "linear" },
      yaxis: { title: { text: yTitle, standoff: 10 }, rangemode: "tozero", gridcolor: "#e4e7ec", automargin: true },
    }), markers.slice());
  };
  var line = function (name, key, color, dash) {
    return { type: "scatter", mode: "lines+markers", name: name, x: xs,
      y: points.map(function (p) { return isNumber(p[key]) ? p[key] : null; }),
      line: { color: color, width: 2, dash: dash || "solid" }, marker: { size: 7 } };
  };
  var throughput = [line(T.output_throughput, "output_tokens_per_s", COLOR_A)];
  var failed = points.filter(function (p) { return p.failed; });
  if (failed.length) {
    throughput.push({ type: "scatter", mode: "markers", name: T.failed_points,
      x: failed.map(function (p) { return p.x; }), y: failed.map(function (p) { return p.output_tokens_per_s; }),
      text: failed.map(function (p) { return String(p.failed); }),
      hovertemplate: "%{x}: %{text}<extra></extra>",
      marker: { symbol: "x", size: 12, color: P99_COLOR } });
  }
  plot("series-throughput", throughput, axisLayout(T.output_throughput, T.axis_output_tokens_per_s),
    "series-throughput");
  [["series-ttft", "ttft_ms", "ttft_p50_ms", "ttft_p99_ms"], ["series-tpot", "tpot_ms", "tpot_p50_ms", "tpot_p99_ms"],
    ["series-e2e", "e2e_ms", "e2e_p50_ms", null]].forEach(function (chart) {
    var traces = [line(format(T.p50, { metric: metricName(chart[1]) }), chart[2], P50_COLOR)];
    if (chart[3]) traces.push(line(format(T.p99, { metric: metricName(chart[1]) }), chart[3], P99_COLOR, "dash"));
    var hasData = traces.some(function (t) { return t.y.some(isNumber); });
    if (!hasData) {
      noData(chart[0], metricName(chart[1]) + ": " + T.no_data);
      return;
    }
    plot(chart[0], traces, axisLayout(T["metric_title_" + chart[1]], T.axis_ms), chart[0]);
  });
}

// ---------------------------------------------------------------- two runs

function comparePage() {
  var node = document.getElementById("compare-data");
  if (!node) return;
  var data = JSON.parse(node.textContent);
  CDF_KEYS.forEach(function (key) {
    cdfChart(key, [
      { name: format(T.run_a, { name: data.a.name }), cdf: (data.a.distributions || {})[key], color: COLOR_A },
      { name: format(T.run_b, { name: data.b.name }), cdf: (data.b.distributions || {})[key], color: COLOR_B },
    ], null, T["metric_title_" + key] || key, true);
  });
}

// ---------------------------------------------------------------- start

registerPlotlyLocale(T.download_plot);
var pages = {
  "benchmarks-page": listPage,
  "benchmark-page": detailPage,
  "series-page": seriesPage,
  "benchmark-compare-page": comparePage,
};
Object.keys(pages).forEach(function (id) {
  var root = document.getElementById(id);
  if (root) pages[id](root);
});
