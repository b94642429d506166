"""Keeping secrets out of the HTTP libraries' logs.

httpx and httpcore log request lines and response headers at DEBUG: a key sent in a query
string, or echoed back by a server (WordPress repeats it in ``Link``), would land in a log
file. Every client registers the forms its secrets take on the wire while it is open; one
filter on those loggers blanks them out of every record.
"""

from __future__ import annotations

import base64
import logging
from collections import Counter
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

from pydantic import SecretStr

HTTP_LOGGERS = ("httpx", "httpcore.connection", "httpcore.http11", "httpcore.http2",
                "httpcore.proxy")
HIDDEN = "**********"


class _Redact(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self.secrets: Counter[str] = Counter()

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            message = record.getMessage()
            if any(secret in message for secret in self.secrets):
                for secret in self.secrets:
                    message = message.replace(secret, HIDDEN)
                record.msg, record.args = message, None
        return True


_REDACT = _Redact()
for _name in HTTP_LOGGERS:
    logging.getLogger(_name).addFilter(_REDACT)


def wire_forms(*secrets: SecretStr, basic_user: SecretStr | None = None) -> list[str]:
    """How secrets can appear in a request or an answer: as they are, URL-encoded, and
    (for a key used as the Basic-auth user name with an empty password) base64-encoded."""
    forms: set[str] = set()
    for secret in secrets:
        raw = secret.get_secret_value()
        if raw:
            forms |= {raw, quote(raw, safe=""), quote_plus(raw)}
    if basic_user is not None and basic_user.get_secret_value():
        forms.add(base64.b64encode(f"{basic_user.get_secret_value()}:".encode()).decode())
    return sorted(forms)


def hide(forms: Iterable[str]) -> None:
    """Start blanking ``forms`` (a client opening)."""
    _REDACT.secrets.update(forms)


def unhide(forms: Iterable[str]) -> None:
    """Stop blanking ``forms`` unless another open client still uses them."""
    _REDACT.secrets.subtract(forms)
    _REDACT.secrets += Counter()  # drops the ones no client uses any more
