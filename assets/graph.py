"""Which target resources point at which: reference data is materialized first. The table
is the API's, shared with the engine and the CLI (``connectors/marketing/references.py``)."""

from connectors.marketing.references import REFERS_TO

__all__ = ["REFERS_TO"]
