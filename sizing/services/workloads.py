"""Writes of workload profiles (a customer's traffic as request classes) and the computations the editor shows.

Every stored profile went through `profile_from_dict`, so a profile that cannot be sampled is never saved; the
stored JSON is the canonical `profile_to_dict` form. Shipped samples (organisation empty) are visible to every
organisation and read-only: changing one means saving a copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import IO, Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction

from llm_sizing_loadgen.workload import (
    LengthFit,
    ProfileFit,
    profile_fit,
    profile_from_dict,
    profile_to_dict,
    sample_profile,
)
from llm_sizing_loadgen.workload import WorkloadProfile as Workload
from sizing.estimator.errors import SizingError, SizingErrorCode
from sizing.estimator.workload_csv import MAX_CLASSES, workload_log_parse
from sizing.kernel.json_limits import decode_text
from sizing.kernel.jsonsafe import nonfinite_as_text
from sizing.kernel.uploads import upload_read
from sizing.models import Organisation, WorkloadProfile

NAME_MAX_LENGTH = 200  # WorkloadProfile.name


def _invalid(field: str, message: str, **extra: Any) -> SizingError:
    return SizingError(
        code=SizingErrorCode.INVALID_ARGUMENT, message=message, extra={**extra, "fields": {field: [message]}}
    )


def _name_clean(*, organisation: Organisation, name: str, exclude_pk: int | None = None) -> str:
    """The stripped name; raises when it is empty, too long or taken in the organisation."""
    name = name.strip()
    if not name:
        raise _invalid("name", "give the profile a name")
    if len(name) > NAME_MAX_LENGTH:
        raise _invalid("name", f"the name has {len(name)} characters; the limit is {NAME_MAX_LENGTH}")
    taken = WorkloadProfile.objects.filter(organisation=organisation, name=name).exclude(pk=exclude_pk)
    if taken.exists():
        raise _invalid("name", f"your organisation already has a profile named {name!r}; choose another name")
    return name


def workload_profile_parse(*, profile: Mapping[str, Any]) -> Workload:
    """The estimator's profile from its JSON form; raises SizingError naming the field at fault."""
    workload = profile_from_dict(profile)
    if len(workload.classes) > MAX_CLASSES:
        raise _invalid(
            "classes", f"the profile has {len(workload.classes)} request classes; the limit is {MAX_CLASSES}"
        )
    return workload


def _profile_json(*, profile: Mapping[str, Any], name: str, description: str | None) -> dict[str, Any]:
    """The canonical JSON of a valid profile, named as its row (unknown keys dropped, numbers normalised)."""
    workload = workload_profile_parse(profile=profile)
    workload = replace(workload, name=name, description=workload.description if description is None else description)
    return nonfinite_as_text(profile_to_dict(workload))


def _save(row: WorkloadProfile) -> WorkloadProfile:
    """Save, turning a name taken by a concurrent request into the same field error as the check before."""
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError:
        raise _invalid(
            "name", f"your organisation already has a profile named {row.name!r}; choose another name"
        ) from None
    return row


@transaction.atomic
def workload_profile_create(
    *,
    organisation: Organisation,
    user: Any,
    name: str,
    profile: Mapping[str, Any],
    description: str | None = None,
    source: str = WorkloadProfile.Source.MANUAL,
    fit: Mapping[str, Any] | None = None,
) -> WorkloadProfile:
    """Store a profile for the organisation. An invalid profile or a taken name raises SizingError; nothing saved.

    `description` None keeps the profile's own description. Copying a sample is creating a profile from its JSON.
    """
    name = _name_clean(organisation=organisation, name=name)
    data = _profile_json(profile=profile, name=name, description=description)
    return _save(
        WorkloadProfile(
            organisation=organisation,
            created_by=user,
            name=name,
            description=data["description"],
            profile=data,
            source=source,
            fit=nonfinite_as_text(dict(fit)) if fit is not None else None,
        )
    )


def _ensure_editable(*, workload_profile: WorkloadProfile, organisation: Organisation) -> None:
    if workload_profile.organisation_id is None:
        raise PermissionDenied(
            f"{workload_profile.name!r} is a shipped sample and read-only; save a copy under another name to change it"
        )
    if workload_profile.organisation_id != organisation.pk:
        raise PermissionDenied("this profile belongs to another organisation")


@transaction.atomic
def workload_profile_update(
    *,
    workload_profile: WorkloadProfile,
    organisation: Organisation,
    name: str | None = None,
    description: str | None = None,
    profile: Mapping[str, Any] | None = None,
) -> WorkloadProfile:
    """Change the organisation's own profile (None leaves a part as it is); samples raise PermissionDenied.

    A CSV import keeps its fit report after edits: it describes the log, which has not changed.
    """
    _ensure_editable(workload_profile=workload_profile, organisation=organisation)
    name = _name_clean(
        organisation=organisation, name=workload_profile.name if name is None else name, exclude_pk=workload_profile.pk
    )
    if description is None:
        description = workload_profile.description
    data = _profile_json(
        profile=workload_profile.profile if profile is None else profile, name=name, description=description
    )
    workload_profile.name, workload_profile.description, workload_profile.profile = name, description, data
    return _save(workload_profile)


@transaction.atomic
def workload_profile_delete(*, workload_profile: WorkloadProfile, organisation: Organisation) -> None:
    """Delete the organisation's own profile; samples raise PermissionDenied."""
    _ensure_editable(workload_profile=workload_profile, organisation=organisation)
    workload_profile.delete()


def _length_fit_report(length_fit: LengthFit) -> dict[str, Any]:
    distribution = length_fit.distribution
    return {
        "kind": distribution.kind.value,
        "data": {"mean": length_fit.data_mean, "std": length_fit.data_std, **length_fit.data_percentiles},
        "fitted": {"mean": distribution.expected(), "std": distribution.std, **length_fit.fitted_percentiles},
        "ks_statistic": length_fit.ks_statistic,
        "histogram": length_fit.histogram,  # edges (tokens), data and fitted (share of requests per bin)
    }


def workload_fit_report(*, fit: ProfileFit, columns: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The fit of a profile to a log as JSON: per class, data against fitted lengths (mean, std, p50, p90, p99),
    the Kolmogorov–Smirnov statistic and histograms; the log's hourly counts, rates and dispersion index.

    Classes are a list in the profile's order (PostgreSQL's jsonb does not keep the order of object keys).
    """
    classes = []
    for request_class in fit.profile.classes:
        fits = fit.classes[request_class.name]
        classes.append(
            {
                "name": request_class.name,
                "share": request_class.share,
                "requests": round(request_class.share * fit.requests),
                "windows": [list(window) for window in request_class.windows],
                "input": _length_fit_report(fits["input"]),
                "output": _length_fit_report(fits["output"]),
            }
        )
    return nonfinite_as_text(
        {
            "requests": fit.requests,
            "duration_s": fit.duration_s,
            "mean_rate_per_s": fit.mean_rate_per_s,
            "peak_hour_rate_per_s": fit.peak_hour_rate_per_s,
            "dispersion_index": fit.dispersion_index,
            "hourly_requests": fit.hourly_requests,
            "columns": dict(columns or {}),
            "classes": classes,
        }
    )


def workload_profile_import_csv(
    *, organisation: Organisation, user: Any, name: str, file: IO[bytes]
) -> WorkloadProfile:
    """Fit a profile to a CSV request log (see sizing.estimator.workload_csv for the columns) and store it with its fit
    report. A file over SIZING_MAX_WORKLOAD_CSV_BYTES, a bad row or a taken name raises SizingError; nothing saved.
    """
    name = _name_clean(organisation=organisation, name=name)  # before the work of reading and fitting
    limit_bytes = settings.SIZING_MAX_WORKLOAD_CSV_BYTES
    raw = upload_read(
        file,
        limit_bytes=limit_bytes,
        field="file",
        note="(SIZING_MAX_WORKLOAD_CSV_BYTES): upload a sample of the log, e.g. one week",
    )
    try:
        text = decode_text(raw)  # by its BOM: Excel's "Unicode text" is UTF-16
    except UnicodeDecodeError as error:
        raise _invalid("file", f"the file is not UTF-8 text (byte {error.start:,}); save the CSV as UTF-8") from None
    if "\x00" in text:
        raise _invalid("file", "the file holds a NUL character, which cannot be stored; save the CSV as text")
    parsed = workload_log_parse(text=text)
    fit = profile_fit(parsed.requests, name=name)
    return workload_profile_create(
        organisation=organisation,
        user=user,
        name=name,
        profile=profile_to_dict(fit.profile),
        description=fit.profile.description,
        source=WorkloadProfile.Source.CSV,
        fit=workload_fit_report(fit=fit, columns=parsed.columns),
    )


@transaction.atomic
def workload_sample_load() -> WorkloadProfile:
    """Store the shipped sample profile as a shared, read-only row; idempotent (catalog_load calls it)."""
    sample = sample_profile()
    row, _ = WorkloadProfile.objects.update_or_create(
        organisation=None,
        name=sample.name,
        defaults={
            "description": sample.description,
            "profile": nonfinite_as_text(profile_to_dict(sample)),
            "source": WorkloadProfile.Source.SAMPLE,
            "fit": None,
            "created_by": None,
        },
    )
    return row


def workload_preview(*, profile: Mapping[str, Any]) -> dict[str, Any]:
    """What a profile means over a day, without saving it: each class's share of the day's requests per hour
    (the daily curve stacked by class), the busiest hour, the class mix then, and the expected lengths.

    Expected input tokens include the class's shared prefix, as `workload_sample` draws them; lengths are the
    distributions' means before clipping.
    """
    workload = workload_profile_parse(profile=profile)
    hourly = workload.hourly_rates()  # (classes, 24): share of the day's requests
    busiest = workload.busiest_hour()
    mix = workload.mix_at(busiest)
    total_share = sum(request_class.share for request_class in workload.classes)
    daily = workload.daily_curve()
    return nonfinite_as_text(
        {
            "busiest_hour": busiest,
            "busiest_hour_share": float(daily[busiest]),
            "daily_curve": daily.tolist(),
            "classes": [
                {
                    "name": request_class.name,
                    "share": request_class.share / total_share,
                    "hourly": hourly[index].tolist(),
                    "mix_at_busiest_hour": float(mix[index]),
                    "active_hours": list(request_class.active_hours()),
                    "shared_prefix_tokens": request_class.shared_prefix_tokens,
                    "expected_input_tokens": request_class.shared_prefix_tokens + request_class.input.expected(),
                    "expected_output_tokens": request_class.output.expected(),
                }
                for index, request_class in enumerate(workload.classes)
            ],
        }
    )
