"""Loopback helpers for the tests that talk UDP (SITL, MAVLink HIL)."""

from __future__ import annotations

import socket


def free_udp_port() -> int:
    """A UDP port on 127.0.0.1 that nothing holds right now (the OS picks it)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
