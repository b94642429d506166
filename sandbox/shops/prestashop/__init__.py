"""A fake PrestaShop shop: the webservice (1.7 and 8.x) under ``/api/``, generated data,
and a ``/__fake__`` API to change it between reads; see README.md."""
