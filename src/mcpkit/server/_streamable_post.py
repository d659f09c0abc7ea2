"""The POST of a Streamable HTTP endpoint (a mixin of
:class:`~mcpkit.server.StreamableHTTPApp`): the header checks (media types, the era,
``MCP-Protocol-Version``), the body, and handing the message to its session, a new
stateless one, or ``initialize`` (``basic/transports.mdx`` of 2025-03-26 ... 2025-11-25,
"Sending Messages to the Server"). A set of header values that passed the checks once is
remembered, so that a client's later POSTs skip them."""

from __future__ import annotations

import asyncio
from time import monotonic
from typing import TYPE_CHECKING, Any, Final, cast

import anyio.abc

from ..protocol import (
    READY_HANDSHAKES,
    BatchReceived,
    RequestReceived,
    ServerHandshake,
    accepts,
    ready_handshake,
)
from ..types import HANDSHAKE_VERSIONS, V2025_03_26
from ._asgi import (
    Headers,
    Receive,
    Send,
    is_json,
    read_body,
    refuse_body,
    refuse_media_type,
    respond,
    respond_busy,
    respond_error,
)
from ._http_handlers import handle_message
from ._http_modern import VERSION_KEY, era_mismatch, looks_modern, post_modern
from ._http_session import HttpSession
from ._http_streams import SESSION_GONE
from ._streamable_routes import SessionRoutes, version_mismatch

if TYPE_CHECKING:
    from anyio.lowlevel import EventLoopToken

    from ._streamable import StreamableHTTPApp

__all__ = ["PassedHeaders", "PassedKey", "PostRoutes", "Refused"]

_PASSED_LIMIT: Final = 64

#: What :meth:`PostRoutes.remember_passed` keeps: header values -> (the CORS headers of
#: the answer, the protocol version, whether it is a 2026-07-28 one). The CORS list is
#: shared, and never mutated.
PassedKey = tuple[bytes | None, bytes | None, bytes | None, bytes | None, bytes | None]
PassedHeaders = dict[PassedKey, tuple[list[Any], str, bool]]
#: An HTTP status and its reason.
Refused = tuple[int, str]


class PostRoutes(SessionRoutes):
    """POST of :class:`~mcpkit.server.StreamableHTTPApp` (a mixin)."""

    if TYPE_CHECKING:
        _passed: PassedHeaders
        sessionless: set[HttpSession]
        _tg: anyio.abc.TaskGroup | None
        _loop: asyncio.AbstractEventLoop | None
        _token: EventLoopToken | None
        max_body_bytes: int
        body_timeout: float
        max_stateless_requests: int | None

    async def _post(
        self,
        receive: Receive,
        send: Send,
        headers: Headers,
        cors: list[Any],
        key: PassedKey | None,
    ) -> None:
        """A POST whose header values were not remembered as passed: every check (``key``:
        its values, to remember once they pass; ``None`` when they cannot be)."""
        if not is_json(headers.get(b"content-type")) or b"content-type" in headers.duplicated:
            await refuse_media_type(send, cors, headers)
            return
        accept = headers.joined(b"accept")
        if accept is None or not (
            accepts(accept, "application/json") and accepts(accept, "text/event-stream")
        ):
            await respond_error(
                send,
                406,
                "Not Acceptable: the Accept header must list application/json and "
                "text/event-stream",
                headers=cors,
            )
            return
        if self.server.modern_versions and await self._maybe_modern(
            receive, send, headers, cors, key
        ):
            return
        version = headers.text(b"mcp-protocol-version")
        if self.stateless:
            problem = self._version_problem(headers, None)
            if problem is not None:
                await respond_error(send, 400, problem, headers=cors)
                return
            self.remember_passed(key, cors, version)
            await self._post_in_session(receive, send, headers, cors, None, version)
            return
        session: HttpSession | None = None
        if headers.get(b"mcp-session-id") is not None:
            found = self._lookup(headers)
            if isinstance(found, tuple):
                await respond_error(send, found[0], found[1], headers=cors)
                return
            session = found
        problem = self._version_problem(headers, session)
        if problem is not None:
            await respond_error(send, 400, problem, headers=cors)
            return
        if session is not None:
            self.remember_passed(key, cors, version)
        await self._post_in_session(receive, send, headers, cors, session, version)

    def _passed_session(self, headers: Headers, version: str) -> HttpSession | Refused | None:
        """For a POST whose header values passed every check before (see
        :meth:`StreamableHTTPApp.__call__`), the checks left, those that depend on the
        session: its session (``None``: stateless, or no session id) or the refusal.
        (Not a coroutine: the caller answers, one coroutine less per POST.)"""
        raw = headers.get(b"mcp-session-id")
        if self.stateless or raw is None:
            return None
        # (_lookup, inlined for a known, open session: the memo's headers are never
        # duplicated)
        found = self.sessions.get(raw.decode("latin-1"))
        if found is None or found.closed:
            refused = self._lookup(headers)
            assert isinstance(refused, tuple)
            return refused
        negotiated = found.server_session.protocol_version
        if negotiated is not None and version != negotiated:
            return 400, version_mismatch(version, negotiated)
        return found

    async def _post_in_session(
        self,
        receive: Receive,
        send: Send,
        headers: Headers,
        cors: list[Any],
        session: HttpSession | None,
        version: str | None,
    ) -> None:
        """Read the body of a POST that passed its checks and hand it to its session
        (stateless: a new one; none yet: an ``initialize``); ``version`` is its checked
        ``MCP-Protocol-Version``."""
        body = await read_body(
            receive, headers, limit=self.max_body_bytes, timeout=self.body_timeout
        )
        if not isinstance(body, bytes):  # (an isinstance that holds is one C test; one
            # that fails, a __class__ lookup: this tests for the common case)
            await refuse_body(send, body, cors)
            return
        if (version is not None or session is not None) and body.find(VERSION_KEY) != -1:
            # A 2026-07-28 request under a handshake-era header, or in a handshake-era
            # session without one: the header "MUST match" the body's _meta version
            # (transports.mdx 2026-07-28): 400 and -32020, as without a session. (A body
            # without the key is none: one search, no call, on every POST's path.)
            mismatch = era_mismatch(body, version)
            if mismatch is not None:
                await respond(send, 400, mismatch, headers=cors)
                return
        if self.stateless:
            await self._post_stateless(body, receive, send, cors, version)
            return
        if session is None:
            await self._initialize(body, receive, send, cors)
            return
        if session.closed:
            # Ended (DELETE, idle expiry) while the body was arriving: "MUST respond to
            # requests containing that session ID with HTTP 404" (Session Management).
            await respond_error(send, *SESSION_GONE, headers=cors)
            return
        session.connections += 1
        try:
            # (self is a StreamableHTTPApp, this class's only user: no cast() call per POST)
            app: StreamableHTTPApp = self  # type: ignore[assignment]
            await handle_message(app, session, body, receive, send, cors, version=version)
        finally:
            session.connections -= 1
            # (HttpSession.touch, inlined: a call less on every POST's path)
            session.last_active = monotonic()

    async def _maybe_modern(
        self,
        receive: Receive,
        send: Send,
        headers: Headers,
        cors: list[Any],
        key: PassedKey | None,
    ) -> bool:
        """Serve a 2026-07-28 POST (a served modern ``MCP-Protocol-Version``, ``Mcp-Method``,
        or ``_meta.protocolVersion`` in the body); returns whether the POST was served."""
        version = headers.text(b"mcp-protocol-version")
        if version is not None and version in HANDSHAKE_VERSIONS:
            return False
        if version is not None and version in self.server.modern_versions:
            self.remember_passed(key, cors, version)
            await self.post_modern_passed(receive, send, headers, cors)
            return True
        if headers.get(b"mcp-session-id") is not None:
            return False  # handshake era: 404 for an unknown session, then the version
        body = await read_body(
            receive, headers, limit=self.max_body_bytes, timeout=self.body_timeout
        )
        if isinstance(body, tuple):
            await refuse_body(send, body, cors)
            return True
        if headers.get(b"mcp-method") is not None or looks_modern(body):
            await post_modern(cast("StreamableHTTPApp", self), body, receive, send, headers, cors)
            return True
        problem = self._version_problem(headers, None)
        if problem is not None:  # neither era's version (a modern one would be -32022)
            await respond_error(send, 400, problem, headers=cors)
        elif self.stateless:
            header = headers.text(b"mcp-protocol-version")
            await self._post_stateless(body, receive, send, cors, header)
        else:
            await self._initialize(body, receive, send, cors)
        return True

    async def post_modern_passed(
        self, receive: Receive, send: Send, headers: Headers, cors: list[Any]
    ) -> None:
        """Read and serve a 2026-07-28 POST whose headers passed every check that depends on
        them alone (its ``MCP-Protocol-Version`` is a served modern one)."""
        body = await read_body(
            receive, headers, limit=self.max_body_bytes, timeout=self.body_timeout
        )
        if isinstance(body, tuple):
            await refuse_body(send, body, cors)
            return
        await post_modern(cast("StreamableHTTPApp", self), body, receive, send, headers, cors)

    async def _post_stateless(
        self, body: bytes, receive: Receive, send: Send, cors: list[Any], header: str | None
    ) -> None:
        """A stateless POST (``header``: its ``MCP-Protocol-Version``) in a session of its
        own, ended with it."""
        tg = self._tg or await self._ensure_runner()
        version = header or V2025_03_26
        # Every POST stands alone, served as if initialized with its version: with the
        # shared, read-only handshake of that version (the table read here, not through
        # ready_handshake: one call less per POST; HttpSession's arguments by position).
        handshake = READY_HANDSHAKES.get(version) or ready_handshake(version)
        session = HttpSession(self.server, None, None, None, handshake)
        server_session = session.server_session
        server_session.stateless = True
        connection = session.endpoint.connection
        connection.allow_batches = version == V2025_03_26
        event = connection.receive_message(body)
        if self.stateless_busy() and isinstance(event, (RequestReceived, BatchReceived)):
            await self.refuse_busy(send, cors)
            return
        # But clients still begin with `initialize` (its answer carries the version and
        # capabilities): that one goes through a handshake of its own.
        if isinstance(event, RequestReceived) and event.method == "initialize":
            server_session.handshake = ServerHandshake()
        session.start(tg, self._loop, self._token)
        self.sessionless.add(session)
        try:
            app: StreamableHTTPApp = self  # type: ignore[assignment]  # (no cast() call)
            await handle_message(
                app, session, body, receive, send, cors, event=event, version=header
            )
        finally:
            self.sessionless.discard(session)
            if not session.close_idle():
                self.drop(session)

    def stateless_busy(self) -> bool:
        """Whether ``max_stateless_requests`` requests that stand alone (stateless,
        2026-07-28) are being served: another is refused (:meth:`refuse_busy`). (Not a
        coroutine: it runs for every such POST.)"""
        cap = self.max_stateless_requests
        return cap is not None and len(self.sessionless) >= cap

    async def refuse_busy(self, send: Send, cors: list[Any]) -> None:
        """503, -32000 and ``Retry-After`` for a request that stands alone, past the cap."""
        reason = f"the server is serving {self.max_stateless_requests} stateless requests"
        await respond_busy(send, f"{reason}; retry later", retry_after=1, headers=cors)

    def remember_passed(self, key: PassedKey | None, cors: list[Any], version: str | None) -> None:
        """Remember that a POST's Host, Origin, Content-Type, Accept and
        MCP-Protocol-Version values (``key``, from :meth:`StreamableHTTPApp.__call__`)
        passed every check that depends on them alone (allowlists, media types, a served
        version of either era), so that a later POST with the same values skips those
        checks. Only values that carry a version are remembered: without one, a POST may
        be of either era. Bounded: a server sees a handful of distinct sets; past the
        bound the memo starts over."""
        if key is None or version is None:
            return
        if version in HANDSHAKE_VERSIONS:
            modern = False
        elif version in self.server.modern_versions:
            modern = True
        else:
            return
        if len(self._passed) >= _PASSED_LIMIT:
            self._passed.clear()
        self._passed[key] = (cors, version, modern)
