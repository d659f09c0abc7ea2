"""The Streamable HTTP routes that start or act on a session: the POST of ``initialize``
(a new session, within the session cap), GET (the standalone SSE stream, or resuming a
stream with ``Last-Event-ID``) and DELETE (ending the session), with the session lookup
and ``MCP-Protocol-Version`` checks they share with POST
(``basic/transports.mdx`` of 2025-03-26 ... 2025-11-25, "Session Management",
"Protocol Version Header"). 2026-07-28 has neither: such requests get 405."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final, cast

import anyio.abc

from ..aio import EventStore, detached_context
from ..protocol import MessageRejected, RequestReceived, accepts, new_session_id, valid_session_id
from ..types import V2026_07_28
from ..types._echo import peer_text
from ._asgi import Headers, Receive, Send, respond, respond_busy, respond_error
from ._http_handlers import handle_get, handle_message
from ._http_session import HttpSession, session_deadline
from ._http_streams import SESSION_GONE
from ._logbridge import current_request

if TYPE_CHECKING:
    from anyio.lowlevel import EventLoopToken

    from ._lowlevel import LowLevelServer
    from ._streamable import StreamableHTTPApp

__all__ = ["ALLOW", "SessionRoutes", "version_mismatch"]

ALLOW: Final = (b"allow", b"GET, POST, DELETE, OPTIONS")

logger = logging.getLogger("mcpkit.server.http")


def version_mismatch(value: str, negotiated: str) -> str:
    """The 400 reason for an ``MCP-Protocol-Version`` other than the session's."""
    return (
        f"Bad Request: MCP-Protocol-Version {peer_text(value)} does not match the "
        f"negotiated version {negotiated!r}"
    )


class SessionRoutes:
    """GET and DELETE of :class:`~mcpkit.server.StreamableHTTPApp` (a mixin)."""

    if TYPE_CHECKING:
        server: LowLevelServer
        sessions: dict[str, HttpSession]
        stateless: bool

        max_sessions: int
        session_idle_timeout: float | None
        session_evict_after: float | None
        event_store: EventStore | None
        retry_ms: int | None
        _token: EventLoopToken | None
        _ending: set[HttpSession]

        async def _ensure_runner(self) -> anyio.abc.TaskGroup: ...

        def _running(self) -> anyio.abc.TaskGroup: ...

    def start_detached(self, fn: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
        """Start ``fn(*args)`` in the app's task group from a request's handler or POST,
        but not as part of that request: in a copy of the context without its reply route
        and log target. (A task inherits its creator's context, and every timer it arms
        keeps a snapshot of it until due: a stream writer's keep-alive timers would hold
        the request's route, context and session long after the request ended.)

        Raises:
            RuntimeError: the app's task group is not running.
        """
        context = detached_context()
        context.run(current_request.set, None)
        context.run(self._running().start_soon, fn, *args)

    def drop(self, session: HttpSession) -> None:
        """End one session."""
        if session.id is not None:
            self.sessions.pop(session.id, None)
        if not session.ended.is_set():
            self._ending.add(session)
            session.on_end = self._ending.discard
        session.close()

    async def _sweep_forever(self) -> None:
        interval = session_deadline(self.session_idle_timeout)
        if math.isinf(interval):
            return
        while True:
            await anyio.sleep(interval)
            self.sweep()

    def sweep(self) -> int:
        """End sessions idle past the timeout; returns how many."""
        timeout = self.session_idle_timeout
        if timeout is None:
            return 0
        now = time.monotonic()  # the sessions' clock (HttpSession.last_active)
        idle = [s for s in self.sessions.values() if s.idle_for(now) > timeout]
        for session in idle:
            logger.info("session %s expired after %g s idle", session.id, timeout)
            self.drop(session)
        return len(idle)

    def make_room(self) -> bool:
        """At the session cap: end the sessions idle past the timeout or, if none is,
        the one idle longest, if for at least ``session_evict_after`` seconds. Returns
        whether there is room for a new session now.

        Without it, clients that start sessions and leave without a DELETE (a crash, a
        restart, a bug, or on purpose) would shut everyone else out with 503 for the
        whole idle timeout. An ended session's client gets 404 and starts a new session
        ("Session Management": it MUST), so a client merely pausing loses nothing."""
        if self.sweep():
            return True
        wait = self.session_evict_after
        if wait is None:
            return False
        now = time.monotonic()
        idle, oldest = max(
            ((s.idle_for(now), s) for s in self.sessions.values()), key=lambda pair: pair[0]
        )
        if idle < wait or idle == 0.0:  # (0.0 exactly: busy, see HttpSession.idle_for)
            return False
        logger.info(
            "session %s ended after %.0f s idle, to make room for a new one (max_sessions=%d)",
            oldest.id,
            idle,
            self.max_sessions,
        )
        self.drop(oldest)
        return True

    def _modern_header(self, headers: Headers) -> bool:
        """2026-07-28 has POST only: a GET or DELETE of that version gets 405."""
        version = headers.text(b"mcp-protocol-version")
        return bool(self.server.modern_versions) and version == V2026_07_28

    def _version_problem(self, headers: Headers, session: HttpSession | None) -> str | None:
        """Check ``MCP-Protocol-Version`` (2025-06-18+: "Protocol Version Header")."""
        value = headers.text(b"mcp-protocol-version")
        if b"mcp-protocol-version" in headers.duplicated:
            return "Bad Request: more than one MCP-Protocol-Version header"
        if value is None:
            return None
        supported = self.server.supported_versions
        if value not in supported:
            return (
                f"Bad Request: unsupported MCP-Protocol-Version {peer_text(value)}; "
                f"supported: {', '.join(supported)}"
            )
        if session is not None:
            negotiated = session.server_session.protocol_version
            if negotiated is not None and value != negotiated:
                return version_mismatch(value, negotiated)
        return None

    def _lookup(self, headers: Headers) -> HttpSession | tuple[int, str]:
        raw = headers.get(b"mcp-session-id")
        if raw is None:
            return 400, "Bad Request: the Mcp-Session-Id header is required"
        if b"mcp-session-id" in headers.duplicated:
            return 400, "Bad Request: malformed Mcp-Session-Id header"
        # An id this app issued is well formed: only an unknown one needs the full check.
        session = self.sessions.get(raw.decode("latin-1"))
        if session is None and not valid_session_id(raw):
            return 400, "Bad Request: malformed Mcp-Session-Id header"
        if session is None or session.closed:
            return SESSION_GONE
        return session

    async def _get(self, receive: Receive, send: Send, headers: Headers, cors: list[Any]) -> None:
        if self.stateless or self._modern_header(headers):
            await respond_error(
                send,
                405,
                "Method Not Allowed: this server is stateless (no GET stream)",
                headers=[*cors, ALLOW],
            )
            return
        accept = headers.joined(b"accept")
        if accept is None or not accepts(accept, "text/event-stream"):
            await respond_error(
                send,
                406,
                "Not Acceptable: the Accept header must list text/event-stream",
                headers=cors,
            )
            return
        found = self._lookup(headers)
        if isinstance(found, tuple):
            await respond_error(send, found[0], found[1], headers=cors)
            return
        problem = self._version_problem(headers, found)
        if problem is not None:
            await respond_error(send, 400, problem, headers=cors)
            return
        found.connections += 1
        try:
            await handle_get(cast("StreamableHTTPApp", self), found, headers, receive, send, cors)
        finally:
            found.connections -= 1
            found.touch()

    async def _delete(self, send: Send, headers: Headers, cors: list[Any]) -> None:
        if self.stateless or self._modern_header(headers):
            await respond_error(
                send,
                405,
                "Method Not Allowed: this server is stateless (no sessions)",
                headers=[*cors, ALLOW],
            )
            return
        found = self._lookup(headers)
        if isinstance(found, tuple):
            await respond_error(send, found[0], found[1], headers=cors)
            return
        # "Protocol Version Header" (2025-06-18+) applies to every request, DELETE too:
        # an invalid or unsupported one is 400, and the session stays.
        problem = self._version_problem(headers, found)
        if problem is not None:
            await respond_error(send, 400, problem, headers=cors)
            return
        self.drop(found)
        await respond(send, 204, headers=cors)

    async def _initialize(self, body: bytes, receive: Receive, send: Send, cors: list[Any]) -> None:
        """A POST without a session id: it must carry ``initialize``, which starts one."""
        session = HttpSession(
            self.server, new_session_id(), store=self.event_store, retry_ms=self.retry_ms
        )
        event = session.endpoint.connection.receive_message(body)
        if not (isinstance(event, RequestReceived) and event.method == "initialize"):
            if isinstance(event, MessageRejected) and event.reply is not None:
                await respond(send, 400, event.reply, headers=cors)
            else:
                await respond_error(
                    send,
                    400,
                    "Bad Request: the Mcp-Session-Id header is required "
                    "(only an initialize request may start a session)",
                    headers=cors,
                )
            return
        # (After the message is known to be an initialize: anything else is told what is
        # wrong with it, and no idle session is evicted for it.)
        if len(self.sessions) >= self.max_sessions and not self.make_room():
            reason = f"the server has {self.max_sessions} sessions open"
            await respond_busy(send, reason, retry_after=5, headers=cors)
            return
        tg = await self._ensure_runner()
        session.start(tg, token=self._token)
        assert session.id is not None
        self.sessions[session.id] = session
        await handle_message(
            cast("StreamableHTTPApp", self),
            session,
            body,
            receive,
            send,
            cors,
            event=event,
            new_session=True,
        )
