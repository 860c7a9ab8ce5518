"""Reads of latency and throughput jobs, scoped to an organisation."""

from __future__ import annotations

from django.db.models import QuerySet

from sizing.models import Gpu, Organisation, PerfCalibration, SimulationJob


def simulation_job_list_for_organisation(*, organisation: Organisation) -> QuerySet[SimulationJob]:
    return SimulationJob.objects.filter(organisation=organisation).order_by("-created_at", "-pk")


def simulation_job_get_for_organisation(*, organisation: Organisation, job_id: int) -> SimulationJob | None:
    """The organisation's job, or None for another organisation's (the API answers 404)."""
    return SimulationJob.objects.filter(organisation=organisation, pk=job_id).first()


def perf_calibration_latest(*, organisation: Organisation, gpu: Gpu, engine: str) -> PerfCalibration | None:
    """The newest saved efficiencies of this GPU and engine for the organisation."""
    return PerfCalibration.objects.filter(organisation=organisation, gpu=gpu, engine=engine).first()


def perf_calibration_list_for_organisation(*, organisation: Organisation) -> QuerySet[PerfCalibration]:
    return PerfCalibration.objects.filter(organisation=organisation).select_related("gpu")
