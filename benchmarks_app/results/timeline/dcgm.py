"""The DCGM exporter's GPU figures in a Prometheus scrape (``DCGM_FI_DEV_FB_USED``... per ``gpu`` label, MiB): which
metrics are read, and the GPU sample, identity and XID event one scrape makes of them. The scrapes themselves are
split and read by `prometheus`. Pure Python.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping

from benchmarks_app.results.timeline.common import MIB, EventKind, GpuSample, TimelineEvent

DCGM = {
    "DCGM_FI_DEV_FB_USED": "used",
    "DCGM_FI_DEV_FB_FREE": "free",
    "DCGM_FI_DEV_FB_RESERVED": "reserved",
    "DCGM_FI_DEV_FB_TOTAL": "total",
    "DCGM_FI_DEV_GPU_UTIL": "util",
    "DCGM_FI_DEV_POWER_USAGE": "power",
    "DCGM_FI_DEV_GPU_TEMP": "temp",
    "DCGM_FI_DEV_XID_ERRORS": "xid",
}


def gpu_key(labels: Mapping[str, str], *, multi_host: bool) -> str:
    """The GPU id of a DCGM sample: its ``gpu`` label ("0:mig1" for a MIG instance, "host/0" on several hosts)."""
    gpu = labels.get("gpu", labels.get("minor_number", "0"))
    if labels.get("GPU_I_ID"):  # a MIG instance: its own memory
        gpu = f"{gpu}:mig{labels['GPU_I_ID']}"
    return f"{labels.get('Hostname')}/{gpu}" if multi_host else gpu


def note_identity(info: MutableMapping[str, str | None], labels: Mapping[str, str]) -> None:
    """Keep the GPU's name, UUID, bus id and host from a sample's labels (a later label wins, a missing one keeps)."""
    info["name"] = labels.get("modelName") or info.get("name")
    info["uuid"] = labels.get("UUID") or info.get("uuid")
    info["pci_bus_id"] = labels.get("pci_bus_id") or info.get("pci_bus_id")
    info["host"] = labels.get("Hostname") or info.get("host")


def identity(info: Mapping[str, str | None]) -> dict[str, str | None]:
    """The `GpuSeries` identity fields noted by `note_identity`."""
    return {name: info.get(name) for name in ("name", "uuid", "pci_bus_id", "host")}


def gpu_sample(time_s: float | None, values: Mapping[str, float]) -> GpuSample:
    """The sample of one GPU in one scrape, from its figures by `DCGM` name (MiB; the total is ``FB_TOTAL``, else
    ``FB_USED + FB_FREE (+ FB_RESERVED)``)."""
    used = values.get("used")
    total = values.get("total")
    if total is None and used is not None and "free" in values:
        total = used + values["free"] + values.get("reserved", 0.0)
    return GpuSample(
        time_s=time_s,
        memory_used_bytes=round(used * MIB) if used is not None else None,
        memory_total_bytes=round(total * MIB) if total is not None else None,
        utilization_pct=values.get("util"),
        power_w=values.get("power"),
        temperature_c=values.get("temp"),
    )


def xid_event(
    time_s: float | None, key: str, values: Mapping[str, float], last_xid: MutableMapping[str, float]
) -> TimelineEvent | None:
    """An XID event when ``DCGM_FI_DEV_XID_ERRORS`` (the last XID seen, held) changes to a non-zero value, also at
    the first scrape; `last_xid` holds each GPU's value from one scrape to the next."""
    xid = values.get("xid")
    event = None
    if xid is not None and xid != last_xid.get(key, 0.0) and xid > 0:
        event = TimelineEvent(
            time_s=time_s,
            kind=EventKind.XID.value,
            gpu=key,
            code=int(xid),
            message=f"XID {int(xid)} on GPU {key} (DCGM_FI_DEV_XID_ERRORS)",
        )
    if xid is not None:
        last_xid[key] = xid
    return event
