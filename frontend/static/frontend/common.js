/*
 * Helpers shared by the page scripts (sizing.js, bootlog.js, colocated.js): translated strings, number formats, DOM building,
 * API calls and error placement. No framework and no build step; an ES module the page scripts import.
 */
import { COMMON as T } from "./words/common.js";

var LANG = document.documentElement.lang || "en";
var GB = 1e9;
var GIB = Math.pow(2, 30);
var COMPONENTS = ["weights", "kv_cache", "activations", "runtime", "cuda_graphs"];
var COLORS = {
  weights: "#2f5fd0",
  kv_cache: "#1b9e77",
  activations: "#e08a1e",
  runtime: "#7a8699",
  cuda_graphs: "#8e5bd6",
};

// the charts' font and the capacity line's colour
var CHART_FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK SC", ' +
  '"PingFang SC", "Microsoft YaHei", sans-serif';
var CAPACITY_COLOR = "#b42318";

var fixed2 = new Intl.NumberFormat(LANG, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
var integer = new Intl.NumberFormat(LANG, { maximumFractionDigits: 0 });
var compact = new Intl.NumberFormat(LANG, { notation: "compact", maximumFractionDigits: 2 });
var percent = new Intl.NumberFormat(LANG, {
  style: "percent", minimumFractionDigits: 1, maximumFractionDigits: 1, signDisplay: "exceptZero",
});
var signedFixed2 = new Intl.NumberFormat(LANG, {
  minimumFractionDigits: 2, maximumFractionDigits: 2, signDisplay: "exceptZero",
});
var signedInteger = new Intl.NumberFormat(LANG, { maximumFractionDigits: 0, signDisplay: "exceptZero" });

function format(template, values) {
  return String(template).replace(/\{(\w+)\}/g, function (match, key) {
    return Object.prototype.hasOwnProperty.call(values, key) ? String(values[key]) : match;
  });
}

function el(tag, attrs) {
  var node = document.createElement(tag);
  Object.keys(attrs || {}).forEach(function (key) {
    var value = attrs[key];
    if (value === null || value === undefined || value === false) return;
    if (key === "text") node.textContent = value;
    else if (key === "className") node.className = value;
    else node.setAttribute(key, value === true ? "" : value);
  });
  for (var i = 2; i < arguments.length; i++) {
    var child = arguments[i];
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function gb(bytes) { return fixed2.format(bytes / GB); }
function gib(bytes) { return fixed2.format(bytes / GIB); }
function gibValue(bytes) { return format(T.gib_value, { value: gib(bytes) }); }
function toGiB(bytes) { return bytes / GIB; }
function isNumber(value) { return typeof value === "number" && Number.isFinite(value); }

function messagesOf(value) {
  if (Array.isArray(value)) return value.map(messagesOf).join(" ");
  if (value && typeof value === "object") {
    return Object.keys(value).map(function (key) { return key + ": " + messagesOf(value[key]); }).join(" ");
  }
  return String(value);
}

async function request(url, options) {
  var response = await fetch(url, Object.assign({ credentials: "same-origin" }, options));
  var body = null;
  try {
    body = await response.json();
  } catch (error) {
    body = null;
  }
  return { ok: response.ok, status: response.status, body: body };
}

function postJson(url, payload, csrfToken) {
  return request(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken },
    body: JSON.stringify(payload),
  });
}

function postForm(url, formData, csrfToken) {
  return request(url, {
    method: "POST",
    headers: { Accept: "application/json", "X-CSRFToken": csrfToken },
    body: formData,
  });
}

function clearErrors(scope, attribute) {
  scope.querySelectorAll("[" + attribute + "]").forEach(function (node) { node.textContent = ""; });
  scope.querySelectorAll("[aria-invalid]").forEach(function (node) { node.removeAttribute("aria-invalid"); });
}

// Put field errors next to their fields; return those with no field on the page.
function placeFieldErrors(scope, attribute, fields, inputFor) {
  var unplaced = {};
  Object.keys(fields || {}).forEach(function (name) {
    var slot = scope.querySelector("[" + attribute + '="' + name + '"]');
    if (!slot || slot.closest("[hidden]")) {
      unplaced[name] = fields[name];
      return;
    }
    slot.textContent = messagesOf(fields[name]);
    var input = inputFor(name);
    if (input) input.setAttribute("aria-invalid", "true");
  });
  return unplaced;
}

// Fill an alert box with a title, the API's message, the errors no field took and the error code.
function fillAlert(box, title, body, status, unplaced) {
  box.textContent = "";
  box.appendChild(el("p", { className: "alert-title", text: title }));
  if (body && body.message) {
    box.appendChild(el("p", { text: body.message }));
  } else if (status) {
    box.appendChild(el("p", { text: "HTTP " + status }));
  }
  var rest = Object.keys(unplaced || {});
  if (rest.length) {
    var list = el("ul");
    rest.forEach(function (name) { list.appendChild(el("li", { text: name + ": " + messagesOf(unplaced[name]) })); });
    box.appendChild(list);
  }
  if (body && body.code) box.appendChild(el("p", { className: "error-code", text: body.code }));
  box.hidden = false;
}

// A small pill saying where a figure comes from: estimated / calibrated / measured / catalog.
function sourceBadge(source) {
  if (!source) return null;
  var label = T["source_" + source] || source;
  return el("span", {
    className: "source-badge source-" + source,
    "data-source": source,
    title: T["source_title_" + source] || label,
    text: label,
  });
}

// The bill's components in their usual order, then any the API adds later (shown under their own key).
function componentKeys(memory) {
  var extra = Object.keys(memory || {}).filter(function (key) { return COMPONENTS.indexOf(key) < 0; });
  return COMPONENTS.filter(function (key) { return key in (memory || {}); }).concat(extra);
}

function componentColor(key) {
  return COLORS[key] || "#b0b7c3";
}

// A status box (upload, checkpoint): an ok or error alert with a title and an optional detail line.
function statusMessage(box, kind, title, detail) {
  box.textContent = "";
  box.className = "upload-status alert " + (kind === "error" ? "alert-error" : "alert-ok");
  box.appendChild(el("p", { className: "alert-title", text: title }));
  if (detail) box.appendChild(el("p", { text: detail }));
  box.hidden = false;
}

// Run work() with the button disabled and showing busyText (and the form aria-busy); a throw from work()
// goes to onError. The button gets idleText back at the end.
async function whileBusy(form, button, busyText, idleText, work, onError) {
  button.disabled = true;
  button.textContent = busyText;
  form.setAttribute("aria-busy", "true");
  try {
    return await work();
  } catch (error) {
    onError(error);
  } finally {
    button.disabled = false;
    button.textContent = idleText;
    form.removeAttribute("aria-busy");
  }
}

// The API's field errors go next to the form's fields named alike; the rest, and the message, to the alert box.
function showFormFieldErrors(form, box, title, body, status) {
  var fields = (body && body.extra && body.extra.fields) || {};
  var unplaced = placeFieldErrors(form, "data-error-for", fields, function (name) {
    return form.elements[name] || null;
  });
  fillAlert(box, title, body, status, unplaced);
}

// Keep url in the address bar, and have the language switch bring the user back to it.
function rememberUrl(url) {
  window.history.replaceState(null, "", url);
  document.querySelectorAll(".language-switch input[name=next]").forEach(function (input) { input.value = url; });
}

// Poll a worker's job (its `url` answers its state) until it is done or failed, calling onStatus(job, waitedMs)
// between polls. Resolves to {job} at the end, or {failed: answer} when a poll fails (the answer of S.request).
async function followJob(job, intervalMs, onStatus) {
  var started = Date.now();
  while (job.status !== "done" && job.status !== "failed") {
    onStatus(job, Date.now() - started);
    await new Promise(function (resolve) { window.setTimeout(resolve, intervalMs); });
    var answer = await request(job.url, { headers: { Accept: "application/json" } });
    if (!answer.ok) return { failed: answer };
    job = answer.body;
  }
  return { job: job };
}

// Plotly's own strings (the download button) in the page's language; the page passes its translation.
function registerPlotlyLocale(downloadPlot) {
  if (!window.Plotly || LANG === "en") return;
  window.Plotly.register({
    moduleType: "locale",
    name: LANG,
    dictionary: { "Download plot as a PNG": downloadPlot, "Download plot": downloadPlot },
    format: {},
  });
}

function engineName(engine) {
  return (T.engine_names && T.engine_names[engine]) || engine;
}

// A form with data-confirm asks before it is sent (delete, cancel, sign, revoke); bound once per form, so a page may
// call it again on what it swapped in.
function bindConfirms(scope) {
  scope.querySelectorAll("form[data-confirm]:not([data-confirm-bound])").forEach(function (form) {
    form.setAttribute("data-confirm-bound", "");
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.getAttribute("data-confirm"))) event.preventDefault();
    });
  });
}

export {
  bindConfirms,
  LANG,
  GB,
  GIB,
  COMPONENTS,
  COLORS,
  CHART_FONT,
  CAPACITY_COLOR,
  fixed2,
  integer,
  compact,
  percent,
  signedFixed2,
  signedInteger,
  format,
  el,
  gb,
  gib,
  gibValue,
  toGiB,
  isNumber,
  messagesOf,
  request,
  postJson,
  postForm,
  clearErrors,
  placeFieldErrors,
  fillAlert,
  sourceBadge,
  componentKeys,
  componentColor,
  engineName,
  statusMessage,
  whileBusy,
  showFormFieldErrors,
  rememberUrl,
  followJob,
  registerPlotlyLocale,
};
