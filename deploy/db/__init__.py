"""Database backends of the project (the embedded SQLite default: `deploy.db.sqlite3`)."""
