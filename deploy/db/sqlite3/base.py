"""Django's SQLite backend, with one change: a flush empties the signed-report tables as PostgreSQL's TRUNCATE does,
past the triggers that refuse to delete their rows (reports/immutable_sql.py). Everything else is Django's."""

from __future__ import annotations

from typing import Any

from django.db.backends.sqlite3 import base, operations

from reports import immutable_sql


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(
        self, style: Any, tables: Any, *, reset_sequences: bool = False, allow_cascade: bool = False
    ) -> list[str]:
        statements = super().sql_flush(style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        return immutable_sql.flush_statements(statements, set(tables))


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
