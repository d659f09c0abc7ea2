"""The Streamable HTTP server transport as a plain ASGI application.

One endpoint (``/mcp`` by default) answers POST (client messages), GET (the standalone
SSE stream, or resuming a stream with ``Last-Event-ID``) and DELETE (ending a session),
following ``basic/transports.mdx`` of 2025-03-26 ... 2025-11-25. Runs under any ASGI
server (uvicorn, hypercorn, granian) or mounted in Starlette / FastAPI; it needs no
framework. Secure by default: Host and Origin allowlists (loopback), a request body
limit, a session cap and an idle timeout.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc
import anyio.lowlevel
from anyio.lowlevel import EventLoopToken

from ..aio import EventStore, MemoryEventStore
from ..aio._background import spawn_background
from ..exceptions import LocalProtocolError
from ..protocol import TransportSecurity
from ._asgi import (
    ALLOWED_HEADERS,
    Headers,
    Receive,
    Scope,
    Send,
    cors_headers,
    path_matches,
    respond,
    respond_error,
)
from ._http_security import check_security
from ._http_session import HttpSession
from ._lifespan import asgi_lifespan, started_or_refused
from ._streamable_post import PassedHeaders, PassedKey, PostRoutes
from ._streamable_routes import ALLOW as _ALLOW

if TYPE_CHECKING:
    from ._lowlevel import LowLevelServer

__all__ = ["StreamableHTTPApp"]

logger = logging.getLogger("mcpkit.server.http")

_DEFAULT: Final[Any] = object()
LISTEN_GRACE: Final = 5.0  # seconds close_all() leaves an ended listen for its final result


class StreamableHTTPApp(PostRoutes):
    """Serve a server over Streamable HTTP, as an ASGI application.

    Example::

        app = server.streamable_http_app()          # then: uvicorn module:app
        # or mounted: Starlette(routes=[Mount("/", app)], lifespan=app.lifespan)

    Args:
        server: the server to expose.
        path: the MCP endpoint's path.
        stateless: no sessions: every POST stands alone (no ``initialize`` needed, no GET
            stream, no server-to-client requests, no ``listChanged`` or resource
            subscriptions; ``logging/setLevel`` holds for its own POST only, every other
            starts at the server's default level).
        json_response: answer handshake-era requests with JSON bodies instead of SSE
            streams. What such a request sends besides its response (progress, log
            messages, requests to the client) then goes on the GET stream: it may arrive
            after the response (a client drops progress for a finished call), and without
            an open GET stream (always, when stateless) notifications are dropped (logged
            at debug level) and requests to the client fail with ``MessageNotDelivered``
            (2026-07-28 requests stand alone and stream them all the same).
        event_store: where SSE events wait for resumption (``None`` disables it);
            a bounded :class:`MemoryEventStore` by default.
        security: the Host and Origin allowlists (loopback only by default).
        max_sessions: most sessions at once. At the cap, an ``initialize`` ends the
            session idle longest to make room for its own, if one has been idle for at
            least ``session_evict_after`` seconds; else it gets 503.
        session_idle_timeout: seconds a session may go without requests or open streams
            before it is ended (``None``: never).
        max_stateless_requests: most requests that stand alone (stateless mode, every
            2026-07-28 request, ``subscriptions/listen`` streams included) served at once,
            a bound the per-session ``max_in_flight`` cannot give them; past it a request
            gets 503 and a JSON-RPC error (-32000) with ``Retry-After``. ``None``: none.
        session_evict_after: seconds a session must have been idle before a new
            session at the cap may take its place (``None``: never; its client gets 404
            and starts a new session, as clients must). A session with a request in
            flight or an open stream is never idle.
        max_body_bytes: request body limit (413 beyond it).
        max_header_bytes: request header block limit (431 beyond it).
        body_timeout: seconds to receive a request body (408 beyond it).
        keepalive: seconds of silence on an SSE stream before a comment line is sent;
            a stream whose client takes nothing for twice as long is ended.
        retry_ms: the reconnection delay sent to clients with the priming event.
        max_stream_buffer: bytes queued for one slow SSE client before it is cut off.

    Raises:
        LocalProtocolError: an invalid setting.
    """

    def __init__(
        self,
        server: LowLevelServer,
        *,
        path: str = "/mcp",
        stateless: bool = False,
        json_response: bool = False,
        event_store: EventStore | None = _DEFAULT,
        security: TransportSecurity | None = None,
        max_sessions: int = 1000,
        max_stateless_requests: int | None = 1000,
        session_idle_timeout: float | None = 1800.0,
        session_evict_after: float | None = 60.0,
        max_body_bytes: int = 4 * 1024 * 1024,
        max_header_bytes: int = 16 * 1024,
        body_timeout: float = 30.0,
        keepalive: float = 15.0,
        retry_ms: int | None = 1000,
        max_stream_buffer: int = 8 * 1024 * 1024,
    ) -> None:
        if not path.startswith("/"):
            raise LocalProtocolError(f"path must start with '/': {path!r}")
        if max_sessions < 1 or max_body_bytes < 1 or max_header_bytes < 1:
            raise LocalProtocolError("max_sessions and the byte limits must be positive")
        if max_stateless_requests is not None and max_stateless_requests < 1:
            raise LocalProtocolError("max_stateless_requests must be None or positive")
        if session_evict_after is not None and not session_evict_after >= 0:
            raise LocalProtocolError("session_evict_after must be None or at least 0")
        self.server = server
        self.path = path
        self.stateless = stateless
        self.json_response = json_response
        if event_store is _DEFAULT:
            event_store = None if stateless else MemoryEventStore()
        self.event_store: EventStore | None = event_store
        self.security = security or TransportSecurity()
        self.max_sessions = max_sessions
        self.max_stateless_requests = max_stateless_requests
        self.session_idle_timeout = session_idle_timeout
        self.session_evict_after = session_evict_after
        self.max_body_bytes = max_body_bytes
        self.max_header_bytes = max_header_bytes
        self.body_timeout = body_timeout
        self.keepalive = keepalive
        self.retry_ms = retry_ms
        self.max_stream_buffer = max_stream_buffer
        #: The open sessions by id.
        self.sessions: dict[str, HttpSession] = {}
        self._passed: PassedHeaders = {}
        #: The sessions of POSTs that stand alone (stateless, 2026-07-28) while they run:
        #: ended by close_all with the others (a shutdown waited for their handlers).
        self.sessionless: set[HttpSession] = set()
        self._ending: set[HttpSession] = set()  # closed, work still stopping
        self.shutting_down = False  # close_all() was called: see SHUTTING_DOWN
        self._tg: anyio.abc.TaskGroup | None = None
        #: The asyncio loop running the app (set with _tg; None under trio), and its anyio
        #: token (for the sessions: see ServerSession.bind_loop).
        self._loop: asyncio.AbstractEventLoop | None = None
        self._token: EventLoopToken | None = None
        self._starting: anyio.Event | None = None
        self._runner_done = anyio.Event()
        self._lifespans = 0
        #: The start that failed (the server's lifespan raised) and why.
        self._failed: tuple[anyio.Event, Exception] | None = None

    # -- running ----------------------------------------------------------------------

    @asynccontextmanager
    async def lifespan(self, _app: object = None) -> AsyncIterator[None]:
        """Run the app's background work (sessions, idle sweeps) for the duration; for
        frameworks that take a lifespan (``Starlette(lifespan=app.lifespan)``). ASGI
        servers do this through the lifespan protocol; without either, it starts on the
        first request.

        Lifespans may overlap (one app served by two servers on one event loop, say on
        IPv4 and IPv6): the sessions end when the last one does.

        The server's lifespan (``LowLevelServer(lifespan=...)``) is entered here, once
        for the app's run, before the first session starts.

        Raises:
            LocalProtocolError: the app already runs on another event loop (serve one
                app per thread).
            Exception: the server's lifespan failed to start (its own exception).
        """
        self._lifespans += 1
        try:
            await self._ensure_runner()
            yield
        finally:
            self._lifespans -= 1
            if self._lifespans == 0 and self._tg is not None:
                self._close_all(grace=False)
                self._tg.cancel_scope.cancel()
                # Shielded and bounded: even when the lifespan itself is cancelled, the
                # sessions' tasks have stopped when it returns (structured, as before).
                with anyio.move_on_after(10, shield=True):
                    await self._runner_done.wait()

    def close_all(self) -> None:
        """End every session, and the one-POST sessions of stateless and 2026-07-28
        requests still running (their work stops in the background; see
        :meth:`wait_ended`). A ``subscriptions/listen`` stream that
        ``server.end_subscriptions()`` has ended keeps its POST until its final result
        has gone out, for at most :data:`LISTEN_GRACE` seconds ("Graceful Closure")."""
        self.shutting_down = True
        self._close_all(grace=True)

    def _close_all(self, *, grace: bool) -> None:
        for session in [*self.sessions.values(), *self.sessionless]:
            if grace and self._tg is not None and session.server_session.listens_ending:
                # Dropping it now would cut the final result end_subscriptions() just
                # asked for (2026-07-28 basic/patterns/subscriptions.mdx): the POST ends
                # the session itself once the result is out; bounded for a stuck client.
                self._tg.start_soon(self._drop_after_grace, session)
            else:
                if grace:  # a shutdown: answers still streaming say so
                    session.part()
                self.drop(session)

    async def _drop_after_grace(self, session: HttpSession) -> None:
        with anyio.move_on_after(LISTEN_GRACE):
            await session.ended.wait()
        self.drop(session)

    async def wait_ended(self, timeout: float = 10.0) -> None:
        """Wait until every ended session's work has stopped and its memory can go.

        Raises:
            TimeoutError: some session's work did not stop within ``timeout`` seconds.
        """
        with anyio.fail_after(timeout):
            while self._ending:
                await next(iter(self._ending)).ended.wait()

    async def _ensure_runner(self) -> anyio.abc.TaskGroup:
        """The task group the sessions run in, started by the first lifespan or request:
        a task of the event loop's own (it outlives the request that starts it), ended by
        the last lifespan or with the loop (a later loop starts a new one).

        Raises:
            LocalProtocolError: it runs on another event loop.
            Exception: the server's lifespan failed to start (its own exception).
        """
        if self._starting is not None:
            # (asyncio: one C call; the token only under trio, where _loop is None)
            loop = self._loop
            if (
                asyncio._get_running_loop() is not loop
                if loop is not None
                else self._token != anyio.lowlevel.current_token()
            ):
                raise LocalProtocolError(
                    "this StreamableHTTPApp already runs on another event loop: serve one "
                    "app per thread (its sessions and tasks belong to one loop)"
                )
            if self._tg is not None:
                return self._tg
        else:
            self._starting = started = anyio.Event()
            self._runner_done = anyio.Event()
            self._token = anyio.lowlevel.current_token()
            self._loop = asyncio._get_running_loop()  # None under trio
            # A fresh context: the request that happens to start it must not lend it
            # (and every session's timers) its context variables.
            contextvars.Context().run(spawn_background, lambda: self._run_sessions(started))
        starting = self._starting
        await starting.wait()
        failed = self._failed
        if failed is not None and failed[0] is starting:
            raise failed[1]
        return self._running()

    async def _run_sessions(self, started: anyio.Event) -> None:
        entered = False
        try:
            # The server's lifespan around every session: once per run of the app (the
            # sessions share what it yields), exited after the last session ended.
            async with self.server.lifespan.hold():
                entered = True
                async with anyio.create_task_group() as tg:
                    self._tg = tg
                    tg.start_soon(self._sweep_forever)
                    started.set()
                    try:
                        await anyio.sleep_forever()
                    finally:
                        self.close_all()  # (while the group can still start their endings)
        except Exception as exc:  # never a crash of the loop (a trio system task)
            if entered:  # a bug
                logger.exception("the Streamable HTTP app's background tasks failed")
            else:  # raised to the waiting lifespan and requests, which log it
                self._failed = (started, exc)
        finally:
            self._tg = self._starting = None
            started.set()  # (if it failed before starting: waiters see _running() fail)
            self._runner_done.set()

    def _running(self) -> anyio.abc.TaskGroup:
        if self._tg is None:
            raise RuntimeError("the app's background task group is not running")
        return self._tg

    # -- ASGI ------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind != "http":
            if kind == "lifespan":
                await asgi_lifespan(self.lifespan, receive, send)
            elif kind == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        # Without an ASGI lifespan (mounted where none is forwarded) the first request
        # enters the server's lifespan, and a failure is a 500, not a hang.
        if (
            self._tg is None
            and not self.server.lifespan.running
            and not await started_or_refused(self._ensure_runner, send)
        ):
            return
        # An HTTP request (in here, not in a method of its own: one coroutine less per
        # request).
        headers = Headers(scope["headers"])
        if headers.size > self.max_header_bytes:
            await respond_error(send, 431, "Request Header Fields Too Large")
            return
        key: PassedKey | None = None
        if scope["method"] == "POST" and not headers.duplicated:
            # A client sends the same headers with every POST: once a set of values has
            # passed every check that depends on them alone, later POSTs with exactly
            # those values go straight to their session (one dict lookup for a dozen
            # checks). See PostRoutes.remember_passed.
            get = headers.get
            key = (
                get(b"host"),
                get(b"origin"),
                get(b"content-type"),
                get(b"accept"),
                get(b"mcp-protocol-version"),
            )
            passed = self._passed.get(key)
            if passed is not None and (
                (scope.get("path") == self.path and not scope.get("root_path"))
                or self._matches(scope)
            ):
                cors, version, modern = passed
                if modern:
                    await self.post_modern_passed(receive, send, headers, cors)
                    return
                found = self._passed_session(headers, version)
                # (an isinstance that holds is one C test; one that fails, a lookup)
                if found is not None and not isinstance(found, HttpSession):
                    await respond_error(send, found[0], found[1], headers=cors)
                else:
                    await self._post_in_session(receive, send, headers, cors, found, version)
                return
        refusal = check_security(self.security, headers)
        if refusal is not None:
            await respond_error(send, refusal[0], refusal[1])
            return
        if not self._matches(scope):
            await respond_error(send, 404, f"Not Found: the MCP endpoint is {self.path}")
            return
        cors = cors_headers(headers)
        method = scope["method"]
        if method == "POST":
            await self._post(receive, send, headers, cors, key)
        elif method == "GET":
            await self._get(receive, send, headers, cors)
        elif method == "DELETE":
            await self._delete(send, headers, cors)
        elif method == "OPTIONS":
            await respond(
                send,
                204,
                headers=[
                    *cors,
                    _ALLOW,
                    (b"access-control-allow-methods", b"GET, POST, DELETE"),
                    (b"access-control-allow-headers", ALLOWED_HEADERS),
                    (b"access-control-max-age", b"600"),
                ],
            )
        else:
            await respond_error(send, 405, f"Method Not Allowed: {method}", headers=[*cors, _ALLOW])

    def _matches(self, scope: Scope) -> bool:
        return path_matches(scope, self.path)
