/*
 * A report's page (server-rendered; this script adds what needs the API):
 * - the sign form asks for confirmation (a signed version never changes);
 * - while a signing is queued or running, its progress is polled every second (GET /api/v1/reports/ID/versions/N/)
 *   and shown; once the version is signed, or the signing failed, the page is loaded again to show it;
 * - while a worker gathers a version's evidence (drafting), its progress is followed the same way and the page is
 *   loaded again once the version is drafted or the drafting failed.
 */
(function () {
  "use strict";

  var S = window.LlmSizing;
  var T = S.T;
  var format = S.format;
  var isNumber = S.isNumber;

  var POLL_MS = 1000;
  // the worker's progress messages (reports.services.version_sign) → the page's words
  var STEPS = { "queued for signing": "signing_queued", "rendering the PDF": "signing_rendering", signing: "signing_signing" };

  function sleep(ms) { return new Promise(function (resolve) { window.setTimeout(resolve, ms); }); }

  function bindConfirms(scope) {
    scope.querySelectorAll("form[data-confirm]").forEach(function (form) {
      form.addEventListener("submit", function (event) {
        if (!window.confirm(form.getAttribute("data-confirm"))) event.preventDefault();
      });
    });
  }

  function setText(id, text) {
    var node = document.getElementById(id);
    if (node) node.textContent = text;
  }

  function renderProgress(version) {
    var bar = document.getElementById("signing-bar");
    if (bar && isNumber(version.progress)) bar.style.width = Math.round(version.progress * 100) + "%";
    var key = STEPS[version.progress_message];
    if (key) setText("signing-state", T[key] + " " + format(T.percent_value, { value: Math.round((version.progress || 0) * 100) }));
  }

  async function followSigning(data) {
    var errorBox = document.getElementById("signing-poll-error");
    var failures = 0;
    while (true) {
      await sleep(POLL_MS);
      var result = null;
      try {
        result = await S.request(data.api_url, { headers: { Accept: "application/json" } });
      } catch (error) {
        result = null;
      }
      if (!result || !result.ok || !result.body) {
        failures += 1;
        if (failures >= 3 && errorBox) {
          errorBox.textContent = T.poll_failed;
          errorBox.hidden = false;
        }
        continue;
      }
      failures = 0;
      if (errorBox) errorBox.hidden = true;
      var version = result.body;
      if (version.status === "signed") {
        var bar = document.getElementById("signing-bar");
        if (bar) bar.style.width = "100%";
        setText("signing-state", T.signing_signed);
        window.location.reload();
        return;
      }
      if (version.error || version.status !== "approved") {
        setText("signing-state", T.signing_failed);
        window.location.reload();
        return;
      }
      renderProgress(version);
    }
  }

  async function followDrafting(data) {
    var errorBox = document.getElementById("drafting-poll-error");
    var failures = 0;
    while (true) {
      await sleep(POLL_MS);
      var result = null;
      try {
        result = await S.request(data.api_url, { headers: { Accept: "application/json" } });
      } catch (error) {
        result = null;
      }
      if (!result || !result.ok || !result.body) {
        failures += 1;
        if (failures >= 3 && errorBox) {
          errorBox.textContent = T.poll_failed;
          errorBox.hidden = false;
        }
        continue;
      }
      failures = 0;
      if (errorBox) errorBox.hidden = true;
      var version = result.body;
      var bar = document.getElementById("drafting-bar");
      if (bar && isNumber(version.progress)) bar.style.width = Math.round(version.progress * 100) + "%";
      setText("drafting-state", T.drafting + " " + format(T.percent_value, { value: Math.round((version.progress || 0) * 100) }));
      if (!version.drafting || version.error) {
        setText("drafting-state", version.error ? T.drafting_failed : T.drafting_done);
        window.location.reload();
        return;
      }
    }
  }

  var root = document.getElementById("report-page");
  if (!root) return;
  bindConfirms(root);
  var data = JSON.parse(document.getElementById("report-data").textContent);
  if (data.signing) followSigning(data);
  if (data.drafting) followDrafting(data);
})();
