/*
 * The sizing page: posts the form to the quick-estimate API and draws the answer.
 * No framework and no build step. Every string shown comes from the server-rendered #i18n blob,
 * every number from the API (bytes; formatted here as GB = 10^9 and GiB = 2^30).
 */
(function () {
  "use strict";

  var T = JSON.parse(document.getElementById("i18n").textContent);
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
  var CAPACITY_COLOR = "#b42318";
  var BUDGET_COLOR = "#475467";
  var FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK SC", ' +
    '"PingFang SC", "Microsoft YaHei", sans-serif';
  var INTEGER_FIELDS = ["gpus", "tp", "pp", "max_model_len", "concurrency", "tokens_per_request",
    "max_num_seqs", "max_num_batched_tokens", "block_size"];
  var FLOAT_FIELDS = ["gpu_memory_utilization"];
  var TEXT_FIELDS = ["model", "gpu", "weights", "kv_dtype", "engine"];
  var ALL_FIELDS = TEXT_FIELDS.concat(INTEGER_FIELDS, FLOAT_FIELDS);

  var form = document.getElementById("sizing-form");
  var csrfToken = form.querySelector("[name=csrfmiddlewaretoken]").value;
  var estimateButton = document.getElementById("estimate-button");
  var formError = document.getElementById("form-error");

  var fixed2 = new Intl.NumberFormat(LANG, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  var integer = new Intl.NumberFormat(LANG, { maximumFractionDigits: 0 });
  var compact = new Intl.NumberFormat(LANG, { notation: "compact", maximumFractionDigits: 2 });

  // ---------------------------------------------------------------- small helpers

  function format(template, values) {
    return template.replace(/\{(\w+)\}/g, function (match, key) {
      return Object.prototype.hasOwnProperty.call(values, key) ? String(values[key]) : match;
    });
  }

  function el(tag, attrs) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") node.textContent = attrs[key];
      else if (key === "className") node.className = attrs[key];
      else node.setAttribute(key, attrs[key]);
    });
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  function gb(bytes) { return fixed2.format(bytes / GB); }
  function gib(bytes) { return fixed2.format(bytes / GIB); }
  function toGiB(bytes) { return bytes / GIB; }

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

  // ---------------------------------------------------------------- form values and errors

  function collectPayload() {
    var payload = {};
    ALL_FIELDS.forEach(function (name) {
      var input = form.elements[name];
      if (!input) return;
      var raw = String(input.value || "").trim();
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

  function fillForm(params) {
    ALL_FIELDS.forEach(function (name) {
      if (!params.has(name)) return;
      var input = form.elements[name];
      if (!input) return;
      var value = params.get(name);
      if (input.tagName === "SELECT") {
        var option = Array.prototype.find.call(input.options, function (o) { return o.value === value; });
        if (!option || option.disabled) return;
      }
      input.value = value;
    });
    var advanced = ["max_num_seqs", "max_num_batched_tokens", "block_size"];
    if (advanced.some(function (name) { return params.has(name); })) {
      form.querySelector("details.advanced").open = true;
    }
  }

  function clearErrors(scope, attribute) {
    scope.querySelectorAll("[" + attribute + "]").forEach(function (node) { node.textContent = ""; });
    scope.querySelectorAll("[aria-invalid]").forEach(function (node) { node.removeAttribute("aria-invalid"); });
  }

  function clearFormErrors() {
    clearErrors(form, "data-error-for");
    formError.hidden = true;
    formError.textContent = "";
  }

  // Put field errors next to their fields; return those with no field on the page.
  function placeFieldErrors(scope, attribute, fields, inputFor) {
    var unplaced = {};
    Object.keys(fields || {}).forEach(function (name) {
      var slot = scope.querySelector("[" + attribute + '="' + name + '"]');
      if (!slot) {
        unplaced[name] = fields[name];
        return;
      }
      slot.textContent = messagesOf(fields[name]);
      var input = inputFor(name);
      if (input) input.setAttribute("aria-invalid", "true");
    });
    return unplaced;
  }

  function showFormError(title, body, status) {
    var fields = (body && body.extra && body.extra.fields) || {};
    var unplaced = placeFieldErrors(form, "data-error-for", fields, function (name) {
      return form.elements[name] || null;
    });
    formError.textContent = "";
    formError.appendChild(el("p", { className: "alert-title", text: title }));
    if (body && body.message) {
      formError.appendChild(el("p", { text: body.message }));
    } else if (status) {
      formError.appendChild(el("p", { text: "HTTP " + status }));
    }
    var rest = Object.keys(unplaced);
    if (rest.length) {
      var list = el("ul");
      rest.forEach(function (name) { list.appendChild(el("li", { text: name + ": " + messagesOf(unplaced[name]) })); });
      formError.appendChild(list);
    }
    if (body && body.code) formError.appendChild(el("p", { className: "error-code", text: body.code }));
    formError.hidden = false;
    var firstInvalid = form.querySelector("[aria-invalid=true]");
    (firstInvalid || formError).scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  // ---------------------------------------------------------------- rendering

  function bindingGpu(data) {
    var gpus = data.per_gpu || [];
    if (!gpus.length) return null;
    return gpus.reduce(function (worst, gpu) { return gpu.headroom_bytes < worst.headroom_bytes ? gpu : worst; });
  }

  function renderVerdict(data) {
    var box = document.getElementById("verdict");
    box.textContent = "";
    box.className = "verdict " + (data.fits ? "verdict-ok" : "verdict-bad");
    box.setAttribute("data-fits", data.fits ? "true" : "false");
    var head = el("div", { className: "verdict-head" },
      el("span", { className: "verdict-icon", "aria-hidden": "true", text: data.fits ? "✓" : "✕" }),
      el("strong", { className: "verdict-title", text: data.fits ? T.fits : T.does_not_fit }),
      el("span", { className: "verdict-headroom",
        text: T.headroom + " " + gib(data.headroom_bytes_per_gpu) + " " + T.gib }));
    box.appendChild(head);
    box.appendChild(el("p", { className: "verdict-summary", text: format(T.summary, {
      model: data.model || "",
      gpus: data.gpus,
      gpu_name: data.gpu_name,
      tp: data.tp,
      pp: data.pp,
      replicas: data.replicas,
      weights: String(data.weight_format).toUpperCase(),
      kv_dtype: String(data.kv_dtype).toUpperCase(),
      engine: data.engine === "vllm" ? "vLLM" : data.engine,
    }) }));
    [["problems", data.problems], ["warnings", data.warnings]].forEach(function (pair) {
      var items = pair[1] || [];
      if (!items.length) return;
      var list = el("ul", { className: "verdict-list verdict-" + pair[0] });
      items.forEach(function (text) { list.appendChild(el("li", { text: text })); });
      box.appendChild(el("div", { className: "verdict-section" },
        el("h3", { text: T[pair[0]] }), list));
    });
    if (data.approximate) box.appendChild(el("p", { className: "verdict-note", text: T.approximate }));
  }

  function renderTable(data) {
    var binding = bindingGpu(data);
    var caption = document.getElementById("binding-caption");
    caption.textContent = format(T.binding_caption, { index: binding ? binding.index : 0 });
    var body = document.querySelector("#memory-table tbody");
    body.textContent = "";
    var memory = data.memory_per_gpu || {};
    COMPONENTS.forEach(function (key) {
      if (!(key in memory)) return;
      body.appendChild(el("tr", { "data-row": key },
        el("th", { scope: "row" },
          el("span", { className: "swatch", style: "background:" + COLORS[key], "aria-hidden": "true" }),
          T[key]),
        el("td", { className: "num", text: gb(memory[key]) }),
        el("td", { className: "num", text: gib(memory[key]) })));
    });
    [
      ["required", data.required_bytes_per_gpu, "row-total"],
      ["usable", data.usable_bytes_per_gpu, "row-sub"],
      ["headroom", data.headroom_bytes_per_gpu, data.headroom_bytes_per_gpu < 0 ? "row-sub row-negative" : "row-sub"],
    ].forEach(function (row) {
      body.appendChild(el("tr", { "data-row": row[0], className: row[2] },
        el("th", { scope: "row", text: T[row[0]] }),
        el("td", { className: "num", text: gb(row[1]) }),
        el("td", { className: "num", text: gib(row[1]) })));
    });
  }

  function renderFigures(data) {
    var list = document.getElementById("key-figures");
    list.textContent = "";
    function add(label, value, detail) {
      list.appendChild(el("div", { className: "figure" },
        el("dt", { text: label }),
        el("dd", {}, el("span", { className: "figure-value", text: value }),
          detail ? el("span", { className: "figure-detail", text: detail }) : null)));
    }
    add(T.parameters, compact.format(data.parameters_total), integer.format(data.parameters_total));
    add(T.kv_per_token, format(T.bytes_value, { value: integer.format(data.kv_bytes_per_token) }));
    add(T.kv_per_token_per_gpu, format(T.bytes_value, { value: integer.format(data.kv_bytes_per_token_per_gpu) }));
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
    var traces = COMPONENTS.map(function (key) {
      return {
        type: "bar",
        name: T[key],
        x: labels,
        y: gpus.map(function (gpu) { return toGiB(gpu.components[key] || 0); }),
        marker: { color: COLORS[key] },
        hovertemplate: "%{x}<br>" + T[key] + ": %{y:.2f} " + T.gib + "<extra></extra>",
      };
    });
    var capacity = Math.max.apply(null, gpus.map(function (gpu) { return gpu.capacity_bytes; }));
    var budget = Math.max.apply(null, gpus.map(function (gpu) { return gpu.budget_bytes; }));
    var tallest = Math.max.apply(null, gpus.map(function (gpu) {
      return COMPONENTS.reduce(function (sum, key) { return sum + (gpu.components[key] || 0); }, 0);
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

  function render(data, payload) {
    document.getElementById("empty-state").hidden = true;
    document.getElementById("results").hidden = false;  // before plotting: Plotly measures the container
    renderVerdict(data);
    renderTable(data);
    renderFigures(data);
    renderMemoryChart(data);
    renderConcurrencyChart(data);
    renderLaunch(data, payload);
  }

  // ---------------------------------------------------------------- estimate

  function rememberInUrl(payload) {
    var params = new URLSearchParams();
    Object.keys(payload).forEach(function (key) { params.set(key, payload[key]); });
    var url = window.location.pathname + "?" + params.toString();
    window.history.replaceState(null, "", url);
    // the language switch brings the user back to the same estimate
    document.querySelectorAll(".language-switch input[name=next]").forEach(function (input) { input.value = url; });
  }

  async function estimate() {
    clearFormErrors();
    var payload = collectPayload();
    estimateButton.disabled = true;
    estimateButton.textContent = T.estimating;
    form.setAttribute("aria-busy", "true");
    try {
      var result = await request(form.dataset.estimateUrl, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken },
        body: JSON.stringify(payload),
      });
      if (!result.ok) {
        showFormError(T.estimate_failed, result.body, result.status);
        return;
      }
      rememberInUrl(payload);
      render(result.body, payload);
    } catch (error) {
      showFormError(T.network_error, null, null);
    } finally {
      estimateButton.disabled = false;
      estimateButton.textContent = T.estimate;
      form.removeAttribute("aria-busy");
    }
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    estimate();
  });

  // ---------------------------------------------------------------- upload a config.json

  var uploadBox = document.getElementById("upload");
  var uploadButton = document.getElementById("upload-button");
  var uploadFile = document.getElementById("upload-file");
  var uploadSlug = document.getElementById("upload-slug");
  var uploadStatus = document.getElementById("upload-status");

  function uploadMessage(kind, title, detail) {
    uploadStatus.textContent = "";
    uploadStatus.className = "upload-status alert " + (kind === "error" ? "alert-error" : "alert-ok");
    uploadStatus.appendChild(el("p", { className: "alert-title", text: title }));
    if (detail) uploadStatus.appendChild(el("p", { text: detail }));
    uploadStatus.hidden = false;
  }

  function ownGroup() {
    var group = document.getElementById("models-own");
    if (group) return group;
    group = el("optgroup", { id: "models-own", label: T.your_uploads });
    form.elements.model.insertBefore(group, form.elements.model.firstChild);
    return group;
  }

  function addUploadedModel(model) {
    var select = form.elements.model;
    Array.prototype.slice.call(select.options).forEach(function (option) {
      if (option.value === model.slug) option.remove();  // the upload shadows a model of the same name
    });
    var text = model.slug + (model.supported ? "" : " — " + T.not_supported + ": " + model.unsupported_reason);
    var option = el("option", { value: model.slug, text: text });
    if (!model.supported) {
      option.disabled = true;
      option.title = model.unsupported_reason;
    }
    var group = ownGroup();
    var before = Array.prototype.find.call(group.children, function (o) { return o.value > model.slug; });
    group.insertBefore(option, before || null);
    if (model.supported) select.value = model.slug;
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
      var result = await request(form.dataset.modelsUrl, {
        method: "POST",
        headers: { Accept: "application/json", "X-CSRFToken": csrfToken },
        body: data,
      });
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

  if (window.Plotly && LANG !== "en") {
    Plotly.register({
      moduleType: "locale",
      name: LANG,
      dictionary: { "Download plot as a PNG": T.download_plot, "Download plot": T.download_plot },
      format: {},
    });
  }

  var params = new URLSearchParams(window.location.search);
  if (params.has("model") && params.has("gpu")) {
    fillForm(params);
    estimate();
  }
})();
