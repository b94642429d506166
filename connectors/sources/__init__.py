"""Source connectors: shop platforms read as streams of raw records."""
