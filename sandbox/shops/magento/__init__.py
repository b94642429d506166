"""A fake Magento 2 / Adobe Commerce shop: the REST API under ``/rest/<store_code>/V1/`` with
deterministic generated data, plus a ``/__fake__/`` API (not Magento) that lets tests change
records between reads. See README.md in this folder for what is faithful and what is not."""
