"""The Magento 2 / Adobe Commerce source connector (REST); see connector.py and README.md."""

from connectors.sources.magento.client import MagentoApiError
from connectors.sources.magento.config import MagentoConfig
from connectors.sources.magento.connector import STREAMS, UNSUPPORTED, MagentoConnector

__all__ = ["STREAMS", "UNSUPPORTED", "MagentoApiError", "MagentoConfig", "MagentoConnector"]
