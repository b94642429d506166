"""A fake in-house shop database (SQLite, or any SQLAlchemy URL) for the SQL source: generated,
deterministic data with an in-house schema. See README.md."""
