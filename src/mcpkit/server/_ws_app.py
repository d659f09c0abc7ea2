"""The WebSocket server transport (an mcpkit extension; no MCP revision defines one), as a
plain ASGI application.

The binding (``docs/websocket.md``): one JSON-RPC message per text frame, subprotocol
``mcp``, the MCP lifecycle unchanged, the connection is the session. Host and Origin are
checked before the handshake is accepted: the official SDK's WebSocket transport once had
no such check (CVE-2026-59950), which let any web page a user visited drive a local server
through DNS rebinding.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import anyio

from ..exceptions import LocalProtocolError
from ..protocol import TransportSecurity
from ..types import ErrorCode
from ._asgi import (
    Headers,
    Receive,
    Scope,
    Send,
    error_body,
    path_matches,
    respond_error,
)
from ._http_security import check_security
from ._http_streams import SHUTDOWN_ERROR
from ._lifespan import asgi_lifespan
from ._session import ServerSession

if TYPE_CHECKING:
    from ._lowlevel import LowLevelServer

__all__ = ["WebSocketApp"]

logger = logging.getLogger("mcpkit.server.ws")

#: The WebSocket subprotocol of the binding (RFC 6455 section 1.9).
SUBPROTOCOL: Final = "mcp"
# RFC 6455 section 7.4.1 close codes.
_NORMAL: Final = 1000
_GOING_AWAY: Final = 1001
_UNSUPPORTED_DATA: Final = 1003
_POLICY: Final = 1008
_TOO_BIG: Final = 1009
# ASGI's extension for answering a handshake with any HTTP response (else: 403, no body).
_HTTP_RESPONSE_EXT: Final = "websocket.http.response"


class _Channel:
    """A message channel over one accepted ASGI WebSocket connection."""

    __slots__ = (
        "_lock",
        "_receive",
        "_send",
        "closed",
        "ending",
        "limit",
        "on_gone",
        "parting",
        "send_timeout",
    )

    def __init__(self, receive: Receive, send: Send, limit: int, send_timeout: float) -> None:
        self._receive = receive
        self._send = send
        self.limit = limit
        self.send_timeout = send_timeout
        self._lock = anyio.Lock()
        self.closed = False  # a close frame was sent or received
        self.ending = (_NORMAL, "")  # the close frame aclose() sends
        #: The shutdown's error answers, sent once before the close frame (send_parting).
        self.parting: list[bytes] = []
        #: Called once the connection is over, so the session ends at once (nobody is left
        #: to read answers: draining running handlers would be wasted work).
        self.on_gone: Callable[[], None] | None = None

    def _gone(self) -> None:
        self.closed = True
        if self.on_gone is not None:
            self.on_gone()

    async def receive(self) -> bytes:
        while not self.closed:
            message = await self._receive()
            kind = message["type"]
            if kind == "websocket.receive":
                text = message.get("text")
                if text is None:
                    # One JSON-RPC message per *text* frame: binary data is not a message.
                    await self._close(_UNSUPPORTED_DATA, "MCP messages are text frames")
                    break
                data: bytes = text.encode()
                if len(data) > self.limit:
                    await self._close(_TOO_BIG, f"message over {self.limit} bytes")
                    break
                return data
            if kind == "websocket.disconnect":
                self._gone()
                break
        raise anyio.EndOfStream

    async def send(self, message: bytes) -> None:
        if self.closed:
            raise anyio.BrokenResourceError
        # A client that stops reading backs the socket up: the write, and everything the
        # session holds, would wait for ever (a ping timeout cannot get its close frame
        # out either). Past send_timeout the client is treated as gone.
        with anyio.move_on_after(self.send_timeout):
            async with self._lock:
                try:
                    await self._send({"type": "websocket.send", "text": message.decode()})
                except OSError:  # the client vanished (uvicorn's ClientDisconnected)
                    self._gone()
                    raise anyio.BrokenResourceError from None
                return
        logger.warning(
            "closing a WebSocket connection: the client read nothing for %g s", self.send_timeout
        )
        self._gone()
        raise anyio.BrokenResourceError

    async def _close(self, code: int, reason: str) -> None:
        if self.closed:
            return
        logger.info("closing a WebSocket connection: %d %s", code, reason)
        with anyio.move_on_after(self.send_timeout):  # (see send)
            try:
                async with self._lock:
                    await self._send({"type": "websocket.close", "code": code, "reason": reason})
            except OSError:
                pass
        self._gone()

    async def send_parting(self) -> None:
        """Send the shutdown's answers (:attr:`parting`), once: whoever comes first
        (``WebSocketApp.shutdown`` at once, or :meth:`aclose` once the handlers have
        stopped) sends them all under the lock, which the close frame then waits for."""
        with anyio.move_on_after(self.send_timeout):  # (see send)
            async with self._lock:
                answers, self.parting = self.parting, []
                for answer in answers:
                    if self.closed:
                        return
                    try:
                        await self._send({"type": "websocket.send", "text": answer.decode()})
                    except OSError:  # the client is gone: nobody to tell
                        self._gone()

    async def aclose(self) -> None:
        await self.send_parting()
        await self._close(*self.ending)


class WebSocketApp:
    """Serve a server over WebSocket, as an ASGI application.

    Example::

        app = WebSocketApp(server)        # then: uvicorn module:app; clients use ws://host/ws

    A handshake is refused (HTTP 403) when its Host or Origin is outside the allowlists
    or when it offers subprotocols but not ``mcp``; on another path it gets 404, beyond
    ``max_connections`` 503. ASGI servers without the ``websocket.http.response``
    extension answer every refusal with a bare 403. Plain HTTP requests get 426 Upgrade
    Required on the path and 404 elsewhere.

    Args:
        server: the server to expose.
        path: the WebSocket endpoint's path.
        security: the Host and Origin allowlists (loopback only by default).
        max_message_bytes: largest accepted message; a larger one closes the connection
            with 1009 (Message Too Big).
        max_connections: most connections at once.
        send_timeout: seconds one message may take to be written; a client that reads
            nothing for that long is disconnected and its session released.

    Call :meth:`close_all` from the hosting server's shutdown hook (see the README):
    ``mcpkit run`` and ``Server.serve_http`` do.

    Attributes:
        connections: the sessions being served.
        on_session_closed: called with each :class:`ServerSession` once its connection has
            ended and everything it held is released (a hook for tests and metrics).

    Raises:
        LocalProtocolError: an invalid setting.
    """

    def __init__(
        self,
        server: LowLevelServer,
        *,
        path: str = "/ws",
        security: TransportSecurity | None = None,
        max_message_bytes: int = 4 * 1024 * 1024,
        max_connections: int = 1000,
        send_timeout: float = 30.0,
    ) -> None:
        if not path.startswith("/"):
            raise LocalProtocolError(f"path must start with '/': {path!r}")
        if max_message_bytes < 1 or max_connections < 1:
            raise LocalProtocolError("max_message_bytes and max_connections must be positive")
        self.server = server
        self.path = path
        self.security = security or TransportSecurity()
        self.max_message_bytes = max_message_bytes
        self.max_connections = max_connections
        if not send_timeout > 0:
            raise LocalProtocolError("send_timeout must be positive")
        self.send_timeout = send_timeout
        self.connections: set[ServerSession] = set()
        self.on_session_closed: Callable[[ServerSession], None] | None = None
        self._serving: dict[ServerSession, tuple[anyio.CancelScope, _Channel]] = {}
        self._emptied: anyio.Event | None = None  # (see shutdown)

    def close_all(self) -> None:
        """End every connection at a shutdown: the requests still running are answered
        -32603 "the server is shutting down", their handlers are cancelled and the client
        gets a close frame 1001 (Going Away, RFC 6455 section 7.4.1). Call it on the
        event loop's thread."""
        for session, (serving, channel) in list(self._serving.items()):
            channel.ending = (_GOING_AWAY, "the server is shutting down")
            # The requests still running are answered -32603 before the close frame, so
            # that the client knows which calls were cut, and that by the server.
            channel.parting = session.endpoint.part_channel(*SHUTDOWN_ERROR)
            serving.cancel()  # the session's teardown closes the channel

    async def shutdown(self, timeout: float = 2.0) -> None:
        """:meth:`close_all`, then wait (at most ``timeout`` seconds) until every
        connection has ended: its running requests answered and its close frame sent.
        For a hosting server's async shutdown hook, before the server closes the
        connections itself (uvicorn with 1012, losing those answers): ``mcpkit run`` and
        ``Server.serve_http`` do this."""
        self.close_all()
        if not self._serving:
            return
        self._emptied = emptied = anyio.Event()
        with anyio.move_on_after(timeout):
            # The answers go out now, not after the handlers' stop grace (a handler that
            # ignores its cancellation would hold them past this wait's bound).
            async with anyio.create_task_group() as tg:
                for _, channel in list(self._serving.values()):
                    tg.start_soon(channel.send_parting)
            await emptied.wait()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "websocket":
            await self._websocket(scope, receive, send)
        elif kind == "http":
            await self._http(scope, send)
        elif kind == "lifespan":
            # Connections live in their own tasks: only the server's lifespan to hold.
            await asgi_lifespan(self.server.lifespan.hold, receive, send)

    def _matches(self, scope: Scope) -> bool:
        return path_matches(scope, self.path)

    async def _http(self, scope: Scope, send: Send) -> None:
        refusal = check_security(self.security, Headers(scope["headers"]))
        if refusal is not None:
            await respond_error(send, refusal[0], refusal[1])
        elif self._matches(scope):
            await respond_error(
                send,
                426,
                "Upgrade Required: this is a WebSocket endpoint (subprotocol 'mcp')",
                headers=[(b"upgrade", b"websocket"), (b"connection", b"Upgrade")],
            )
        else:
            await respond_error(send, 404, f"Not Found: the WebSocket endpoint is {self.path}")

    async def _refuse(self, scope: Scope, send: Send, status: int, reason: str) -> None:
        """Refuse the handshake: with an HTTP error response where the server supports
        it, else with ``websocket.close`` before accepting (the server answers 403)."""
        logger.info("WebSocket handshake refused (%d): %s", status, reason)
        if _HTTP_RESPONSE_EXT in scope.get("extensions", {}):
            code = {503: ErrorCode.SERVER_BUSY, 500: ErrorCode.INTERNAL_ERROR}.get(
                status, ErrorCode.INVALID_REQUEST
            )
            body = error_body(code, reason)
            await send(
                {
                    "type": "websocket.http.response.start",
                    "status": status,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": _POLICY})

    def _check_handshake(self, scope: Scope) -> tuple[int, str] | None:
        # 403 for Host as well: a handshake refusal is one status in the binding.
        refusal = check_security(self.security, Headers(scope["headers"]), handshake=True)
        if refusal is not None:
            return refusal
        if not self._matches(scope):
            return 404, f"Not Found: the WebSocket endpoint is {self.path}"
        offered: list[str] = scope.get("subprotocols") or []
        if offered and SUBPROTOCOL not in offered:
            return 403, f"Forbidden: the subprotocol must be {SUBPROTOCOL!r}"
        if len(self.connections) >= self.max_connections:
            return 503, f"Service Unavailable: {self.max_connections} connections are open"
        return None

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "websocket.connect":
            return  # the client left before the handshake
        refusal = self._check_handshake(scope)
        if refusal is None and not self.server.lifespan.running:
            # No ASGI lifespan reached the app: the first connection enters the server's.
            try:
                await self.server.lifespan.pin()
            except Exception:
                logger.exception("the server's lifespan failed to start: refusing with 500")
                refusal = 500, "Internal Server Error: the server failed to start"
        if refusal is not None:
            await self._refuse(scope, send, *refusal)
            return
        # A client that offers no subprotocol is accepted (and none is selected), for
        # clients that cannot set one; one that offers some must include "mcp".
        accept: dict[str, Any] = {"type": "websocket.accept"}
        if scope.get("subprotocols"):
            accept["subprotocol"] = SUBPROTOCOL
        channel = _Channel(receive, send, self.max_message_bytes, self.send_timeout)
        session = ServerSession(self.server, channel)
        # Counted before the first await, so concurrent handshakes cannot all pass the
        # max_connections check.
        self.connections.add(session)
        self.server.sessions.add(session)
        try:
            await send(accept)
            with anyio.CancelScope() as serving:
                channel.on_gone = serving.cancel
                self._serving[session] = (serving, channel)
                await session.run()
        finally:
            self._serving.pop(session, None)
            if not self._serving and self._emptied is not None:
                self._emptied.set()
            self.connections.discard(session)
            self.server.sessions.discard(session)
            if self.on_session_closed is not None:
                self.on_session_closed(session)
