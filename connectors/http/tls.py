"""One TLS context per process, shared by every HTTP client of the project.

httpx builds a fresh ``ssl.SSLContext`` (and parses the whole CA bundle) for every client or
transport it is not given one for: about 50 ms of CPU each. A sync opens a client per source
and one for the destination on every run, so the cost is paid again and again for the same
certificates. The context is built once, the way httpx builds its default — ``SSL_CERT_FILE``
or ``SSL_CERT_DIR`` when set, else certifi's bundle — and verification stays on. An
``SSLContext`` may be shared across threads and event loops.
"""

from __future__ import annotations

import os
import ssl
from functools import cache


@cache
def tls_context() -> ssl.SSLContext:
    """The verifying context every client passes to httpx as ``verify=``."""
    if os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    import certifi

    return ssl.create_default_context(cafile=certifi.where())
