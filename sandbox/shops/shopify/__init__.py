"""A fake Shopify shop: the Admin GraphQL API at ``/admin/api/{version}/graphql.json`` with
deterministic generated data, a cost-based rate limit, bulk operations serving JSONL files,
and a ``/__fake__/`` API (not Shopify) to change records, move the clock and inject faults.
See README.md in this folder for what is faithful and what is simplified."""
