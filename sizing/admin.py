from django.contrib import admin

from sizing.models import (
    Calibration,
    Estimate,
    Gpu,
    LlmModel,
    Membership,
    Organisation,
    PerfCalibration,
    SimulationJob,
    WorkloadProfile,
)


@admin.register(Organisation)
class OrganisationAdmin(admin.ModelAdmin):
    list_display = ("name", "created_at")


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    """Where a superuser makes a member an admin of their organisation (admins register load-test endpoints)."""

    list_display = ("user", "organisation", "role")
    list_filter = ("role",)
    list_editable = ("role",)


@admin.register(Gpu)
class GpuAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "marketed_memory_gb", "nvidia_smi_memory_bytes", "price_per_hour_usd")
    list_editable = ("price_per_hour_usd",)
    search_fields = ("slug", "name")


@admin.register(LlmModel)
class LlmModelAdmin(admin.ModelAdmin):
    list_display = ("slug", "model_type", "organisation", "parameters_total", "supported")
    list_filter = ("supported", "model_type")
    search_fields = ("slug",)


@admin.register(Estimate)
class EstimateAdmin(admin.ModelAdmin):
    list_display = ("id", "organisation", "model", "gpu", "status", "created_at")
    list_filter = ("status",)


@admin.register(Calibration)
class CalibrationAdmin(admin.ModelAdmin):
    list_display = ("model", "gpu", "engine", "engine_version", "tp", "organisation", "created_at")
    list_filter = ("engine",)


@admin.register(WorkloadProfile)
class WorkloadProfileAdmin(admin.ModelAdmin):
    list_display = ("name", "organisation", "source", "updated_at")
    list_filter = ("source",)
    search_fields = ("name",)


@admin.register(SimulationJob)
class SimulationJobAdmin(admin.ModelAdmin):
    list_display = ("id", "organisation", "kind", "status", "progress", "created_at", "finished_at")
    list_filter = ("kind", "status")


@admin.register(PerfCalibration)
class PerfCalibrationAdmin(admin.ModelAdmin):
    list_display = ("gpu", "engine", "organisation", "measurements", "calibrated_rms_log_error", "created_at")
    list_filter = ("engine",)
