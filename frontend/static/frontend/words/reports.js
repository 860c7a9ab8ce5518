// Every string the report page's script shows, in the active language.
// Django's JavaScript catalog (domain djangojs, /jsi18n/) translates them; keys are the page script's names.

const { gettext: _ } = window;

export const T = Object.freeze({
  signing_queued: _("Queued: a worker starts the signing in a few seconds…"),
  signing_rendering: _("Rendering the PDF…"),
  signing_signing: _("Signing with the organisation's certificate…"),
  signing_signed: _("Signed: loading the signed version…"),
  signing_failed: _("The signing failed: loading the reason…"),
  poll_failed: _("The progress could not be read; retrying"),
  drafting: _("Gathering the evidence: the estimate, the KV overflow simulation, the checklist…"),
  drafting_done: _("Drafted: loading the version…"),
  drafting_failed: _("Gathering the evidence failed: loading the reason…"),
  percent_value: _("{value} %"),
});
