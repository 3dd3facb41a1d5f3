"""The browser view's own HTTP front: the only sockets the browser view opens to the network.

Rerun's own servers are not exposed: its web-viewer server reads a request body of whatever
``Content-Length`` says into memory (one ``POST`` claiming 10^15 bytes aborted the process) and
runs a thread per connection (800 held connections: 800 threads), and its gRPC server accepts
writes into the stream from anyone who connects. Instead the page and the data stream are served
here, by one thread running an asyncio loop, with every input bounded:

- the page port answers ``GET`` and ``HEAD`` of the viewer's files (held in memory:
  ``viz.viewer_assets``) and nothing else; ``/`` without a ``url`` is redirected to the page
  connected to the data port, at the host the browser asked for;
- the data port passes on, to Rerun's gRPC server listening on loopback only, the one call a
  browser makes (gRPC-Web ``ReadMessages``, and its CORS preflight) and nothing else: nobody
  from outside can write into the stream;
- a request's line and headers fit in ``MAX_HEAD`` bytes and arrive within ``HEAD_TIMEOUT``
  (a slow sender is dropped); a body fits in ``MAX_BODY`` (the page takes none); at most
  ``MAX_CONNECTIONS`` connections per port are held (more are answered 503 and closed); a
  client that does not take what is sent within ``WRITE_TIMEOUT`` is dropped.

A malformed request is answered with its HTTP status (400, 404, 405, 413, 431, 501) and the
connection closed; nothing a client sends reaches the simulation.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import ipaddress
import os
import re
import socket
import threading
from dataclasses import dataclass
from urllib.parse import parse_qs, quote, urlsplit

from ..log import Throttle

MAX_HEAD = 16 * 1024  # bytes: request line and headers
MAX_HEADERS = 64
MAX_TARGET = 4096  # bytes: the request target (path and query)
MAX_BODY = MAX_HEAD  # bytes: a request body (a ReadMessages request is a few bytes)
MAX_CONNECTIONS = 64  # per port, held at once
MAX_REQUESTS = 100  # per kept-alive page connection
HEAD_TIMEOUT = 10.0  # s: to send a request's line and headers
IDLE_TIMEOUT = 30.0  # s: between requests on a kept-alive page connection
WRITE_TIMEOUT = 30.0  # s: for a client to take what was sent
BACKEND_TIMEOUT = 5.0  # s: to reach Rerun's gRPC server
CHUNK = 256 * 1024  # bytes written at a time
READ_MESSAGES = "/rerun.sdk_comms.v1alpha1.MessageProxyService/ReadMessages"
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}
THROTTLE = Throttle(10.0)  # a fault of this front, at most every 10 s per port
TOKEN = re.compile(rb"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]{1,253})(:[0-9]{1,5})?$")
REASONS = {
    200: "OK", 204: "No Content", 302: "Found", 400: "Bad Request", 404: "Not Found",
    405: "Method Not Allowed", 408: "Request Timeout", 411: "Length Required", 413: "Content Too Large",
    414: "URI Too Long", 431: "Request Header Fields Too Large", 501: "Not Implemented",
    502: "Bad Gateway", 503: "Service Unavailable",
}  # fmt: skip


class ServeError(RuntimeError):
    """The browser view cannot listen where it was asked to (the port is taken, the address is
    not this machine's): one line naming the address and the port."""


@dataclass(frozen=True)
class Asset:
    """A file of the page: its bytes and media type."""

    body: bytes
    content_type: str


class HttpError(Exception):
    """A request answered with an error status and the connection closed."""

    def __init__(self, status: int, why: str = "") -> None:
        super().__init__(why or REASONS.get(status, ""))
        self.status = status


@dataclass
class Request:
    method: str
    target: str
    version: str
    headers: list[tuple[str, str]]

    def header(self, name: str) -> str | None:
        values = [v for k, v in self.headers if k.lower() == name]
        if len(values) > 1:
            raise HttpError(400, f"{name} given {len(values)} times")
        return values[0] if values else None

    @property
    def keep_alive(self) -> bool:
        connection = (self.header("connection") or "").lower()
        return "close" not in connection and (self.version == "HTTP/1.1" or "keep-alive" in connection)

    def content_length(self, limit: int) -> int:
        if self.header("transfer-encoding") is not None:
            raise HttpError(501, "chunked request bodies are not taken")
        value = self.header("content-length")
        if value is None:
            return 0
        if not (value.isascii() and value.isdigit()):
            raise HttpError(400, "bad Content-Length")
        if len(value) > 18 or int(value) > limit:
            raise HttpError(413)
        return int(value)


def parse_head(head: bytes) -> Request:
    """A request's line and headers (``head`` ends with the blank line), or HttpError."""
    lines = head[:-4].split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not TOKEN.match(parts[0]) or parts[2] not in (b"HTTP/1.1", b"HTTP/1.0"):
        raise HttpError(400, "bad request line")
    if len(parts[1]) > MAX_TARGET:
        raise HttpError(414)
    if not parts[1].startswith(b"/") or any(c < 0x21 or c > 0x7E for c in parts[1]):
        raise HttpError(400, "bad request target")
    if len(lines) - 1 > MAX_HEADERS:
        raise HttpError(431)
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep or not TOKEN.match(name) or any((c < 0x20 and c != 0x09) or c == 0x7F for c in value):
            raise HttpError(400, "bad header")
        headers.append((name.decode("ascii"), value.strip(b" \t").decode("latin-1")))
    return Request(parts[0].decode("ascii"), parts[1].decode("ascii"), parts[2].decode("ascii"), headers)


async def read_head(reader: asyncio.StreamReader, timeout: float) -> Request | None:
    """The next request's head, None when the client closed cleanly; HttpError otherwise."""
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise HttpError(400, "incomplete request") from None
        return None
    except asyncio.LimitOverrunError:
        raise HttpError(431) from None
    except TimeoutError:
        raise HttpError(408) from None
    return parse_head(head)


def response_head(status: int, headers: list[tuple[str, str]]) -> bytes:
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}"]
    lines += [f"{k}: {v}" for k, v in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def send(writer: asyncio.StreamWriter, data: bytes) -> None:
    """Write ``data`` in chunks, each taken by the client within WRITE_TIMEOUT."""
    view = memoryview(data)
    for i in range(0, len(view), CHUNK):
        writer.write(view[i : i + CHUNK])
        await asyncio.wait_for(writer.drain(), WRITE_TIMEOUT)


def listening_socket(host: str, port: int, what: str) -> socket.socket:
    """A TCP socket listening on ``host``:``port``, or ServeError naming them."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6 and host == "::":
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)  # "::": IPv4 too
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        why = "in use by another process" if exc.errno == errno.EADDRINUSE else exc.strerror or str(exc)
        raise ServeError(f"browser view: cannot listen on {host} port {port} ({what}): {why}") from None
    return sock


def own_listening_tcp() -> set[tuple[str, int]]:
    """The (IPv4 address, port) of every TCP socket this process listens on (Linux: from
    /proc; empty elsewhere)."""
    try:
        inodes = set()
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/self/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        out = set()
        with open("/proc/self/net/tcp") as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:  # LISTEN, one of ours
                    ip_hex, port_hex = fields[1].split(":")
                    ip = socket.inet_ntoa(int(ip_hex, 16).to_bytes(4, "little"))
                    out.add((ip, int(port_hex, 16)))
        return out
    except OSError:
        return set()


def check_bind(host: str) -> str:
    """``host`` as an address to listen on (an IPv4 or IPv6 address, or ``localhost``), or
    ValueError saying what was expected."""
    if host == "localhost":
        return "127.0.0.1"
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        raise ValueError(
            f"browser view: bind address {host!r}: expected an IP address of this machine "
            "(127.0.0.1: this machine only; 0.0.0.0 or ::: every network interface)"
        ) from None


def is_loopback(host: str) -> bool:
    return ipaddress.ip_address(host).is_loopback


class WebFront:
    """The page (``page_port``) and the data stream (``data_port``) served on ``host``, the
    stream passed on to Rerun's gRPC server at ``backend`` (loopback); both sockets are
    listening when the constructor returns (or it raised ServeError). ``close`` stops both."""

    def __init__(
        self, host: str, page_port: int, data_port: int, assets: dict[str, Asset], backend: tuple[str, int]
    ) -> None:
        self.host = host
        self.assets = assets
        self.backend = backend
        page = listening_socket(host, page_port, "the page")
        try:
            data = listening_socket(host, data_port, "its data stream")
        except ServeError:
            page.close()
            raise
        self.page_port, self.data_port = page.getsockname()[1], data.getsockname()[1]
        self.held = {"page": 0, "data": 0}
        self.served = {"page": 0, "data": 0, "refused": 0}
        self.loop = asyncio.new_event_loop()
        self._servers: list[asyncio.base_events.Server] = []
        started = threading.Event()
        self.thread = threading.Thread(
            target=self._run, args=(page, data, started), name="uvms_sim_web_view", daemon=True
        )
        self.thread.start()
        started.wait(10.0)

    def _run(self, page: socket.socket, data: socket.socket, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)

        async def start() -> None:
            for sock, port, handler in ((page, "page", self._page), (data, "data", self._data)):
                serve = functools.partial(self._connection, port, handler)
                server = await asyncio.start_server(serve, sock=sock, limit=MAX_HEAD)
                self._servers.append(server)
            started.set()

        self.loop.run_until_complete(start())
        self.loop.run_forever()
        for server in self._servers:
            server.close()
        self.loop.run_until_complete(self._cancel_all())
        self.loop.close()

    async def _cancel_all(self) -> None:
        tasks = [t for t in asyncio.all_tasks(self.loop) if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def close(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10.0)

    async def _connection(self, port: str, handler, reader, writer: asyncio.StreamWriter) -> None:
        """One connection to ``port``, served by ``handler``: refused with 503 beyond
        MAX_CONNECTIONS held; a HttpError request is answered with its status; closed at the end."""
        self.held[port] += 1
        try:
            if self.held[port] > MAX_CONNECTIONS:
                raise HttpError(503, "too many connections")
            await handler(reader, writer)
        except HttpError as exc:
            self.served["refused"] += 1
            with contextlib.suppress(Exception):
                body = f"{exc}\n".encode()
                head = [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))]
                writer.write(response_head(exc.status, [*head, ("Connection", "close")]) + body)
                await asyncio.wait_for(writer.drain(), 1.0)
        except (ConnectionError, TimeoutError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        except Exception as exc:  # a fault of this front: the connection is dropped, the view goes on
            THROTTLE.warn(port, f"browser view: a {port} connection dropped: {type(exc).__name__}: {exc}")
        finally:
            self.held[port] -= 1
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)

    # -- the page --------------------------------------------------------------------------
    async def _page(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for k in range(MAX_REQUESTS):
            request = await read_head(reader, HEAD_TIMEOUT if k == 0 else IDLE_TIMEOUT)
            if request is None:
                return
            if request.content_length(0):  # the page takes no body
                raise HttpError(413)
            if request.method not in ("GET", "HEAD"):
                raise HttpError(405)
            keep = request.keep_alive and k + 1 < MAX_REQUESTS
            await self._answer(writer, request, keep)
            self.served["page"] += 1
            if not keep:
                return

    async def _answer(self, writer: asyncio.StreamWriter, request: Request, keep: bool) -> None:
        split = urlsplit(request.target)
        path = "/index.html" if split.path == "/" else split.path
        headers = [("Connection", "keep-alive" if keep else "close"), ("Cache-Control", "no-cache")]
        if split.path == "/" and "url" not in parse_qs(split.query):
            location = f"/?url={quote(self.stream_url(request.header('host')), safe='')}"
            head = response_head(302, [("Location", location), ("Content-Length", "0"), *headers])
            await send(writer, head)
            return
        asset = self.assets.get(path)
        if asset is None:
            raise HttpError(404)
        headers += [
            ("Content-Type", asset.content_type),
            ("Content-Length", str(len(asset.body))),
            ("rerun-final-length", str(len(asset.body))),  # the page's progress bar reads it
        ]
        await send(writer, response_head(200, headers))
        if request.method == "GET":
            await send(writer, asset.body)

    def stream_url(self, host_header: str | None = None) -> str:
        """The data stream's address for a browser that reached the page at ``host_header``
        (its ``Host``: the same host, the data port), else at the bound address."""
        host = self.host if not self.host.startswith(("0.0.0.0", "::")) else "127.0.0.1"
        host = f"[{host}]" if ":" in host else host
        if host_header and HOST.match(host_header):
            host = host_header.rsplit(":", 1)[0] if not host_header.endswith("]") else host_header
        return f"rerun+http://{host}:{self.data_port}/proxy"

    # -- the data stream -------------------------------------------------------------------
    async def _data(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await read_head(reader, HEAD_TIMEOUT)
        if request is None:
            return
        if urlsplit(request.target).path != READ_MESSAGES:
            raise HttpError(404)
        if request.method not in ("POST", "OPTIONS"):
            raise HttpError(405)
        length = request.content_length(MAX_BODY if request.method == "POST" else 0)
        try:
            body = await asyncio.wait_for(reader.readexactly(length), HEAD_TIMEOUT)
        except asyncio.IncompleteReadError:
            raise HttpError(400, "incomplete body") from None
        except TimeoutError:
            raise HttpError(408) from None
        self.served["data"] += 1
        await self._forward(reader, writer, request, body)

    async def _forward(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: Request, body: bytes
    ) -> None:
        """Pass one request to Rerun's gRPC server (``Connection: close``) and its response,
        as it streams, back to the client, until either side closes."""
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(*self.backend), BACKEND_TIMEOUT
            )
        except (OSError, TimeoutError):
            raise HttpError(502, "the data stream is not available") from None
        try:
            lines = [f"{request.method} {request.target} HTTP/1.1"]
            lines += [f"{k}: {v}" for k, v in request.headers if k.lower() not in HOP_BY_HOP]
            lines += ["Connection: close"]
            up_writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
            await asyncio.wait_for(up_writer.drain(), WRITE_TIMEOUT)
            closed = asyncio.ensure_future(self._until_closed(reader))
            try:
                while not closed.done():
                    pull = asyncio.ensure_future(up_reader.read(CHUNK))
                    await asyncio.wait({pull, closed}, return_when=asyncio.FIRST_COMPLETED)
                    if not pull.done():
                        pull.cancel()
                        break
                    data = pull.result()
                    if not data:
                        break
                    writer.write(data)
                    await asyncio.wait_for(writer.drain(), WRITE_TIMEOUT)
            finally:
                closed.cancel()
        finally:
            up_writer.close()

    @staticmethod
    async def _until_closed(reader: asyncio.StreamReader) -> None:
        """Returns when the client closes (or sends more than a request's worth after it:
        nothing more is read from it while its response streams)."""
        extra = 0
        while extra <= MAX_HEAD:
            data = await reader.read(4096)
            if not data:
                return
            extra += len(data)
