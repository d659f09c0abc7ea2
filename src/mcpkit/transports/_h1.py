"""A lean HTTP/1.1 connection pool for httpx, on anyio streams and httptools' parser.

The client transports' own ``httpx.AsyncClient`` uses it in place of httpx's default
(httpcore), which spends most of a small request's client CPU in its connection layer
(about 630 us of 730 per ``tools/call`` on the benchmark machine, against about 80 us for
one round trip on anyio and httptools; ``bench/README.md``, "HTTP client"). httpx's own
client stays in front: requests, responses, headers, auth, event hooks and the proxies the
environment names (httpx mounts its own transports for those).

What it does: HTTP/1.1 over TCP or TLS, keep-alive (idle connections checked before reuse,
expired after :data:`KEEPALIVE_EXPIRY`), ``Content-Length``, chunked and close-delimited
response bodies streamed as they arrive (SSE), request bodies of either framing, httpx's
connect / read / write / pool timeouts, at most ``max_connections`` requests at a time and
``max_idle`` idle connections. What it does not (HEAD, CONNECT, upgrades, other schemes)
goes to httpx's own transport. A POST is never retried (RFC 9112 section 9.3.1: the server
may have applied it).

Raises httpx's transport exceptions (``ConnectError``, ``ReadTimeout``,
``RemoteProtocolError``, ...), as its default transport does.
"""

from __future__ import annotations

import math
import os
import select
import ssl
from collections.abc import AsyncIterator
from typing import Final

import anyio
import anyio.abc
import httpx

from ._h1_wire import Response, receive_into, request_head, send_request

__all__ = ["KEEPALIVE_EXPIRY", "HTTP1Transport"]

#: Seconds an idle connection is kept: below the 5 s that uvicorn, hypercorn and Node keep
#: theirs, so that a request never races the server closing the connection it reuses.
KEEPALIVE_EXPIRY: Final = 4.0
_PORTS: Final = {"http": 80, "https": 443}
_IDEMPOTENT: Final = frozenset({"GET", "PUT", "DELETE", "OPTIONS", "TRACE"})

_Key = tuple[str, str, int]


class _Connection:
    __slots__ = ("expires", "fileno", "key", "stream")

    def __init__(self, key: _Key, stream: anyio.abc.ByteStream) -> None:
        self.key = key
        self.stream = stream
        sock = stream.extra(anyio.abc.SocketAttribute.raw_socket, None)
        self.fileno = sock.fileno if sock is not None else None
        self.expires = 0.0

    def usable(self) -> bool:
        """Whether the idle connection can carry a request: the server has sent nothing
        since the last answer (an end of stream stays readable once it arrived, whoever
        read it first)."""
        fileno = self.fileno
        if fileno is None:
            return False
        fd = fileno()
        if fd < 0:
            return False
        try:
            if hasattr(select, "poll"):
                poller = select.poll()
                poller.register(fd, select.POLLIN)
                return not poller.poll(0)
            return not select.select([fd], [], [], 0)[0]  # pragma: no cover - Windows
        except (OSError, ValueError):
            return False


class HTTP1Transport(httpx.AsyncBaseTransport):
    """An httpx transport speaking HTTP/1.1 itself (see the module's docstring).

    The HTTP client transports use it for the ``httpx.AsyncClient`` they create; give it to
    your own client to keep the speed when you pass one (``http_client=``)::

        client = httpx.AsyncClient(auth=my_auth, transport=HTTP1Transport())
        transport = StreamableHTTPTransport(url, http_client=client)

    Args:
        ssl_context: for ``https`` URLs; httpx's default context (certifi's roots) if None.
        max_connections: requests in flight at once; more wait for a free one (httpx's
            ``pool`` timeout bounds the wait).
        max_idle: idle connections kept for reuse.
        keepalive_expiry: seconds an idle connection is kept.

    Raises:
        ValueError: ``max_connections`` below 1, or ``max_idle`` or ``keepalive_expiry``
            negative.
    """

    def __init__(
        self,
        *,
        ssl_context: ssl.SSLContext | None = None,
        max_connections: int = 100,
        max_idle: int = 20,
        keepalive_expiry: float = KEEPALIVE_EXPIRY,
    ) -> None:
        if max_connections < 1 or max_idle < 0 or not keepalive_expiry >= 0:
            raise ValueError(
                "max_connections must be at least 1, max_idle and keepalive_expiry at least 0"
            )
        self._ssl = ssl_context
        self._max_connections = max_connections
        self._max_idle = max_idle
        self._expiry = keepalive_expiry
        self._slots: anyio.Semaphore | None = None
        self._idle: list[_Connection] = []
        self._other: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        scheme = url.scheme
        head, chunked, upgrade = request_head(request)
        if upgrade or scheme not in _PORTS or request.method in ("HEAD", "CONNECT"):
            return await self._fallback().handle_async_request(request)
        timeouts = request.extensions.get("timeout", {})
        key = (scheme, url.raw_host.decode("ascii"), url.port or _PORTS[scheme])
        slots = self._slots
        if slots is None:
            slots = self._slots = anyio.Semaphore(self._max_connections)
        try:
            slots.acquire_nowait()
        except anyio.WouldBlock:
            try:
                with anyio.fail_after(timeouts.get("pool")):
                    await slots.acquire()
            except TimeoutError:
                raise httpx.PoolTimeout(
                    f"no free connection within the pool timeout ({self._max_connections} "
                    "requests in flight)",
                    request=request,
                ) from None
        try:
            conn = await self._reuse(key)
            retry = conn is not None and request.method in _IDEMPOTENT
            if conn is None:
                conn = await self._connect(key, request, timeouts.get("connect"))
            try:
                response = await self._exchange(conn, request, head, chunked, timeouts)
            except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError):
                # A reused connection the server closed as the request went out: an
                # idempotent request goes again once, on a new connection.
                if not retry:
                    raise
                conn = await self._connect(key, request, timeouts.get("connect"))
                response = await self._exchange(conn, request, head, chunked, timeouts)
        except BaseException:
            slots.release()
            raise
        return httpx.Response(
            response.status,
            headers=response.headers,
            stream=_Body(self, conn, response, request, timeouts.get("read")),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": response.reason},
        )

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for conn in idle:
            await _close(conn)
        if self._other is not None:
            await self._other.aclose()

    # -- connections -----------------------------------------------------------------------

    def _fallback(self) -> httpx.AsyncHTTPTransport:
        if self._other is None:
            self._other = httpx.AsyncHTTPTransport(verify=self._ssl or True)
        return self._other

    async def _reuse(self, key: _Key) -> _Connection | None:
        """An idle connection to ``key`` that can carry a request; stale ones are closed."""
        now = anyio.current_time()
        found = None
        stale = []
        keep = []
        for conn in self._idle:
            if conn.expires <= now:
                stale.append(conn)
            elif found is None and conn.key == key:
                if conn.usable():
                    found = conn
                else:
                    stale.append(conn)
            else:
                keep.append(conn)
        self._idle = keep
        for conn in stale:
            await _close(conn)
        return found

    async def _connect(
        self, key: _Key, request: httpx.Request, timeout: float | None
    ) -> _Connection:
        scheme, host, port = key
        context = None
        if scheme == "https":
            context = self._ssl = self._ssl or httpx.create_ssl_context()
        try:
            with anyio.fail_after(timeout):
                stream: anyio.abc.ByteStream
                if context is None:
                    stream = await anyio.connect_tcp(host, port)
                else:  # HTTP frames its own messages: no TLS goodbye needed at the end
                    stream = await anyio.connect_tcp(
                        host, port, ssl_context=context, tls_standard_compatible=False
                    )
        except TimeoutError:
            raise httpx.ConnectTimeout(
                f"no connection to {host}:{port} within {timeout} s", request=request
            ) from None
        except (OSError, ssl.SSLError, anyio.BrokenResourceError) as exc:
            raise httpx.ConnectError(
                f"cannot connect to {host}:{port}: {_refusal(exc)}", request=request
            ) from exc
        return _Connection(key, stream)

    async def _exchange(
        self,
        conn: _Connection,
        request: httpx.Request,
        head: bytes,
        chunked: bool,
        timeouts: dict[str, float | None],
    ) -> Response:
        """Send the request and read its answer's head (the body follows in ``_Body``).

        Raises:
            httpx.WriteTimeout, httpx.ReadTimeout: httpx's timeouts (one read timeout per
                read, as httpcore counts it).
            httpx.TransportError: see ``_h1_wire``.
        """
        response = None
        try:
            # One cancel scope for the exchange, its deadline moved on at each step.
            with anyio.CancelScope() as scope:
                write, read = timeouts.get("write"), timeouts.get("read")
                if write is not None:
                    scope.deadline = anyio.current_time() + write
                await send_request(conn.stream, request, head, chunked)
                response = Response()
                while not response.head_done:
                    scope.deadline = math.inf if read is None else anyio.current_time() + read
                    await receive_into(conn.stream, response, request)
                return response
        except BaseException:
            await _close(conn)
            raise
        await _close(conn)
        if response is None:
            raise httpx.WriteTimeout(f"the request was not sent within {write} s", request=request)
        raise httpx.ReadTimeout(f"no data from the server in {read} s", request=request)

    async def _release(self, conn: _Connection, reuse: bool) -> None:
        """A request's end: its slot is free, its connection kept or closed."""
        if self._slots is not None:
            self._slots.release()
        if not reuse:
            await _close(conn)
            return
        conn.expires = anyio.current_time() + self._expiry
        self._idle.append(conn)
        if len(self._idle) > self._max_idle:
            await _close(self._idle.pop(0))


class _Body(httpx.AsyncByteStream):
    """A response's body, read from its connection as the caller iterates."""

    def __init__(
        self,
        transport: HTTP1Transport,
        conn: _Connection,
        response: Response,
        request: httpx.Request,
        read_timeout: float | None,
    ) -> None:
        self._transport = transport
        self._conn: _Connection | None = conn
        self._response = response
        self._request = request
        self._timeout = read_timeout

    async def __aiter__(self) -> AsyncIterator[bytes]:
        response = self._response
        while True:
            if response.chunks:
                chunks, response.chunks = response.chunks, []
                for chunk in chunks:
                    yield chunk
            if response.done or self._conn is None:
                return
            if self._timeout is None:
                await receive_into(self._conn.stream, response, self._request)
                continue
            with anyio.move_on_after(self._timeout):
                await receive_into(self._conn.stream, response, self._request)
                continue
            raise httpx.ReadTimeout(
                f"no data from the server in {self._timeout} s", request=self._request
            )

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        response = self._response
        await self._transport._release(
            conn, response.done and response.keep_alive and not response.after
        )


async def _close(conn: _Connection) -> None:
    with anyio.CancelScope(shield=True):  # (a TLS stream here sends no goodbye: no wait)
        await conn.stream.aclose()


def _refusal(exc: BaseException) -> str:
    """Why a connection failed, in the system's words: anyio's "All connection attempts
    failed" carries the last attempt's error (refused, unreachable ...) as its cause."""
    cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else None
    if cause is not None and cause.errno:
        return os.strerror(cause.errno)
    return str(exc) or type(exc).__name__
