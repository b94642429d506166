"""The sync engine: plain Python, no Dagster inside."""
