"""What stands in front of the fake's routes: the hosting layer (``sandbox.shops.hosting``: a
token-bucket rate limit and injected CDN/WAF faults, reproducible under ``--seed``) and
Magento's bearer-token check.

Magento Open Source has no per-request rate limit of its own; what throttles an API client is
the CDN or WAF in front of it (Fastly on Adobe Commerce Cloud, Cloudflare): a 429 with
``Retry-After``, a Fastly 503, an HTML 502 or 504, a Cloudflare 403 block page. The
``/__fake__`` API and ``/healthz`` are never faulted nor limited.
"""

from __future__ import annotations

import orjson
from starlette.types import Receive, Scope, Send

from sandbox.shops import hosting
from sandbox.shops.magento.settings import REST_PREFIX

_HTML = "text/html; charset=UTF-8"
_PAGES: dict[int, tuple[str, bytes, dict[str, str]]] = {
    429: ("application/json; charset=utf-8",
          orjson.dumps({"message": "Too many requests. Try again later."}), {}),
    502: (_HTML, b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body>"
                 b"<center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body>"
                 b"</html>\n", {}),
    503: (_HTML, b"<!DOCTYPE html>\n<html><head><title>503 Backend is unhealthy</title></head>"
                 b"<body><h1>Error 503 Backend is unhealthy</h1><p>Backend is unhealthy</p>"
                 b"<h3>Guru Mediation:</h3><p>Details: cache-fra-etou8220144-FRA 1719830000</p>"
                 b"<hr><p>Varnish cache server</p></body></html>\n", {}),
    504: (_HTML, b"<!DOCTYPE html>\n<html><head><title>504 Gateway Time-out</title></head><body>"
                 b"<center><h1>504 Gateway Time-out</h1></center></body></html>\n", {}),
    403: (_HTML, b"<!DOCTYPE html>\n<html><head><title>Attention Required! | Cloudflare</title>"
                 b"</head><body><h1>Sorry, you have been blocked</h1><p>Cloudflare Ray ID:"
                 b" 8f1e2d3c4b5a6978</p></body></html>\n", {"Server": "cloudflare"}),
}


def bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization" and value[:7].lower() == b"bearer ":
            return value[7:].decode("latin-1").strip()
    return None


class Gate(hosting.Gate):
    """The hosting layer on the REST API; the token is read here and checked by the routes
    (each answers 401 naming its own ACL resource)."""

    platform = "magento"
    fault_kinds = (429, 503, 502, 504, 403)
    pages = _PAGES

    def is_api(self, path: str) -> bool:
        return path.startswith((REST_PREFIX, "/index.php" + REST_PREFIX))

    async def admit(self, scope: Scope, receive: Receive, send: Send, *, api: bool,
                    fault: int | None) -> None:
        scope.setdefault("state", {})["token"] = bearer(scope)
        await self.app(scope, receive, send)
