/*
 * The quote page: posts a quote (model, traffic, SLOs, GPU types) to the quotes API, polls the job until a worker
 * has finished, and shows the offers, a chart of cost per hour, the cheaper deployments not offered and why, and
 * the assumptions. No framework and no build step; strings come from words/quotes.js, helpers from common.js
 * (imported). The quote's id is kept in the address, so a reload or the language switch shows it again.
 *
 * Units: the API takes SLO limits in seconds and answers latencies in milliseconds; the page asks TPOT in ms.
 */
import {
  LANG,
  el,
  format,
  integer,
  isNumber,
  CHART_FONT,
  clearErrors as clearFieldErrors,
  engineName,
  fixed2,
  followJob,
  postJson,
  registerPlotlyLocale,
  rememberUrl,
  request,
  showFormFieldErrors,
} from "./common.js";
import { T } from "./words/quotes.js";

var POLL_MS = 700;
var QUEUED_TOO_LONG_MS = 15000;
var OFFER_COLOR = "#067647";
var REJECTED_COLOR = "#98a2b3";
var PLOT_CONFIG = { responsive: true, displaylogo: false, modeBarButtons: [["toImage"]], locale: LANG };

var root = document.getElementById("quotes");
var form = document.getElementById("quote-form");
var button = document.getElementById("quote-button");
var csrfToken = form.querySelector("[name=csrfmiddlewaretoken]").value;
var formError = document.getElementById("form-error");
var statusBox = document.getElementById("job-status");
var busy = false;

var usd = new Intl.NumberFormat(LANG, { style: "currency", currency: "USD", minimumFractionDigits: 2,
  maximumFractionDigits: 3 });
var decimal1 = new Intl.NumberFormat(LANG, { maximumFractionDigits: 1 });
var decimal2 = new Intl.NumberFormat(LANG, { maximumFractionDigits: 2 });
var significant3 = new Intl.NumberFormat(LANG, { maximumSignificantDigits: 3 });

registerPlotlyLocale(T.download_plot);
button.dataset.idleText = button.textContent;

// ---------------------------------------------------------------- numbers and words

function money(value) { return isNumber(value) ? usd.format(value) : "—"; }
function perHour(value) { return isNumber(value) ? format(T.usd_per_hour_value, { value: usd.format(value) }) : "—"; }
function ms(value) {
  if (!isNumber(value)) return "—";
  return value < 10 ? decimal2.format(value) : value < 100 ? decimal1.format(value) : integer.format(value);
}

// "2 × NVIDIA T4 16GB · TP 2 × 1 replica(s) · vLLM", and the weight format and KV dtype when they are chosen
function shortLabel(row) {
  return format(T.deployment_summary, { gpus: row.gpus, gpu_name: row.gpu_name, tp: row.tp,
    replicas: row.replicas, engine: engineName(row.engine) });
}
function formatDetail(row) {
  var parts = [];
  if (row.weights && row.weights !== "auto") parts.push(format(T.weights_value, { value: row.weights.toUpperCase() }));
  if (row.kv_dtype && row.kv_dtype !== "auto") parts.push("KV " + row.kv_dtype.toUpperCase());
  if (row.max_num_seqs) parts.push("max_num_seqs " + row.max_num_seqs);
  return parts.length ? el("span", { className: "cell-detail", text: parts.join(" · ") }) : null;
}

function deploymentLabel(row) {
  var label = format(T.candidate_label, { gpus: row.gpus, gpu_name: row.gpu_name, tp: row.tp,
    replicas: row.replicas, engine: engineName(row.engine), weights: String(row.weights).toUpperCase(),
    kv_dtype: String(row.kv_dtype).toUpperCase() });
  return row.max_num_seqs ? label + " · max_num_seqs " + row.max_num_seqs : label;
}

// The reason comes as data ({code, numbers}); the page words it in its own language.
function reasonText(row) {
  var verdict = row.verdict;
  if (!verdict) return row.reason || "";
  switch (verdict.code) {
    case "slo":
      return format(T.reason_over, { metric: T["metric_" + String(verdict.metric).toLowerCase()] || verdict.metric,
        percentile: verdict.percentile, value: significant3.format(verdict.value_s),
        limit: significant3.format(verdict.limit_s) });
    case "rejected":
      return format(T.reason_rejected, { count: integer.format(verdict.count),
        requests: integer.format(verdict.total) });
    case "does_not_fit": return format(T.reason_does_not_fit, { detail: verdict.problem });
    case "cannot_run": return format(T.reason_cannot_run, { detail: verdict.problem });
    default: return row.reason || "";
  }
}

// ---------------------------------------------------------------- the form

function trafficKind() { return form.elements.traffic.value; }

function showTraffic() {
  var kind = trafficKind();
  form.querySelectorAll("[data-traffic]").forEach(function (node) { node.hidden = node.dataset.traffic !== kind; });
}
form.querySelectorAll("input[name=traffic]").forEach(function (input) {
  input.addEventListener("change", showTraffic);
});

function number(name) {
  var text = String(form.elements[name].value || "").trim();
  if (text === "") return undefined;
  var value = Number(text);
  return Number.isFinite(value) ? value : text;  // the API names what is wrong
}

function ticked(name) {
  return Array.prototype.filter.call(form.querySelectorAll("input[name=" + name + "]"), function (input) {
    return input.checked && !input.disabled;
  }).map(function (input) { return input.value; });
}

function payload() {
  var body = { model: form.elements.model.value, rate: number("rate"), max_gpus: number("max_gpus"),
    top: number("top"), slo: { percentile: Number(form.elements.slo_percentile.value) } };
  if (trafficKind() === "profile") {
    body.profile = number("profile");
  } else {
    body.input_tokens = number("input_tokens");
    body.output_tokens = number("output_tokens");
  }
  var ttft = number("slo_ttft_s");
  var tpotMs = number("slo_tpot_ms");
  var e2e = number("slo_e2e_s");
  if (ttft !== undefined) body.slo.ttft_s = ttft;
  if (tpotMs !== undefined) body.slo.tpot_s = isNumber(tpotMs) ? tpotMs / 1000 : tpotMs;
  if (e2e !== undefined) body.slo.e2e_s = e2e;
  var gpus = ticked("gpus");
  if (gpus.length) body.gpus = gpus;
  var engines = ticked("engines");
  if (engines.length) body.engines = engines;
  var weights = ticked("weights");
  if (weights.length) body.weights = weights;
  Object.keys(body).forEach(function (key) { if (body[key] === undefined) delete body[key]; });
  return body;
}

// Put the form back as the quote was asked (a reload, the language switch).
function fillForm(inputs) {
  if (!inputs) return;
  if (inputs.model) form.elements.model.value = inputs.model;
  var profile = inputs.profile !== undefined && inputs.profile !== null;
  form.querySelector("#traffic-" + (profile ? "profile" : "lengths")).checked = true;
  showTraffic();
  if (profile) form.elements.profile.value = String(inputs.profile);
  ["input_tokens", "output_tokens", "rate", "max_gpus", "top"].forEach(function (name) {
    if (isNumber(inputs[name])) form.elements[name].value = String(inputs[name]);
  });
  var slo = inputs.slo || {};
  form.elements.slo_ttft_s.value = isNumber(slo.ttft_s) ? String(slo.ttft_s) : "";
  form.elements.slo_tpot_ms.value = isNumber(slo.tpot_s) ? String(slo.tpot_s * 1000) : "";
  form.elements.slo_e2e_s.value = isNumber(slo.e2e_s) ? String(slo.e2e_s) : "";
  if (slo.percentile) form.elements.slo_percentile.value = String(slo.percentile);
  [["engines", inputs.engines], ["weights", inputs.weights]].forEach(function (pair) {
    if (!pair[1]) return;
    form.querySelectorAll("input[name=" + pair[0] + "]").forEach(function (input) {
      input.checked = pair[1].indexOf(input.value) >= 0;
    });
  });
}

// ---------------------------------------------------------------- the job


function clearErrors() {
  clearFieldErrors(form, "data-error-for");
  formError.hidden = true;
  formError.textContent = "";
}

function showError(title, body, status) {
  showFormFieldErrors(form, formError, title, body, status);
}

// "candidate: 3/40" or "2/5 parts", as the worker writes it, in the page's words
function progressText(job, waitedMs) {
  if (job.status === "queued") return waitedMs > QUEUED_TOO_LONG_MS ? T.queued_long : T.status_queued;
  var match = /^(\D*?)\s*(\d+)\/(\d+)\s*(\D*)$/.exec(job.progress_message || "");
  if (!match) return "";
  var what = (match[1] || match[4] || "").replace(":", "").trim();
  var done = Number(match[2]);
  var total = Number(match[3]);
  if (what === "candidate") return format(T.progress_candidate, { done: Math.min(done + 1, total), total: total });
  if (what === "parts") return format(T.progress_parts, { done: done, total: total });
  return "";
}

function showStatus(job, waitedMs) {
  statusBox.hidden = false;
  statusBox.setAttribute("data-status", job.status);
  document.getElementById("job-title").textContent = job.id ? format(T.quote_number, { id: job.id }) : "";
  document.getElementById("job-state").textContent = T["status_" + job.status] || job.status;
  var fraction = job.status === "done" ? 1 : Math.max(0, Math.min(1, Number(job.progress) || 0));
  document.getElementById("job-progress-bar").style.width = (fraction * 100).toFixed(1) + "%";
  document.getElementById("job-progress").setAttribute("aria-valuenow", String(Math.round(fraction * 100)));
  document.getElementById("job-message").textContent = job.status === "done" || job.status === "failed"
    ? "" : progressText(job, waitedMs || 0);
}

async function follow(quote) {
  rememberUrl(window.location.pathname + "?quote=" + quote.id);
  var end = await followJob(quote, POLL_MS, showStatus);
  if (end.failed) {
    showError(T.poll_failed, end.failed.body, end.failed.status);
    return;
  }
  quote = end.job;
  showStatus(quote);
  if (quote.status === "failed") {
    showError(T.job_failed, quote.error || null, null);
    return;
  }
  document.getElementById("empty-state").hidden = true;
  render(quote);
}

function setBusy(on) {
  busy = on;
  button.disabled = on;
  button.textContent = on ? T.running : button.dataset.idleText;
  if (on) root.setAttribute("aria-busy", "true");
  else root.removeAttribute("aria-busy");
}

async function submit() {
  if (busy) return;
  clearErrors();
  setBusy(true);
  document.getElementById("quote-result").hidden = true;
  showStatus({ status: "queued", progress: 0 });
  try {
    var answer = await postJson(root.dataset.quotesUrl, payload(), csrfToken);
    if (!answer.ok) {
      statusBox.hidden = true;
      showError(T.start_failed, answer.body, answer.status);
      return;
    }
    await follow(answer.body);
  } catch (error) {
    showError(T.network_error, null, null);
  } finally {
    setBusy(false);
  }
}

form.addEventListener("submit", function (event) {
  event.preventDefault();
  submit();
});

// ---------------------------------------------------------------- the answer

function render(quote) {
  document.getElementById("quote-result").hidden = false;  // before plotting
  var offers = quote.offers || [];
  var rejected = quote.rejected || [];
  var summary = quote.summary || {};
  document.getElementById("quote-verdict").className = "verdict " + (offers.length ? "verdict-ok" : "verdict-bad");
  document.getElementById("quote-summary").textContent = format(T.quote_summary, {
    offers: integer.format(offers.length), candidates: integer.format(summary.candidates || 0),
    fitting: integer.format(summary.fitting || 0), meeting: integer.format(summary.meeting_slo || 0) });
  document.getElementById("quote-cheapest").textContent = offers.length
    ? format(T.quote_cheapest, { label: deploymentLabel(offers[0]), cost: perHour(offers[0].cost_per_hour_usd),
      per_million: money(offers[0].cost_per_million_tokens_usd) })
    : T.quote_none;
  var percentile = ((quote.assumptions || {}).slo || {}).percentile || 95;
  ["ttft", "tpot", "e2e"].forEach(function (metric) {
    document.getElementById("offer-" + metric + "-head").textContent = format(T.latency_head,
      { metric: T["metric_" + metric], percentile: percentile });
  });

  var tbody = document.querySelector("#offer-table tbody");
  tbody.textContent = "";
  offers.forEach(function (offer) {
    tbody.appendChild(el("tr", { "data-gpu": offer.gpu, className: "row-meets" },
      el("td", { className: "num", text: String(offer.rank) }),
      el("th", { scope: "row" }, el("span", { className: "row-name", text: shortLabel(offer) }), formatDetail(offer)),
      el("td", { className: "num", text: money(offer.cost_per_hour_usd) }),
      el("td", { className: "num", text: money(offer.cost_per_million_tokens_usd) }),
      el("td", { className: "num", text: money(offer.cost_per_million_output_tokens_usd) }),
      el("td", { className: "num", text: ms(offer.ttft_ms) }),
      el("td", { className: "num", text: ms(offer.tpot_ms) }),
      el("td", { className: "num", text: ms(offer.e2e_ms) }),
      el("td", { className: "num", text: isNumber(offer.kv_capacity_tokens)
        ? integer.format(offer.kv_capacity_tokens) : "—" }),
      el("td", { className: "num", text: isNumber(offer.memory_per_gpu_gib)
        ? fixed2.format(offer.memory_per_gpu_gib) : "—" })));
  });

  var rows = document.querySelector("#rejected-table tbody");
  rows.textContent = "";
  rejected.forEach(function (row) {
    rows.appendChild(el("tr", { "data-gpu": row.gpu, className: row.fits ? null : "row-unfit" },
      el("th", { scope: "row" }, el("span", { className: "row-name", text: shortLabel(row) }), formatDetail(row),
        row.cheaper_than_best_offer ? el("span", { className: "cell-detail", text: T.cheaper }) : null),
      el("td", { className: "num", text: money(row.cost_per_hour_usd) }),
      el("td", { text: reasonText(row) })));
  });

  renderAssumptions(quote.assumptions || {});
  costChart(offers, rejected);
}

function renderAssumptions(assumptions) {
  var list = document.getElementById("assumptions");
  list.textContent = "";
  var traffic = assumptions.traffic || {};
  var rate = format(T.rate_value, { value: decimal2.format(traffic.rate_per_s || 0) });
  var items = [T.assumption_prices,
    format(T.assumption_requests, { requests: integer.format(assumptions.requests_simulated || 0), rate: rate })];
  var lengths = { input: integer.format(traffic.mean_input_tokens || 0),
    output: integer.format(traffic.mean_output_tokens || 0) };
  items.push(traffic.kind === "profile"
    ? format(T.assumption_profile, Object.assign({ name: traffic.profile_name || "", hour: traffic.hour }, lengths))
    : format(T.assumption_lengths, lengths));
  items.push(format(T.assumption_tokens, { tokens: integer.format(traffic.tokens_per_hour || 0) }));
  var counts = assumptions.gpu_counts || [];
  items.push(format(T.assumption_gpus, { max: counts.length ? counts[counts.length - 1] : "—",
    tps: (assumptions.tps || []).join(", ") }));
  items.forEach(function (text) { list.appendChild(el("li", { text: text })); });
}

function costChart(offers, rejected) {
  if (!window.Plotly) return;
  var rows = offers.map(function (o) { return { row: o, offered: true }; })
    .concat(rejected.map(function (o) { return { row: o, offered: false }; }))
    .filter(function (item) { return isNumber(item.row.cost_per_hour_usd); })
    .sort(function (a, b) { return a.row.cost_per_hour_usd - b.row.cost_per_hour_usd; });
  function trace(offered) {
    var chosen = rows.filter(function (item) { return item.offered === offered; });
    return {
      type: "bar", orientation: "h", name: offered ? T.chart_offers : T.chart_rejected,
      y: chosen.map(function (item) { return shortLabel(item.row); }),
      x: chosen.map(function (item) { return item.row.cost_per_hour_usd; }),
      text: chosen.map(function (item) { return money(item.row.cost_per_hour_usd); }),
      customdata: chosen.map(function (item) { return offered ? "" : reasonText(item.row); }),
      hovertemplate: "%{y}<br>%{text}<br>%{customdata}<extra></extra>",
      marker: { color: offered ? OFFER_COLOR : REJECTED_COLOR },
    };
  }
  var order = rows.map(function (item) { return shortLabel(item.row); });
  Plotly.react("cost-chart", [trace(true), trace(false)], {
    font: { family: CHART_FONT, size: 12, color: "#1d2939" },
    paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
    // no legend or axis title: Plotly draws them in a second layer its own (inline, CSP-blocked) styles place;
    // the caption says which colour is which
    height: Math.max(260, 80 + 34 * rows.length), margin: { t: 24, r: 24, b: 48, l: 24 },
    barmode: "overlay", showlegend: false,
    xaxis: { tickprefix: "$", ticksuffix: "/h", rangemode: "tozero" },
    yaxis: { categoryorder: "array", categoryarray: order.slice().reverse(), automargin: true },
  }, Object.assign({ toImageButtonOptions: { filename: "quote-cost", scale: 2 } }, PLOT_CONFIG));
}

// ---------------------------------------------------------------- a quote in the address

async function resume() {
  var id = new URLSearchParams(window.location.search).get("quote");
  if (!id || !/^\d+$/.test(id)) return;
  var answer = await request(root.dataset.quotesUrl + id + "/", { headers: { Accept: "application/json" } });
  if (!answer.ok) return;
  fillForm(answer.body.inputs);
  setBusy(true);
  try {
    await follow(answer.body);
  } finally {
    setBusy(false);
  }
}

showTraffic();
resume();
