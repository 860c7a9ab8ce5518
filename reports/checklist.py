"""What is still missing before a deployment's commitment can be signed, as a checklist that is cheap to compute.

The items follow the report's `missing` list (reports.evidence) but only ask the database whether the evidence
exists: they never run the estimate or the KV overflow simulation, so a page can show the checklist of every
deployment of a customer. An item that is done here can still leave a line in the report's missing list (a plan that
cannot be estimated, a simulation that fails); the report itself is the authority.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from benchmarks_app.models import LoadTest, MemoryLog
from reports.evidence import SCENARIO_WORDS, SCENARIOS_NEEDED
from reports.models import ReportVersion
from sizing.models import Deployment, Fingerprint


def passed_scenarios(deployment: Deployment) -> set[str]:
    """The scenarios of SCENARIOS_NEEDED with a load test of the deployment that finished (done, not cancelled or
    failed) with the verdict "pass" judged over the whole test (not partial)."""
    rows = LoadTest.objects.filter(deployment=deployment, status=LoadTest.Status.DONE,
                                   scenario__in=SCENARIOS_NEEDED).values_list("scenario", "verdict")
    return {scenario for scenario, verdict in rows
            if (verdict or {}).get("verdict") == "pass" and not (verdict or {}).get("partial")}


def commitment_checklist(deployment: Deployment) -> list[dict[str, Any]]:
    """The evidence a signed commitment needs, in order: [{code, done, text}], the text in the active language."""
    passed = passed_scenarios(deployment)
    items = [
        ("fingerprint", Fingerprint.objects.filter(deployment=deployment).exists(),
         _("A fingerprint of the customer's machines (hardware, driver and CUDA measured)")),
        ("plan", deployment.model_id is not None and deployment.gpu_id is not None,
         _("The plan names the model and the GPU (for the memory estimate)")),
        ("workload", deployment.workload_id is not None and bool(deployment.rate_per_s),
         _("The workload profile and the rate (for the KV overflow probability)")),
        *((f"load_test_{scenario}", scenario in passed,
           _("A passed load test of the %(scenario)s scenario") % {"scenario": SCENARIO_WORDS[scenario]})
          for scenario in SCENARIOS_NEEDED),
        ("monitoring", MemoryLog.objects.filter(deployment=deployment).exists(),
         _("A post-launch monitoring log")),
        ("signed_report", ReportVersion.objects.filter(report__deployment=deployment,
                                                       status=ReportVersion.Status.SIGNED).exists(),
         _("A signed report version")),
    ]
    return [{"code": code, "done": bool(done), "text": text} for code, done, text in items]


def checklist_summary(items: list[dict[str, Any]]) -> dict[str, int]:
    """How many items are done of how many."""
    return {"done": sum(1 for item in items if item["done"]), "total": len(items)}
