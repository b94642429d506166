"""The Magento connector's tokens, against the fake shop: a wrong token refused plainly,
an admin token where integration tokens are refused, and the token kept out of reprs, logs
and errors.
"""

from __future__ import annotations

import asyncio

import pytest

from connectors.sources.base import SourceAuthError
from tests.connectors.magento.support import Start, connector, read

# credentials --------------------------------------------------------------------------------

def test_a_wrong_token_is_refused_plainly_with_what_to_check(shop) -> None:
    async def check() -> None:
        async with connector(shop, token="not-the-token") as source:
            await source.check()

    with pytest.raises(SourceAuthError) as caught:
        asyncio.run(check())
    message = str(caught.value)
    assert "The consumer isn't authorized to access Magento_Sales::actions_view." in message
    assert "standalone Bearer tokens" in message and "not-the-token" not in message


def test_an_admin_token_works_where_integration_tokens_are_refused(start_shop: Start) -> None:
    running = start_shop("--orders", "5", "--no-integration-bearer")
    with pytest.raises(SourceAuthError):
        read(running, "orders")
    token = running.client().post("/integration/admin/token", json={
        "username": "admin", "password": "shopsync-fake-admin1"}).json()
    assert len(read(running, "orders", token=token)) == 5


def test_the_token_stays_out_of_reprs_logs_and_errors(shop, caplog) -> None:
    secret = "s3cr3t-token-value"
    source = connector(shop, token=secret)
    assert secret not in repr(source) and secret not in repr(source.config)
    assert secret not in repr(source.client)
    caplog.set_level("DEBUG")

    async def check() -> None:
        async with source:
            await source.check()

    with pytest.raises(SourceAuthError) as caught:
        asyncio.run(check())
    assert secret not in str(caught.value) and secret not in caplog.text
