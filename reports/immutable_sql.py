"""The SQLite triggers that make a signed report version and every audit event unchangeable in the database itself
(migrations 0002 and 0003 create them; PostgreSQL's are plpgsql functions in 0002).

A flush (Django's `flush`, and the emptying of a test database between transactional tests) deletes every row:
PostgreSQL does it with TRUNCATE, which row triggers do not see; SQLite has no TRUNCATE, so the project's SQLite
backend (`deploy/db/sqlite3`) drops the delete triggers around its DELETEs and creates them again (FLUSH_* below)."""

from __future__ import annotations

SIGNED = "a signed report version never changes: make a new version instead"
APPEND_ONLY = "the audit log is append-only"

UPDATE_TRIGGERS = {
    "reports_version_signed_no_update": f"""CREATE TRIGGER reports_version_signed_no_update BEFORE UPDATE ON reports_reportversion
            WHEN OLD.status = 'signed' BEGIN SELECT RAISE(ABORT, '{SIGNED}'); END""",
    "reports_audit_no_update": f"""CREATE TRIGGER reports_audit_no_update BEFORE UPDATE ON reports_reportauditevent
            BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END""",
}
DELETE_TRIGGERS = {
    "reports_version_signed_no_delete": f"""CREATE TRIGGER reports_version_signed_no_delete BEFORE DELETE ON reports_reportversion
            WHEN OLD.status = 'signed' BEGIN SELECT RAISE(ABORT, '{SIGNED}'); END""",
    "reports_audit_no_delete": f"""CREATE TRIGGER reports_audit_no_delete BEFORE DELETE ON reports_reportauditevent
            BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END""",
}
GUARDED_TABLES = frozenset({"reports_reportversion", "reports_reportauditevent"})


def drop(name: str) -> str:
    return f"DROP TRIGGER IF EXISTS {name}"


def flush_statements(deletes: list[str], tables: set[str]) -> list[str]:
    """`deletes` (a flush's DELETE statements for `tables`) bracketed by dropping and re-creating the delete triggers,
    when the flush touches the guarded tables and so would be refused row by row."""
    if not tables & GUARDED_TABLES:
        return deletes
    return [*(drop(name) for name in DELETE_TRIGGERS), *deletes, *DELETE_TRIGGERS.values()]
