"""The database refuses to change or delete a signed report version, and any audit event, whatever writes to it (the
ORM, a raw query, a database shell): triggers on PostgreSQL (production, CI). On SQLite (the embedded default) these
triggers refuse updates; 0003 adds the ones that refuse deletes (a flush passes them: deploy/db/sqlite3)."""

from django.db import migrations

POSTGRES = """
CREATE OR REPLACE FUNCTION reports_refuse_signed_change() RETURNS trigger AS $$
BEGIN
    IF OLD.status = 'signed' THEN
        RAISE EXCEPTION 'a signed report version never changes: make a new version instead';
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER reports_version_signed_immutable BEFORE UPDATE OR DELETE ON reports_reportversion
    FOR EACH ROW EXECUTE FUNCTION reports_refuse_signed_change();
CREATE OR REPLACE FUNCTION reports_refuse_audit_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER reports_audit_append_only BEFORE UPDATE OR DELETE ON reports_reportauditevent
    FOR EACH ROW EXECUTE FUNCTION reports_refuse_audit_change();
"""
POSTGRES_REVERSE = """
DROP TRIGGER IF EXISTS reports_version_signed_immutable ON reports_reportversion;
DROP FUNCTION IF EXISTS reports_refuse_signed_change();
DROP TRIGGER IF EXISTS reports_audit_append_only ON reports_reportauditevent;
DROP FUNCTION IF EXISTS reports_refuse_audit_change();
"""
SQLITE = [
    """CREATE TRIGGER reports_version_signed_no_update BEFORE UPDATE ON reports_reportversion
       WHEN OLD.status = 'signed'
       BEGIN SELECT RAISE(ABORT, 'a signed report version never changes: make a new version instead'); END""",
    """CREATE TRIGGER reports_audit_no_update BEFORE UPDATE ON reports_reportauditevent
       BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END""",
]
SQLITE_REVERSE = [
    "DROP TRIGGER IF EXISTS reports_version_signed_no_update",
    "DROP TRIGGER IF EXISTS reports_audit_no_update",
]


def create(apps, schema_editor) -> None:  # noqa: ANN001
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES)
    elif schema_editor.connection.vendor == "sqlite":
        for statement in SQLITE:
            schema_editor.execute(statement)


def drop(apps, schema_editor) -> None:  # noqa: ANN001
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_REVERSE)
    elif schema_editor.connection.vendor == "sqlite":
        for statement in SQLITE_REVERSE:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("reports", "0001_reports")]

    operations = [migrations.RunPython(create, drop)]
