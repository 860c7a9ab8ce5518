/*
 * A report's page (server-rendered; this script adds what needs the API):
 * - the sign form asks for confirmation (a signed version never changes);
 * - while a signing is queued or running, its progress is polled every second (GET /api/v1/reports/ID/versions/N/)
 *   and shown; once the version is signed, or the signing failed, the page is loaded again to show it;
 * - while a worker gathers a version's evidence (drafting), its progress is followed the same way and the page is
 *   loaded again once the version is drafted or the drafting failed.
 */
import {
  bindConfirms,
  format,
  isNumber,
  request,
} from "./common.js";
import { T } from "./words/reports.js";

var POLL_MS = 1000;
// the worker's progress messages (reports.services.reports.version_sign) → the page's words
var STEPS = { "queued for signing": "signing_queued", "rendering the PDF": "signing_rendering", signing: "signing_signing" };

function sleep(ms) { return new Promise(function (resolve) { window.setTimeout(resolve, ms); }); }

function setText(id, text) {
  var node = document.getElementById(id);
  if (node) node.textContent = text;
}

function showBar(id, fraction) {
  var bar = document.getElementById(id);
  if (bar && isNumber(fraction)) bar.style.width = Math.round(fraction * 100) + "%";
}

function percentText(version) {
  return format(T.percent_value, { value: Math.round((version.progress || 0) * 100) });
}

// Poll the version every second until `step(version)` says it has ended (it then reloads the page); three failed
// reads in a row show `poll_failed` in the error box until a read succeeds again.
async function follow(url, errorBoxId, step) {
  var errorBox = document.getElementById(errorBoxId);
  var failures = 0;
  while (true) {
    await sleep(POLL_MS);
    var result = null;
    try {
      result = await request(url, { headers: { Accept: "application/json" } });
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
    if (step(result.body)) {
      window.location.reload();
      return;
    }
  }
}

// a signing: done once signed, failed once it carries an error or is no longer approved
function signingStep(version) {
  if (version.status === "signed") {
    showBar("signing-bar", 1);
    setText("signing-state", T.signing_signed);
    return true;
  }
  if (version.error || version.status !== "approved") {
    setText("signing-state", T.signing_failed);
    return true;
  }
  showBar("signing-bar", version.progress);
  var key = STEPS[version.progress_message];
  if (key) setText("signing-state", T[key] + " " + percentText(version));
  return false;
}

// a drafting: done once the version is drafted, failed once it carries an error
function draftingStep(version) {
  showBar("drafting-bar", version.progress);
  setText("drafting-state", T.drafting + " " + percentText(version));
  if (!version.drafting || version.error) {
    setText("drafting-state", version.error ? T.drafting_failed : T.drafting_done);
    return true;
  }
  return false;
}

var root = document.getElementById("report-page");
if (root) {
  bindConfirms(root);
  var data = JSON.parse(document.getElementById("report-data").textContent);
  if (data.signing) follow(data.api_url, "signing-poll-error", signingStep);
  if (data.drafting) follow(data.api_url, "drafting-poll-error", draftingStep);
}
