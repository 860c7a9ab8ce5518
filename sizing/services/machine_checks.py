"""The plan of a deployment against its chosen machines, in the active language: the rules are
`sizing.fingerprint.plan_check` (pure, plain dicts); this module takes the plan from the deployment and its catalog
GPU, the facts from the fingerprints, and words each contradiction with gettext."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from sizing.fingerprint.plan_check import plan_contradictions
from sizing.models import Deployment, Fingerprint
from sizing.texts.findings import gib

TEXTS = {
    "gpu_model_differs": gettext_lazy("%(host)s: the plan is for %(planned)s; the machine has %(found)s"),
    "gpu_variant_differs": gettext_lazy(
        "%(host)s: the plan is for %(planned)s (%(planned_form_factor)s); the machine has %(found)s"
    ),
    "gpu_count_short": gettext_lazy("%(host)s: the plan counts %(planned)s GPUs per server; the machine has %(found)s"),
    "tp_exceeds_gpus": gettext_lazy("%(host)s: the plan's TP %(tp)s needs %(tp)s GPUs; the machine has %(found)s"),
    "tp_over_pcie": gettext_lazy(
        "%(host)s: TP %(tp)s would all-reduce over %(paths)s paths: the largest NVLink group there has "
        "%(largest_nvlink_group)s GPU(s)"
    ),
    "mig_slices": gettext_lazy(
        "%(host)s: MIG is enabled on GPU(s) %(gpus)s; the plan assumes whole cards, an engine sees one slice"
    ),
    "gpu_memory_smaller": gettext_lazy(
        "%(host)s: the plan's card has %(planned)s of GPU memory; the smallest card of the machine reports %(found)s"
    ),
}


def deployment_plan_claim(deployment: Deployment) -> dict[str, Any]:
    """The plan as `plan_contradictions` reads it: the catalog GPU's name, form factor and memory (as the driver
    reports it), GPUs per server and TP."""
    gpu = deployment.gpu
    return {
        "gpu_name": gpu.name if gpu else None,
        "gpu_form_factor": gpu.form_factor if gpu else None,
        "gpu_memory_bytes": gpu.memory_bytes if gpu else None,
        "gpu_count": deployment.gpu_count,
        "tp": deployment.tp or 1,
    }


def contradiction_text(contradiction: Mapping[str, Any]) -> str:
    """One contradiction in the active language."""
    params = {**contradiction.get("params", {}), "host": contradiction.get("host", "")}
    if contradiction["code"] == "gpu_memory_smaller":
        params["planned"], params["found"] = gib(params["planned_bytes"]), gib(params["found_bytes"])
    if contradiction["code"] == "tp_over_pcie" and params.get("paths") == "PCIe":
        params["paths"] = _("PCIe")
    return str(TEXTS[contradiction["code"]]) % params


def machine_contradictions(deployment: Deployment, machines: Sequence[Fingerprint]) -> list[dict[str, str]]:
    """Each contradiction between the deployment's plan and `machines` (the chosen fingerprint versions,
    `deployment_selectors.chosen_machines`), as {"code", "host", "text"} with `text` in the active language;
    machine by machine in the order given. [] when nothing contradicts the plan or no machine is given."""
    found = plan_contradictions(
        deployment_plan_claim(deployment),
        [{"host": machine.host, "facts": machine.facts or {}} for machine in machines],
    )
    return [{"code": item["code"], "host": item["host"], "text": contradiction_text(item)} for item in found]
