"""A fake WooCommerce shop: the REST API v3 under ``/wp-json/wc/v3/`` with deterministic
generated data, plus a ``/__fake__/`` API (not WooCommerce) that lets tests change records
between reads. See README.md in this folder for what is faithful and what is simplified."""
