/*
 * The load-test pages (server-rendered; this script adds what needs the API):
 * - the list: the custom-load fields shown for the custom scenario only; a deployment chosen fills its SLOs, peak
 *   concurrency and committed memory per GPU (GET /api/v1/load-tests/defaults) and says where they come from; the
 *   progress bars of running tests follow the API, and the page reloads when one ends;
 * - a test: its progress polled every second (GET /api/v1/load-tests/ID/) while queued or running; once it has
 *   ended, the page's own new rendering (status, verdict, workers) is swapped in and the servers' KV-cache usage and
 *   requests are drawn from its benchmark run (benchmarks.js's chart).
 */
import {
  bindConfirms,
  el,
  format,
  isNumber,
  LANG,
  GIB,
  fillAlert,
  request,
} from "./common.js";
import { T } from "./words/loadtests.js";
import { serverSeriesChart } from "./charts.js";

var POLL_MS = 1000;
var LIST_POLL_MS = 2000;
var FINAL = ["done", "cancelled", "failed"];

var decimal0 = new Intl.NumberFormat(LANG, { maximumFractionDigits: 0 });
var decimal1 = new Intl.NumberFormat(LANG, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
var decimal2 = new Intl.NumberFormat(LANG, { minimumFractionDigits: 2, maximumFractionDigits: 2 });

function sleep(ms) { return new Promise(function (resolve) { window.setTimeout(resolve, ms); }); }

function isFinal(status) { return FINAL.indexOf(status) >= 0; }

// Milliseconds: two decimals below 10, one below 1,000, none above (as the server writes them).
function msNumber(value) {
  if (!isNumber(value)) return "—";
  var magnitude = Math.abs(value);
  return (magnitude < 10 ? decimal2 : magnitude < 1000 ? decimal1 : decimal0).format(value);
}

// ---------------------------------------------------------------- the list and its form

function scenarioOf(form) {
  var checked = form.querySelector("input[name=scenario]:checked");
  return checked ? checked.value : "";
}

function showCustomFields(form) {
  var custom = document.getElementById("custom-fields");
  if (custom) custom.hidden = scenarioOf(form) !== "custom";
}

function setNumber(form, name, value) {
  var input = form.elements[name];
  if (!input || !isNumber(value)) return false;
  input.value = String(value);
  input.removeAttribute("aria-invalid");
  var slot = form.querySelector('[data-error-for="' + name + '"]');
  if (slot) slot.textContent = "";
  return true;
}

async function fillDefaults(root, form, select) {
  var note = document.getElementById("defaults-source");
  var id = select.value;
  if (!id) {
    note.hidden = true;
    note.textContent = "";
    return;
  }
  var name = select.options[select.selectedIndex].textContent;
  note.hidden = false;
  note.textContent = T.defaults_loading;
  var result;
  try {
    // the peak concurrency is what the deployment's KV cache holds at the test's request lengths
    var query = "?deployment=" + encodeURIComponent(id);
    ["input_tokens", "output_tokens"].forEach(function (key) {
      var input = form.elements[key];
      if (input && /^[1-9][0-9]*$/.test(input.value)) query += "&" + key + "=" + input.value;
    });
    result = await request(root.dataset.defaultsUrl + query, { headers: { Accept: "application/json" } });
  } catch (error) {
    note.textContent = T.network_error;
    return;
  }
  if (select.value !== id) return;  // another deployment was chosen meanwhile
  if (!result.ok || !result.body) {
    note.textContent = T.defaults_failed + (result.body && result.body.message ? ": " + result.body.message : "");
    return;
  }
  var defaults = result.body.defaults || {};
  var parts = [];
  var slo = defaults.slo || {};
  var limits = [];
  ["ttft_ms", "tpot_ms", "e2e_ms"].forEach(function (key) {
    if (setNumber(form, "slo_" + key, slo[key])) limits.push(T["slo_" + key] + " ≤ " + msNumber(slo[key]) + " ms");
  });
  if (limits.length) parts.push(format(T.defaults_slo, { limits: limits.join(", ") }));
  if (setNumber(form, "peak_concurrency", defaults.peak_concurrency)) {
    parts.push(format(T.defaults_peak, { value: decimal0.format(defaults.peak_concurrency) }));
  }
  if (isNumber(defaults.committed_bytes_per_gpu)) {
    var gib = Math.round(defaults.committed_bytes_per_gpu / GIB * 100) / 100;
    setNumber(form, "committed_gib_per_gpu", gib);
    // the exact bytes travel beside the rounded GiB, so the test judges the deployment's own figure
    setNumber(form, "committed_bytes_per_gpu", defaults.committed_bytes_per_gpu);
    parts.push(format(T.defaults_committed, { value: decimal2.format(gib) }));
  }
  note.textContent = parts.length ? format(T.defaults_from, { name: name, parts: parts.join("; ") })
    : format(T.defaults_none, { name: name });
}

// Running tests on the list: their bars follow the API; the page reloads once one of them has ended.
async function followList() {
  while (true) {
    await sleep(LIST_POLL_MS);
    var rows = Array.prototype.slice.call(document.querySelectorAll(
      '#loadtests-table tr[data-status="queued"], #loadtests-table tr[data-status="running"]'));
    if (!rows.length) return;
    for (var i = 0; i < rows.length; i++) {
      var result;
      try {
        result = await request(rows[i].dataset.url, { headers: { Accept: "application/json" } });
      } catch (error) {
        continue;
      }
      if (!result.ok || !result.body) continue;
      var job = result.body;
      if (isFinal(job.status)) {
        window.location.reload();
        return;
      }
      var fraction = (job.progress || {}).fraction;
      var bar = rows[i].querySelector(".progress-bar");
      var percent = rows[i].querySelector(".loadtest-percent");
      if (isNumber(fraction)) {
        if (bar) bar.style.width = Math.round(fraction * 100) + "%";
        if (percent) percent.textContent = format(T.percent_value, { value: Math.round(fraction * 100) });
      }
      var pill = rows[i].querySelector(".status-pill");
      if (pill && job.status !== rows[i].dataset.status) {
        pill.className = "status-pill status-" + job.status;
        pill.textContent = T["status_" + job.status] || job.status;
        rows[i].dataset.status = job.status;
      }
    }
  }
}

function listPage(root) {
  bindConfirms(root);
  var form = document.getElementById("loadtest-form");
  if (form) {
    form.querySelectorAll("input[name=scenario]").forEach(function (radio) {
      radio.addEventListener("change", function () { showCustomFields(form); });
    });
    showCustomFields(form);
    var deployment = document.getElementById("field-deployment");
    deployment.addEventListener("change", function () { fillDefaults(root, form, deployment); });
  }
  if (root.hasAttribute("data-running")) followList();
}

// ---------------------------------------------------------------- a test

function setText(id, text) {
  var node = document.getElementById(id);
  if (node) node.textContent = text;
}

function renderProgress(job) {
  var progress = job.progress || {};
  var live = progress.live || {};
  setText("progress-done", decimal0.format(progress.done || 0));
  setText("progress-sent", format(T.of_sent, { sent: decimal0.format(progress.sent || 0) }));
  setText("progress-ok", decimal0.format(progress.ok || 0));
  setText("progress-failed", decimal0.format(progress.failed || 0));
  setText("progress-in_flight", decimal0.format(progress.in_flight || 0));
  setText("progress-stored", decimal0.format(progress.stored || 0));
  setText("progress-rate", format(T.rate_value, { value: decimal1.format(progress.rate_per_s || 0) }));
  setText("progress-elapsed", format(T.seconds_value, { value: decimal1.format(progress.elapsed_s || 0) }));
  setText("progress-ttft", format(T.ms_pair, { p50: msNumber(live.ttft_p50_ms), p99: msNumber(live.ttft_p99_ms) }));
  setText("progress-tpot", format(T.ms_pair, { p50: msNumber(live.tpot_p50_ms), p99: msNumber(live.tpot_p99_ms) }));
  var failedBox = document.querySelector('#progress-counts [data-count="failed"]');
  if (failedBox) failedBox.classList.toggle("count-bad", Boolean(progress.failed));
  var bar = document.getElementById("progress-bar");
  if (bar && isNumber(progress.fraction)) bar.style.width = Math.round(progress.fraction * 100) + "%";
  var pill = document.getElementById("loadtest-status");
  if (pill && pill.dataset.status !== job.status) {
    pill.className = "status-pill status-" + job.status;
    pill.dataset.status = job.status;
    pill.textContent = T["status_" + job.status] || job.status;
  }
}

// The page as the server now renders it: the status, the verdict and the workers of the ended test.
async function swapInFinalPage() {
  var response = await fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } });
  if (!response.ok) throw new Error("HTTP " + response.status);
  var fresh = new DOMParser().parseFromString(await response.text(), "text/html").getElementById("loadtest-live");
  var current = document.getElementById("loadtest-live");
  if (!fresh || !current) throw new Error("no #loadtest-live");
  current.replaceWith(document.importNode(fresh, true));
  bindConfirms(document.getElementById("loadtest-live"));
}

async function drawServer(data) {
  var box = document.getElementById("server-chart");
  if (!box || !data.run_url) return;
  box.textContent = "";
  var result;
  try {
    result = await request(data.run_url, { headers: { Accept: "application/json" } });
  } catch (error) {
    box.appendChild(el("p", { className: "muted", text: T.network_error }));
    return;
  }
  if (!result.ok || !result.body) {
    box.appendChild(el("p", { className: "muted", text: T.run_failed }));
    return;
  }
  serverSeriesChart("server-chart", result.body.server_series);
}

async function followTest(data) {
  var errorBox = document.getElementById("progress-error");
  var failures = 0;
  while (true) {
    await sleep(POLL_MS);
    var result = null;
    try {
      result = await request(data.api_url, { headers: { Accept: "application/json" } });
    } catch (error) {
      result = null;
    }
    if (!result || !result.ok || !result.body) {
      failures += 1;
      if (failures >= 3) fillAlert(errorBox, T.poll_failed, result && result.body, result && result.status, null);
      continue;
    }
    failures = 0;
    errorBox.hidden = true;
    var job = result.body;
    renderProgress(job);
    if (isFinal(job.status)) {
      setText("progress-state", T.ended);
      try {
        await swapInFinalPage();
      } catch (error) {
        window.location.reload();
        return;
      }
      await drawServer(data);
      return;
    }
  }
}

function detailPage(root) {
  bindConfirms(root);
  var data = JSON.parse(document.getElementById("loadtest-data").textContent);
  if (isFinal(data.status)) {
    drawServer(data);
  } else {
    followTest(data);
  }
}

// ---------------------------------------------------------------- start

var pages = { "loadtests-page": listPage, "loadtest-page": detailPage };
Object.keys(pages).forEach(function (id) {
  var root = document.getElementById(id);
  if (root) pages[id](root);
});
