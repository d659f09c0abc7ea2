"""The Streamable HTTP client's incoming side, as a mixin of
:class:`~mcpkit.transports.StreamableHTTPChannel`: a request's POST exchange (its answer as
a JSON body or an SSE stream, resumed when it breaks) and the standalone GET stream, each
delivering what the server sends to the channel's queue.

Separate from ``_http_client.py`` (the transport, the channel's lifecycle and what it
sends) so each reads in one sitting; the methods are inherited, not wrapped.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Final

import anyio
import anyio.abc

from ..aio import DeliveryFailed
from ..aio._lograte import PeerLogLimiter
from ..exceptions import MessageNotDelivered, RemoteProtocolError, SessionExpiredError
from ..protocol import SSEParser, media_type, valid_session_id
from ..types import V2025_03_26, RequestId
from ..types._echo import peer_text
from ._http_client_messages import (
    Outgoing,
    Unanswered,
    describe_failure,
    describe_http_error,
    error_answer_id,
    is_response,
    negotiated_version,
    peek_incoming,
    redirect_note,
    retry_after,
    stray_response,
)
from ._http_client_streams import (
    ERROR_BODY_LIMIT,
    HTTPX_IMPORT_ERROR,
    Resumer,
    read_body,
    read_events,
)

if HTTPX_IMPORT_ERROR is None:
    import httpx

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectSendStream

    from ._http_client import StreamableHTTPTransport
    from ._http_client_post import Poster

__all__ = ["Exchanges", "session_expired"]

logger = logging.getLogger("mcpkit.transports.http.client")

_JSON: Final = "application/json"
_SSE: Final = "text/event-stream"
_SESSION: Final = "Mcp-Session-Id"
#: How long connecting waits for the server to answer the standalone GET (then goes on).
_LISTEN_OPEN_WAIT: Final = 2.0

_Item = bytes | DeliveryFailed
_Deliver = Callable[[bytes], Awaitable[bool]]


def session_expired() -> SessionExpiredError:
    """The server forgot our session (HTTP 404): the client starts a new one."""
    return SessionExpiredError(
        "the server ended the session (HTTP 404); a new session must be initialized",
        status=404,
    )


class Exchanges:
    """What the server sends: answers to our requests, and its own messages."""

    if TYPE_CHECKING:
        _t: StreamableHTTPTransport
        session_id: str | None
        protocol_version: str | None
        _client: httpx.AsyncClient | None
        _queue_in: MemoryObjectSendStream[_Item]
        _task_group: anyio.abc.TaskGroup | None
        _closed: bool
        _initialize_ids: set[RequestId]
        _stateless_ids: set[RequestId]
        _calls: dict[RequestId, anyio.CancelScope]
        _listening: anyio.CancelScope | None
        _peer_log: PeerLogLimiter
        _session_lost: bool
        _long: httpx.Timeout
        _url: httpx.URL
        _poster: Poster

        def _headers(
            self, accept: str, *, initialize: bool = False, session: str | None = None
        ) -> httpx.Headers: ...

        def _expire(self, session: str) -> None: ...

    # -- requests -----------------------------------------------------------------------

    async def _call(
        self, message: bytes, out: Outgoing, headers: httpx.Headers, scope: anyio.CancelScope
    ) -> None:
        pending = Unanswered(out.request_ids)
        error: Exception | None = None
        try:
            with scope:
                try:
                    error = await self._exchange(message, headers, pending, out)
                except Exception as exc:  # a bug here must fail the call, not the channel
                    logger.exception("the POST of a request failed unexpectedly")
                    error = MessageNotDelivered(f"the request failed: {exc!r}")
                if pending:
                    error = error or RemoteProtocolError(
                        pending.explain("the server did not answer the request")
                    )
                    for rid in out.request_ids:
                        if rid in pending:
                            self._initialize_ids.discard(rid)
                            await self._push(DeliveryFailed(rid, error))
                elif error is not None:  # (the stream broke the rules after the answer)
                    self._peer_log.log(
                        logger, logging.WARNING, "after answering a request, %s", error
                    )
        finally:
            for rid in out.request_ids:
                self._stateless_ids.discard(rid)
                if self._calls.get(rid) is scope:
                    del self._calls[rid]

    async def _exchange(
        self, message: bytes, headers: httpx.Headers, pending: Unanswered, out: Outgoing
    ) -> Exception | None:
        """POST a request and deliver its answer; the error that fails what is still
        pending, or ``None``."""
        assert self._client is not None
        if self._session_lost and out.initialize_id is None and _SESSION not in headers:
            # An earlier exchange met 404: without a session the server would answer 400.
            return session_expired()
        headers["Content-Type"] = _JSON
        session = headers.get(_SESSION)
        parser = SSEParser(max_event_bytes=self._t.max_event_bytes)
        try:
            async with self._poster.post(message, headers, self._long) as response:
                status = response.status_code
                content_type = response.headers.get("content-type")
                if 200 <= status < 300 and out.initialize_id is not None:
                    new_session = response.headers.get(_SESSION)
                    if new_session is not None and not valid_session_id(new_session):
                        return RemoteProtocolError(
                            f"invalid Mcp-Session-Id {peer_text(new_session)}"
                        )
                    self.session_id = new_session
                    self._session_lost = False
                if status == 404 and session is not None:
                    self._expire(session)
                    return session_expired()
                if status == 202:
                    return MessageNotDelivered(
                        "the server accepted a request with 202 and will not answer it",
                        status=202,
                    )
                if not 200 <= status < 300:
                    body = await read_body(response, ERROR_BODY_LIMIT, truncate=True)
                    # An error response to this very request is its answer, and all of
                    # it: the caller gets the error. That is how 2026-07-28 answers
                    # -32602 (400) and -32601 (404) (streamable-http.mdx), and how a
                    # handshake-era server may refuse a request: nothing to warn about.
                    if error_answer_id(body) in pending:
                        await self._deliver(body, pending)
                        return None
                    return MessageNotDelivered(
                        describe_failure(status, content_type, body, redirect_note(response)),
                        status=status,
                        retry_after=retry_after(response),
                    )
                kind = media_type(content_type)
                if kind == _JSON:
                    body = await read_body(response, self._t.max_response_bytes)
                    await self._deliver(body, pending)
                    return None
                if kind != _SSE:
                    return RemoteProtocolError(
                        f"the server answered a request with content type "
                        f"{peer_text(kind or 'none')} (HTTP {status}), not JSON or an SSE stream"
                    )
                _, broken = await read_events(response, parser, self._deliver_for(pending))
        except httpx.HTTPError as exc:
            return MessageNotDelivered(
                f"the request to {self._t.url} failed: {describe_http_error(exc)}"
            )
        except RemoteProtocolError as exc:
            return exc
        if not pending:
            return None
        why = describe_http_error(broken) if broken is not None else "the stream ended"
        why = pending.explain(why)
        try:
            return await self._resumer().resume(parser, pending, self._deliver_for(pending), why)
        except RemoteProtocolError as exc:
            return exc

    def _deliver_for(self, pending: Unanswered) -> _Deliver:
        async def deliver(data: bytes) -> bool:
            await self._deliver(data, pending)
            return not pending  # answered: stop reading (the server should end the stream)

        return deliver

    async def _deliver(self, data: bytes, pending: Unanswered | None) -> None:
        """Queue one message after checking it, noting the answers (and responses that
        answer none of its requests) in ``pending`` and the version chosen by an
        ``initialize`` response.

        Raises:
            RemoteProtocolError: ``data`` is not a JSON-RPC message (or allowed batch).
        """
        peeks = peek_incoming(data, allow_batch=self.protocol_version == V2025_03_26)
        for peek in peeks:
            if not is_response(peek):
                continue
            if pending is not None:
                if peek.id in pending:
                    pending.discard(peek.id)
                else:
                    pending.stray = stray_response(peek)
            if not isinstance(peek.id, (int, str)):
                continue
            if peek.id in self._initialize_ids:
                self._initialize_ids.discard(peek.id)
                self.protocol_version = negotiated_version(peek)
        await self._push(data)

    async def _push(self, item: _Item) -> None:
        try:
            await self._queue_in.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # closing: nobody reads any more

    def _resumer(self) -> Resumer:
        assert self._client is not None
        t = self._t
        return Resumer(
            client=self._client,
            url=t.url,
            timeout=self._long,
            headers=lambda: self._headers(_SSE),
            expire=self._expire,
            attempts=t.max_reconnect_attempts,
            initial=t.reconnect_initial,
            factor=t.reconnect_factor,
            maximum=t.reconnect_max,
        )

    # -- the standalone GET stream ------------------------------------------------------

    async def _start_listening(self) -> None:
        if self._listening is not None or self._closed or self._task_group is None:
            return
        self._listening = anyio.CancelScope()
        opened = anyio.Event()
        self._task_group.start_soon(self._listen, self._listening, opened)
        # Wait (briefly) until the server has answered the GET: the stream then exists
        # before the first request, so messages the server sends about it are not missed
        # and the server sees our connections in a predictable order.
        with anyio.move_on_after(_LISTEN_OPEN_WAIT):
            await opened.wait()

    async def _listen(self, scope: anyio.CancelScope, opened: anyio.Event) -> None:
        """Keep the standalone GET stream open (``basic/transports.mdx`` "Listening for
        Messages from the Server"): the server's requests and notifications arrive on it.
        It carries no answer to a request, so an event over the limit is skipped, not the
        end of the stream (which a reconnection would only replay)."""
        parser = SSEParser(max_event_bytes=self._t.max_event_bytes, skip_oversized=True)
        try:
            with scope:
                await self._resumer().listen(parser, self._listened, opened=opened.set)
        finally:
            opened.set()
        if self._listening is scope:
            self._listening = None

    async def _listened(self, data: bytes) -> bool:
        try:
            await self._deliver(data, None)
        except RemoteProtocolError as exc:
            self._peer_log.log(
                logger,
                logging.WARNING,
                "ignoring an invalid message on the standalone stream: %s",
                exc,
            )
        return False
