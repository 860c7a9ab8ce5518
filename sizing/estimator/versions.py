"""Engine versions: parse what a user types, and map it onto the version bands the estimator models.

Every engine's memory rules change between releases (see `vllm_budget` for vLLM's), so an estimate holds for one
engine version. `"latest"` means the newest release the rule tables know; a newer version than that is estimated
with the newest band and a warning; a version older than the oldest band is refused with the reason.

>>> parse_version("0.8.5.post1")
Version(major=0, minor=8, patch=5)
>>> resolve_engine_version("vllm", "latest").version
Version(major=0, minor=33, patch=0)
>>> resolve_engine_version("vllm", "0.40.1").warning is not None
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sizing.estimator.errors import invalid_argument

# X.Y.Z with an optional pre/post/dev-release suffix and local label, as pip and the engines' banners print them
# ("0.8.5.post1", "0.10.1rc1", "0.6.4.dev123+g1234abc", "0.11.0+cu128").
_VERSION = re.compile(r"^v?(\d{1,3})\.(\d{1,3})\.(\d{1,4})(?:(?:\.?(?:post|dev|rc|a|b)\d*)*)(?:\+[0-9A-Za-z.]+)?$")
LATEST = "latest"
ACCEPTED_FORM = "X.Y.Z (e.g. 0.11.0, 0.8.5.post1) or latest"


@dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int
    patch: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"


def parse_version(text: str) -> Version | None:
    """A release number, or None when `text` is not one."""
    match = _VERSION.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        return None
    return Version(int(match[1]), int(match[2]), int(match[3]))


@dataclass(frozen=True)
class EngineVersionRange:
    """The releases an engine's rule tables cover."""

    oldest: Version  # older releases are refused
    newest: Version  # what "latest" means; newer releases use this band with a warning


# Oldest and newest releases whose memory rules the estimator models, per engine (the rules live in the engine's
# budget module; each band cites the engine's source).
ENGINE_VERSION_RANGES: dict[str, EngineVersionRange] = {
    "vllm": EngineVersionRange(oldest=Version(0, 6, 0), newest=Version(0, 33, 0)),
    "sglang": EngineVersionRange(oldest=Version(0, 4, 0), newest=Version(0, 5, 23)),  # sglang_budget
    "trtllm": EngineVersionRange(oldest=Version(0, 17, 0), newest=Version(1, 2, 0)),  # trtllm_budget
}


@dataclass(frozen=True)
class ResolvedVersion:
    requested: str  # what the user asked for ("latest", "0.8.5.post1")
    version: Version | None  # the release the rules are taken for; None for an engine without version rules
    warning: str | None = None


def resolve_engine_version(engine: str, requested: str | None) -> ResolvedVersion:
    """The version the estimate's rules are taken for, or an INVALID_ARGUMENT error on `engine_version`."""
    text = LATEST if requested is None or (isinstance(requested, str) and not requested.strip()) else requested
    if not isinstance(text, str):
        raise invalid_argument("engine_version", f"engine_version must be a string of the form {ACCEPTED_FORM}")
    text = text.strip()
    span = ENGINE_VERSION_RANGES.get(engine)
    if text.lower() == LATEST:
        return ResolvedVersion(requested=LATEST, version=span.newest if span else None)
    version = parse_version(text)
    if version is None:
        raise invalid_argument("engine_version", f"engine_version {text[:40]!r} is not a version: give {ACCEPTED_FORM}")
    if span is None:
        return ResolvedVersion(requested=text, version=version)
    if version < span.oldest:
        raise invalid_argument(
            "engine_version",
            f"{engine} {version} is older than the oldest release modelled ({span.oldest}): its memory rules are "
            f"not in the estimator, so it is not estimated; choose {span.oldest} or later",
        )
    if version > span.newest:
        return ResolvedVersion(
            requested=text,
            version=span.newest,
            warning=f"{engine} {version} is newer than the newest release modelled ({span.newest}): estimated with "
            f"{span.newest}'s rules; check its boot log",
        )
    return ResolvedVersion(requested=text, version=version)
