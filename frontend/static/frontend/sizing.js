/*
 * The sizing page: posts the form to the quick-estimate API and draws the answer; solves for limits, lists
 * remedies and uploads checkpoint facts. No framework and no build step. Every string shown comes from the
 * server-rendered #i18n blob, every number from the API (bytes; formatted here as GB = 10^9 and GiB = 2^30).
 * Shared helpers live in common.js (imported).
 */
import {
  LANG,
  GIB,
  COLORS,
  el,
  format,
  gb,
  gib,
  gibValue,
  toGiB,
  fixed2,
  integer,
  compact,
  messagesOf,
  clearErrors,
  placeFieldErrors,
  CAPACITY_COLOR,
  CHART_FONT as FONT,
  componentColor,
  componentKeys,
  engineName,
  fillAlert,
  isNumber,
  percent,
  postForm,
  postJson,
  registerPlotlyLocale,
  rememberUrl,
  showFormFieldErrors,
  signedInteger,
  sourceBadge,
  statusMessage,
  whileBusy,
} from "./common.js";
import { T } from "./words/sizing.js";

var BUDGET_COLOR = "#475467";
var INTEGER_FIELDS = ["gpus", "tp", "pp", "dp", "max_model_len", "concurrency", "tokens_per_request",
  "max_num_seqs", "max_num_batched_tokens", "block_size", "num_speculative_tokens", "shared_prefix_tokens",
  "parallel_samples", "output_tokens", "fingerprint"];
var FLOAT_FIELDS = ["gpu_memory_utilization", "mem_fraction_static", "kv_cache_free_gpu_mem_fraction",
  "weight_overhead"];
// measured terms: typed in GiB, sent (and kept in the address) in bytes under the API's names
var GIB_FIELDS = ["runtime_reserve_bytes", "cuda_graph_bytes", "activation_peak_bytes", "gpu_memory_bytes",
                  "gpu_cuda_total_bytes"];
var BOOLEAN_FIELDS = ["enforce_eager", "expert_parallel", "prefix_caching"];
// checkboxes the API takes as true when absent: sent (and kept in the address) only when unticked
var TRUE_BY_DEFAULT = ["prefix_caching"];
var TEXT_FIELDS = ["model", "gpu", "weights", "kv_dtype", "engine", "engine_version", "usage_context", "install",
  "draft_model"];
var ALL_FIELDS = TEXT_FIELDS.concat(INTEGER_FIELDS, FLOAT_FIELDS, GIB_FIELDS, BOOLEAN_FIELDS);
// the folded groups of the form, opened when the address (or an applied remedy) sets one of their fields
var GROUPS = {
  "group-speculative": ["draft_model", "num_speculative_tokens"],
  "group-traffic": ["shared_prefix_tokens", "prefix_caching", "parallel_samples", "output_tokens"],
  "group-advanced": ["max_num_seqs", "max_num_batched_tokens", "block_size", "mem_fraction_static",
    "kv_cache_free_gpu_mem_fraction", "weight_overhead", "enforce_eager", "usage_context", "install"],
  "measured-terms": GIB_FIELDS.concat(["fingerprint"]),
};

var form = document.getElementById("sizing-form");
var csrfToken = form.querySelector("[name=csrfmiddlewaretoken]").value;
var estimateButton = document.getElementById("estimate-button");
var formError = document.getElementById("form-error");
var lastResult = null;
// Values from the address that a select does not offer: shown beside their field with the next estimate.
var addressErrors = {};
// The catalog's total per card (what nvidia-smi reports), by GPU slug: vLLM's bill counts from what CUDA sees.
var GPU_MEMORY = JSON.parse(document.getElementById("gpu-memory").textContent);
var lastPayload = {};

function has(list, value) { return list.indexOf(value) >= 0; }

// ---------------------------------------------------------------- form values and errors

// An input counts only while it is shown: engine-specific fields of another engine are left out.
function isActive(input) {
  return !input.closest("[hidden]");
}

function collectPayload() {
  var payload = {};
  ALL_FIELDS.forEach(function (name) {
    var input = form.elements[name];
    if (!input || !isActive(input)) return;
    if (has(BOOLEAN_FIELDS, name)) {
      if (has(TRUE_BY_DEFAULT, name)) {
        if (!input.checked) payload[name] = false;
      } else if (input.checked) {
        payload[name] = true;
      }
      return;
    }
    var raw = String(input.value || "").trim();
    if (raw === "") return;
    if (has(GIB_FIELDS, name)) {
      var gibs = Number(raw);
      if (input.dataset.bytes && input.dataset.shown === raw) {
        payload[name] = Number(input.dataset.bytes);  // restored from the address: keep the exact bytes
      } else {
        payload[name] = Number.isFinite(gibs) ? Math.round(gibs * GIB) : raw;
      }
    } else if (has(INTEGER_FIELDS, name) || has(FLOAT_FIELDS, name)) {
      var number = Number(raw);
      payload[name] = Number.isFinite(number) ? number : raw;  // the API names what is wrong
    } else {
      payload[name] = raw;
    }
  });
  return payload;
}

// Show bytes from the address in GiB; remember the exact bytes while the shown value is untouched.
function setGiBField(input, bytesText) {
  var bytes = Number(bytesText);
  if (!Number.isFinite(bytes)) return;
  input.value = String(Math.round((bytes / GIB) * 10000) / 10000);
  input.dataset.bytes = String(Math.round(bytes));
  input.dataset.shown = input.value;
}

// Show the inputs of the chosen engine only (data-engines="vllm sglang" on their wrappers).
function updateEngineFields() {
  var engine = form.elements.engine.value;
  form.querySelectorAll("[data-engines]").forEach(function (node) {
    node.hidden = node.getAttribute("data-engines").split(/\s+/).indexOf(engine) < 0;
  });
}

// Expert parallelism applies to mixture-of-experts models only: the server marks their options data-moe;
// a model uploaded on this page is not parsed here, so it keeps the checkbox and the API answers.
function updateModelFields() {
  var option = form.elements.model.selectedOptions[0];
  var moe = option ? option.getAttribute("data-moe") : null;
  form.querySelectorAll("[data-moe-only]").forEach(function (node) {
    node.hidden = moe !== "true" && moe !== "unknown";
  });
}

function updateFields() {
  updateEngineFields();
  updateModelFields();
}

function openGroupsOf(names) {
  Object.keys(GROUPS).forEach(function (id) {
    if (GROUPS[id].some(function (name) { return has(names, name); })) document.getElementById(id).open = true;
  });
}

function fillForm(params) {
  addressErrors = {};
  ALL_FIELDS.forEach(function (name) {
    if (!params.has(name)) return;
    var input = form.elements[name];
    if (!input) return;
    var value = params.get(name);
    if (!setField(input, name, value) && input.tagName === "SELECT") {
      addressErrors[name] = [format(T.choice_not_offered, { value: value })];
    }
  });
  updateFields();
  openGroupsOf(ALL_FIELDS.filter(function (name) { return params.has(name); }));
}

// Put one value (from the address or an API's settings) into its input; false when the input cannot take it.
function setField(input, name, value) {
  var text = String(value);
  if (has(BOOLEAN_FIELDS, name)) {
    input.checked = value === true || text === "true" || text === "1";
    return true;
  }
  if (has(GIB_FIELDS, name)) {
    setGiBField(input, text);
    return true;
  }
  if (input.tagName === "SELECT") {
    var option = Array.prototype.find.call(input.options, function (o) { return o.value === text; });
    if (!option || option.disabled) return false;
  }
  input.value = text;
  return true;
}

function clearFormErrors() {
  clearErrors(form, "data-error-for");
  formError.hidden = true;
  formError.textContent = "";
  if (Object.keys(addressErrors).length) {
    placeFieldErrors(form, "data-error-for", addressErrors, function (name) { return form.elements[name] || null; });
    addressErrors = {};
  }
}

function showFormError(title, body, status) {
  showFormFieldErrors(form, formError, title, body, status);
  var firstInvalid = form.querySelector("[aria-invalid=true]");
  if (firstInvalid) {
    var closed = firstInvalid.closest("details:not([open])");
    if (closed) closed.open = true;
  }
  (firstInvalid || formError).scrollIntoView({ block: "nearest", behavior: "smooth" });
}

// ---------------------------------------------------------------- rendering

function bindingGpu(data) {
  var gpus = data.per_gpu || [];
  if (!gpus.length) return null;
  return gpus.reduce(function (worst, gpu) { return gpu.headroom_bytes < worst.headroom_bytes ? gpu : worst; });
}

function sourceName(source) {
  return T["source_" + source] || source || "";
}

// DP, EP and the speculative-decoding draft, when the estimate uses them.
function summaryExtras(data, payload) {
  var parts = [];
  if (data.dp > 1) parts.push(format(T.summary_dp, { dp: data.dp }));
  if (data.ep > 1) parts.push(format(T.summary_ep, { ep: data.ep }));
  if (payload && payload.draft_model) parts.push(format(T.summary_draft, { draft: payload.draft_model }));
  if (payload && payload.num_speculative_tokens > 0) {
    parts.push(format(T.summary_speculative, { tokens: integer.format(payload.num_speculative_tokens) }));
  }
  return parts;
}

// Requests of the requested length the whole deployment holds: per replica and DP rank, times their count.
function totalFit(data) {
  var curve = data.concurrency_curve || {};
  if (!isNumber(curve.max_concurrency_fit)) return null;
  return curve.max_concurrency_fit * (data.replicas || 1) * (data.dp || 1);
}

// The binding GPU's memory inside the engine's budget that is not KV cache.
function staticBytes(data) {
  var memory = data.memory_per_gpu || {};
  return (memory.weights || 0) + (memory.activations || 0) + (memory.runtime || 0);
}

// The context asked for and the model's limit, when the context is above it (the remedies' context fix says so).
function contextOverLimit(data) {
  var fix = (data.remedies || []).find(function (remedy) { return remedy.key === "context_limit"; });
  if (!fix || !isNumber((fix.settings || {}).max_model_len)) return null;
  return { asked: data.max_model_len, limit: fix.settings.max_model_len };
}

// What is short, in the order it binds: the context, then the memory before the KV cache, then the KV cache.
function shortages(data) {
  var lines = [];
  var context = contextOverLimit(data);
  if (context) {
    lines.push({ key: "context", text: format(T.short_context,
      { asked: integer.format(context.asked), limit: integer.format(context.limit) }) });
  }
  var memory = data.memory_per_gpu || {};
  var noPool = data.allocation === "preallocated" && !(memory.kv_cache > 0)
    && staticBytes(data) >= data.budget_bytes_per_gpu;
  if (noPool) {
    lines.push({ key: "static", text: format(T.short_static,
      { static: gib(staticBytes(data)), budget: gib(data.budget_bytes_per_gpu) }) });
  } else if (data.headroom_bytes_per_gpu < 0) {
    lines.push({ key: "memory", text: format(T.short_memory, { value: gib(-data.headroom_bytes_per_gpu) }) });
  }
  var fit = totalFit(data);
  if (!noPool && fit !== null && fit < data.concurrency) {
    lines.push({ key: "kv", text: format(T.short_kv, { fit: integer.format(fit),
      concurrency: integer.format(data.concurrency), tokens: integer.format(data.tokens_per_request) }) });
  }
  return lines;
}

// The release whose rules the bill follows, as the estimate resolved it.
function releaseText(data) {
  if (!data.engine_version) return "";
  var latest = String(data.engine_version_requested || "").toLowerCase() === "latest";
  return format(latest ? T.engine_release_latest : T.engine_release,
    { engine: engineName(data.engine), version: data.engine_version });
}

function renderVerdict(data, payload) {
  var box = document.getElementById("verdict");
  box.textContent = "";
  box.className = "verdict " + (data.fits ? "verdict-ok" : "verdict-bad");
  box.setAttribute("data-fits", data.fits ? "true" : "false");
  var head = el("div", { className: "verdict-head" },
    el("span", { className: "verdict-icon", "aria-hidden": "true", text: data.fits ? "✓" : "✕" }),
    el("strong", { className: "verdict-title", text: data.fits ? T.fits : T.does_not_fit }));
  // Beside "Does not fit": what is short, never a bare positive headroom; the memory left keeps its own label.
  var fit = totalFit(data);
  if (data.fits && fit !== null && data.allocation === "preallocated") {
    head.appendChild(el("span", { className: "verdict-holds", text: format(T.holds_kv, {
      fit: integer.format(fit), tokens: integer.format(data.tokens_per_request),
      concurrency: integer.format(data.concurrency) }) }));
  }
  if (!data.fits) {
    shortages(data).forEach(function (line) {
      head.appendChild(el("span", { className: "verdict-short", "data-short": line.key, text: line.text }));
    });
  }
  head.appendChild(el("span", { className: "verdict-headroom",
    text: format(T.memory_left, { value: gib(data.headroom_bytes_per_gpu) }) }));
  box.appendChild(head);
  box.appendChild(el("p", { className: "verdict-summary", text: [format(T.summary, {
    model: data.model || "",
    gpus: data.gpus,
    gpu_name: data.gpu_name,
    tp: data.tp,
    pp: data.pp,
    replicas: data.replicas,
    weights: String(data.weight_format).toUpperCase(),
    kv_dtype: String(data.kv_dtype).toUpperCase(),
    engine: engineName(data.engine),
  })].concat(summaryExtras(data, payload)).join(" · ") }));
  var problems = data.problems || [];
  if (problems.length) {
    var list = el("ul", { className: "verdict-list verdict-problems" });
    problems.forEach(function (text) { list.appendChild(el("li", { text: text })); });
    box.appendChild(el("div", { className: "verdict-section" }, el("h3", { text: T.problems }), list));
  }
  renderAllocation(box, data);
  var release = releaseText(data);
  if (release) box.appendChild(el("p", { className: "verdict-note", id: "engine-release", text: release }));
  if (data.calibration_applied) {
    box.appendChild(el("p", { className: "verdict-note", id: "calibration-applied", text: format(
      T.calibration_applied, { version: data.calibration_applied.engine_version || "?",
                               date: String(data.calibration_applied.created_at).slice(0, 10) }) }));
  }
  if (data.approximate) box.appendChild(el("p", { className: "verdict-note", text: T.approximate }));
}

// What the engine's way of taking memory means for a memory commitment.
function renderAllocation(box, data) {
  var kind = data.allocation;
  if (!kind) return;
  var text = format(T["allocation_text_" + kind] || "", {
    engine: engineName(data.engine),
    // a deployment that does not fit never reaches its bill: it stops at the engine's budget
    required: gib(data.fits ? data.required_bytes_per_gpu : data.budget_bytes_per_gpu),
    budget: gib(data.budget_bytes_per_gpu),
  });
  box.appendChild(el("div", { className: "verdict-allocation", id: "allocation", "data-allocation": kind },
    el("span", { className: "allocation-label", text: T.allocation_label }),
    el("span", { className: "allocation-tag allocation-" + kind, text: T["allocation_" + kind] || kind }),
    el("span", { className: "allocation-text", text: text })));
}

// Sized on a measured machine: which one, its memory per card, and the plan's findings against it.
function renderEnvironment(data) {
  var card = document.getElementById("environment");
  var env = data.environment;
  card.hidden = !env;
  if (!env) return;
  var memory = (env.environment || {}).memory_bytes_per_gpu;
  document.getElementById("environment-summary").textContent = format(T.environment_summary, {
    host: env.host, id: env.fingerprint,
    memory: isNumber(memory) ? gibValue(memory) : "—" });
  var list = document.getElementById("environment-findings");
  list.textContent = "";
  var findings = env.findings || [];
  if (!findings.length) list.appendChild(el("li", { className: "finding finding-none", text: T.environment_clean }));
  findings.forEach(function (finding) {
    list.appendChild(el("li", { className: "finding finding-" + finding.severity, "data-code": finding.code },
      el("span", { className: "severity-badge severity-" + finding.severity,
        text: T["severity_" + finding.severity] || finding.severity }),
      el("span", { className: "finding-text", text: finding.text || finding.message })));
  });
}

function renderRisks(data) {
  var card = document.getElementById("risks");
  var list = document.getElementById("risk-list");
  list.textContent = "";
  var warnings = data.warnings || [];
  warnings.forEach(function (text) {
    list.appendChild(el("li", { className: "risk" },
      el("span", { className: "risk-icon", "aria-hidden": "true", text: "⚠" }),
      el("span", { className: "risk-text", text: text })));
  });
  card.hidden = !warnings.length;
}

// ---------------------------------------------------------------- applying settings (remedies, solvers)

// The API gives the estimate inputs that apply a remedy or a solved value ({"kv_dtype": "fp8"},
// {"gpus": 4, "tp": 4, "pp": 1}): each must have an input shown on the form to be applied.
function canApply(settings) {
  var names = Object.keys(settings || {});
  return names.length > 0 && names.every(function (name) {
    var input = form.elements[name];
    if (!input || !has(ALL_FIELDS, name) || !isActive(input)) return false;
    if (input.tagName !== "SELECT") return true;
    return Array.prototype.some.call(input.options, function (o) {
      return o.value === String(settings[name]) && !o.disabled;
    });
  });
}

function applySettings(settings) {
  var names = Object.keys(settings || {});
  names.forEach(function (name) {
    var input = form.elements[name];
    if (!input) return;
    if (has(GIB_FIELDS, name)) {
      delete input.dataset.bytes;
      delete input.dataset.shown;
    }
    setField(input, name, settings[name]);
  });
  updateFields();
  openGroupsOf(names);
  return estimate();
}

function settingsText(settings) {
  return Object.keys(settings || {}).map(function (name) { return name + " = " + settings[name]; }).join(", ");
}

function applyButton(label, settings, className) {
  var button = el("button", { type: "button", className: "button button-small " + className, text: label,
    title: format(T.remedy_apply_title, { settings: settingsText(settings) }),
    "data-settings": JSON.stringify(settings) });
  button.addEventListener("click", function () { applySettings(settings); });
  return button;
}

// ---------------------------------------------------------------- remedies

// One change of a remedy in the page's language, its numbers from the estimate it changes (`data`) and the
// remedy's settings; null for a change the page does not know (the API's English description is used then).
function changeTitle(key, remedy, data, short) {
  var settings = remedy.settings || {};
  var number = isNumber;
  switch (key) {
    case "kv_fp8": return T.remedy_kv_fp8;
    case "weights_fp8": return T.remedy_weights_fp8;
    case "weights_int4": return T.remedy_weights_int4;
    case "utilization":
      return number(settings.gpu_memory_utilization)
        ? format(T.remedy_utilization, { value: settings.gpu_memory_utilization }) : null;
    case "max_model_len":
      return number(settings.max_model_len)
        ? format(T.remedy_max_model_len, { tokens: integer.format(settings.max_model_len) }) : null;
    case "context_limit":
      return number(settings.max_model_len)
        ? format(T.remedy_context_limit, { tokens: integer.format(settings.max_model_len) }) : null;
    case "rope_yarn": {
      var scaling = settings.rope_scaling || {};
      return number(scaling.factor) && number(data.max_model_len)
        ? format(T.remedy_rope_yarn, { factor: scaling.factor, tokens: integer.format(data.max_model_len) }) : null;
    }
    case "tp_double":
    case "tp_quadruple": {
      var factor = key === "tp_double" ? 2 : 4;
      if (short) return format(T.remedy_tp_short, { tp: data.tp * factor });
      return format(T.remedy_tp_double, { gpus: data.gpus * factor, tp: data.tp * factor });
    }
    case "replica":
    case "replica_x4": {
      var times = key === "replica" ? 2 : 4;
      if (short) return format(T.remedy_replicas_short, { replicas: (data.replicas || 1) * times });
      return format(T.remedy_replica, { gpus: data.gpus * times, replicas: (data.replicas || 1) * times });
    }
    default:
      return null;
  }
}

// The remedy in the page's language where every change is known (a combination joins them with “+”); the API's
// English description otherwise.
function remedyTitle(remedy, data) {
  var keys = remedy.changes && remedy.changes.length ? remedy.changes : [remedy.key];
  var combined = keys.length > 1;
  var titles = keys.map(function (key) { return changeTitle(key, remedy, data, combined); });
  if (!titles.every(Boolean)) return remedy.description;
  var title = titles.join(" + ");
  if (combined && remedy.gpus && remedy.gpus !== data.gpus) {
    title += " · " + format(T.remedy_on_gpus, { gpus: remedy.gpus });
  }
  return title;
}

// The exact flags in <code>; the changes that are no flag (another checkpoint, more replicas) in words.
function remedyAction(remedy, data) {
  var nodes = [];
  var flag = String(remedy.flag || "");
  if (/^-/.test(flag)) nodes.push(el("code", { className: "remedy-flag", text: flag }));
  var keys = remedy.changes && remedy.changes.length ? remedy.changes : [remedy.key];
  var words = keys.map(function (key) {
    var replicas = data.replicas || 1;
    if (key === "replica_x4" || (key === "replica" && replicas > 1)) {
      return format(T.remedy_action_replica_x4, { replicas: replicas * (key === "replica" ? 2 : 4) });
    }
    return T["remedy_action_" + key] || null;
  }).filter(Boolean);
  if (!nodes.length && !words.length && remedy.action) words.push(remedy.action);
  if (words.length) nodes.push(el("span", { className: "remedy-action", text: words.join("; ") }));
  return nodes.length ? el("span", { className: "remedy-actions" }, nodes[0], nodes[1] || null) : null;
}

function remedyEffect(remedy) {
  var parts = [];
  if (remedy.kv_room_bytes_after !== remedy.kv_room_bytes_before) {
    parts.push(format(T.remedy_room, { before: gib(remedy.kv_room_bytes_before), after: gib(remedy.kv_room_bytes_after) }));
  }
  parts.push(format(T.remedy_holds, { after: integer.format(remedy.max_concurrency_after),
    concurrency: integer.format(remedy.concurrency), tokens: integer.format(remedy.tokens_per_request),
    before: integer.format(remedy.max_concurrency_before) }));
  return parts.join(" · ");
}

// A bind in the page's language from its code and numbers (bytes shown in GiB); the API's text otherwise.
function bindText(bind, data) {
  var template = T["bind_" + bind.code];
  if (!template) return bind.message;
  var extra = Object.assign({}, bind.extra || {});
  var values = {};
  Object.keys(extra).forEach(function (key) {
    var value = extra[key];
    values[key] = typeof value === "number" ? integer.format(value) : value;
  });
  ["static", "weights", "budget"].forEach(function (key) {
    if (isNumber(extra[key + "_bytes"])) values[key] = gib(extra[key + "_bytes"]);
  });
  if (isNumber(extra.weight_bytes_total)) values.weights = gib(extra.weight_bytes_total);
  if (extra.weight_format) values.format = String(extra.weight_format).toUpperCase();
  var changes = (extra.changes || []).map(function (key) {
    return changeTitle(key, { settings: key === "utilization" ? { gpu_memory_utilization: 0.95 } : {} }, data);
  });
  values["with"] = changes.length && changes.every(Boolean)
    ? format(T.bind_with, { changes: changes.join(", ") }) : "";
  return format(template, values);
}

function renderRemedies(data) {
  var card = document.getElementById("remedies");
  var list = document.getElementById("remedy-list");
  list.textContent = "";
  var remedies = data.remedies || [];
  var rank = 0;
  remedies.forEach(function (remedy) {
    if (remedy.kind === "binds") {
      var binds = el("ul", { className: "bind-list" });
      (remedy.binds || []).forEach(function (bind) {
        binds.appendChild(el("li", { "data-code": bind.code, title: bind.message, text: bindText(bind, data) }));
      });
      list.appendChild(el("li", { className: "remedy remedy-binds", "data-key": remedy.key, "data-fits": "false",
        "data-kind": "binds" },
        el("span", { className: "remedy-rank", "aria-hidden": "true", text: "!" }),
        el("div", { className: "remedy-main" },
          el("div", { className: "remedy-head" }, el("strong", { className: "remedy-title", text: T.binds_title })),
          binds)));
      return;
    }
    rank += 1;
    var kind = remedy.kind === "context" ? T.remedy_kind_context
      : remedy.kind === "combination" ? T.remedy_kind_combination : null;
    var note = null;
    if (remedy.note) {
      var scaling = (remedy.settings || {}).rope_scaling || {};
      note = isNumber(scaling.original_max_position_embeddings)
        ? format(T.remedy_note_rope_yarn, { limit: integer.format(scaling.original_max_position_embeddings) })
        : remedy.note;
    }
    list.appendChild(el("li", { className: "remedy", "data-key": remedy.key, "data-fits": String(!!remedy.fits),
      "data-kind": remedy.kind || "change", title: remedy.description },
      el("span", { className: "remedy-rank", "aria-hidden": "true", text: String(rank) }),
      el("div", { className: "remedy-main" },
        el("div", { className: "remedy-head" },
          kind ? el("span", { className: "remedy-kind", text: kind }) : null,
          el("strong", { className: "remedy-title", text: remedyTitle(remedy, data) }),
          el("span", { className: "remedy-mark " + (remedy.fits ? "is-fit" : "is-not-fit") },
            el("span", { "aria-hidden": "true", text: remedy.fits ? "✓ " : "✕ " }),
            remedy.fits ? T.remedy_fits : T.remedy_not_enough)),
        el("div", { className: "remedy-body" }, remedyAction(remedy, data),
          el("span", { className: "remedy-effect", text: remedyEffect(remedy) })),
        note ? el("p", { className: "remedy-note", text: note }) : null),
      canApply(remedy.settings) ? applyButton(T.remedy_apply, remedy.settings, "remedy-apply") : null));
  });
  card.hidden = !remedies.length;
}

// ---------------------------------------------------------------- the memory bill and its formulas

// The card's own total: what the form measured, else the fingerprint's, else the catalog's.
function cardTotal(data) {
  if (isNumber(lastPayload.gpu_memory_bytes)) return lastPayload.gpu_memory_bytes;
  var env = data.environment && data.environment.environment;
  if (env && isNumber(env.memory_bytes_per_gpu)) return env.memory_bytes_per_gpu;
  var catalog = GPU_MEMORY[data.gpu];
  return isNumber(catalog) ? catalog : data.capacity_bytes_per_gpu;
}

function utilizationOf(data) {
  var assumptions = data.assumptions || {};
  return assumptions.engine_gpu_memory_utilization || assumptions.gpu_memory_utilization;
}

// What vLLM multiplies by gpu_memory_utilization: CUDA's own total where the estimate gives it, else the budget
// divided back by the utilization (the same figure: budget = floor(total × utilization)).
function cudaVisible(data) {
  var assumptions = data.assumptions || {};
  var known = [data.cuda_visible_bytes_per_gpu, data.cuda_total_bytes_per_gpu, assumptions.cuda_visible_bytes,
    assumptions.cuda_total_bytes].find(isNumber);
  if (isNumber(known)) return { bytes: known };
  var utilization = utilizationOf(data);
  if (data.engine !== "vllm" || !(utilization > 0) || !isNumber(data.budget_bytes_per_gpu)) return null;
  return { bytes: Math.round(data.budget_bytes_per_gpu / utilization) };
}

function releaseAtLeast(version, major, minor) {
  var parts = String(version || "").split(".").map(Number);
  if (parts.length < 2 || parts.some(function (n) { return !Number.isFinite(n); })) return false;
  return parts[0] > major || (parts[0] === major && parts[1] >= minor);
}

// vLLM 0.20 and later measure CUDA graphs while profiling, inside the budget; read it off the numbers where the
// pool is positive, else from the release.
function graphsInsideBudget(data) {
  var memory = data.memory_per_gpu || {};
  var graphs = memory.cuda_graphs || 0;
  if (memory.kv_cache > 0 && graphs > 0) {
    var outside = data.budget_bytes_per_gpu - staticBytes(data) - memory.kv_cache;
    return Math.abs(outside - graphs) < Math.abs(outside);
  }
  return releaseAtLeast(data.engine_version, 0, 20);
}

// Each bill row's formula in words with the estimate's numbers, for the engines whose budget the page
// can restate (vLLM and the idealized engine); the estimator's own formulas are shown beside them.
function billFormulas(data) {
  var lines = {};
  var engine = data.engine;
  if (engine !== "vllm" && engine !== "idealized") return lines;
  var memory = data.memory_per_gpu || {};
  var sources = data.figure_sources || {};
  var assumptions = data.assumptions || {};
  var capacity = data.capacity_bytes_per_gpu;
  var budget = data.budget_bytes_per_gpu;
  var usable = data.usable_bytes_per_gpu;
  var required = data.required_bytes_per_gpu;
  function value(key) { return gibValue(memory[key] || 0); }
  function source(key) { return sourceName(sources[key]); }

  var weightValues = { format: String(data.weight_format).toUpperCase(), tp: data.tp, pp: data.pp,
    weights: value("weights"), overhead: assumptions.weight_overhead };
  var terms = componentKeys(memory).map(function (key) { return gib(memory[key]); }).join(" + ");
  lines.required = [format(T.formula_required, { terms: terms, required: gibValue(required) })];
  lines.capacity = [format(T.formula_capacity, { source: source("capacity"), capacity: gibValue(cardTotal(data)) })];
  var card = cardTotal(data);
  var visible = cudaVisible(data);
  var headroomValues = { usable: gibValue(usable), required: gibValue(required), capacity: gibValue(card),
    cuda: visible ? gibValue(visible.bytes) : "", headroom: gibValue(data.headroom_bytes_per_gpu) };
  if (visible && Math.abs(usable - visible.bytes) < GIB / 200 && Math.abs(visible.bytes - card) >= GIB / 200) {
    lines.headroom = [format(T.formula_headroom_cuda, headroomValues)];
  } else if (Math.abs(usable - card) < GIB / 200) {
    lines.headroom = [format(T.formula_headroom_card, headroomValues)];
  } else {
    lines.headroom = [format(T.formula_headroom, headroomValues)];
  }
  if (data.allocation === "preallocated" && isNumber(data.kv_demand_bytes_per_gpu)) {
    lines.kv_demand = [format(T.formula_kv_demand, {
      concurrency: integer.format(assumptions.per_replica_concurrency || data.concurrency),
      tokens: integer.format(data.tokens_per_request), demand: gibValue(data.kv_demand_bytes_per_gpu),
      pool: gibValue(memory.kv_cache || 0) })];
  }

  var weightNotes = [];
  if (data.rope_cache_bytes_per_gpu > 0) {
    weightNotes.push(format(T.formula_weights_rope, { value: gibValue(data.rope_cache_bytes_per_gpu) }));
  }
  if (data.draft_weight_bytes_per_gpu > 0) {
    weightNotes.push(format(T.formula_weights_draft, { value: gibValue(data.draft_weight_bytes_per_gpu) }));
  }

  if (engine === "vllm") {
    var utilization = utilizationOf(data);
    var cuda = cudaVisible(data);
    var inside = graphsInsideBudget(data);
    var pool = budget - staticBytes(data) - (inside ? memory.cuda_graphs || 0 : 0);
    var budgetLine = format(T.formula_budget_cuda_vllm, { cuda: gibValue(cuda ? cuda.bytes : capacity),
      utilization: utilization, budget: gibValue(budget) });
    lines.weights = [format(T.formula_weights, weightValues)].concat(weightNotes);
    lines.budget = [budgetLine];
    if (cuda) lines.cuda_visible = [format(T.formula_cuda_visible, { capacity: gibValue(cardTotal(data)),
      cuda: gibValue(cuda.bytes) })];
    var kvValues = { budget: gib(budget), weights: gib(memory.weights || 0), activations: gib(memory.activations || 0),
      runtime: gib(memory.runtime || 0), graphs: gib(memory.cuda_graphs || 0), kv: gibValue(pool) };
    lines.kv_cache = [budgetLine, format(inside ? T.formula_kv_vllm_graphs : T.formula_kv_vllm, kvValues)];
    if (pool < 0) lines.kv_cache.push(T.formula_kv_negative);
    lines.activations = [sources.activations === "estimated"
      ? format(T.formula_activations_vllm, { batched: integer.format(assumptions.max_num_batched_tokens),
        seqs: integer.format(assumptions.max_num_seqs), value: value("activations") })
      : format(T.formula_activations_given, { source: source("activations"), value: value("activations") })];
    lines.runtime = [format(T.formula_runtime_vllm, { source: source("runtime"), value: value("runtime") })];
    lines.cuda_graphs = [memory.cuda_graphs === 0 && sources.cuda_graphs === "estimated"
      ? T.formula_cuda_graphs_eager
      : format(inside ? T.formula_cuda_graphs_inside : T.formula_cuda_graphs_vllm,
        { source: source("cuda_graphs"), value: value("cuda_graphs") })];
  } else {
    var limit = assumptions.engine_planning_limit || assumptions.gpu_memory_utilization;
    var concurrency = assumptions.per_replica_concurrency;
    var perToken = data.kv_bytes_per_token_per_gpu;
    var tokens = data.tokens_per_request;
    lines.weights = [format(T.formula_weights_overhead, weightValues)].concat(weightNotes);
    lines.kv_cache = [concurrency * tokens * perToken === memory.kv_cache
      ? format(T.formula_kv_idealized, { concurrency: integer.format(concurrency), tokens: integer.format(tokens),
        per_token: integer.format(perToken), kv: value("kv_cache") })
      : format(T.formula_kv_idealized_demand, { concurrency: integer.format(concurrency),
        tokens: integer.format(tokens), kv: value("kv_cache") })];
    lines.activations = [format(T.formula_activations_idealized, { value: value("activations") })];
    lines.runtime = [format(T.formula_runtime_idealized, { source: source("runtime"), value: value("runtime") })];
    lines.cuda_graphs = [format(T.formula_cuda_graphs_idealized, { value: value("cuda_graphs") })];
    lines.usable = [format(T.formula_usable_idealized, { capacity: gibValue(capacity), limit: limit,
      usable: gibValue(usable) })];
  }
  return lines;
}

// A row label; with a formula it becomes a <details> whose summary is the label.
function rowLabel(labelNodes, lines, estimatorLine) {
  if (!lines.length && !estimatorLine) return labelNodes;
  var body = el("div", { className: "formula-body" });
  lines.forEach(function (line) { body.appendChild(el("p", { className: "formula-line", text: line })); });
  if (estimatorLine) {
    body.appendChild(el("p", { className: "formula-estimator" },
      el("span", { className: "formula-estimator-label", text: T.formula_estimator + ": " }), estimatorLine));
  }
  var summary = el("summary", { title: T.formula });
  labelNodes.forEach(function (node) { if (node) summary.appendChild(node); });
  return [el("details", { className: "formula" }, summary, body)];
}

function renderTable(data) {
  var binding = bindingGpu(data);
  var caption = document.getElementById("binding-caption");
  caption.textContent = format(T.binding_caption, { index: binding ? binding.index : 0 });
  var body = document.querySelector("#memory-table tbody");
  body.textContent = "";
  var memory = data.memory_per_gpu || {};
  var sources = data.figure_sources || {};
  var lines = billFormulas(data);
  var estimator = data.formulas || {};
  var notes = { weights: weightParts(data) };
  var termSources = data.term_sources || {};
  function row(key, value, className, label) {
    var th = el("th", { scope: "row" });
    rowLabel(label, lines[key] || [], estimator[key]).forEach(function (node) { if (node) th.appendChild(node); });
    (notes[key] || []).forEach(function (text) {
      th.appendChild(el("span", { className: "cell-detail row-note", text: text }));
    });
    if (termSources[key]) {
      th.title = termSources[key];
      th.appendChild(el("span", { className: "cell-detail term-source",
        text: format(T.term_source, { source: termSources[key] }) }));
    }
    body.appendChild(el("tr", { "data-row": key, className: className || null }, th,
      el("td", { className: "num", text: gb(value) }),
      el("td", { className: "num", text: gib(value) })));
  }
  componentKeys(memory).forEach(function (key) {
    row(key, memory[key], null, [
      el("span", { className: "swatch", style: "background:" + componentColor(key), "aria-hidden": "true" }),
      el("span", { className: "row-name", text: T[key] || key }),
      sourceBadge(sources[key]),
    ]);
  });
  function name(text) { return el("span", { className: "row-name", text: text }); }
  var capacity = cardTotal(data);
  var budget = data.budget_bytes_per_gpu;
  var usable = data.usable_bytes_per_gpu;
  var close = GIB / 200;  // figures within 0.005 GiB show as one
  row("required", data.required_bytes_per_gpu, "row-total", [name(T.required)]);
  row("capacity", capacity, "row-sub", [name(T.capacity), sourceBadge(sources.capacity)]);
  var cuda = cudaVisible(data);
  var showCuda = cuda && Math.abs(cuda.bytes - capacity) >= close;
  if (showCuda) row("cuda_visible", cuda.bytes, "row-sub", [name(T.cuda_visible)]);
  if (isNumber(budget) && budget > 0 && Math.abs(budget - usable) >= close) {
    row("budget", budget, "row-sub", [name(T.budget)]);
  }
  if (Math.abs(usable - capacity) >= close && !(showCuda && Math.abs(usable - cuda.bytes) < close)) {
    row("usable", usable, "row-sub", [name(T.usable)]);
  }
  if (data.allocation === "preallocated" && isNumber(data.kv_demand_bytes_per_gpu)) {
    var short = data.kv_demand_bytes_per_gpu > (memory.kv_cache || 0);
    row("kv_demand", data.kv_demand_bytes_per_gpu, short ? "row-sub row-negative" : "row-sub", [name(T.kv_demand)]);
  }
  row("headroom", data.headroom_bytes_per_gpu, data.headroom_bytes_per_gpu < 0 ? "row-sub row-negative" : "row-sub",
    [name(T.headroom_left)]);
  renderDefaults(data);
}

// The flags left empty and the value the release's own default gave each; the rule behind each bill line that
// has no row of its own.
function renderDefaults(data) {
  var box = document.getElementById("defaults-assumed");
  box.textContent = "";
  var defaults = data.defaults_assumed || {};
  var flags = Object.keys(defaults);
  var version = data.engine_version || "";
  if (flags.length) {
    box.appendChild(el("h3", { text: T.defaults_assumed }));
    box.appendChild(el("p", { className: "muted caption", text: format(T.defaults_assumed_intro,
      { engine: engineName(data.engine), version: version }) }));
    var list = el("ul", { className: "defaults-list" });
    flags.forEach(function (flag) {
      list.appendChild(el("li", { "data-flag": flag }, el("code", { text: flag }),
        el("span", { text: " = " + String(defaults[flag]) })));
    });
    box.appendChild(list);
  }
  var rows = {};
  document.querySelectorAll("#memory-table tbody tr[data-row]").forEach(function (tr) {
    rows[tr.getAttribute("data-row")] = true;
  });
  var sources = data.term_sources || {};
  var loose = Object.keys(sources).filter(function (key) { return !rows[key]; });
  if (loose.length) {
    var rules = el("ul", { className: "term-source-list" });
    loose.forEach(function (key) {
      rules.appendChild(el("li", { "data-term": key }, el("strong", { text: (T["term_" + key] || T[key] || key) + ": " }),
        el("span", { text: sources[key] })));
    });
    box.appendChild(rules);
  }
  box.hidden = !flags.length && !loose.length;
}

// ---------------------------------------------------------------- key figures

// What the weights line holds beside the model's own tensors (vLLM/SGLang's rotary table, a draft model).
function weightParts(data) {
  var parts = [];
  if (data.rope_cache_bytes_per_gpu > 0) {
    parts.push(format(T.incl_rope_cache, { value: gib(data.rope_cache_bytes_per_gpu) }));
  }
  if (data.draft_weight_bytes_per_gpu > 0) {
    parts.push(format(T.incl_draft_weights, { value: gib(data.draft_weight_bytes_per_gpu) }));
  }
  return parts;
}

function renderFigures(data) {
  var list = document.getElementById("key-figures");
  list.textContent = "";
  function add(label, value, detail, key) {
    var valueNode = typeof value === "string" ? el("span", { className: "figure-value", text: value }) : value;
    list.appendChild(el("div", { className: "figure", "data-figure": key || null },
      el("dt", { text: label }),
      el("dd", {}, valueNode, detail ? el("span", { className: "figure-detail", text: detail }) : null)));
  }
  add(T.parameters_total, compact.format(data.parameters_total), integer.format(data.parameters_total),
    "parameters_total");
  if (isNumber(data.parameters_active)) {
    add(T.parameters_active, compact.format(data.parameters_active), integer.format(data.parameters_active),
      "parameters_active");
  }
  if (isNumber(data.parameters_active_compute) && data.parameters_active_compute !== data.parameters_active) {
    add(T.parameters_active_compute, compact.format(data.parameters_active_compute),
      integer.format(data.parameters_active_compute), "parameters_active_compute");
  }
  if (isNumber(data.parameters_mtp) && data.parameters_mtp > 0) {
    add(T.parameters_mtp, compact.format(data.parameters_mtp), integer.format(data.parameters_mtp),
      "parameters_mtp");
  }
  var memory = data.memory_per_gpu || {};
  if (isNumber(memory.weights)) {
    // the weights line of vLLM and SGLang holds their rotary cos/sin table, and a draft model's weights
    var weightsNode = el("span", {}, el("span", { className: "figure-value", text: gibValue(memory.weights) }));
    weightParts(data).forEach(function (text) {
      weightsNode.appendChild(el("span", { className: "figure-detail", text: text }));
    });
    add(T.weights_per_gpu, weightsNode, null, "weights_per_gpu");
  }
  if (data.ep > 1) add(T.expert_parallel_size, String(data.ep), null, "ep");
  var assumptions = data.assumptions || {};
  if (assumptions.shared_prefix_tokens > 0) {
    add(T.shared_prefix, format(T.tokens_value, { value: integer.format(assumptions.shared_prefix_tokens) }), null,
      "shared_prefix");
  }
  if (assumptions.parallel_samples > 1) {
    add(T.parallel_samples, String(assumptions.parallel_samples), null, "parallel_samples");
  }
  add(T.kv_per_token, format(T.bytes_value, { value: integer.format(data.kv_bytes_per_token) }));
  add(T.kv_per_token_per_gpu, format(T.bytes_value, { value: integer.format(data.kv_bytes_per_token_per_gpu) }));
  var groups = (data.assumptions && data.assumptions.kv_groups) || [];
  if (groups.length > 1) {
    var groupList = el("ul", { className: "figure-list" });
    groups.forEach(function (group) { groupList.appendChild(el("li", { text: group })); });
    add(T.kv_groups, groupList, null, "kv_groups");
  }
  add(T.kv_capacity, format(T.tokens_value, { value: integer.format(data.kv_capacity_tokens) }));
  if (data.max_concurrency === null || data.max_concurrency === undefined) {
    add(T.max_concurrency, "—", T.max_concurrency_unset);
  } else {
    add(T.max_concurrency, format(T.requests_value, { value: fixed2.format(data.max_concurrency) }));
  }
  var curve = data.concurrency_curve || {};
  if (curve.max_concurrency_fit !== null && curve.max_concurrency_fit !== undefined) {
    add(format(T.max_concurrency_fit, { tokens: integer.format(data.tokens_per_request) }),
      format(T.requests_value, { value: integer.format(curve.max_concurrency_fit) }));
  }
}

// ---------------------------------------------------------------- rules of thumb

// The API's English label, matched against the known rules so that the page can say it in its language;
// a rule it does not know keeps the API's label.
var RULE_PATTERNS = {
  overhead_factor: /^\(weights \+ KV demand\) × ([0-9.]+)$/,
  activations_share: /^activations ≈ 20% of the KV demand$/,
  plan_limit: /^plan at no more than 90% of the card \(keep 10–20% free\)$/,
};

function ruleLabel(key, rule) {
  var label = String(rule.label || key);
  var match = RULE_PATTERNS[key] ? RULE_PATTERNS[key].exec(label) : null;
  if (!match || !T["rule_" + key]) return label;
  return format(T["rule_" + key], { factor: match[1] || "" });
}

function renderRules(data) {
  var card = document.getElementById("rules-of-thumb");
  var body = document.querySelector("#rules-table tbody");
  body.textContent = "";
  var rules = data.rules_of_thumb || {};
  var keys = Object.keys(rules);
  keys.forEach(function (key) {
    var rule = rules[key] || {};
    body.appendChild(el("tr", { "data-rule": key, "data-fits": String(!!rule.fits) },
      el("th", { scope: "row", title: T["rule_title_" + key] || null, text: ruleLabel(key, rule) }),
      el("td", { className: "num", text: isNumber(rule.bytes) ? gb(rule.bytes) : "—" }),
      el("td", { className: "num", text: isNumber(rule.bytes) ? gib(rule.bytes) : "—" }),
      el("td", {}, el("span", { className: "rule-mark " + (rule.fits ? "is-fit" : "is-not-fit") },
        el("span", { "aria-hidden": "true", text: rule.fits ? "✓ " : "✕ " }),
        rule.fits ? T.fits : T.does_not_fit))));
  });
  card.hidden = !keys.length;
}

// ---------------------------------------------------------------- checkpoint facts

function signedBytes(value) {
  return format(T.bytes_value, { value: signedInteger.format(value) });
}

function sentence(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function renderCheckpoint(data) {
  var box = document.getElementById("checkpoint-facts");
  var upload = document.getElementById("checkpoint-upload");
  box.textContent = "";
  var facts = data.checkpoint;
  if (!facts) {
    box.appendChild(el("p", { className: "muted", text: format(T.checkpoint_none, { model: data.model || "" }) }));
    return;
  }
  upload.open = false;
  var weights = facts.weights || {};
  var parameters = facts.parameters || {};
  function cell(value, bytes) {
    if (value === null || value === undefined) {
      return el("td", { className: "num muted", text: T.checkpoint_unknown });
    }
    if (!bytes) return el("td", { className: "num", text: integer.format(value) });
    return el("td", { className: "num" }, el("span", { text: gibValue(value) }),
      el("span", { className: "cell-detail", text: format(T.bytes_value, { value: integer.format(value) }) }));
  }
  function difference(value, relative, bytes) {
    if (value === null || value === undefined) return el("td", { className: "num muted", text: "—" });
    var main = bytes ? signedBytes(value) : signedInteger.format(value);
    return el("td", { className: "num" }, el("span", { text: main }),
      isNumber(relative) ? el("span", { className: "cell-detail", text: percent.format(relative) }) : null);
  }
  var table = el("table", { className: "table checkpoint-table", id: "checkpoint-table" },
    el("thead", {}, el("tr", {},
      el("th", { scope: "col", text: "" }),
      el("th", { scope: "col", className: "num", text: T.checkpoint_computed }),
      el("th", { scope: "col", className: "num", text: T.checkpoint_actual }),
      el("th", { scope: "col", className: "num", text: T.checkpoint_difference }))),
    el("tbody", {},
      el("tr", { "data-row": "weights" }, el("th", { scope: "row", text: T.checkpoint_weights }),
        cell(weights.computed_bytes, true), cell(weights.actual_bytes, true),
        difference(weights.difference_bytes, weights.relative_difference, true)),
      el("tr", { "data-row": "parameters" }, el("th", { scope: "row", text: T.checkpoint_parameters }),
        cell(parameters.computed, false), cell(parameters.actual, false),
        difference(parameters.difference, parameters.relative_difference, false))));
  box.appendChild(el("p", { className: "muted caption",
    text: format(T.checkpoint_source, { source: T["checkpoint_source_" + facts.source] || facts.source }) }));
  box.appendChild(table);
  [weights.explanation, parameters.explanation].forEach(function (text) {
    if (text) box.appendChild(el("p", { className: "checkpoint-explanation", text: sentence(text) }));
  });
  var byDtype = facts.bytes_by_dtype;
  if (byDtype && Object.keys(byDtype).length) {
    var dtypes = el("dl", { className: "dtype-list" });
    Object.keys(byDtype).forEach(function (dtype) {
      dtypes.appendChild(el("div", {}, el("dt", { text: dtype }), el("dd", { text: gibValue(byDtype[dtype]) })));
    });
    box.appendChild(el("h3", { text: T.checkpoint_by_dtype }));
    box.appendChild(dtypes);
  }
  [["checkpoint_hints", facts.quantization_hints], ["checkpoint_warnings", facts.warnings]].forEach(function (pair) {
    var items = pair[1] || [];
    if (!items.length) return;
    var list = el("ul", { className: "checkpoint-list" });
    items.forEach(function (text) { list.appendChild(el("li", { text: text })); });
    box.appendChild(el("h3", { text: T[pair[0]] }));
    box.appendChild(list);
  });
}

function plotConfig(name) {
  return {
    responsive: true,
    displaylogo: false,
    modeBarButtons: [["toImage"]],
    toImageButtonOptions: { filename: name, scale: 2 },
    locale: LANG,
  };
}

function baseLayout() {
  return {
    font: { family: FONT, size: 12, color: "#1d2939" },
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
    hoverlabel: { font: { family: FONT } },
    legend: { orientation: "h", x: 0, xanchor: "left", y: -0.18, yanchor: "top", traceorder: "normal" },
  };
}

function sideLabel(text, y, color, above) {
  return {
    xref: "paper", x: 1, xanchor: "left", yref: "y", y: y, yanchor: above ? "bottom" : "top",
    text: text, showarrow: false, align: "left", font: { color: color, size: 11 }, xshift: 6,
  };
}

function renderMemoryChart(data) {
  var gpus = data.per_gpu || [];
  var labels = gpus.map(function (gpu) { return format(T.gpu_label, { index: gpu.index }); });
  var keys = componentKeys(data.memory_per_gpu || (gpus[0] && gpus[0].components));
  var traces = keys.map(function (key) {
    var name = T[key] || key;
    return {
      type: "bar",
      name: name,
      x: labels,
      y: gpus.map(function (gpu) { return toGiB(gpu.components[key] || 0); }),
      marker: { color: componentColor(key) },
      hovertemplate: "%{x}<br>" + name + ": %{y:.2f} " + T.gib + "<extra></extra>",
    };
  });
  var capacity = cardTotal(data);
  var budget = Math.max.apply(null, gpus.map(function (gpu) { return gpu.budget_bytes; }));
  var tallest = Math.max.apply(null, gpus.map(function (gpu) {
    return keys.reduce(function (sum, key) { return sum + (gpu.components[key] || 0); }, 0);
  }));
  var layout = Object.assign(baseLayout(), {
    barmode: "stack",
    bargap: gpus.length <= 2 ? 0.6 : gpus.length > 16 ? 0.1 : 0.35,
    margin: { t: 16, r: 150, b: 40, l: 64 },
    height: 420,
    xaxis: { type: "category", tickangle: gpus.length > 12 ? -45 : 0, automargin: true },
    yaxis: { title: { text: T.memory_axis }, rangemode: "tozero", range: [0, toGiB(Math.max(capacity, tallest)) * 1.08],
      gridcolor: "#e4e7ec", zeroline: false },
    shapes: [
      { type: "line", xref: "paper", x0: 0, x1: 1, yref: "y", y0: toGiB(capacity), y1: toGiB(capacity),
        line: { color: CAPACITY_COLOR, width: 2 } },
      { type: "line", xref: "paper", x0: 0, x1: 1, yref: "y", y0: toGiB(budget), y1: toGiB(budget),
        line: { color: BUDGET_COLOR, width: 2, dash: "dash" } },
    ],
    annotations: [
      sideLabel(T.capacity + "<br>" + gib(capacity) + " " + T.gib, toGiB(capacity), CAPACITY_COLOR, true),
      sideLabel(T.budget + "<br>" + gib(budget) + " " + T.gib, toGiB(budget), BUDGET_COLOR, false),
    ],
  });
  Plotly.react("memory-chart", traces, layout, plotConfig("memory-per-gpu"));
}

function renderConcurrencyChart(data) {
  var curve = data.concurrency_curve || { concurrency: [], required_bytes: [] };
  var xs = curve.concurrency || [];
  var ys = (curve.required_bytes || []).map(toGiB);
  if (!xs.length) {
    Plotly.purge("concurrency-chart");
    return;
  }
  // The curve is linear in concurrency (static memory + KV per request): read any point off it.
  var x0 = xs[0];
  var x1 = xs[xs.length - 1];
  var slope = x1 === x0 ? 0 : (ys[ys.length - 1] - ys[0]) / (x1 - x0);
  function at(c) { return ys[0] + (c - x0) * slope; }
  var limit = toGiB(curve.limit_bytes);
  var traces = [
    { type: "scatter", mode: "lines", name: T.required_memory, x: xs, y: ys,
      line: { color: COLORS.kv_cache, width: 3 },
      hovertemplate: "%{x}: %{y:.2f} " + T.gib + "<extra></extra>" },
    { type: "scatter", mode: "lines", name: T.limit, x: [Math.min(0, x0), x1], y: [limit, limit],
      line: { color: CAPACITY_COLOR, width: 2, dash: "dash" },
      hovertemplate: T.limit + ": %{y:.2f} " + T.gib + "<extra></extra>" },
  ];
  var annotations = [];
  var fit = curve.max_concurrency_fit;
  if (typeof fit === "number" && fit >= 1) {
    var label = format(T.stops_fitting, { value: integer.format(fit) });
    traces.push({ type: "scatter", mode: "markers", name: label, x: [fit], y: [at(fit)], showlegend: false,
      marker: { color: CAPACITY_COLOR, size: 12, symbol: "circle", line: { color: "#fff", width: 2 } },
      hovertemplate: label + "<extra></extra>" });
    annotations.push({ x: fit, y: at(fit), text: label, showarrow: true, arrowhead: 2, arrowcolor: CAPACITY_COLOR,
      ax: -60, ay: -40, font: { color: CAPACITY_COLOR }, bgcolor: "rgba(255,255,255,0.85)" });
  } else if (typeof fit === "number") {
    annotations.push({ xref: "paper", yref: "paper", x: 0.02, y: 0.98, xanchor: "left", yanchor: "top",
      text: T.none_fits, showarrow: false, font: { color: CAPACITY_COLOR } });
  }
  var requested = data.assumptions && data.assumptions.per_replica_concurrency;
  if (typeof requested === "number" && requested >= 1) {
    traces.push({ type: "scatter", mode: "markers", name: T.requested, x: [requested], y: [at(requested)],
      marker: { color: "#1d2939", size: 10, symbol: "diamond" },
      hovertemplate: T.requested + ": %{x} → %{y:.2f} " + T.gib + "<extra></extra>" });
  }
  var layout = Object.assign(baseLayout(), {
    margin: { t: 16, r: 24, b: 40, l: 64 },
    height: 380,
    xaxis: { title: { text: T.concurrency_axis }, rangemode: "tozero", gridcolor: "#e4e7ec", zeroline: false },
    yaxis: { title: { text: T.memory_axis }, rangemode: "tozero", gridcolor: "#e4e7ec", zeroline: false },
    annotations: annotations,
    legend: { orientation: "h", x: 0, xanchor: "left", y: -0.22, yanchor: "top", traceorder: "normal" },
  });
  Plotly.react("concurrency-chart", traces, layout, plotConfig("memory-against-concurrency"));
}

function renderLaunch(data, payload) {
  var pre = document.getElementById("launch-command");
  var button = document.getElementById("copy-launch");
  var args = data.launch_args || [];
  if (!args.length) {
    pre.textContent = T.no_launch_args;
    pre.classList.add("is-empty");
    button.hidden = true;
    return;
  }
  pre.classList.remove("is-empty");
  var command = (data.launch_command || "MODEL").replace("MODEL", data.model || payload.model || "MODEL");
  pre.textContent = [command].concat(args).join(" ");
  button.hidden = false;
}

// An empty utilization field shows the value the engine's default gave.
function showResolvedDefaults(data) {
  var input = form.elements.gpu_memory_utilization;
  var resolved = utilizationOf(data);
  if (input && isNumber(resolved)) input.placeholder = format(T.utilization_default, { value: resolved });
}

function render(data, payload) {
  lastResult = data;
  lastPayload = payload || {};
  showResolvedDefaults(data);
  document.getElementById("empty-state").hidden = true;
  document.getElementById("results").hidden = false;  // before plotting: Plotly measures the container
  renderVerdict(data, payload);
  renderEnvironment(data);
  renderRisks(data);
  renderRemedies(data);
  renderTable(data);
  renderFigures(data);
  renderRules(data);
  renderCheckpoint(data);
  renderMemoryChart(data);
  renderConcurrencyChart(data);
  renderLaunch(data, payload);
}

// ---------------------------------------------------------------- estimate

function rememberInUrl(payload) {
  var params = new URLSearchParams();
  Object.keys(payload).forEach(function (key) { params.set(key, payload[key]); });
  rememberUrl(window.location.pathname + "?" + params.toString());
}

function clearSolveResults() {
  document.querySelectorAll("#solve .solve-result").forEach(function (box) {
    box.hidden = true;
    box.textContent = "";
  });
}

async function estimate() {
  clearFormErrors();
  var payload = collectPayload();
  await whileBusy(form, estimateButton, T.estimating, T.estimate, async function () {
    var result = await postJson(form.dataset.estimateUrl, payload, csrfToken);
    if (!result.ok) {
      showFormError(T.estimate_failed, result.body, result.status);
      return;
    }
    rememberInUrl(payload);
    clearSolveResults();
    render(result.body, payload);
  }, function () {
    showFormError(T.network_error, null, null);
  });
}

form.addEventListener("submit", function (event) {
  event.preventDefault();
  estimate();
});

form.elements.engine.addEventListener("change", updateEngineFields);
form.elements.model.addEventListener("change", updateModelFields);

// A GiB field typed over no longer stands for the exact bytes it was restored from.
GIB_FIELDS.forEach(function (name) {
  form.elements[name].addEventListener("input", function () {
    delete this.dataset.bytes;
    delete this.dataset.shown;
  });
});

// ---------------------------------------------------------------- solvers

function solveValueText(body) {
  if (!body.value) return T.solve_nothing;
  var key = "solve_value_" + body.target;
  if (body.value === 1 && T[key + "_one"]) key += "_one";
  var text = format(T[key] || "{value}", { value: integer.format(body.value) });
  if (body.target === "fewest_gpus" && body.estimate) {
    text += " · " + format(T.solve_layout, { tp: body.estimate.tp, pp: body.estimate.pp,
      replicas: body.estimate.replicas });
  }
  return text;
}

function renderSolve(box, body) {
  box.textContent = "";
  box.className = "solve-result" + (body.value ? "" : " is-nothing");
  box.setAttribute("data-value", String(body.value));
  box.appendChild(el("p", { className: "solve-value", text: solveValueText(body) }));
  box.appendChild(el("p", { className: "solve-stops" },
    el("span", { className: "solve-stops-label", text: T.stops_because + ": " }),
    el("span", { className: "solve-stops-text", text: body.stops_because || "" })));
  if (body.value && canApply(body.settings)) {
    box.appendChild(applyButton(T.solve_apply, body.settings, "solve-apply"));
  }
  box.hidden = false;
}

async function solve(button) {
  var box = button.parentNode.querySelector(".solve-result");
  var label = button.textContent;
  var payload = collectPayload();
  payload.target = button.getAttribute("data-target");
  button.disabled = true;
  button.textContent = T.solving;
  try {
    var result = await postJson(form.dataset.solveUrl, payload, csrfToken);
    if (!result.ok) {
      box.className = "solve-result alert alert-error";
      var fields = (result.body && result.body.extra && result.body.extra.fields) || {};
      fillAlert(box, T.solve_failed, result.body, result.status, fields);
      return;
    }
    renderSolve(box, result.body);
  } catch (error) {
    box.className = "solve-result alert alert-error";
    fillAlert(box, T.network_error, null, null, {});
  } finally {
    button.disabled = false;
    button.textContent = label;
  }
}

document.querySelectorAll("#solve .solve-button").forEach(function (button) {
  button.addEventListener("click", function () { solve(button); });
});

// ---------------------------------------------------------------- upload a config.json

var uploadBox = document.getElementById("upload");
var uploadButton = document.getElementById("upload-button");
var uploadFile = document.getElementById("upload-file");
var uploadSlug = document.getElementById("upload-slug");
var uploadStatus = document.getElementById("upload-status");

function uploadMessage(kind, title, detail) {
  statusMessage(uploadStatus, kind, title, detail);
}

// The uploads' group of a model select (the model, or the draft model after the "None" option).
function ownGroup(select, id) {
  var group = document.getElementById(id);
  if (group) return group;
  group = el("optgroup", { id: id, label: T.your_uploads });
  var first = Array.prototype.find.call(select.children, function (node) { return node.tagName === "OPTGROUP"; });
  select.insertBefore(group, first || null);
  return group;
}

// sameConfig: the organisation's copy of a listed model (checkpoint facts), so its data-moe still holds.
function addModelOption(select, groupId, model, sameConfig) {
  var previous = Array.prototype.find.call(select.options, function (o) { return o.value === model.slug; });
  var moe = sameConfig && previous ? previous.getAttribute("data-moe") : null;
  Array.prototype.slice.call(select.options).forEach(function (option) {
    if (option.value === model.slug) option.remove();  // the upload shadows a model of the same name
  });
  var text = model.slug + (model.supported ? "" : " — " + T.not_supported + ": " + model.unsupported_reason);
  // a fresh upload is not parsed on this page: whether it has experts is unknown until the API answers
  var option = el("option", { value: model.slug, text: text, "data-moe": sameConfig ? moe : "unknown" });
  if (!model.supported) {
    option.disabled = true;
    option.title = model.unsupported_reason;
  }
  var group = ownGroup(select, groupId);
  var before = Array.prototype.find.call(group.children, function (o) { return o.value > model.slug; });
  group.insertBefore(option, before || null);
  return option;
}

function addUploadedModel(model, sameConfig) {
  var select = form.elements.model;
  var draft = form.elements.draft_model;
  var draftValue = draft.value;
  addModelOption(select, "models-own", model, sameConfig);
  addModelOption(draft, "drafts-own", model, sameConfig);
  draft.value = draftValue;
  if (model.supported) select.value = model.slug;
  updateModelFields();
}

uploadFile.addEventListener("change", function () {
  if (uploadSlug.value.trim() || !uploadFile.files.length) return;
  var stem = uploadFile.files[0].name.replace(/\.json$/i, "").replace(/[^A-Za-z0-9._-]+/g, "-");
  if (stem && stem !== "config") uploadSlug.value = stem;
});

uploadButton.addEventListener("click", async function () {
  clearErrors(uploadBox, "data-upload-error-for");
  uploadStatus.hidden = true;
  var slug = uploadSlug.value.trim();
  var file = uploadFile.files[0];
  var missing = {};
  if (!file) missing.config_file = [T.choose_file];
  if (!slug) missing.slug = [T.give_name];
  if (Object.keys(missing).length) {
    placeFieldErrors(uploadBox, "data-upload-error-for", missing, function (name) {
      return name === "slug" ? uploadSlug : uploadFile;
    });
    return;
  }
  var data = new FormData();
  data.append("slug", slug);
  data.append("config_file", file);
  uploadButton.disabled = true;
  uploadButton.textContent = T.uploading;
  try {
    var result = await postForm(form.dataset.modelsUrl, data, csrfToken);
    if (!result.ok) {
      var body = result.body || {};
      var fields = Object.assign({}, (body.extra && body.extra.fields) || {});
      if (fields.config && !fields.config_file) {
        fields.config_file = fields.config;
        delete fields.config;
      }
      var unplaced = placeFieldErrors(uploadBox, "data-upload-error-for", fields, function (name) {
        return name === "slug" ? uploadSlug : uploadFile;
      });
      var detail = Object.keys(unplaced).length ? messagesOf(unplaced)
        : Object.keys(fields).length ? "" : body.message || "HTTP " + result.status;
      uploadMessage("error", T.upload_failed, detail);
      return;
    }
    var model = result.body;
    addUploadedModel(model);
    if (model.supported) {
      uploadMessage("ok", format(T.uploaded, { slug: model.slug }), "");
    } else {
      uploadMessage("error", format(T.uploaded_unsupported, { slug: model.slug, reason: model.unsupported_reason }),
        "");
    }
  } catch (error) {
    uploadMessage("error", T.network_error, "");
  } finally {
    uploadButton.disabled = false;
    uploadButton.textContent = T.upload;
  }
});

// ---------------------------------------------------------------- upload checkpoint facts

var checkpointBox = document.getElementById("checkpoint-upload");
var checkpointButton = document.getElementById("checkpoint-button");
var checkpointIndex = document.getElementById("checkpoint-index");
var checkpointHeaders = document.getElementById("checkpoint-headers");
var checkpointStatus = document.getElementById("checkpoint-status");

function checkpointMessage(kind, title, detail) {
  statusMessage(checkpointStatus, kind, title, detail);
}

function checkpointInput(name) {
  return name === "headers" ? checkpointHeaders : name === "index" ? checkpointIndex : null;
}

checkpointButton.addEventListener("click", async function () {
  clearErrors(checkpointBox, "data-checkpoint-error-for");
  checkpointStatus.hidden = true;
  var index = checkpointIndex.files[0];
  var headers = checkpointHeaders.files[0];
  var model = (lastResult && lastResult.model) || form.elements.model.value;
  if (!index && !headers) {
    placeFieldErrors(checkpointBox, "data-checkpoint-error-for", { index: [T.checkpoint_choose] }, checkpointInput);
    return;
  }
  var data = new FormData();
  data.append("model", model);
  if (index) data.append("index", index);
  if (headers) data.append("headers", headers);
  checkpointButton.disabled = true;
  checkpointButton.textContent = T.uploading;
  try {
    var result = await postForm(form.dataset.checkpointUrl, data, csrfToken);
    if (!result.ok) {
      var body = result.body || {};
      var fields = (body.extra && body.extra.fields) || {};
      var unplaced = placeFieldErrors(checkpointBox, "data-checkpoint-error-for", fields, checkpointInput);
      var detail = Object.keys(unplaced).length ? messagesOf(unplaced)
        : Object.keys(fields).length ? "" : body.message || "HTTP " + result.status;
      checkpointMessage("error", T.upload_failed, detail);
      return;
    }
    addUploadedModel(result.body, true);  // the facts live on the organisation's copy, which now shadows the catalog
    checkpointIndex.value = "";
    checkpointHeaders.value = "";
    checkpointMessage("ok", format(T.checkpoint_uploaded, { slug: result.body.slug }), "");
    await estimate();
  } catch (error) {
    checkpointMessage("error", T.network_error, "");
  } finally {
    checkpointButton.disabled = false;
    checkpointButton.textContent = T.upload;
  }
});

// ---------------------------------------------------------------- copy the launch command

document.getElementById("copy-launch").addEventListener("click", function () {
  var button = this;
  var text = document.getElementById("launch-command").textContent;
  function done() {
    button.textContent = T.copied;
    window.setTimeout(function () { button.textContent = T.copy; }, 1500);
  }
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, function () { selectAndCopy(); done(); });
  } else {
    selectAndCopy();
    done();
  }
  function selectAndCopy() {
    var range = document.createRange();
    range.selectNodeContents(document.getElementById("launch-command"));
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    try { document.execCommand("copy"); } catch (error) { /* the text stays selected for Ctrl+C */ }
  }
});

// ---------------------------------------------------------------- start

registerPlotlyLocale(T.download_plot);

updateFields();
var params = new URLSearchParams(window.location.search);
if (params.has("model") && params.has("gpu")) {
  fillForm(params);
  estimate();
}
