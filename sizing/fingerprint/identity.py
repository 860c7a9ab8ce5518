"""Which machine an upload describes: a host's identity from the file (its host name, its GPUs' UUIDs and serial
numbers) and whether two uploads are versions of one host. Pure Python, no Django: the upload service and the data
migration that gave the stored fingerprints their keys both call it.

Rules: two uploads are versions of one host when nothing they both show differs and something they both show is
equal. What counts is the host name (case-insensitive) and the set of the GPUs' UUIDs:
- both names and both UUID sets given: both must be equal (a GPU swapped, or a second machine of the same name,
  is another host; the same GPUs under another name too: a container's host name is its id, a new one per
  `docker run` or Kubernetes pod, so its re-runs start new hosts that a person merges);
- only one of them given on both sides: that one must be equal;
- an upload with neither a host name nor GPU UUIDs is never matched: it is its own host, named after its GPUs
  ("2× NVIDIA A100 80GB PCIe · #3"), until a person merges it into another (`merge_conflict` says when a merge is
  refused: two hosts whose GPUs' UUIDs differ are two machines).

A host (a group of uploads) keeps its key when more versions join it; the key says where it came from:
"host-<hash of the name and the UUIDs>", "gpus-<hash of the UUIDs>", "name-<hash of the name>" or
"upload-<the upload's own hash>".

>>> a = HostIdentity(hostname="gpu-01", gpu_uuids=("GPU-1", "GPU-2"))
>>> identities_match(a, HostIdentity(hostname="GPU-01", gpu_uuids=("gpu-2", "GPU-1")))
True
>>> identities_match(a, HostIdentity(hostname=None, gpu_uuids=("GPU-1", "GPU-2")))
True
>>> identities_match(a, HostIdentity(hostname="7c1e9a4d2b80", gpu_uuids=("GPU-1", "GPU-2")))
False
>>> identities_match(a, HostIdentity(hostname="gpu-01", gpu_uuids=("GPU-3",)))
False
>>> identities_match(HostIdentity(hostname=None), HostIdentity(hostname=None))
False
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

LEGACY_UNNAMED = "unnamed host"  # what uploads without a host name were called before issue 20
KEY_HASH_CHARS = 24  # 96 bits of SHA-256: no collision among one deployment's hosts
UUID_SHORT_CHARS = 8  # "GPU-a78a46af": enough to tell two boards apart on a page
HOST_MAX_LENGTH = 255


@dataclass(frozen=True, kw_only=True)
class HostIdentity:
    """What an upload says about which machine it is; None / () where it does not say."""

    hostname: str | None = None
    gpu_uuids: tuple[str, ...] = ()  # sorted, as the file writes them
    gpu_serials: tuple[str, ...] = ()  # sorted; shown, not matched (many boards print 0 or N/A)

    @property
    def uuid_set(self) -> frozenset[str]:
        return frozenset(uuid.casefold() for uuid in self.gpu_uuids)


@dataclass(frozen=True, kw_only=True)
class KnownHost:
    """A host already stored in the deployment: its key, its name, and the identities of its versions."""

    key: str
    name: str
    named: bool
    identities: tuple[HostIdentity, ...]

    @property
    def uuid_set(self) -> frozenset[str]:
        """The UUIDs of the host's GPUs (the newest version that shows them; a merge keeps them equal)."""
        return next((identity.uuid_set for identity in self.identities if identity.gpu_uuids), frozenset())


@dataclass(frozen=True, kw_only=True)
class HostChoice:
    """Where an upload goes: an existing host's key and name (`joined`), or a new host's."""

    key: str
    name: str
    named: bool  # the name came from the file or the uploader; False: derived from the GPUs
    joined: bool


def _hostname(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text: str = value.strip()
    if not text or text.casefold() == LEGACY_UNNAMED:
        return None
    return text[:HOST_MAX_LENGTH]


def identity_from_facts(facts: Mapping[str, Any], *, given_name: str | None = None) -> HostIdentity:
    """The identity of a merged fingerprint (`fingerprint_from_texts`): the probe file's host name, else
    `given_name` (the uploader's, for pasted outputs), and the GPUs' UUIDs and serial numbers."""
    found = facts.get("host")
    host: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    gpus = [gpu for gpu in facts.get("gpus") or [] if isinstance(gpu, Mapping)]
    uuids = sorted({str(gpu["uuid"]).strip() for gpu in gpus if gpu.get("uuid") and str(gpu["uuid"]).strip()})
    serials = sorted(
        {str(gpu["serial"]).strip() for gpu in gpus if gpu.get("serial") and str(gpu["serial"]).strip().strip("0")}
    )
    return HostIdentity(
        hostname=_hostname(host.get("name")) or _hostname(given_name),
        gpu_uuids=tuple(uuids),
        gpu_serials=tuple(serials),
    )


def identities_match(a: HostIdentity, b: HostIdentity) -> bool:
    """Whether two uploads are versions of one host (the module's rules)."""
    agreements = []
    if a.gpu_uuids and b.gpu_uuids:
        agreements.append(a.uuid_set == b.uuid_set)
    if a.hostname and b.hostname:
        agreements.append(a.hostname.casefold() == b.hostname.casefold())
    return bool(agreements) and all(agreements)


def merge_conflict(a: frozenset[str], b: frozenset[str]) -> tuple[list[str], list[str]] | None:
    """The UUIDs only `a` has and only `b` has when both hosts show UUIDs and they differ (two machines: a merge is
    refused), else None."""
    if a and b and a != b:
        return sorted(a - b), sorted(b - a)
    return None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_HASH_CHARS]


def natural_key(identity: HostIdentity, *, upload_sha256: str) -> str:
    """The key a new host of this identity gets (see the module's docstring)."""
    if identity.gpu_uuids and identity.hostname:
        return "host-" + _digest(identity.hostname.casefold() + "\n" + "\n".join(sorted(identity.uuid_set)))
    if identity.gpu_uuids:
        return "gpus-" + _digest("\n".join(sorted(identity.uuid_set)))
    if identity.hostname:
        return "name-" + _digest(identity.hostname.casefold())
    return "upload-" + upload_sha256[:KEY_HASH_CHARS]


def gpu_summary(facts: Mapping[str, Any]) -> str:
    """ "8× NVIDIA H100 80GB HBM3" (each model with its count, in the order first seen; a name the nvidia-smi table
    cut short ends in "…"); "GPU" without names."""
    counts: dict[str, int] = {}
    for gpu in facts.get("gpus") or []:
        if isinstance(gpu, Mapping):
            name = str(gpu.get("name") or "GPU") + ("…" if gpu.get("name_truncated") else "")
            counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{count}× {name}" for name, count in counts.items()) or "GPU"


def derived_name(facts: Mapping[str, Any], identity: HostIdentity, *, taken: Sequence[str]) -> str:
    """A name for a host the file does not name, from its GPUs: "8× NVIDIA H100 80GB HBM3 · GPU-a78a46af" (its
    first GPU's UUID, shortened) or, without UUIDs, "1× NVIDIA GeForce RTX 3060 Laptop GPU · #2" (the first number
    no host of `taken` uses). Language-neutral: the same name in the English and the Chinese report."""
    base = gpu_summary(facts)
    if identity.gpu_uuids:
        first = identity.gpu_uuids[0]
        short = first[: 4 + UUID_SHORT_CHARS] if first.upper().startswith("GPU-") else first[:UUID_SHORT_CHARS]
        name = f"{base} · {short}"
        if name not in taken:
            return name[:HOST_MAX_LENGTH]
        base = name
    used = {int(match.group(1)) for other in taken if (match := re.fullmatch(re.escape(base) + r" · #(\d+)", other))}
    number = next(n for n in range(1, len(used) + 2) if n not in used)
    suffix = f" · #{number}"
    return base[: HOST_MAX_LENGTH - len(suffix)] + suffix


def host_for(
    facts: Mapping[str, Any], identity: HostIdentity, *, upload_sha256: str, known: Sequence[KnownHost]
) -> HostChoice:
    """The host an upload belongs to among the deployment's `known` hosts (newest first): the one a version of
    which matches it (a host whose GPUs' UUIDs differ from the upload's never does; a UUID match wins over a name
    match, then the newest), else a new host with the upload's name or one derived from its GPUs."""
    candidates = [
        host
        for host in known
        if any(identities_match(identity, other) for other in host.identities)
        and merge_conflict(identity.uuid_set, host.uuid_set) is None
    ]
    if candidates:
        by_uuid = [host for host in candidates if identity.gpu_uuids and host.uuid_set == identity.uuid_set]
        chosen = (by_uuid or candidates)[0]
        if identity.hostname:
            return HostChoice(key=chosen.key, name=identity.hostname, named=True, joined=True)
        return HostChoice(key=chosen.key, name=chosen.name, named=chosen.named, joined=True)
    key = natural_key(identity, upload_sha256=upload_sha256)
    keys = {host.key for host in known}
    if key in keys:  # a host of that name whose GPUs differ: a second machine of the same name
        key = "upload-" + upload_sha256[:KEY_HASH_CHARS]
    if identity.hostname:
        return HostChoice(key=key, name=identity.hostname, named=True, joined=False)
    return HostChoice(
        key=key, name=derived_name(facts, identity, taken=[host.name for host in known]), named=False, joined=False
    )


def row_host_key(host_key: str, host: str) -> str:
    """A stored version's host key; a row stored without one (written before its migration, or by hand) is keyed
    by its name, as a named upload would be."""
    return host_key or "name-" + _digest(host.strip().casefold())
