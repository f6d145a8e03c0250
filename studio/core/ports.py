"""Free loopback ports for the servers the studio starts (the local Triton, Locust's master).

Several ports wanted at once are taken while all their sockets are open, so the kernel cannot hand the same
ephemeral port to two of them (one bind, close, bind again may return it twice: the server then fails on its
second port).
"""

from __future__ import annotations

import socket
from contextlib import ExitStack


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct ports on ``host`` that nobody listens on now."""
    with ExitStack() as stack:
        ports = []
        for _ in range(count):
            s = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            s.bind((host, 0))
            ports.append(int(s.getsockname()[1]))
        return ports


def free_port(host: str = "127.0.0.1") -> int:
    return free_ports(1, host)[0]
