"""Addresses the connectors may send secrets to: https, or plain http on loopback only."""

from __future__ import annotations

import ipaddress

import httpx


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (127.0.0.0/8, ::1): traffic that never leaves the
    machine, where plain http cannot leak a key."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def secure_url(text: str, *, carrying: str, shown: str | None = None, label: str = "base URL",
               invalid: str = "must be an http(s) URL of the shop") -> httpx.URL:
    """``text`` as an address a secret may be sent to: http(s) with a host, and https unless
    the host is loopback. ``carrying`` says what travels with every request (``the bearer
    token travels``); the errors name the address as the user wrote it (``shown``)."""
    written = text if shown is None else shown
    try:
        url = httpx.URL(text)
    except httpx.InvalidURL:  # a port that is no number, a character a URL cannot hold
        raise ValueError(f"{label} {written!r} {invalid}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError(f"{label} {written!r} {invalid}")
    if url.scheme != "https" and not is_loopback(url.host):
        raise ValueError(f"{label} {written!r} must use https: {carrying} with every request"
                         " (plain http is allowed on loopback only)")
    return url


def api_root(url: httpx.URL, api_path: str) -> str:
    """``url`` ending in ``api_path`` (added when the user gave the site only), without a
    trailing slash, query or fragment."""
    path = url.path.rstrip("/")
    if not path.endswith(api_path):
        path += api_path
    return str(url.copy_with(path=path, query=None, fragment=None))
