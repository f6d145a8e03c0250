"""Closed-loop runs against servers that close the connection after every response (``Connection: close``, or
a body that runs to EOF): every request is counted once, matching the server's own count, with no errors."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from studio.telemetry.kserve import Endpoint, build_request
from studio.telemetry.loadgen import LoadConfig, LoadGenerator

pytestmark = [pytest.mark.timeout(120)]

SERVER = r'''
import asyncio, sys
mode = sys.argv[1]
count = 0
RESP = (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}" if mode == "close"
        else b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n{}")
class P(asyncio.Protocol):
    def connection_made(self, t):
        self.t, self.buf = t, b""
    def data_received(self, d):
        global count
        self.buf += d
        if b"\r\n\r\n" in self.buf:
            count += 1
            self.t.write(RESP)
            self.t.close()
async def main():
    srv = await asyncio.get_running_loop().create_server(P, "127.0.0.1", 0)
    print("PORT", srv.sockets[0].getsockname()[1], flush=True)
    while True:
        line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        print("COUNT", count, flush=True)
        if not line:
            return
asyncio.run(main())
'''


@pytest.mark.parametrize("mode", ["close", "eof"])
def test_counts_when_server_closes_each_connection(mode: str) -> None:
    srv = subprocess.Popen([sys.executable, "-c", SERVER, mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True)
    try:
        port = int(srv.stdout.readline().split()[1])  # type: ignore[union-attr]
        url = f"http://127.0.0.1:{port}"
        cfg = LoadConfig(url=url, model="x", concurrency=[2], duration_s=0.6, warmup_s=0.2, window_s=0.3,
                         stability=False, path="/")
        gen = LoadGenerator(cfg)
        gen.use_raw_requests([build_request(Endpoint.parse(url), "GET", "/")])
        lv = gen.run()[0]
        time.sleep(0.2)
        srv.stdin.write("\n")  # type: ignore[union-attr]
        srv.stdin.flush()  # type: ignore[union-attr]
        server_count = int(srv.stdout.readline().split()[1])  # type: ignore[union-attr]
    finally:
        srv.kill()
        srv.wait(10)
    assert lv.error_count == 0, lv.errors
    assert lv.successes > 10
    assert lv.total_sent == lv.successes + lv.warmup_successes == server_count
