"""The fingerprint pages' words in the active language: a finding's message (sizing.fingerprint: merge, checks,
probe, host) and a difference of two fingerprints (sizing.fingerprint.diff), built from the code and the numbers, and
the labels and values of the difference table.

The backend writes its messages in English; each has a stable `code` and the numbers behind the words (a finding's
`extra`; a difference's `gpu`, `pair`, `before`, `after`). Here each known code has gettext templates with named
placeholders. A code not known here, a number missing from `extra` or a value of the wrong type falls back to the
backend's English message: the page never fails over a new finding.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext

GIB = 2**30
NO_VALUE = "—"


def gib(value: Any) -> str:
    """Bytes as GiB with one decimal: 85899345920 → "80.0 GiB" (a TypeError for None, which callers catch)."""
    return f"{float(value) / GIB:,.1f} GiB"


def _gib_number(value: Any) -> str:
    """A GiB figure the backend already rounded (host.py's `limit_gib`): 16.0 → "16", 15.5 → "15.5"."""
    return f"{float(value):,.1f}".removesuffix(".0")


def switch_value(value: Any) -> str:
    """nvidia-smi's Enabled/Disabled (MIG, ECC, persistence) in the active language, in the case it was written;
    other values as they are."""
    text = str(value).strip()
    words = {"enabled": _("enabled"), "disabled": _("disabled"), "Enabled": _("Enabled"), "Disabled": _("Disabled")}
    return words.get(text, text)


def _supported(cuda: Any) -> str:
    """The major.minor of a CUDA version ("12.2.1" → "12.2"), as checks.py writes it into its advice."""
    numbers = re.findall(r"\d+", str(cuda))
    if not numbers:
        raise ValueError(f"not a CUDA version: {cuda!r}")
    return f"{numbers[0]}.{numbers[1] if len(numbers) > 1 else 0}"


def _major(version: Any) -> str:
    match = re.match(r"\s*(\d+)", str(version))
    if not match:
        raise ValueError(f"not a version: {version!r}")
    return match.group(1)


def _container_label(runtime: Any) -> str:
    return _("%(runtime)s container") % {"runtime": runtime} if runtime else _("container")


# --- findings ------------------------------------------------------------------------------------------------------


def _gpu_label(e: Mapping[str, Any]) -> str:
    """ "GPU 0 (NVIDIA A100-SXM4-80GB)" as merge.py names a GPU: from `gpu_index` and `gpu_name`, or the `label`
    older fingerprints stored."""
    if "gpu_index" in e and "label" not in e:
        return f"GPU {e['gpu_index']}" + (f" ({e['gpu_name']})" if e.get("gpu_name") else "")
    return str(e["label"])


def _pcie_link_below_max(e: Mapping[str, Any]) -> str:
    values = {"label": _gpu_label(e), **{key: e[key] for key in ("generation", "width", "generation_max", "width_max")}}
    if e.get("width_low"):
        return (
            _(
                "%(label)s: PCIe link at Gen%(generation)s x%(width)s, the GPU supports Gen%(generation_max)s "
                "x%(width_max)s; a narrower link stays narrow under load (slot or riser)"
            )
            % values
        )
    return (
        _(
            "%(label)s: PCIe link at Gen%(generation)s x%(width)s, the GPU supports Gen%(generation_max)s "
            "x%(width_max)s; idle GPUs lower the generation to save power, check again under load"
        )
        % values
    )


def _memory_in_use(e: Mapping[str, Any]) -> str:
    if e.get("total_bytes"):
        return _("%(label)s: %(used)s of GPU memory already in use by other processes (of %(total)s)") % {
            "label": _gpu_label(e),
            "used": gib(e["used_bytes"]),
            "total": gib(e["total_bytes"]),
        }
    return _("%(label)s: %(used)s of GPU memory already in use by other processes") % {
        "label": _gpu_label(e),
        "used": gib(e["used_bytes"]),
    }


def _unreadable_piece(e: Mapping[str, Any]) -> str:
    return _("%(piece)s: nothing read (%(problems)s)") % {
        "piece": e["piece"],
        "problems": e["problems"] or _("no facts"),
    }


def _tp_over_pcie(e: Mapping[str, Any]) -> str:
    largest = int(e["largest_nvlink_island"])
    if largest > 1:
        advice = _(
            "keep TP within an NVLink island of %(largest)s GPU(s) and run the rest as replicas "
            "(TP %(largest)s × %(replicas)s replicas)"
        ) % {"largest": largest, "replicas": e["replicas"]}
    else:
        advice = _("use TP only if the model needs it to fit; otherwise run one replica per GPU")
    return _(
        "TP %(tp)s would all-reduce over %(paths)s paths: the largest NVLink group here has %(largest)s "
        "GPU(s); %(advice)s"
    ) % {"tp": e["tp"], "paths": e["paths"], "largest": largest, "advice": advice}


def _driver_advice(driver_cuda: Any, base_image: Any) -> str:
    """checks.py's advice: a base image the driver runs (named when checks.py knows one), or a newer driver."""
    if driver_cuda and base_image:
        return _("use a base image built for CUDA %(supported)s or older (%(base_image)s), or upgrade the driver") % {
            "supported": _supported(driver_cuda),
            "base_image": base_image,
        }
    if driver_cuda:
        return _("use a base image built for CUDA %(supported)s or older, or upgrade the driver") % {
            "supported": _supported(driver_cuda)
        }
    return _("upgrade the driver")


def _driver_too_old(e: Mapping[str, Any]) -> str:
    return _(
        "the image is built for CUDA %(image_cuda)s; CUDA %(major)s.x needs driver ≥ %(minimum_driver)s and "
        "this machine has %(driver)s: %(advice)s"
    ) % {
        "image_cuda": e["image_cuda"],
        "major": _major(e["image_cuda"]),
        "minimum_driver": e["minimum_driver"],
        "driver": e["driver"],
        "advice": _driver_advice(e.get("driver_cuda"), e.get("base_image")),
    }


def _cuda_newer_than_driver(e: Mapping[str, Any]) -> str:
    return _(
        "the image is built for CUDA %(image_cuda)s, newer than the %(driver_cuda)s this driver supports: it "
        "runs through minor-version compatibility, but kernels compiled just in time from PTX fail; "
        "%(advice)s"
    ) % {
        "image_cuda": e["image_cuda"],
        "driver_cuda": e["driver_cuda"],
        "advice": _driver_advice(e["driver_cuda"], e.get("base_image")),
    }


def _memory_held_by_others(e: Mapping[str, Any]) -> str:
    return _(
        "GPU %(gpu)s: %(used)s is already in use; the plan needs %(required)s of its %(total)s, %(free)s are free"
    ) % {
        "gpu": e["gpu"],
        "used": gib(e["used_bytes"]),
        "required": gib(e["required_bytes"]),
        "total": gib(e["total_bytes"]),
        "free": gib(e["total_bytes"] - e["used_bytes"]),
    }


_PROBE_FAILURE = re.compile(r"^(?P<command>.+?) exited with status (?P<status>-?\d+): (?P<output>.*)$", re.DOTALL)


def _probe_command_failed(e: Mapping[str, Any]) -> str:
    match = _PROBE_FAILURE.match(str(e["detail"]))
    if match is None:
        raise ValueError("an unexpected probe failure")
    return _("%(command)s exited with status %(status)s: %(output)s") % match.groupdict()


def _container_no_memory_limit(e: Mapping[str, Any]) -> str:
    values = {
        "label": _container_label(e.get("runtime")),
        "swap_gib_per_gpu": e["swap_space_gib_per_gpu"],
        "swap_gib": e["swap_space_gib"],
        "gpus": e["gpu_count"],
        "minimum_gib": e["minimum_limit_gib"],
    }
    if e.get("host_memory_gib"):
        return _(
            "the probe ran in a %(label)s with no memory limit: the engine's CPU-side memory (weight loading, "
            "vLLM's swap space of %(swap_gib_per_gpu)s GiB per GPU by default, %(swap_gib)s GiB for %(gpus)s "
            "GPU(s), tokenizer workers) competes with everything else on this host's %(host_gib)s GiB of RAM, "
            "and when memory runs out the kernel OOM killer picks a victim, often the engine; set a memory "
            "limit of at least %(minimum_gib)s GiB (docker run --memory, or resources.limits.memory in "
            "Kubernetes)"
        ) % {**values, "host_gib": _gib_number(e["host_memory_gib"])}
    return (
        _(
            "the probe ran in a %(label)s with no memory limit: the engine's CPU-side memory (weight loading, "
            "vLLM's swap space of %(swap_gib_per_gpu)s GiB per GPU by default, %(swap_gib)s GiB for %(gpus)s "
            "GPU(s), tokenizer workers) competes with everything else on the host, and when memory runs out the "
            "kernel OOM killer picks a victim, often the engine; set a memory limit of at least %(minimum_gib)s GiB "
            "(docker run --memory, or resources.limits.memory in Kubernetes)"
        )
        % values
    )


def _container_memory_limit(e: Mapping[str, Any]) -> str:
    values = {"label": _container_label(e.get("runtime")), "limit_gib": _gib_number(e["limit_gib"])}
    if e.get("host_memory_gib"):
        return _("the memory limit of this %(label)s is %(limit_gib)s GiB (the host has %(host_gib)s GiB of RAM)") % {
            **values,
            "host_gib": _gib_number(e["host_memory_gib"]),
        }
    return _("the memory limit of this %(label)s is %(limit_gib)s GiB") % values


def _container_memory_limit_low(e: Mapping[str, Any]) -> str:
    return _(
        "the memory limit of this %(label)s, %(limit_gib)s GiB, is below the %(minimum_gib)s GiB we advise for "
        "%(gpus)s GPU(s) (%(base_gib)s GiB for the engine process, tokenizer and weight loading, plus vLLM's "
        "default swap space of %(swap_gib_per_gpu)s GiB per GPU): the engine may be OOM-killed while loading "
        "weights or under load; raise the limit (docker run --memory, resources.limits.memory) or lower vLLM's "
        "--swap-space"
    ) % {
        "label": _container_label(e.get("runtime")),
        "limit_gib": _gib_number(e["limit_gib"]),
        "minimum_gib": e["minimum_limit_gib"],
        "gpus": e["gpu_count"],
        "base_gib": e["base_gib"],
        "swap_gib_per_gpu": e["swap_space_gib_per_gpu"],
    }


FINDINGS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    # sizing.fingerprint.merge: what the machine says about itself
    "pcie_link_below_max": _pcie_link_below_max,
    "mig_enabled": lambda e: _("%(label)s: MIG is enabled; a model sees only the memory of its MIG instance")
    % {"label": _gpu_label(e)},
    "ecc_off": lambda e: _("%(label)s: ECC is off (more usable memory, no error correction)")
    % {"label": _gpu_label(e)},
    "memory_in_use": _memory_in_use,
    "gpu_name_truncated": lambda e: _(
        "%(label)s: the nvidia-smi table cut the name short; nvidia-smi -q gives the full name"
    )
    % {"label": _gpu_label(e)},
    "unreadable_piece": _unreadable_piece,
    "driver_library_mismatch": lambda e: _(
        "kernel module %(kernel_module)s is loaded but nvidia-smi reports driver %(driver)s: reboot (or reload the "
        "module) before measuring"
    )
    % {"kernel_module": e["kernel_module"], "driver": e["driver"]},
    "gpus_not_listed": lambda e: _("%(attached)s GPUs attached, %(described)s described; add the others' output")
    % {"attached": e["attached"], "described": e["described"]},
    # sizing.fingerprint.checks: the plan against the machine
    "gpu_count_mismatch": lambda e: _("the plan counts %(planned)s GPU(s); the machine shows %(found)s")
    % {"planned": e["planned"], "found": e["found"]},
    "gpu_model_mismatch": lambda e: _("the plan is for %(planned)s; the machine has %(found)s")
    % {"planned": e["planned"], "found": e["found"]},
    "mixed_gpu_models": lambda e: _(
        "one node with different GPU models (%(models)s): a TP group runs at the pace of its slowest card and its "
        "memory budget is the smallest card's"
    )
    % {"models": e["models"]},
    "gpu_memory_smaller": lambda e: _(
        "the estimate assumed %(planned)s per GPU; the smallest card here reports %(found)s: re-run the estimate "
        "with the measured memory"
    )
    % {"planned": gib(e["planned_bytes"]), "found": gib(e["found_bytes"])},
    "memory_held_by_others": _memory_held_by_others,
    "mig_slices": lambda e: _(
        "MIG is enabled on GPU(s) %(gpus)s: an engine sees one slice, not the whole card; size the deployment for "
        "the slice or disable MIG (nvidia-smi -i N -mig 0)"
    )
    % {"gpus": e["gpus"]},
    "tp_over_pcie": _tp_over_pcie,
    "driver_too_old": _driver_too_old,
    "cuda_newer_than_driver": _cuda_newer_than_driver,
    # sizing.fingerprint.probe
    "probe_command_failed": _probe_command_failed,
    # sizing.fingerprint.host
    "container_no_memory_limit": _container_no_memory_limit,
    "container_memory_limit_unknown": lambda e: _(
        "the probe ran in a %(label)s but could not read its memory limit (/sys/fs/cgroup shows the host's cgroups, "
        "not the container's); check it with docker inspect or kubectl describe pod"
    )
    % {"label": _container_label(e.get("runtime"))},
    "container_memory_limit": _container_memory_limit,
    "container_memory_limit_low": _container_memory_limit_low,
}


def finding_text(finding: Mapping[str, Any]) -> str:
    """The finding's message in the active language, or its English `message` when the code is not known here or
    its `extra` lacks a number the words need."""
    fallback = str(finding.get("message") or finding.get("code") or "")
    build = FINDINGS.get(str(finding.get("code")))
    extra = finding.get("extra")
    if build is None or not isinstance(extra, Mapping):
        return fallback
    try:
        return build(extra)
    except (KeyError, TypeError, ValueError, ArithmeticError):
        return fallback


def severity_label(severity: Any) -> str:
    words = {
        "error": pgettext("severity", "Error"),
        "warning": pgettext("severity", "Warning"),
        "info": pgettext("severity", "Info"),
    }
    return words.get(str(severity), str(severity))


def source_label(source: Any) -> str:
    return {"machine": _("Machine"), "plan": _("Plan")}.get(str(source), str(source))


# --- differences of two fingerprints ---------------------------------------------------------------------------------


def _nvlinks(kind: Any) -> int | None:
    match = re.fullmatch(r"NV(\d+)", str(kind))
    return int(match.group(1)) if match else None


def _gpu_presence(c: Mapping[str, Any], present: str) -> str:
    """gpu_removed / gpu_added: the name and memory are only in the English words ("GPU 1 (name, 79.6 GiB) is
    gone"); carry them over."""
    match = re.fullmatch(r"GPU -?\d+(?P<describe> \(.*\))? is (?:gone|new)", str(c["message"]), re.DOTALL)
    if match is None:
        raise ValueError("unexpected words")
    values = {"gpu": c["gpu"], "describe": match.group("describe") or ""}
    return (_("GPU %(gpu)s%(describe)s is gone") if present == "gone" else _("GPU %(gpu)s%(describe)s is new")) % values


def _gpu_replaced(c: Mapping[str, Any]) -> str:
    values = {"gpu": c["gpu"], "before": c["before"], "after": c["after"]}
    moved = re.search(r"; it was GPU (-?\d+) before\)$", str(c["message"]))
    if moved:
        return _("GPU %(gpu)s is a different card (UUID %(before)s → %(after)s; it was GPU %(moved)s before)") % {
            **values,
            "moved": moved.group(1),
        }
    return _("GPU %(gpu)s is a different card (UUID %(before)s → %(after)s)") % values


def _gpu_model_changed(c: Mapping[str, Any]) -> str:
    values = {"gpu": c["gpu"], "before": c["before"], "after": c["after"]}
    if c["key"] == "vendor":
        return _("GPU %(gpu)s: %(before)s → %(after)s") % values
    if c["severity"] == "warning":
        return _("GPU %(gpu)s: %(before)s → %(after)s (another variant of the same model)") % values
    return _("GPU %(gpu)s: %(before)s → %(after)s: another GPU model") % values


def _gpu_memory_changed(c: Mapping[str, Any]) -> str:
    before, after = int(c["before"]), int(c["after"])
    values = {"gpu": c["gpu"], "before": gib(before), "after": gib(after), "difference": gib(abs(after - before))}
    if after < before:
        return _("GPU %(gpu)s: memory %(before)s → %(after)s (%(difference)s less, as the driver reports it)") % values
    return _("GPU %(gpu)s: memory %(before)s → %(after)s (%(difference)s more, as the driver reports it)") % values


def _pcie_link_changed(c: Mapping[str, Any]) -> str:
    what = {
        "pcie_width_current": _("PCIe link width"),
        "pcie_width_max": _("PCIe max width"),
        "pcie_generation_max": _("PCIe max generation"),
    }[c["key"]]
    unit = "x" if "width" in c["key"] else "Gen"
    values = {"gpu": c["gpu"], "what": what, "before": f"{unit}{int(c['before'])}", "after": f"{unit}{int(c['after'])}"}
    if int(c["after"]) < int(c["before"]):
        return (
            _(
                "GPU %(gpu)s: %(what)s %(before)s → %(after)s (a slot, riser or BIOS setting: less host-to-GPU and "
                "PCIe all-reduce bandwidth)"
            )
            % values
        )
    return _("GPU %(gpu)s: %(what)s %(before)s → %(after)s") % values


def _mig_mode_changed(c: Mapping[str, Any]) -> str:
    values = {"gpu": c["gpu"], "before": switch_value(c["before"]), "after": switch_value(c["after"])}
    if str(c["after"]).lower() == "enabled":
        return _("GPU %(gpu)s: MIG %(before)s → %(after)s: an engine sees one slice, not the whole card") % values
    return _("GPU %(gpu)s: MIG %(before)s → %(after)s") % values


def _gpu_mode_changed(c: Mapping[str, Any]) -> str:
    what = {
        "ecc_mode": "ECC",
        "persistence_mode": _("persistence mode"),
        "virtualization_mode": _("virtualisation mode"),
        "driver_model": _("driver model"),
    }[c["key"]]
    return _("GPU %(gpu)s: %(what)s %(before)s → %(after)s") % {
        "gpu": c["gpu"],
        "what": what,
        "before": switch_value(c["before"]),
        "after": switch_value(c["after"]),
    }


def _pair(c: Mapping[str, Any]) -> dict[str, Any]:
    a, b = c["pair"]
    return {"a": a, "b": b, "before": c["before"], "after": c["after"]}


def _link_changed(c: Mapping[str, Any]) -> str:
    values = _pair(c)
    links_before, links_after = _nvlinks(c["before"]), _nvlinks(c["after"])
    if links_before and links_after:
        values.update(before=links_before, after=links_after)
        if links_after < links_before:
            return _("GPU %(a)s ↔ GPU %(b)s: %(before)s → %(after)s NVLink links (less all-reduce bandwidth)") % values
        return _("GPU %(a)s ↔ GPU %(b)s: %(before)s → %(after)s NVLink links") % values
    if c["severity"] == "warning":
        return _("GPU %(a)s ↔ GPU %(b)s: PCIe path %(before)s → %(after)s (a longer path between the two)") % values
    return _("GPU %(a)s ↔ GPU %(b)s: PCIe path %(before)s → %(after)s") % values


def _nvlink_island_changed(c: Mapping[str, Any]) -> str:
    before = len(c["before"][0]) if c["before"] else 0
    after = len(c["after"][0]) if c["after"] else 0
    values = {"before": before, "after": after}
    if after < before:
        return (
            _(
                "the largest NVLink group has %(before)s GPU(s) before, %(after)s after: a TP group of more than "
                "%(after)s no longer stays on NVLink"
            )
            % values
        )
    return _("the largest NVLink group has %(before)s GPU(s) before, %(after)s after") % values


_DRIVER_MINIMUM = re.compile(r"CUDA (?P<major>\d+)\.x needs driver ≥ (?P<minimum>[\d.]+)")


def _driver_changed(c: Mapping[str, Any]) -> str:
    values = {"before": c["before"], "after": c["after"]}
    if c["severity"] == "error":
        minimum = _DRIVER_MINIMUM.search(str(c["message"]))
        if minimum:
            return _(
                "driver %(before)s → %(after)s (a downgrade below what the other supported: CUDA %(major)s.x "
                "needs driver ≥ %(minimum)s)"
            ) % {**values, **minimum.groupdict()}
        return _("driver %(before)s → %(after)s (a downgrade below what the other supported)") % values
    if c["severity"] == "warning":
        return _("driver %(before)s → %(after)s (a downgrade)") % values
    return _("driver %(before)s → %(after)s") % values


def _cuda_changed(c: Mapping[str, Any]) -> str:
    values = {"before": c["before"], "after": c["after"]}
    if c["severity"] == "error":
        return _(
            "the driver's CUDA version %(before)s → %(after)s: images built for CUDA %(before)s need a driver "
            "for CUDA %(major)s.x, this one does not run them"
        ) % {**values, "major": _major(c["before"])}
    if c["severity"] == "warning":
        return (
            _(
                "the driver's CUDA version %(before)s → %(after)s: images built for CUDA %(before)s run through "
                "minor-version compatibility, but kernels compiled just in time from PTX fail"
            )
            % values
        )
    return _("the driver's CUDA version %(before)s → %(after)s") % values


def _version_changed(c: Mapping[str, Any]) -> str:
    what = {
        "kernel_module_version": _("kernel module"),
        "cuda_toolkit_version": _("CUDA toolkit"),
        "python_version": "Python",
    }.get(c["key"], c["key"])
    values = {"what": what, "before": c["before"], "after": c["after"]}
    if c["severity"] == "warning":
        return _("%(what)s %(before)s → %(after)s (a downgrade)") % values
    return _("%(what)s %(before)s → %(after)s") % values


def _host_count_changed(c: Mapping[str, Any]) -> str:
    what = {"cpu_count": _("CPUs"), "sockets": _("sockets"), "numa_nodes": _("NUMA nodes")}[c["key"]]
    values = {"what": what, "before": c["before"], "after": c["after"]}
    if c["key"] == "cpu_count" and int(c["after"]) < int(c["before"]):
        return _("%(what)s: %(before)s → %(after)s (fewer cores for tokenising, scheduling and loading)") % values
    return _("%(what)s: %(before)s → %(after)s") % values


def _container_words(container: Any) -> str:
    if not isinstance(container, Mapping):
        raise TypeError("not a container")
    if container.get("detected") and container.get("runtime"):
        return _("a container (%(runtime)s)") % {"runtime": container["runtime"]}
    return _("a container") if container.get("detected") else _("no container")


def _memory_limit_changed(c: Mapping[str, Any]) -> str:
    before, after = c["before"], c["after"]
    values = {
        "before": gib(before) if before is not None else _("none"),
        "after": gib(after) if after is not None else _("none"),
    }
    if after is not None and (before is None or after < before):
        return _("container memory limit %(before)s → %(after)s (loading weights or CPU swap space may hit it)") % (
            values
        )
    return _("container memory limit %(before)s → %(after)s") % values


CHANGES: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "gpu_removed": lambda c: _gpu_presence(c, "gone"),
    "gpu_added": lambda c: _gpu_presence(c, "new"),
    "gpu_count_changed": lambda c: _("%(before)s GPUs attached before, %(after)s after")
    % {"before": c["before"], "after": c["after"]},
    "gpu_replaced": _gpu_replaced,
    "gpu_model_changed": _gpu_model_changed,
    "gpu_memory_changed": _gpu_memory_changed,
    "memory_in_use_appeared": lambda c: _("GPU %(gpu)s: other processes now hold %(after)s (before: %(before)s)")
    % {"gpu": c["gpu"], "before": gib(c["before"]), "after": gib(c["after"])},
    "memory_in_use_cleared": lambda c: _("GPU %(gpu)s: the %(before)s other processes held is free now")
    % {"gpu": c["gpu"], "before": gib(c["before"])},
    "pcie_link_changed": _pcie_link_changed,
    "mig_mode_changed": _mig_mode_changed,
    "ecc_mode_changed": _gpu_mode_changed,
    "persistence_mode_changed": _gpu_mode_changed,
    "virtualization_mode_changed": _gpu_mode_changed,
    "driver_model_changed": _gpu_mode_changed,
    "bus_id_changed": lambda c: _("GPU %(gpu)s: PCI bus id %(before)s → %(after)s (another slot)")
    % {"gpu": c["gpu"], "before": c["before"], "after": c["after"]},
    "nvlink_lost": lambda c: _(
        "GPU %(a)s ↔ GPU %(b)s: NVLink (%(before)s) is gone, the pair now talks over "
        "%(after)s: a TP group across it all-reduces over PCIe"
    )
    % _pair(c),
    "nvlink_gained": lambda c: _("GPU %(a)s ↔ GPU %(b)s: joined by NVLink (%(after)s) where it was %(before)s")
    % (_pair(c)),
    "link_changed": _link_changed,
    "nvlink_island_changed": _nvlink_island_changed,
    "numa_affinity_changed": lambda c: _("GPU %(gpu)s: NUMA node %(before)s → %(after)s")
    % {"gpu": c["gpu"], "before": c["before"], "after": c["after"]},
    "driver_changed": _driver_changed,
    "cuda_changed": _cuda_changed,
    "kernel_module_changed": _version_changed,
    "cuda_toolkit_changed": _version_changed,
    "python_changed": _version_changed,
    "package_changed": _version_changed,
    "package_added": lambda c: _("%(package)s %(after)s is installed now (it was not)")
    % {"package": c["key"], "after": c["after"]},
    "package_removed": lambda c: _("%(package)s %(before)s is no longer installed")
    % {"package": c["key"], "before": c["before"]},
    "cpu_count_changed": _host_count_changed,
    "sockets_changed": _host_count_changed,
    "numa_nodes_changed": _host_count_changed,
    "cpu_model_changed": lambda c: _("CPU %(before)s → %(after)s") % {"before": c["before"], "after": c["after"]},
    "host_memory_changed": lambda c: _("host memory %(before)s → %(after)s")
    % {"before": gib(c["before"]), "after": gib(c["after"])},
    "container_changed": lambda c: _("%(before)s → %(after)s")
    % {"before": _container_words(c["before"]), "after": _container_words(c["after"])},
    "memory_limit_changed": _memory_limit_changed,
    "cgroup_version_changed": lambda c: _("cgroup v%(before)s → v%(after)s")
    % {"before": c["before"], "after": c["after"]},
}


def change_text(change: Mapping[str, Any]) -> str:
    """A difference's message in the active language, or its English `message` when the code is not known here or
    a value it needs is missing."""
    fallback = str(change.get("message") or change.get("code") or "")
    build = CHANGES.get(str(change.get("code")))
    if build is None:
        return fallback
    try:
        return build(change)
    except (KeyError, TypeError, ValueError, ArithmeticError, IndexError):
        return fallback


def area_label(area: Any) -> str:
    return {"gpu": _("GPU"), "topology": _("Topology"), "software": _("Software"), "host": _("Host")}.get(
        str(area), str(area)
    )


def change_key_label(change: Mapping[str, Any]) -> str:
    """What changed, in words: the `key` of a difference ("memory_total_bytes" of a GPU → "GPU memory")."""
    key, area = str(change.get("key")), str(change.get("area"))
    if area == "host" and key == "memory_total_bytes":
        return _("Host memory")
    labels = {
        "gpu": _("GPU"),
        "gpu_count": _("GPU count"),
        "uuid": "UUID",
        "name": _("GPU model"),
        "vendor": _("Vendor"),
        "memory_total_bytes": _("GPU memory"),
        "memory_used_bytes": _("GPU memory held by other processes"),
        "pcie_width_current": _("PCIe link width"),
        "pcie_width_max": _("PCIe max width"),
        "pcie_generation_max": _("PCIe max generation"),
        "mig_mode": "MIG",
        "ecc_mode": "ECC",
        "persistence_mode": _("Persistence mode"),
        "virtualization_mode": _("Virtualisation mode"),
        "driver_model": _("Driver model"),
        "bus_id": _("PCI bus id"),
        "link": _("Link"),
        "nvlink_islands": _("NVLink groups"),
        "numa_affinity": _("NUMA node"),
        "driver_version": _("Driver"),
        "cuda_version": _("CUDA version of the driver"),
        "kernel_module_version": _("Kernel module"),
        "cuda_toolkit_version": _("CUDA toolkit"),
        "python_version": "Python",
        "cpu_count": _("CPUs"),
        "sockets": _("Sockets"),
        "numa_nodes": _("NUMA nodes"),
        "cpu_model": _("CPU model"),
        "container": _("Container"),
        "cgroup_memory_limit_bytes": _("Container memory limit"),
        "cgroup_version": _("cgroup version"),
    }
    return labels.get(key, key)  # a package's name stays as it is


def change_value(change: Mapping[str, Any], side: str) -> str:
    """The `before` or `after` value of a difference for the table: bytes in GiB, PCIe as x16/Gen4, NVLink groups
    as sets, a container in words, nothing as a dash."""
    value, key = change.get(side), str(change.get("key"))
    if value is None:  # a memory limit of None is "no limit" (diff.py compares it only where the cgroup was read)
        return _("none") if key == "cgroup_memory_limit_bytes" else NO_VALUE
    try:
        if key.endswith("_bytes"):
            return gib(value)
        if key.startswith("pcie_width"):
            return f"x{int(value)}"
        if key.startswith("pcie_generation"):
            return f"Gen{int(value)}"
        if key == "nvlink_islands":
            return " ".join("{" + ", ".join(str(i) for i in island) + "}" for island in value) or NO_VALUE
        if key == "container":
            return _container_words(value)
        if key in ("mig_mode", "ecc_mode", "persistence_mode"):
            return switch_value(value)
        if key == "cgroup_version":
            return f"v{value}"
    except (TypeError, ValueError):
        pass
    return str(value)


def diff_summary(changes: list[Mapping[str, Any]]) -> str:
    """The diff's summary sentence ("3 differences: 1 error, 2 warnings") in the active language."""
    if not changes:
        return _("No differences in what both probes measured")
    counts = {
        severity: sum(1 for c in changes if c.get("severity") == severity) for severity in ("error", "warning", "info")
    }
    words = {
        "error": lambda n: ngettext("%(count)s error", "%(count)s errors", n) % {"count": n},
        "warning": lambda n: ngettext("%(count)s warning", "%(count)s warnings", n) % {"count": n},
        "info": lambda n: _("%(count)s info") % {"count": n},
    }
    parts = [words[severity](n) for severity, n in counts.items() if n]
    total = len(changes)
    return ngettext("%(count)s difference: %(parts)s", "%(count)s differences: %(parts)s", total) % {
        "count": total,
        "parts": _(", ").join(parts),
    }
