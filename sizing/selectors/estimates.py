"""Reads of the sizing app, scoped to the caller's organisation."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from sizing.models import Calibration, Estimate, Gpu, LlmModel, Organisation


def gpu_list() -> QuerySet[Gpu]:
    return Gpu.objects.all()


def gpu_get(*, slug: str) -> Gpu | None:
    return Gpu.objects.filter(slug=slug).first()


def model_list_for_organisation(*, organisation: Organisation | None) -> QuerySet[LlmModel]:
    """Catalog models plus the organisation's own uploads."""
    return LlmModel.objects.filter(Q(organisation__isnull=True) | Q(organisation=organisation))


def model_get_for_organisation(*, organisation: Organisation | None, slug: str) -> LlmModel | None:
    """The organisation's own upload wins over a catalog model of the same slug."""
    if organisation is not None:
        own = LlmModel.objects.filter(organisation=organisation, slug=slug).first()
        if own is not None:
            return own
    return LlmModel.objects.filter(organisation__isnull=True, slug=slug).first()


def estimate_list_for_organisation(*, organisation: Organisation) -> QuerySet[Estimate]:
    return Estimate.objects.filter(organisation=organisation).select_related("model", "gpu")


def estimate_get_for_organisation(*, organisation: Organisation, estimate_id: int) -> Estimate | None:
    return estimate_list_for_organisation(organisation=organisation).filter(pk=estimate_id).first()


def calibration_latest(
    *, organisation: Organisation, model: LlmModel, gpu: Gpu, engine: str, tp: int
) -> Calibration | None:
    """The newest calibration of this model on this GPU under this engine and TP, for the organisation."""
    return (
        Calibration.objects.filter(organisation=organisation, model__slug=model.slug, gpu=gpu, engine=engine, tp=tp)
        .order_by("-created_at", "-pk")
        .first()
    )


def calibration_list_for_organisation(*, organisation: Organisation) -> QuerySet[Calibration]:
    return Calibration.objects.filter(organisation=organisation).select_related("model", "gpu")
