"""Fuzz of the browser view's ports (the page and its data stream, ``uvms_sim.viz.web_front``),
served by a real simulator node in its own process: thousands of malformed, huge and hostile
HTTP requests and connections (random bytes, mutated requests, huge headers, huge and bad
Content-Length, bodies where none is taken, slow senders, hundreds of held connections). After
each round the node is alive, its thread count stayed bounded, the page is still served and
the stream still carries the simulation. ``FUZZ_SCALE`` multiplies the counts (``make fuzz``).

Everything is sent to 127.0.0.1 (the node binds its ports there)."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from net_helpers import free_tcp_port_pair

from uvms_sim.viz.web_front import MAX_CONNECTIONS, READ_MESSAGES

SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
THREAD_SLACK = 12  # threads the node may add while attacked (its executor, DDS, Rerun's runtime)
# a gRPC-Web ReadMessages call as the browser makes it (an empty ReadMessagesRequest)
GRPC_BODY = b"\x00\x00\x00\x00\x00"
READ_CALL = (
    f"POST {READ_MESSAGES} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/grpc-web+proto\r\n"
    f"X-Grpc-Web: 1\r\nOrigin: http://{HOST}\r\nContent-Length: {len(GRPC_BODY)}\r\n\r\n"
).encode() + GRPC_BODY
TEMPLATES = [
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    b"HEAD /re_viewer.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET /?url=rerun%2Bhttp%3A%2F%2F127.0.0.1%3A1%2Fproxy HTTP/1.0\r\n\r\n",
    f"OPTIONS {READ_MESSAGES} HTTP/1.1\r\nOrigin: http://127.0.0.1\r\n"
    "Access-Control-Request-Method: POST\r\n\r\n".encode(),
    READ_CALL,
    b"GET / HTTP/1.1\r\nHost: evil.example:1\r\n\r\n",  # redirected to its own host's data port
]
EXTRA_HEADERS = [
    b"Content-Length: 99999999999\r\n", b"Transfer-Encoding: chunked\r\n", b"Connection: keep-alive\r\n",
    b"Host: [::1\r\n", b"X: \x00\r\n",
]  # fmt: skip
HOSTILE = [
    b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000000000\r\n\r\n",
    b"POST / HTTP/1.1\r\nContent-Length: 18446744073709551617\r\n\r\n",
    b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
    b"POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
    b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n",
    b"GET / HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789",
    f"POST {READ_MESSAGES} HTTP/1.1\r\nContent-Length: 1000000000000000\r\n\r\n".encode(),
    f"POST {READ_MESSAGES} HTTP/1.1\r\nContent-Length: 99999\r\n\r\n".encode() + b"\x00" * 99999,
    b"POST /rerun.sdk_comms.v1alpha1.MessageProxyService/WriteMessages HTTP/1.1\r\nContent-Length: 5\r\n\r\n"
    + GRPC_BODY,
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00" * 64,
    b"GET /" + b"A" * 100_000 + b" HTTP/1.1\r\n\r\n",
    b"GET / HTTP/1.1\r\nX: " + b"B" * 1_000_000 + b"\r\n\r\n",
    b"GET / HTTP/1.1\r\n" + b"X-A: b\r\n" * 10_000 + b"\r\n",
    b"GET /../../../../etc/passwd HTTP/1.1\r\n\r\n",
    b"DELETE /index.html HTTP/1.1\r\n\r\n",
    b"\r\n\r\n",
    b"GET / HTTP/9.9\r\n\r\n",
    b"GET\x00/ HTTP/1.1\r\n\r\n",
]


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    """The simulator node serving the browser view, in its own process, paced at real time."""
    port = free_tcp_port_pair()
    cmd = [
        sys.executable, "-m", "uvms_sim.ros.node", "--ros-args", "-p", f"web_view_port:={port}",
        "-p", "ardusub_frame:=none", "-p", "real_time_factor:=1.0",
    ]  # fmt: skip
    log = tmp_path_factory.mktemp("node") / "node.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        end = time.monotonic() + 120.0
        while "browser view at" not in log.read_text() and time.monotonic() < end:
            assert proc.poll() is None, log.read_text()
            time.sleep(0.2)
        assert "browser view at" in log.read_text(), log.read_text()
        yield proc, port, log
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def exchange(port: int, data: bytes, timeout: float = 2.0) -> bytes:
    """Send ``data`` and read what comes back until the server closes, or the timeout."""
    with socket.create_connection((HOST, port), timeout=timeout) as s:
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except OSError:  # the server answered and closed before taking it all
            pass
        out = b""
        try:
            while len(out) < 1 << 20:
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
        except OSError:
            pass
        return out


def status(reply: bytes) -> int:
    try:
        return int(reply.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return 0


def assert_healthy(proc, port: int, baseline: int) -> None:
    """The node is alive with a bounded thread count, its page is served, and its stream
    carries data (the gRPC-Web response of ReadMessages begins)."""
    assert proc.poll() is None, "the node stopped"
    assert threads(proc.pid) <= baseline + THREAD_SLACK, (threads(proc.pid), baseline)
    page = b""
    for _ in range(30):  # held connections of an earlier round may still be timing out
        page = exchange(port, b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 10)
        if status(page) == 200:
            break
        time.sleep(1.0)
    assert status(page) == 200 and b"re_viewer.js" in page, page[:200]
    with socket.create_connection((HOST, port + 1), timeout=10) as s:
        s.sendall(READ_CALL)
        got = b""
        end = time.monotonic() + 10
        while len(got) < 4096 and time.monotonic() < end:
            got += s.recv(65536)
    assert status(got) == 200 and b"grpc" in got.lower(), got[:300]


def mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(6)
        i = rng.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(i, len(b) - 1)] = rng.randrange(256)
        elif op == 1:
            b[i:i] = rng.randbytes(rng.randint(1, 64))
        elif op == 2:
            del b[i : i + rng.randint(1, 32)]
        elif op == 3:
            b[i:i] = b"\r\n" if rng.random() < 0.5 else b":"
        elif op == 4:
            b[i:i] = rng.choice(EXTRA_HEADERS)
        else:
            b = b[:i]
    return bytes(b)


def test_random_bytes_and_mutated_requests_leave_the_view_serving(node):
    """Random bytes, mutated valid requests and a catalogue of hostile ones on both ports:
    every one is answered with an HTTP status (or closed), none stops the node."""
    proc, port, _ = node
    baseline = threads(proc.pid)
    rng = random.Random(37)
    answered: dict[int, int] = {}
    n_random, n_mutated = 500 * SCALE, 2000 * SCALE
    for k in range(n_random):
        reply = exchange(port + k % 2, rng.randbytes(rng.randint(0, 4096)), 1.0)
        answered[status(reply)] = answered.get(status(reply), 0) + 1
    for k in range(n_mutated):
        reply = exchange(port + k % 2, mutate(rng, rng.choice(TEMPLATES + HOSTILE)), 1.0)
        answered[status(reply)] = answered.get(status(reply), 0) + 1
    for data in HOSTILE * 5:
        for p in (port, port + 1):
            reply = exchange(p, data, 5.0)
            assert status(reply) in (400, 404, 405, 408, 413, 414, 431, 501), (data[:80], reply[:200])
    print(
        f"{n_random} random, {n_mutated} mutated, {len(HOSTILE) * 10} hostile requests: statuses {answered}"
    )
    assert_healthy(proc, port, baseline)


def test_huge_content_length_is_refused_without_reading_it(node):
    """``POST /`` with Content-Length 10^15 (which aborted the node when Rerun's own server took
    it) is answered 413 at once, on both ports, and the node goes on."""
    proc, port, _ = node
    baseline = threads(proc.pid)
    for p in (port, port + 1):
        for target in (b"/", READ_MESSAGES.encode()):
            t0 = time.monotonic()
            reply = exchange(
                p, b"POST " + target + b" HTTP/1.1\r\nContent-Length: 1000000000000000\r\n\r\n", 5
            )
            assert status(reply) in (404, 413) and time.monotonic() - t0 < 2.0, reply[:200]
    assert_healthy(proc, port, baseline)


def test_held_and_slow_connections_keep_the_thread_count_bounded(node):
    """800 held connections (the issue's count: Rerun's own server grew from 35 to 807 threads)
    and slow senders feeding a byte a second: the node's threads stay within a few of where
    they were, connections beyond the limit are answered 503 at once, the slow ones are dropped
    after HEAD_TIMEOUT, and the page is served again afterwards."""
    proc, port, _ = node
    baseline = threads(proc.pid)
    held, peak, refused = [], baseline, 0
    try:
        for k in range(800 * SCALE):
            s = socket.create_connection((HOST, port + k % 2), timeout=5)
            held.append(s)
            if k % 100 == 0:
                peak = max(peak, threads(proc.pid))
        stop = threading.Event()

        def slow(s: socket.socket) -> None:  # slowloris: a partial head, a byte a second
            try:
                s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
                while not stop.wait(1.0):
                    s.sendall(b"X")
            except OSError:
                pass

        senders = [threading.Thread(target=slow, args=(s,), daemon=True) for s in held[:100]]
        for t in senders:
            t.start()
        time.sleep(3.0)
        peak = max(peak, threads(proc.pid))
        for s in held[2 * MAX_CONNECTIONS + 100 :]:  # beyond the limit: answered 503 and closed
            s.settimeout(2.0)
            try:
                refused += b" 503 " in s.recv(4096)
            except OSError:
                pass
        stop.set()
    finally:
        for s in held:
            s.close()
    print(f"{len(held)} held connections: node threads {baseline} -> peak {peak}; {refused} answered 503")
    assert peak <= baseline + THREAD_SLACK
    assert refused >= (len(held) - 2 * MAX_CONNECTIONS - 100) * 0.9
    assert_healthy(proc, port, baseline)


def test_many_short_connections_in_parallel(node):
    """Threads of this process open and close connections as fast as they can (valid and
    hostile requests mixed) for a few seconds: the node serves or refuses each, and is well
    afterwards."""
    proc, port, _ = node
    baseline = threads(proc.pid)
    counts = [0] * 8
    end = time.monotonic() + 5.0 * SCALE

    def hammer(k: int) -> None:
        rng = random.Random(k)
        while time.monotonic() < end:
            data = rng.choice(TEMPLATES[:4] + HOSTILE[:8])
            try:
                exchange(port + rng.randrange(2), data, 2.0)
            except OSError:
                pass
            counts[k] += 1

    workers = [threading.Thread(target=hammer, args=(k,)) for k in range(len(counts))]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print(f"{sum(counts)} connections from {len(counts)} threads in {5.0 * SCALE:g} s")
    assert sum(counts) > 100
    assert_healthy(proc, port, baseline)
