"""The memory-commitment report: a report per deployment and language, its versions (draft → in review → approved →
signed), and the audit log of who did what to each version.

A signed version never changes, at three depths: `ReportVersion.save`/`delete` refuse it (the admin and the API go
through them), `ReportVersionQuerySet.update`/`delete` refuse to touch signed rows (bulk writes), and a database
trigger (migration 0002) refuses any UPDATE or DELETE of a signed row whatever wrote it. Audit events are append-only
the same way. Any change to a signed report is a new version that says what changed.

One module per noun; every model is importable from reports.models as before."""

from reports.models.audit import AuditQuerySet, ReportAuditEvent
from reports.models.reports import (
    IMMUTABLE_MESSAGE,
    ChecklistWaiver,
    ImmutableVersionError,
    Report,
    ReportVersion,
    ReportVersionQuerySet,
)

__all__ = [
    "IMMUTABLE_MESSAGE",
    "AuditQuerySet",
    "ChecklistWaiver",
    "ImmutableVersionError",
    "Report",
    "ReportAuditEvent",
    "ReportVersion",
    "ReportVersionQuerySet",
]
