"""The sandbox's own reading of the Marketing API spec: routes and batch sizes, the listing
grammar and the item models the server validates writes with.

Written from ``marketing-api-spec.md`` and ``target-api.md``, never imported from the
client (``connectors.marketing``): a client and a server that share one reading agree by
construction and cannot catch each other's mistakes. Where both must agree,
``tests/sandbox/test_agrees_with_client.py`` compares them, so a drift fails a test.
"""
