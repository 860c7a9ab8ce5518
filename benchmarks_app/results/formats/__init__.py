"""One importer module per tool: each reads its tool's files into `ImportedRun`s or raises `FormatRefusal`."""
