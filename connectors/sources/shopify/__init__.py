"""The Shopify source connector (Admin GraphQL API); see connector.py and README.md."""

from connectors.sources.shopify.client import QueryTooCostly, ShopifyApiError
from connectors.sources.shopify.config import API_VERSION, ShopifyConfig
from connectors.sources.shopify.connector import STREAMS, ShopifyConnector

__all__ = ["API_VERSION", "STREAMS", "QueryTooCostly", "ShopifyApiError", "ShopifyConfig",
           "ShopifyConnector"]
