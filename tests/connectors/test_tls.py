"""Every client shares one verifying TLS context instead of parsing the CA bundle again for
each one (about 50 ms of CPU per client)."""

import asyncio
import ssl
from collections.abc import Iterator

import certifi
import pytest

from connectors.http.tls import tls_context
from connectors.marketing.client import MarketingClient
from connectors.sources.woocommerce.client import WooClient
from connectors.sources.woocommerce.config import WooCommerceConfig


@pytest.fixture
def fresh_context() -> Iterator[None]:
    tls_context.cache_clear()
    yield
    tls_context.cache_clear()


def test_the_shared_context_verifies_certificates_and_host_names(fresh_context: None) -> None:
    context = tls_context()
    assert context.verify_mode is ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] > 0
    assert tls_context() is context


def test_the_certificate_file_named_in_the_environment_is_used(
        fresh_context: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    assert tls_context().cert_store_stats()["x509_ca"] > 0
    monkeypatch.setenv("SSL_CERT_FILE", "/nonexistent/ca.pem")
    tls_context.cache_clear()
    with pytest.raises(FileNotFoundError):
        tls_context()


def test_clients_are_built_without_building_a_tls_context_each(
        monkeypatch: pytest.MonkeyPatch) -> None:
    tls_context()
    built: list[object] = []
    create = ssl.create_default_context

    def counted(*args: object, **kwargs: object) -> ssl.SSLContext:
        built.append(args)
        return create(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl, "create_default_context", counted)
    config = WooCommerceConfig(base_url="https://shop.example/", consumer_key="k",
                               consumer_secret="s")
    clients = [MarketingClient("https://api.example.com/v1", "k" * 32) for _ in range(3)]
    shops = [WooClient(config) for _ in range(3)]

    async def close() -> None:
        for client in [*clients, *shops]:
            await client.aclose()

    asyncio.run(close())
    assert built == []
