"""What the sandbox's refusals look like to a client: the API's error shape."""

from __future__ import annotations

import httpx


def refused(answer: httpx.Response, status: int = 400) -> list[str]:
    """The errors of an answer in the API's error shape with ``status``."""
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert (body["statusCode"], body["success"]) == (status, False)
    assert body["message"] == "; ".join(body["errors"])
    return body["errors"]
