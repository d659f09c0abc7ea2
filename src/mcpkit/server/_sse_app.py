"""The legacy HTTP+SSE server transport (MCP 2024-11-05 ``basic/transports.mdx``), as a
plain ASGI application.

Two endpoints: a GET on the SSE endpoint (``/sse``) opens a session whose first event is
``endpoint``, naming the URI the client POSTs its messages to (``/messages?session_id=..``);
every server message then travels as a ``message`` event on that stream. A POSTed message
is acknowledged with 202 Accepted and answered on the stream. The session lives exactly as
long as the GET request: its :class:`ServerSession` runs in that request's own task, so a
client that disconnects ends its session (handlers cancelled, state freed) and no
background task group is needed. Deprecated by the spec since 2025-03-26; served for
clients that still speak it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote

import anyio
import msgspec

from ..exceptions import LocalProtocolError
from ..protocol import (
    TransportSecurity,
    accepts,
    encode_event,
    media_type,
    new_session_id,
    valid_session_id,
)
from ..types import ErrorCode
from ._asgi import (
    ALLOWED_HEADERS,
    Headers,
    Receive,
    Scope,
    Send,
    cors_headers,
    read_body,
    refuse_body,
    refuse_media_type,
    respond,
    respond_busy,
    respond_error,
)
from ._asgi_sse import SSE_HEADERS, Sink, pump
from ._http_security import check_security
from ._lifespan import asgi_lifespan, started_or_refused
from ._session import ServerSession
from ._sse_session import LegacySession

if TYPE_CHECKING:
    from ._lowlevel import LowLevelServer

__all__ = ["SSEApp"]

logger = logging.getLogger("mcpkit.server.http")


class SSEApp:
    """Serve a server over the 2024-11-05 HTTP+SSE transport, as an ASGI application.

    Example::

        app = SSEApp(server)      # then: uvicorn module:app
        # or mounted: Starlette(routes=[Mount("/legacy", app)]); the endpoint event
        # then names /legacy/messages?session_id=...

    Status codes: 406 for a GET whose ``Accept`` excludes ``text/event-stream``; 415 for a
    POST that is not ``application/json``; 400 for a missing or malformed ``session_id``
    and for a body that is not JSON at all (with an id-less -32700 error); 404 for an
    unknown session; 413/408 for a body over the limit or too slow; 421/403 for a Host or
    Origin outside the allowlists (both endpoints); 503 beyond ``max_sessions``. A
    well-formed message gets 202 and its answer arrives on the session's stream (invalid
    JSON-RPC in valid JSON is answered there too, as on any connection).

    Args:
        server: the server to expose.
        sse_path: the SSE endpoint's path (GET).
        message_path: the message endpoint's path (POST).
        security: the Host and Origin allowlists (loopback only by default).
        max_sessions: most open sessions; more GETs get 503.
        max_body_bytes: request body limit (413 beyond it).
        max_header_bytes: request header block limit (431 beyond it).
        body_timeout: seconds to receive a request body (408 beyond it), and to hand a
            message to a busy session (503 beyond it).
        keepalive: seconds of silence on a stream before a comment line is sent;
            a stream whose client takes nothing for twice as long is ended.
        max_stream_buffer: bytes queued for one slow client before it is cut off.

    Attributes:
        sessions: the open sessions by id.
        on_session_closed: called with each :class:`ServerSession` once its stream has
            ended and everything it held is released (a hook for tests and metrics).

    Raises:
        LocalProtocolError: an invalid setting.
    """

    def __init__(
        self,
        server: LowLevelServer,
        *,
        sse_path: str = "/sse",
        message_path: str = "/messages",
        security: TransportSecurity | None = None,
        max_sessions: int = 1000,
        max_body_bytes: int = 4 * 1024 * 1024,
        max_header_bytes: int = 16 * 1024,
        body_timeout: float = 30.0,
        keepalive: float = 15.0,
        max_stream_buffer: int = 8 * 1024 * 1024,
    ) -> None:
        for name, path in (("sse_path", sse_path), ("message_path", message_path)):
            if not path.startswith("/") or "?" in path or "#" in path:
                raise LocalProtocolError(f"{name} must be a path starting with '/': {path!r}")
        if min(max_sessions, max_body_bytes, max_header_bytes, max_stream_buffer) < 1:
            raise LocalProtocolError("max_sessions and the byte limits must be positive")
        if body_timeout <= 0 or keepalive <= 0:
            raise LocalProtocolError("body_timeout and keepalive must be positive")
        self.server = server
        self.sse_path = sse_path
        self.message_path = message_path
        self.security = security or TransportSecurity()
        self.max_sessions = max_sessions
        self.max_body_bytes = max_body_bytes
        self.max_header_bytes = max_header_bytes
        self.body_timeout = body_timeout
        self.keepalive = keepalive
        self.max_stream_buffer = max_stream_buffer
        self.sessions: dict[str, LegacySession] = {}
        self.on_session_closed: Callable[[ServerSession], None] | None = None

    def close_all(self) -> None:
        """End every session at a shutdown: the requests still running are answered
        -32603 "the server is shutting down" on their streams, which then finish; their
        handlers are cancelled."""
        for session in list(self.sessions.values()):
            session.close(parting=True)

    # -- ASGI ------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await asgi_lifespan(self.lifespan, receive, send)
        elif kind == "websocket":
            await send({"type": "websocket.close", "code": 1008})

    @asynccontextmanager
    async def lifespan(self, _app: object = None) -> AsyncIterator[None]:
        """The server's lifespan (``LowLevelServer(lifespan=...)``) for the duration, once
        for the app's run (sessions live in their GET requests' tasks: nothing else to
        start), and every session ended at its end; for frameworks that take a lifespan
        (``Starlette(lifespan=app.lifespan)``). ASGI servers do this through the lifespan
        protocol; without either, the first GET enters the server's lifespan.

        Raises:
            Exception: the server's lifespan failed to start (its own exception).
        """
        async with self.server.lifespan.hold():
            try:
                yield
            finally:
                self.close_all()

    @staticmethod
    def _route_path(scope: Scope) -> str:
        path: str = scope.get("path", "")
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        return path.rstrip("/") or "/"

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope["headers"])
        if headers.size > self.max_header_bytes:
            await respond_error(send, 431, "Request Header Fields Too Large")
            return
        refusal = check_security(self.security, headers)
        if refusal is not None:
            await respond_error(send, refusal[0], refusal[1])
            return
        cors = cors_headers(headers)
        path = self._route_path(scope)
        method = scope["method"]
        allowed: list[str] = []
        if path == (self.sse_path.rstrip("/") or "/"):
            allowed.append("GET")
            if method == "GET":
                await self._get(scope, receive, send, headers, cors)
                return
        if path == (self.message_path.rstrip("/") or "/"):
            allowed.append("POST")
            if method == "POST":
                await self._post(scope, receive, send, headers, cors)
                return
        if not allowed:
            await respond_error(
                send,
                404,
                f"Not Found: the SSE endpoint is {self.sse_path}, messages go to "
                f"{self.message_path}",
                headers=cors,
            )
            return
        allow = (b"allow", ", ".join([*allowed, "OPTIONS"]).encode())
        if method == "OPTIONS":
            await respond(
                send,
                204,
                headers=[
                    *cors,
                    allow,
                    (b"access-control-allow-methods", ", ".join(allowed).encode()),
                    (b"access-control-allow-headers", ALLOWED_HEADERS),
                    (b"access-control-max-age", b"600"),
                ],
            )
            return
        await respond_error(send, 405, f"Method Not Allowed: {method}", headers=[*cors, allow])

    # -- GET: the session's stream ---------------------------------------------------------

    def _endpoint_uri(self, scope: Scope, session_id: str) -> bytes:
        """The message endpoint as a relative URI (path and query), under the app's mount
        point so it resolves against the SSE URL wherever the app is mounted."""
        root: str = scope.get("root_path", "")
        path = quote(root.rstrip("/") + self.message_path)
        return f"{path}?session_id={session_id}".encode("ascii")

    async def _get(
        self, scope: Scope, receive: Receive, send: Send, headers: Headers, cors: list[Any]
    ) -> None:
        # No Accept header accepts anything (RFC 9110 12.5.1); one that excludes SSE cannot
        # be served.
        if not accepts(headers.joined(b"accept"), "text/event-stream"):
            await respond_error(
                send,
                406,
                "Not Acceptable: the Accept header must allow text/event-stream",
                headers=cors,
            )
            return
        lifespan = self.server.lifespan
        if not lifespan.running and not await started_or_refused(lifespan.pin, send):
            return
        if len(self.sessions) >= self.max_sessions:
            reason = f"the server has {self.max_sessions} sessions open"
            await respond_busy(send, reason, retry_after=5, headers=cors)
            return
        sink = Sink(self.max_stream_buffer)
        session = LegacySession(self.server, new_session_id(), sink)
        self.sessions[session.id] = session
        self.server.sessions.add(session.server_session)
        try:
            await send(
                {"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, *cors]}
            )
            # 2024-11-05: "the server MUST send an endpoint event containing a URI for the
            # client to use for sending messages".
            sink.put(encode_event(self._endpoint_uri(scope, session.id), event="endpoint"))
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._run_session, session)
                await pump(sink, send, receive, keepalive=self.keepalive)
                session.close()  # the stream is over (the client left): end the session now
        finally:
            session.channel.shut()
            self.sessions.pop(session.id, None)
            self.server.sessions.discard(session.server_session)
            session.server_session.release()
            logger.debug("SSE session %s ended", session.id)
            if self.on_session_closed is not None:
                self.on_session_closed(session.server_session)

    @staticmethod
    async def _run_session(session: LegacySession) -> None:
        try:
            with session.run_scope:
                await session.server_session.run()
        finally:
            session.channel.shut()

    # -- POST: a client message ------------------------------------------------------------

    def _lookup(self, scope: Scope) -> LegacySession | tuple[int, str]:
        query: bytes = scope.get("query_string", b"")
        values = parse_qs(query.decode("latin-1")).get("session_id", [])
        if not values:
            return 400, "Bad Request: the session_id query parameter is required"
        if len(values) > 1 or not valid_session_id(values[0]):
            return 400, "Bad Request: malformed session_id"
        session = self.sessions.get(values[0])
        if session is None or session.channel.closed:
            return 404, "Not Found: unknown or ended session; open a new one with GET"
        return session

    async def _post(
        self, scope: Scope, receive: Receive, send: Send, headers: Headers, cors: list[Any]
    ) -> None:
        # Refused before anything is read: a cross-site "simple" request (text/plain) from a
        # browser must never reach a session (the CSRF class of CVE-2026-33252).
        if (
            media_type(headers.get(b"content-type")) != "application/json"
            or b"content-type" in headers.duplicated
        ):
            await refuse_media_type(send, cors, headers)
            return
        found = self._lookup(scope)
        if isinstance(found, tuple):
            await respond_error(send, found[0], found[1], headers=cors)
            return
        body = await read_body(
            receive, headers, limit=self.max_body_bytes, timeout=self.body_timeout
        )
        if isinstance(body, tuple):
            await refuse_body(send, body, cors)
            return
        try:
            msgspec.json.decode(body, type=msgspec.Raw)  # well-formed JSON? (no decoding)
        except msgspec.DecodeError as exc:
            # Not JSON at all: no message to hand to the session (as the official SDK, 400).
            await respond_error(
                send, 400, f"Parse error: {exc}", code=ErrorCode.PARSE_ERROR, headers=cors
            )
            return
        except RecursionError:
            pass  # deeply nested: the session's codec answers it with -32700
        delivered = await found.channel.deliver(body, self.body_timeout)
        if delivered is None:
            await respond_error(
                send,
                503,
                "Service Unavailable: the session is not taking messages",
                code=ErrorCode.SERVER_BUSY,
                headers=[*cors, (b"retry-after", b"1")],
            )
        elif not delivered:
            await respond_error(
                send, 404, "Not Found: the session ended; open a new one with GET", headers=cors
            )
        else:
            await respond(send, 202, headers=cors)
