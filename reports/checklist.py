"""What is still missing before a deployment's commitment can be signed, as a checklist that is cheap to compute.

The items follow the report version's checklist (reports.evidence) but only ask the database what the evidence says:
they never run the estimate or the KV overflow simulation, so a page can show the checklist of every deployment of a
customer. Failed evidence (a failed load test, a failed memory log) is "failed", never done. An item that is done here
can still be failed in a version's checklist (a plan that cannot be estimated, machines that contradict the plan);
the version's checklist is the authority, and the gates of review and approval read it.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from benchmarks_app.models import LoadTest, MemoryLog
from reports.evidence import SCENARIO_WORDS, SCENARIOS_NEEDED
from reports.models import ReportVersion
from reports.selectors.health_reports import latest_health_report
from sizing.models import Deployment


def passed_scenarios(deployment: Deployment) -> set[str]:
    """The scenarios of SCENARIOS_NEEDED with a load test of the deployment that finished (done, not cancelled or
    failed) with the verdict "pass" judged over the whole test (not partial)."""
    return {scenario for scenario, state in _scenario_states(deployment).items() if state == "done"}


def _scenario_states(deployment: Deployment) -> dict[str, str]:
    """done (a full pass), failed (tested, none passed: a failed, invalid, partial, cancelled or failed run) or
    missing (never finished a test), per scenario."""
    rows = LoadTest.objects.filter(
        deployment=deployment, status__in=LoadTest.FINAL, scenario__in=SCENARIOS_NEEDED
    ).values_list("scenario", "status", "verdict")
    states = dict.fromkeys(SCENARIOS_NEEDED, "missing")
    for scenario, status, verdict in rows:
        verdict = verdict or {}
        if status == LoadTest.Status.DONE and verdict.get("verdict") == "pass" and not verdict.get("partial"):
            states[scenario] = "done"
        elif states[scenario] != "done":
            states[scenario] = "failed"
    return states


def _monitoring_state(deployment: Deployment) -> str:
    """The newest memory health report of a sentinel when there is one, else the newest memory log: done on a pass,
    failed on a fail, missing when none or it is too short to judge."""
    health = latest_health_report(deployment)
    if health is not None:
        return "done" if health.verdict == "pass" else "failed"
    log = MemoryLog.objects.filter(deployment=deployment).order_by("-created_at", "-pk").only("verdict").first()
    verdict = ((log.verdict or {}).get("verdict") if log is not None else None) or "missing"
    return {"pass": "done", "fail": "failed"}.get(verdict, "missing")


def commitment_checklist(deployment: Deployment) -> list[dict[str, Any]]:
    """The evidence a signed commitment needs, in order: [{code, state, done, text}], the text in the active
    language; state is done, failed (the evidence is there and says no) or missing."""
    from sizing.selectors.deployments import chosen_machines

    scenarios = _scenario_states(deployment)
    items = [
        (
            "machines",
            "done" if chosen_machines(deployment) else "missing",
            _("The customer's machines chosen (each a host with its fingerprint version)"),
        ),
        (
            "plan",
            "done" if deployment.model_id is not None and deployment.gpu_id is not None else "missing",
            _("The plan names the model and the GPU (for the memory estimate)"),
        ),
        (
            "workload",
            "done" if deployment.workload_id is not None and deployment.rate_per_s else "missing",
            _("The workload profile and the rate (for the KV overflow probability)"),
        ),
        *(
            (
                f"load_test_{scenario}",
                scenarios[scenario],
                _("A passed load test of the %(scenario)s scenario") % {"scenario": SCENARIO_WORDS[scenario]},
            )
            for scenario in SCENARIOS_NEEDED
        ),
        (
            "monitoring",
            _monitoring_state(deployment),
            _("Post-launch monitoring passed (72 hours: no OOM, no sustained climb)"),
        ),
        (
            "signed_report",
            "done"
            if ReportVersion.objects.filter(report__deployment=deployment, status=ReportVersion.Status.SIGNED).exists()
            else "missing",
            _("A signed report version"),
        ),
    ]
    return [{"code": code, "state": state, "done": state == "done", "text": text} for code, state, text in items]


def checklist_summary(items: list[dict[str, Any]]) -> dict[str, int]:
    """How many items are done of how many, and how many failed."""
    return {
        "done": sum(1 for item in items if item["done"]),
        "total": len(items),
        "failed": sum(1 for item in items if item.get("state") == "failed"),
    }
