"""Reports in the admin: readable; a signed version and the audit log cannot be changed or deleted here either
(the models and the database refuse it anyway)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin

from reports.models import Report, ReportAuditEvent, ReportVersion


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ("title", "organisation", "deployment", "language", "created_at")
    list_filter = ("language", "organisation")
    search_fields = ("title", "deployment__name", "deployment__customer")


@admin.register(ReportVersion)
class ReportVersionAdmin(admin.ModelAdmin):
    list_display = ("report", "number", "status", "author", "reviewer", "signer", "signed_at", "sha256")
    list_filter = ("status",)
    readonly_fields = ("sha256", "signer_certificate_sha256", "signed_at", "signer", "approved_at", "submitted_at")

    def has_change_permission(self, request: Any, obj: ReportVersion | None = None) -> bool:
        if obj is not None and obj.status == ReportVersion.Status.SIGNED:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request: Any, obj: ReportVersion | None = None) -> bool:
        if obj is not None and obj.status == ReportVersion.Status.SIGNED:
            return False
        return super().has_delete_permission(request, obj)


@admin.register(ReportAuditEvent)
class ReportAuditEventAdmin(admin.ModelAdmin):
    list_display = ("version", "action", "actor_name", "at")
    list_filter = ("action",)

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: ReportAuditEvent | None = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: ReportAuditEvent | None = None) -> bool:
        return False
