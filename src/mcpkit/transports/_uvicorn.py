"""Serving an ASGI app with uvicorn, mcpkit's default HTTP server, hardened.

uvicorn gives a new connection no deadline to send its request headers (uvicorn issue
#157), so a client trickling bytes holds a connection forever (slowloris), and none to
take a response either. The protocol classes here close a connection whose request
headers are not complete within ``header_timeout`` seconds of it being ready for a
request (mcpkit's ASGI apps bound the body themselves), and abort one whose client reads
nothing of a pending response for ``write_timeout`` seconds. A response with a
``Content-Length`` goes out in one write, headers and body together, after the tasks of
its event-loop turn (see :mod:`._writes`): one ``send`` system call per JSON answer, not
two, and none in the middle of another request's handling.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from typing import Any, Final, cast

from ..protocol import encode_error
from ..types import ErrorCode
from ._uvicorn_support import (
    HttpServer,
    app_limit,
    bound_invalid_request_logs,
    check_certificate,
    raise_open_files,
    shut_down_cancelled,
    startup_failed,
)
from ._writes import Coalescing, WriteBatch, unsent_bytes

__all__ = ["SHUTDOWN_HOOK_TIMEOUT", "HttpServer", "serve_http"]

logger = logging.getLogger("mcpkit.transports.http")

#: Seconds serve_http waits for what its ``on_shutdown`` hook returns (an app ending its
#: connections itself) before uvicorn closes them.
SHUTDOWN_HOOK_TIMEOUT: Final = 2.0


def _too_large_answer() -> bytes:
    reason = "Request Header Fields Too Large: the request's headers passed the limit"
    body = encode_error(None, ErrorCode.INVALID_REQUEST, reason)
    return (
        b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\n"
        b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body)
    )


def _protocol_class(
    header_timeout: float, max_header_bytes: int, write_timeout: float
) -> type[asyncio.Protocol]:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as base
    except ImportError:  # httptools is missing: the pure-Python parser
        from uvicorn.protocols.http.h11_impl import H11Protocol as base  # type: ignore[assignment]
    batch = WriteBatch()  # (one per server: a server serves on one event loop)

    class DeadlineProtocol(base):
        """Closes connections whose request headers do not arrive in time, or pass
        ``max_header_bytes`` before they end (431): httptools, unlike h11, has no limit of
        its own, and would hold any amount until the app could refuse it.

        The deadline moves with every request, so it is kept as a time, not as a timer
        per request: one timer per connection checks it when it fires and, if the
        deadline moved meanwhile, waits for the rest (a ``call_later`` and a ``cancel``
        per request cost a timer object and two heap operations each).
        """

        _writes: Coalescing
        _deadline_at: float | None = None  # when the wait for request headers expires
        _timer: asyncio.TimerHandle | None = None
        _armed_cycle: object = None
        _header_bytes = 0  # received while waiting for the request headers
        _after_body = False  # answered early: waiting for the rest of the body first
        _stall_timer: asyncio.TimerHandle | None = None  # armed while writing is paused
        _stall_left = 0  # bytes buffered at the last check of a paused connection

        def connection_made(self, transport: Any) -> None:
            self._writes = Coalescing(transport, self, batch)
            super().connection_made(cast(asyncio.Transport, self._writes))
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._after_body and not self.transport.is_closing():
                cycle = self.cycle
                if cycle is not None and cycle.more_body:
                    return  # still the rest of a refused body, which uvicorn discards
                self._after_body = False
                self._arm()
                return
            if self._deadline_at is None:
                return
            # A new request cycle exists once a request's headers were parsed.
            if self.cycle is not self._armed_cycle:
                self._deadline_at = None
                return
            self._header_bytes += len(data)
            if self._header_bytes > max_header_bytes and not self.transport.is_closing():
                logger.info("closing a connection whose request headers passed the limit")
                self._disarm()
                self.transport.write(_TOO_LARGE)
                self.transport.close()

        def on_response_complete(self) -> None:
            self._writes.flush()  # headers held for a body that never came
            # This runs inside the app's task that sent the last body message, so timers
            # and tasks created now (the keep-alive timer, our header deadline, a pipelined
            # request's task) would capture that task's context variables, and with them
            # the request's session and exchange: kept alive for the keep-alive period, or
            # handed to the next request. An empty context starts them clean.
            contextvars.Context().run(self._complete)

        def _complete(self) -> None:
            super().on_response_complete()
            if self.transport.is_closing():
                return
            cycle = self.cycle
            if cycle is not None and cycle.more_body:
                # Answered before its body ended (413, 415): the rest (at most twice the
                # app's limit, or it closes) is read and discarded first, within three
                # header timeouts; it must not count as the next request's headers (a
                # 431 and a close, with the upload unread, reset the answer away).
                self._after_body = True
                self._arm(3 * header_timeout)
            else:
                self._arm()  # ready for the next request on this connection

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._stop_stall_timer()
            super().connection_lost(exc)

        # A client that stops reading: once the write buffer passes its high-water mark,
        # asyncio pauses the protocol and uvicorn's next send waits for it to drain,
        # which it never does. That would hold the response's task, its session (never
        # idle while a request is open) and the buffered bytes for ever: a response that
        # was sent whole stays buffered too, past keep-alive (close() flushes first).
        # So while paused, what waits to be sent (here and in the kernel's socket queue)
        # must shrink at least once every write_timeout seconds, or the connection is
        # aborted (uvicorn then treats the client as gone). The check is on progress, not
        # on draining below the low-water mark: a slow client taking a large result at a
        # steady pace is not cut off. (The kernel's queue counts: with a send buffer of
        # megabytes, the socket reports room for more only after much has been taken.)

        def pause_writing(self) -> None:
            super().pause_writing()
            # (Never after a WebSocket upgrade: the transport then pauses the new protocol.)
            if self._stall_timer is None:
                self._stall_left = unsent_bytes(self._writes)
                self._stall_timer = self.loop.call_later(write_timeout, self._check_stall)

        def resume_writing(self) -> None:
            self._stop_stall_timer()
            super().resume_writing()

        def _stop_stall_timer(self) -> None:
            if self._stall_timer is not None:
                self._stall_timer.cancel()
                self._stall_timer = None

        def _check_stall(self) -> None:
            self._stall_timer = None
            left = unsent_bytes(self._writes)
            if left and left >= self._stall_left:
                logger.info(
                    "aborting a connection whose client read nothing for %g s "
                    "(%d bytes waiting to be sent)",
                    write_timeout,
                    left,
                )
                self._writes.abort()
            elif left:  # some progress: check again later
                self._stall_left = left
                self._stall_timer = self.loop.call_later(write_timeout, self._check_stall)

        def on_upgrade(self) -> None:
            """The connection became a WebSocket: no request headers are awaited any
            more, and the timer must not keep this protocol (and, through the transport,
            the WebSocket's) alive until it fires: its connection_lost goes to the
            WebSocket protocol, never here."""
            self._disarm()
            self._stop_stall_timer()

        def _disarm(self) -> None:
            self._deadline_at = None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _arm(self, timeout: float = header_timeout) -> None:
            self._armed_cycle = self.cycle
            self._header_bytes = 0
            self._deadline_at = self.loop.time() + timeout
            if self._timer is None:
                self._timer = self.loop.call_at(self._deadline_at, self._check)

        def _check(self) -> None:
            self._timer = None
            deadline = self._deadline_at
            if deadline is None:
                return  # a request arrived in time; the next wait arms again
            if self.loop.time() < deadline:
                self._timer = self.loop.call_at(deadline, self._check)  # it moved: wait on
                return
            self._deadline_at = None
            if self._writes.upgraded:
                return  # a WebSocket now: it lives until one side closes it
            if self.cycle is self._armed_cycle and not self.transport.is_closing():
                logger.info("closing a connection that sent no complete request in time")
                self.transport.close()

    _TOO_LARGE = _too_large_answer()
    return DeadlineProtocol


async def serve_http(
    app: Callable[..., Awaitable[None]],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    header_timeout: float = 10.0,
    write_timeout: float = 30.0,
    keepalive_timeout: int = 5,
    limit_concurrency: int | None = None,
    ws_max_size: int | None = None,
    max_header_bytes: int | None = None,
    log_level: str = "warning",
    ready: Callable[[HttpServer], None] | None = None,
    on_shutdown: Callable[[], Awaitable[None] | None] | None = None,
    ssl_certfile: str | os.PathLike[str] | None = None,
    ssl_keyfile: str | os.PathLike[str] | None = None,
    ssl_keyfile_password: str | None = None,
) -> None:
    """Serve ``app`` with uvicorn until cancelled or stopped (asyncio only); over TLS
    (HTTPS, WSS) with a certificate. Either way it shuts down as uvicorn does on a signal:
    ``on_shutdown``, the open connections' grace period, then the app's lifespan shutdown.

    Args:
        app: the ASGI application.
        host: the address to bind; loopback by default (``basic/transports.mdx``:
            servers running locally SHOULD bind only to localhost).
        port: the port (0: any free port; ``ready`` receives the real one).
        header_timeout: seconds a connection may take to send a request's headers.
        write_timeout: seconds a client may go without reading anything while a
            response waits to be sent to it (once more than the transport's high-water
            mark, 64 KiB, is waiting); the connection is aborted beyond it. A client
            reading slowly but steadily is never cut off.
        keepalive_timeout: seconds an idle keep-alive connection stays open.
        limit_concurrency: most connections and tasks at once (uvicorn's bare 503 beyond).
            ``None``: 1,000, or room for two connections per session when the app caps
            its sessions (``max_sessions``), requests standing alone
            (``max_stateless_requests``) or connections (``max_connections``) at more
            than 468, so that the app's own cap, with its clear answer, is reached first
            (a legacy SSE session holds its stream and a POST at once). The process's
            open-file limit is raised to match where the hard limit allows.
        ws_max_size: largest WebSocket message uvicorn accepts; a frame declaring more is
            refused (close 1009) before its payload is read. ``None``: the app's own
            limit when it has one (``max_message_bytes``, as mcpkit's ``WebSocketApp``,
            which refuses a message over it exactly), plus 1 KiB of slack for framing
            overhead (a fragmented, compressed message ends with a frame of its own),
            else uvicorn's 16 MiB.
        max_header_bytes: the most bytes a request's header block may take; a connection
            that sends more before its headers end is answered 431 and closed.
            ``None``: the app's ``max_header_bytes`` (16 KiB by default) plus 8 KiB for
            the request line, else 24 KiB.
        log_level: uvicorn's log level.
        ready: called once the server accepts connections: its socket listens and the
            app's lifespan startup has completed (never, when that startup fails).
        on_shutdown: called when shutdown begins, before the open connections get their
            grace period (5 s): to end long-lived streams gracefully. An awaitable it
            returns is awaited, for at most :data:`SHUTDOWN_HOOK_TIMEOUT` seconds, before
            uvicorn closes the connections itself (a WebSocket with close code 1012).
        ssl_certfile: a PEM file with the server's certificate chain (and its private
            key, unless ``ssl_keyfile`` names another file): serve TLS only.
        ssl_keyfile: a PEM file with the private key.
        ssl_keyfile_password: the private key's password, if it is encrypted.

    Raises:
        LocalProtocolError: a timeout that is not positive; a key without a certificate;
            a certificate or key that cannot be loaded (missing, malformed, not a pair,
            wrong password), before anything is bound.
        OSError: the address cannot be bound.
        mcpkit.exceptions.TransportError: uvicorn is not installed, or the app's lifespan
            startup failed.
    """
    if not (header_timeout > 0 and write_timeout > 0):
        from ..exceptions import LocalProtocolError

        raise LocalProtocolError("header_timeout and write_timeout must be positive")
    if ssl_certfile is not None or ssl_keyfile is not None or ssl_keyfile_password is not None:
        check_certificate(ssl_certfile, ssl_keyfile, ssl_keyfile_password)
    try:
        import uvicorn
    except ImportError as exc:
        from ..exceptions import TransportError

        raise TransportError("serving over HTTP needs uvicorn: pip install 'mcpkit[http]'") from exc
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto must be IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets that
    # say so, and without it every response written in two parts (headers, body) waits
    # ~40 ms for Nagle's algorithm and the peer's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.setblocking(False)
    try:
        import websockets  # noqa: F401  # uvicorn's WebSocket support, when installed
    except ImportError:
        ws = "none"
    else:
        from uvicorn.config import WS_PROTOCOLS

        # The sans-I/O implementation (uvicorn >= 0.35); older uvicorns (the http extra
        # allows >= 0.30) only have the one on websockets' legacy API.
        ws = "websockets-sansio" if "websockets-sansio" in WS_PROTOCOLS else "websockets"
    if ws_max_size is None:
        # The app's limit: uvicorn's own default (16 MiB) would buffer a frame announced
        # over it whole before the app could refuse it (RFC 6455 section 7.4.1, 1009).
        own = app_limit(app, "max_message_bytes")
        ws_max_size = own + 1024 if own is not None else 16 * 1024 * 1024
    if max_header_bytes is None:
        own = app_limit(app, "max_header_bytes")
        max_header_bytes = (own if own is not None else 16 * 1024) + 8 * 1024
    if limit_concurrency is None:
        cap = max(
            app_limit(app, name) or 0
            for name in ("max_sessions", "max_stateless_requests", "max_connections")
        )
        limit_concurrency = max(1000, 2 * cap + 64)
        raise_open_files(limit_concurrency + 64)
    config = uvicorn.Config(
        app,
        http=_protocol_class(header_timeout, max_header_bytes, write_timeout),
        ws=ws,
        lifespan="on",
        log_level=log_level,
        access_log=False,
        server_header=False,
        timeout_keep_alive=keepalive_timeout,
        limit_concurrency=limit_concurrency,
        ws_max_size=ws_max_size,
        h11_max_incomplete_event_size=16 * 1024,
        timeout_graceful_shutdown=5,
        ssl_certfile=ssl_certfile,
        ssl_keyfile=ssl_keyfile,
        ssl_keyfile_password=ssl_keyfile_password,
    )
    bound_invalid_request_logs()  # (after Config: it configures uvicorn's logging)

    class _Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started and ready is not None:
                port = sock.getsockname()[1]
                ready(HttpServer(self, host, port, limit_concurrency, tls=ssl_certfile is not None))

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            if on_shutdown is not None:
                try:
                    ending = on_shutdown()
                    if ending is not None:  # (bounded: the shutdown must go on)
                        await asyncio.wait_for(ending, SHUTDOWN_HOOK_TIMEOUT)
                except asyncio.TimeoutError:
                    logger.warning(
                        "the shutdown hook did not finish within %g s", SHUTDOWN_HOOK_TIMEOUT
                    )
                except Exception:
                    logger.exception("the shutdown hook failed")
            await super().shutdown(sockets)

    server = _Server(config)
    try:
        try:
            await server.serve(sockets=[sock])
        except SystemExit:  # newer uvicorns exit the process when the startup fails
            if server.started or not startup_failed(server):
                raise
        except asyncio.CancelledError:
            if server.started:
                await shut_down_cancelled(server, sock, SHUTDOWN_HOOK_TIMEOUT)
            raise
        if not server.started and startup_failed(server):
            # A library call must not exit the process (older uvicorns return silently).
            from ..exceptions import TransportError

            raise TransportError(
                "the application's lifespan startup failed, so the server did not start "
                "(the log says why)"
            )
    finally:
        sock.close()
