"""Loopback helpers for the tests that talk UDP (SITL, MAVLink HIL) and TCP (the browser view)."""

from __future__ import annotations

import socket


def free_udp_port() -> int:
    """A UDP port on 127.0.0.1 that nothing holds right now (the OS picks it)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def free_tcp_port_pair() -> int:
    """A TCP port p such that p and p + 1 are both free on every address right now (the
    browser view serves its page on p and its data stream on p + 1)."""
    for _ in range(100):
        with socket.socket() as a:
            a.bind(("", 0))
            port = a.getsockname()[1]
            with socket.socket() as b:
                try:
                    b.bind(("", port + 1))
                except OSError:
                    continue
        if port < 65535:
            return port
    raise RuntimeError("no two neighbouring free TCP ports")
