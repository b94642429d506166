"""Addresses the connectors may send secrets to: https, or plain http on loopback only."""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address (127.0.0.0/8, ::1): traffic that never leaves the
    machine, where plain http cannot leak a key."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
