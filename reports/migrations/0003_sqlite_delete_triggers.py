"""SQLite refuses a raw DELETE of a signed report version or of an audit event too, as PostgreSQL has since 0002
(a flush still empties them: deploy/db/sqlite3 drops these triggers around its DELETEs, like PostgreSQL's TRUNCATE)."""

from django.db import migrations

from reports import immutable_sql


def create(apps, schema_editor) -> None:  # noqa: ANN001
    if schema_editor.connection.vendor == "sqlite":
        for statement in immutable_sql.DELETE_TRIGGERS.values():
            schema_editor.execute(statement)


def drop(apps, schema_editor) -> None:  # noqa: ANN001
    if schema_editor.connection.vendor == "sqlite":
        for name in immutable_sql.DELETE_TRIGGERS:
            schema_editor.execute(immutable_sql.drop(name))


class Migration(migrations.Migration):
    dependencies = [("reports", "0002_immutable_triggers")]

    operations = [migrations.RunPython(create, drop)]
