"""The PrestaShop source connector (webservice, 1.7 and 8.x); see connector.py and README.md."""

from connectors.sources.prestashop.client import PrestaShopApiError
from connectors.sources.prestashop.config import PrestaShopConfig
from connectors.sources.prestashop.connector import STREAMS, PrestaShopConnector

__all__ = ["STREAMS", "PrestaShopApiError", "PrestaShopConfig", "PrestaShopConnector"]
