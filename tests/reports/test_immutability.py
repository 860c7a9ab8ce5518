"""A signed report version never changes: the model, the queryset and the database itself refuse, and the audit log
is append-only the same way."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.db.utils import DatabaseError, InternalError

from reports.models import ImmutableVersionError, Report, ReportAuditEvent, ReportVersion
from sizing.models import Deployment, Organisation


@pytest.fixture
def signed(db) -> ReportVersion:
    organisation = Organisation.objects.create(name="Org")
    deployment = Deployment.objects.create(organisation=organisation, name="d")
    report = Report.objects.create(organisation=organisation, deployment=deployment, title="t")
    version = ReportVersion.objects.create(report=report, number=1, content={"a": 1})
    version.status = ReportVersion.Status.SIGNED
    version.save()  # approved → signed is the last write it takes
    return version


def test_the_model_refuses_to_save_or_delete_a_signed_version(signed) -> None:
    signed.content = {"a": 2}
    with pytest.raises(ImmutableVersionError):
        signed.save()
    with pytest.raises(ImmutableVersionError):
        signed.delete()
    assert ReportVersion.objects.get(pk=signed.pk).content == {"a": 1}


def test_the_queryset_refuses_bulk_writes_that_touch_a_signed_version(signed) -> None:
    with pytest.raises(ImmutableVersionError):
        ReportVersion.objects.filter(pk=signed.pk).update(content={"a": 3})
    with pytest.raises(ImmutableVersionError):
        ReportVersion.objects.all().delete()
    assert ReportVersion.objects.get(pk=signed.pk).content == {"a": 1}


def test_the_database_refuses_a_raw_update_of_a_signed_version(signed) -> None:
    table = ReportVersion._meta.db_table
    with pytest.raises((DatabaseError, InternalError)), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET content = %s WHERE id = %s", ['{"a": 4}', signed.pk])  # noqa: S608
    assert ReportVersion.objects.get(pk=signed.pk).content == {"a": 1}


def test_the_database_refuses_a_raw_delete_of_a_signed_version(signed) -> None:
    table = ReportVersion._meta.db_table
    with pytest.raises((DatabaseError, InternalError)), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {table} WHERE id = %s", [signed.pk])  # noqa: S608
    assert ReportVersion.objects.filter(pk=signed.pk).exists()


def test_a_draft_changes_freely(signed) -> None:
    draft = ReportVersion.objects.create(report=signed.report, number=2, content={"b": 1})
    draft.content = {"b": 2}
    draft.save()
    ReportVersion.objects.filter(pk=draft.pk).update(content={"b": 3})
    assert ReportVersion.objects.get(pk=draft.pk).content == {"b": 3}


def test_the_audit_log_is_append_only(signed) -> None:
    event = ReportAuditEvent.objects.create(version=signed, actor_name="x", action=ReportAuditEvent.Action.SIGNED)
    event.detail = {"changed": True}
    with pytest.raises(ImmutableVersionError):
        event.save()
    with pytest.raises(ImmutableVersionError):
        event.delete()
    with pytest.raises(ImmutableVersionError):
        ReportAuditEvent.objects.all().update(actor_name="y")
    table = ReportAuditEvent._meta.db_table
    with pytest.raises((DatabaseError, InternalError)), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET actor_name = %s", ["y"])  # noqa: S608
    assert ReportAuditEvent.objects.get(pk=event.pk).actor_name == "x"
