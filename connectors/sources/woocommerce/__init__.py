"""The WooCommerce source connector (REST API v3); see connector.py and README.md."""

from connectors.sources.woocommerce.client import WooCommerceApiError
from connectors.sources.woocommerce.config import WooCommerceConfig
from connectors.sources.woocommerce.connector import STREAMS, WooCommerceConnector

__all__ = ["STREAMS", "WooCommerceApiError", "WooCommerceConfig", "WooCommerceConnector"]
